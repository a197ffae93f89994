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
