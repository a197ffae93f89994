"""tests/leaks.py: a test that leaves its fake in a product module is named when it does."""

import sys
import types

from tests.leaks import leaked_fakes


def test_a_module_imported_while_the_factory_is_patched_keeps_the_fake_and_is_named(monkeypatch):
    probe = types.ModuleType("textbook_chat_cli._leak_probe")  # as textbook_chat_cli/release.py
    monkeypatch.setitem(sys.modules, probe.__name__, probe)  # gone again at teardown
    with monkeypatch.context() as patched:
        patched.setattr("functions.search.embeddings.factory.make_embedder", lambda *a, **k: None)
        exec("from functions.search.embeddings.factory import make_embedder", vars(probe))
    from functions.search.embeddings import factory

    assert factory.make_embedder is not probe.make_embedder  # monkeypatch undid only its own
    assert f"{probe.__name__}.make_embedder" in leaked_fakes()
    assert "functions.search.embeddings.factory.make_embedder" not in leaked_fakes()


def test_a_deadline_imported_while_its_source_is_patched_is_named(monkeypatch):
    """test_model_answers patched functions.deadline, then imported functions.answers.chat: when
    that was its first import, chat kept a 3 s request deadline for every later test."""
    from functions import deadline

    probe = types.ModuleType("functions._deadline_probe")  # as functions/answers/chat.py
    monkeypatch.setitem(sys.modules, probe.__name__, probe)
    with monkeypatch.context() as patched:
        patched.setattr(deadline, "REQUEST_SECONDS", 3.0)
        exec("from functions.deadline import REQUEST_SECONDS", vars(probe))
    assert probe.REQUEST_SECONDS == 3.0 != deadline.REQUEST_SECONDS
    assert f"{probe.__name__}.REQUEST_SECONDS" in leaked_fakes()
    assert "functions.deadline.REQUEST_SECONDS" not in leaked_fakes()
    assert not [n for n in leaked_fakes() if n.endswith("SECONDS")
                and not n.startswith(probe.__name__)]  # chat's own is its source's
