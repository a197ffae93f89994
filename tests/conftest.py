"""Fixtures shared by every suite: the fake OpenAI-compatible server and the fake embedder; the
plugins: CPU per test, pytest-xdist's workers, and no fake left in the product's modules."""

pytest_plugins = ["tests.fakes.conftest_plugin", "tests.cpu_plugin", "tests.workers",
                  "tests.leaks"]
