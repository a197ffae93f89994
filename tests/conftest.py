"""Fixtures shared by every suite: the fake OpenAI-compatible server and the fake embedder."""

pytest_plugins = ["tests.fakes.conftest_plugin", "tests.cpu_plugin", "tests.workers"]
