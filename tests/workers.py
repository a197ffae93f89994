"""The suite on every core (pytest-xdist; `scripts/test.sh` asks for it, plain `pytest` runs on
one process as before). Two rules make tests that were written for one process hold on several:

- A file's tests stay on one worker (its module fixtures are built once), and every test that
  needs the built Docusaurus site (tests/e2e) runs on the same worker: the site's folder is held
  by one test session at a time (tests/e2e/site_build.site_dir_lock), so a second worker would
  wait for the first one's whole session.
- Each worker gets a temporary folder of its own (TMPDIR): tests that count what a command left
  in the temporary folder (a reader's private copy of the index) see only their own worker's.
  The built site's folder stays where it was, shared between runs for its node_modules."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

SITE_GROUP = "docusaurus-site"
_E2E = Path(__file__).parent / "e2e"


def pytest_configure(config):
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


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        path = Path(str(item.path))
        on_site = _E2E in path.parents or "built_site" in getattr(item, "fixturenames", ())
        item.add_marker(pytest.mark.xdist_group(SITE_GROUP if on_site else item.nodeid.split("::")[0]))
