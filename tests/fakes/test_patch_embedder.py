"""A fake embedder reaches every command for one test and stays in no module after it (a module
first imported while only the factory was patched kept the fake for the rest of the worker)."""

from __future__ import annotations

from functions.settings import Settings
from tests.fakes.conftest_plugin import left_behind, patch_embedder
from tests.fakes.embedder import FakeEmbedder


def test_patch_embedder_reaches_every_command_and_leaves_nothing(monkeypatch):
    import indexer.job
    import textbook_chat_cli.release
    from functions.search.embeddings import factory

    real = factory.make_embedder
    fake = FakeEmbedder(384, model_name="all-MiniLM-L6-v2")
    patch_embedder(monkeypatch, fake)
    for module in (factory, indexer.job, textbook_chat_cli.release):
        assert module.make_embedder(Settings()) is fake, module.__name__
    monkeypatch.undo()
    assert left_behind() == []
    assert textbook_chat_cli.release.make_embedder is real is factory.make_embedder


def test_a_fake_kept_by_a_module_is_named():
    import textbook_chat_cli.release as release

    real = release.make_embedder
    release.make_embedder = lambda *_a, **_k: None  # what the old fixture left behind
    try:
        assert left_behind() == ["textbook_chat_cli.release.make_embedder"]
    finally:
        release.make_embedder = real
    assert left_behind() == []


def test_a_constant_imported_while_its_source_was_patched_is_named():
    import functions.answers.chat as answering
    from functions import deadline

    real = answering.REQUEST_SECONDS
    answering.REQUEST_SECONDS = 3.0  # imported by name while deadline's was patched to 3 s
    try:
        assert left_behind() == ["functions.answers.chat.REQUEST_SECONDS"]
    finally:
        answering.REQUEST_SECONDS = real
    assert left_behind() == [] and answering.REQUEST_SECONDS == deadline.REQUEST_SECONDS
