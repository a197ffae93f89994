"""The built wheel holds every package and the shipped tokenizer file (not only an editable install);
the Python the docs ask for is the one pyproject.toml requires, the pinned indexer set installs on
it, and scripts/setup.sh names the Python it found and the one needed instead of pip's raw error."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_has_every_subpackage_and_the_tokenizer(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # Our own packaging says nothing a newcomer would have to read (e.g. deprecated license).
    assert "Warning" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
    wheel = next(tmp_path.glob("textbook_chat-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "functions/api/handlers/chat.py",
        "functions/api/handlers/selection.py",
        "functions/search/embeddings/local.py",
        "functions/data/cl100k_base.tiktoken",
        "functions/data/answer_policy.json",
        "functions/data/common_words.json",  # the chat route's common words (functions.tokens)
        "indexer/evaluate/runner.py",
        "textbook_chat_cli/main.py",
        "textbook_chat_cli/evaluate.py",
    ):
        assert needed in names, f"{needed} missing from {wheel.name}"
    assert not any(n.startswith(("tests/", "benchmarks/", "samples/")) for n in names)


def _oldest_python() -> str:
    """The lower bound of pyproject.toml's requires-python (the `>=X.Y` scripts/setup.sh reads)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = re.fullmatch(r">=(\d+\.\d+)", project["requires-python"])
    assert found, f"requires-python {project['requires-python']!r}: setup.sh reads '>=X.Y'"
    return found[1]


def test_every_python_the_docs_name_is_the_one_pyproject_requires():
    """Every "Python ≥ X" of the docs is requires-python's, none says "Python 3.x only", and the
    pinned indexer set is resolved for that oldest Python (so it installs on it and later)."""
    oldest = _oldest_python()
    pages = [REPO / "README.md", REPO / "site-plugin" / "README.md",
             *sorted((REPO / "docs").glob("*.md"))]
    stated, only = {}, []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for version in re.findall(r"Python\s*(?:≥|>=)\s*(\d+\.\d+)", text):
            stated.setdefault(version, []).append(page.name)
        only += [f"{page.name}: {m}" for m in re.findall(r"Python \d+\.\d+ only", text)]
    assert "README.md" in stated.get(oldest, []), stated
    assert set(stated) == {oldest}, stated
    assert not only, only
    lock = (REPO / "requirements-indexer.lock").read_text(encoding="utf-8")
    assert re.findall(r"--python-version (\S+)", lock) == [oldest]


@pytest.mark.parametrize("made_venv", [False, True])
def test_setup_names_the_python_found_and_the_one_needed(tmp_path, made_venv):
    """A copy of the repository's setup.sh beside a pyproject.toml asking for a Python newer than
    this one: one line naming both, and nothing installed (before: pip's raw error)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(re.sub(
        r'^requires-python = ".*"$', 'requires-python = ">=3.99"', pyproject, flags=re.M))
    if made_venv:  # a .venv made earlier with an older Python
        (tmp_path / ".venv" / "bin").mkdir(parents=True)
        (tmp_path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh")], cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    here = ".".join(map(str, sys.version_info[:3]))
    assert line.startswith("scripts/setup.sh: textbook-chat needs Python 3.99 or newer "
                           "(pyproject.toml requires-python); "), line
    assert f"is Python {here}: " in line
    fix = "remove .venv (made with it)" if made_venv else "install Python 3.99 or newer"
    assert f"{fix} and run PYTHON=python3.99 scripts/setup.sh" in line
    assert (tmp_path / ".venv").exists() == made_venv  # no venv made, nothing installed


@pytest.mark.slow
def test_the_pinned_indexer_set_installs_on_the_oldest_python_and_the_workflow_s(tmp_path):
    """requirements-indexer.lock, every file as pinned (hashes checked), is there for the oldest
    Python requires-python allows (docs/deploying.md's by-hand install) and for the reindex
    workflow's default python-version. Its numpy 2.5.5 had no wheel for 3.11."""
    workflow = (REPO / ".github" / "workflows" / "reindex.yml").read_text(encoding="utf-8")
    default = re.search(r"python-version:\n(?:\s+\w+:.*\n)*?\s+default: \"([\d.]+)\"", workflow)
    for version in sorted({_oldest_python(), default[1]}):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
             "--python-version", version, "--require-hashes", "-r",
             str(REPO / "requirements-indexer.lock"), "-d", str(tmp_path)],
            capture_output=True, text=True, timeout=600)
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
        assert done.returncode == 0, f"Python {version}: {errors or done.stderr[-2000:]}"


def test_setup_says_what_it_installs_before_pip_runs_and_how_long_it_took(tmp_path):
    """pip runs quietly for a minute: setup.sh says what it is doing before, and the time after.
    The .venv's python here runs the version checks with this Python and logs each pip call
    (to stderr, so the order of the lines shows what was said before pip started)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    python = tmp_path / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/bash\nif [ "$1" = -m ] && [ "$2" = pip ]; then echo "pip: $*" >&2; '
                      f'else exec {sys.executable} "$@"; fi\n')
    python.chmod(0o755)
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh"), "test"], cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    first_pip = next(i for i, line in enumerate(lines) if line.startswith("pip: "))
    assert lines[first_pip - 1].startswith("scripts/setup.sh: installing textbook-chat with its "
                                           "'test' extras into .venv: about a minute"), lines
    assert re.fullmatch(r"scripts/setup\.sh: installed in \d+ s \(.*\)", lines[-1]), lines
    assert (tmp_path / ".venv" / ".textbook-chat-setup-test").is_file()


@pytest.mark.npm
@pytest.mark.skipif(not shutil.which("npm"), reason="npm is not installed")
def test_the_site_plugin_package_holds_no_tests_and_everything_it_runs():
    """`npm pack` of site-plugin: its "files" list must end with the `!src/**/*.test.*` rule
    (a later entry such as `src/theme/` included src/theme/TextbookChat/text.test.mjs again)."""
    done = subprocess.run(["npm", "pack", "--dry-run", "--json", "--ignore-scripts"],
                          cwd=REPO / "site-plugin", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    files = {f["path"] for f in json.loads(done.stdout)[0]["files"]}
    assert not [f for f in files if ".test." in f], sorted(files)
    sources = {str(p.relative_to(REPO / "site-plugin")) for d in ("src/server", "src/theme")
               for p in (REPO / "site-plugin" / d).rglob("*") if p.is_file() and ".test." not in p.name}
    sources |= {str(p.relative_to(REPO / "site-plugin"))
                for p in (REPO / "site-plugin" / "src" / "client").glob("*.mjs") if ".test." not in p.name}
    assert sources <= files, sorted(sources - files)
    assert {"package.json", "README.md"} <= files
