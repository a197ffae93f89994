"""No test leaves a fake of its own in the product's modules (functions, indexer,
textbook_chat_cli) for the tests that run after it in the same process.

monkeypatch restores the attribute it patched, but not a copy of it: a module first imported
while `functions.search.embeddings.factory.make_embedder` was patched binds the fake with its
`from ... import make_embedder` and keeps it. Which test first imports a module depends on which
files ran before on the pytest-xdist worker, so the harm showed rarely and far away: a `release
stage` run in-process built its live release with a test's fake model, and the next stage, in a
subprocess with the real model, copied nothing (tests/indexer/test_release_kill.py). This
plugin names the test that leaves one, when it leaves it: its teardown fails, naming each
attribute. The same for a value imported by name whose source a test patched (IMPORTED). One
scan per test, about a millisecond of CPU."""

from __future__ import annotations

import sys
from types import FunctionType

import pytest

PRODUCT = ("functions", "indexer", "textbook_chat_cli")
_KINDS = (FunctionType, type)
# Values product modules import by name (`from functions.deadline import REQUEST_SECONDS`) that
# tests patch at their source: a module first imported under the patch keeps the patched value
# (functions/answers/chat.py kept a 3 s request deadline). Each is checked against its source.
IMPORTED = {"REQUEST_SECONDS": "functions.deadline", "REWRITE_SECONDS": "functions.deadline"}


def leaked_fakes() -> frozenset[str]:
    """`module.name` of each attribute of a loaded product module that is the tests' own (a
    function or class defined under tests/, or an instance of a class defined there), or an
    IMPORTED value that is no longer its source's."""
    found = set()
    for module_name, module in list(sys.modules.items()):
        if module is None or module_name.partition(".")[0] not in PRODUCT:
            continue
        for name, value in list(vars(module).items()):
            if _of_tests(value) or _stale(module_name, name, value):
                found.add(f"{module_name}.{name}")
    return frozenset(found)


def _stale(module_name: str, name: str, value) -> bool:
    source = sys.modules.get(IMPORTED.get(name, ""))
    return source is not None and module_name != source.__name__ \
        and value != getattr(source, name, value)


def _owner(value):
    """Where `value` was defined: a function or class itself, anything else its class."""
    return value if isinstance(value, _KINDS) else type(value)


def _of_tests(value) -> bool:
    where = getattr(_owner(value), "__module__", None)
    return isinstance(where, str) and (where == "tests" or where.startswith("tests."))


def describe(name: str) -> str:
    module_name, _, attr = name.rpartition(".")
    value = getattr(sys.modules.get(module_name), attr, None)
    if attr in IMPORTED and not _of_tests(value):
        return f"{name} (now {value!r}; {IMPORTED[attr]} has {getattr(sys.modules[IMPORTED[attr]], attr)!r})"
    owner = _owner(value)
    return f"{name} (now {getattr(owner, '__qualname__', owner)} of {owner.__module__})"


class _Guard:
    def __init__(self):
        self.seen = frozenset()  # what the previous test left (each is reported once)

    def pytest_collection_finish(self, session):
        self.seen = leaked_fakes()  # a test module that patches on import is not a test's doing

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        result = yield  # the test's fixtures are torn down: monkeypatch has undone its patches
        now = leaked_fakes()
        new, self.seen = sorted(now - self.seen), now
        if new:
            raise AssertionError(
                f"{item.nodeid} left a test's fake or patched value in the product's modules, "
                f"where every later test in this process uses them: "
                f"{', '.join(describe(n) for n in new)}. A module first imported while a name it "
                "imports was monkeypatched keeps the fake: patch the name where it is called, "
                "or import that module before patching.")
        return result


def pytest_configure(config):
    config.pluginmanager.register(_Guard(), "textbook-chat-leaks")
