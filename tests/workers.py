"""The suite on every core (pytest-xdist; `scripts/test.sh` asks for it, plain `pytest` runs on
one process as before). Two rules make tests that were written for one process hold on several:

- A file's tests stay on one worker (its module fixtures are built once), and every test in
  tests/e2e (the ones that build the Docusaurus site) runs on the same worker: the site's folder
  is held by one test session at a time (tests/e2e/site_build.site_dir_lock), so a second worker
  would wait for the first one's whole session. A test outside tests/e2e must not use the site.
- Each worker gets a temporary folder of its own (TMPDIR): tests that count what a command left
  in the temporary folder (a reader's private copy of the index) see only their own worker's.
  The built site's folder stays where it was, shared between runs for its node_modules."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

SITE_GROUP = "docusaurus-site"
E2E_PREFIX = "tests/e2e/"  # nodeids are relative to the checkout (pyproject.toml)


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_Scopes(), "textbook-chat-scopes")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    shared = tempfile.gettempdir()
    os.environ.setdefault("TEXTBOOK_CHAT_E2E_DIR", os.path.join(shared, "textbook-chat-e2e"))
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "run")[:12]
    own = Path(shared) / f"textbook-chat-tests-{run}-{worker}"
    own.mkdir(parents=True, exist_ok=True)
    config._worker_tmp = own
    os.environ["TMPDIR"] = str(own)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def pytest_unconfigure(config):
    own = getattr(config, "_worker_tmp", None)
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)


class _Scopes:
    """Registered only where pytest-xdist is installed (a plain `pytest` without it must still
    run: the hook below is xdist's own)."""

    @staticmethod
    def pytest_xdist_make_scheduler(config, log):
        """pytest-xdist's scope scheduling with these scopes: the e2e tests one, every other
        file its own (its `xdist_group` marks are not honoured under pytest 9: nodeids no longer
        change)."""
        from xdist.scheduler import LoadScopeScheduling

        class _Scheduler(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return scope(nodeid)

        return _Scheduler(config, log)


# Files whose tests share no module fixture and each cost minutes: a scope per test, so they
# can run side by side.
PER_TEST = ("tests/test_corpora_benchmark.py",)


def scope(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    if path.startswith(E2E_PREFIX):
        return SITE_GROUP
    return nodeid if path in PER_TEST else path
