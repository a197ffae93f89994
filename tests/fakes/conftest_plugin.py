"""Pytest fixtures for the fakes: use with `pytest_plugins = ["tests.fakes.conftest_plugin"]`."""

from __future__ import annotations

import sys

import pytest

from tests.fakes.embedder import FakeEmbedder
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def fake_openai():
    """A running FakeOpenAI (1536-d embeddings, any API key), stopped after the test."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """A fresh deterministic 16-d FakeEmbedder that counts its calls."""
    return FakeEmbedder()


# What would send an author's command elsewhere than the test's own index and fake model: a
# Qdrant server, another collection, the AWS feedback table, another embedder or log format.
ELSEWHERE = ("QDRANT_URL", "QDRANT_API_KEY", "QDRANT_PATH", "QDRANT_COLLECTION", "DYNAMODB_TABLE",
             "EMBEDDING_PROVIDER", "EMBEDDING_MODEL", "CHAT_PROVIDER", "LOG_LEVEL")


@pytest.fixture
def fake_openai_env(monkeypatch, fake_openai):
    """The environment of an author's command on the local defaults (the embedded index in
    .textbook-chat/qdrant, collection 'textbook'), with the fake OpenAI server's embeddings over
    HTTP and the offline extractive answers: the running FakeOpenAI."""
    for name in ELSEWHERE:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("CHAT_PROVIDER", "extractive")
    return fake_openai


# What modules of ours import by name from where it is defined (`from functions.deadline import
# REQUEST_SECONDS`): a test that patches the source and then imports a module for the first time
# leaves the patched value in that module for every later test in its worker (a 3 s request
# deadline, a fake embedder), where the next test to use it fails for no reason of its own.
OURS = ("functions", "indexer", "textbook_chat_cli", "benchmarks")
BY_NAME = {"make_embedder": "functions.search.embeddings.factory",
           "REQUEST_SECONDS": "functions.deadline", "REWRITE_SECONDS": "functions.deadline"}


def _holders(name: str) -> list:
    """Every loaded module of ours that holds `name` (the module defining it included)."""
    return [m for key, m in list(sys.modules.items())
            if key.split(".")[0] in OURS and hasattr(m, name)]


def patch_embedder(monkeypatch, embedder) -> None:
    """Every command builds `embedder` (a fake) for the rest of the test, and nothing keeps it
    after: the CLI's modules are imported first, then each one's own `make_embedder` is patched
    with the factory's. (Patching the factory alone is not enough: a module first imported while
    it is patched would keep the fake for every later test in this worker, e.g. `release stage`
    indexing a release with a fake model that a real command then refuses to copy.)"""
    from functions.search.embeddings import factory
    from textbook_chat_cli.main import build_parser

    build_parser()  # imports every command's module
    import indexer.evaluate.runner  # noqa: F401  (eval's, loaded when a command asks)

    def fake(*_args, **_kwargs):
        return embedder

    real = factory.make_embedder
    for module in _holders("make_embedder"):  # the factory too: functions.api.deps reads it
        if module.make_embedder is real:
            monkeypatch.setattr(module, "make_embedder", fake)


def left_behind() -> list[str]:
    """`module.NAME` for each module of ours whose NAME (of BY_NAME) is no longer its source's:
    none once every patch is undone."""
    left = []
    for name, source in BY_NAME.items():
        home = sys.modules.get(source)
        if home is None:
            continue
        real = getattr(home, name)
        left += [f"{m.__name__}.{name}" for m in _holders(name)
                 if getattr(m, name) is not real and getattr(m, name) != real]
    return sorted(left)


@pytest.fixture(autouse=True)
def _nothing_patched_left_behind():
    """After each test (its monkeypatch undone): no module of ours still holds a patched value
    of BY_NAME; the test that left one fails, not a later test in the same worker."""
    yield
    left = left_behind()
    assert not left, (f"{', '.join(left)}: still patched after this test. Import the module "
                      "before patching its source, or for the embedder use "
                      "tests.fakes.conftest_plugin.patch_embedder")
