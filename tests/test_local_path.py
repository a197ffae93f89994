"""README's "Your own book, locally, in 5 minutes", run as written on a fresh clone: the clone of
this repository's HEAD, `scripts/setup.sh` (a new .venv, packages from the package index), then,
in a book folder beside it (the sample textbook copied there), the README's own `serve --watch`
and `ask` lines. The page saved while serving is re-indexed and answered. Step 4 (the widget)
needs npm and a Docusaurus install: the e2e suite builds a site with the plugin."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ports import free_port, wait_until_serving

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "textbook"
NEW_SECTION = ("\n## Slip detection\n\nA wheel that spins faster than its neighbours by more than "
               "twelve percent is slipping; the odometry then ignores it for one cycle.\n")


def _commands() -> list[str]:
    """The shell lines of the README's 5-minute section, in order, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Your own book, locally")
    section = text[start:text.index("\n## ", start + 3)]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def _run(line: str, cwd: Path, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_readme_local_path_on_a_fresh_clone(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    lines = _commands()
    clone, setup, to_book, serve, ask = lines[:5]
    assert clone.startswith("git clone ") and clone.endswith("&& cd textbook-chat")
    assert (setup, to_book) == ("scripts/setup.sh", "cd ../my-book")
    assert serve == "../textbook-chat/.venv/bin/textbook-chat serve --watch docs"
    assert ask.startswith("../textbook-chat/.venv/bin/textbook-chat ask ")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("QDRANT_", "OPENAI_", "DYNAMODB_", "EMBEDDING_", "CHAT_",
                                "RATE_LIMIT_", "TEXTBOOK_CHAT_", "VIRTUAL_ENV", "PYTHONPATH"))}
    port = free_port()
    env |= {"PYTHON": sys.executable, "TEXTBOOK_CHAT_PORT": str(port), "OMP_NUM_THREADS": "1"}

    # 1. the clone (of this checkout's HEAD instead of GitHub) and its setup, as written
    done = _run(clone.replace(clone.split()[2], f"{ROOT} textbook-chat"), tmp_path, env, timeout=300)
    assert done.returncode == 0, done.stderr
    repo = tmp_path / "textbook-chat"
    done = _run(setup, repo, env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    book = tmp_path / "my-book"  # the author's book, beside the clone
    shutil.copytree(SAMPLE / "docs", book / "docs")
    shutil.copy(SAMPLE / "docusaurus.config.js", book)

    # 2. serve --watch, in the book's folder: its own index, said first
    proc = subprocess.Popen(["bash", "-c", serve], cwd=book, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, 180, proc, "serve --watch",
                           said=lambda: proc.stderr.read() if proc.poll() is not None else "")
        # 3. ask, as written and about a page, from a second terminal in the same folder
        done = _run(ask, book, env, timeout=300)
        assert done.returncode == 0, done.stderr
        using = "Using index: embedded at .textbook-chat/qdrant, collection 'textbook'"
        said = done.stderr.splitlines()
        assert said[0] == f"{using}, book 'Signals, Sensors and Control' (my-book/docs)"
        assert said[1].startswith("Answered by the `textbook-chat serve` running on "
                                  f"http://127.0.0.1:{port} (pid ")  # not a second model load
        asked = ask.split(" ask ")[0] + ' ask "What does an incremental encoder produce?"'
        done = _run(asked, book, env, timeout=300)
        assert "/textbook-chat-sample/docs/sensors/encoders#incremental-encoders" in done.stdout
        # a page saved while serving is re-indexed and answered
        with (book / "docs" / "02-sensors" / "01-encoders.md").open("a") as page:
            page.write(NEW_SECTION)
        slip = ask.split(" ask ")[0] + ' ask "When is a wheel slipping?"'
        for _ in range(60):
            done = _run(slip, book, env, timeout=300)
            if "#slip-detection" in done.stdout:
                break
            time.sleep(1)
        assert "#slip-detection" in done.stdout, done.stdout + done.stderr
    finally:
        os.killpg(proc.pid, 15)
        _, err = proc.communicate(timeout=30)
    assert using in err.splitlines()
    assert (book / ".textbook-chat" / "qdrant").is_dir() and not (repo / ".textbook-chat").exists()
