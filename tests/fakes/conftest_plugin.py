"""Pytest fixtures for the fakes: use with `pytest_plugins = ["tests.fakes.conftest_plugin"]`."""

from __future__ import annotations

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
