"""A newcomer's commands chain: demo, then ask/eval with no flags; `index` finds the site's
config beside the docs and says what it used; progress lines in logs; usage errors exit 2."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from indexer.progress import bar
from tests.indexer.test_eval_sample import one_of_each_kind

ROOT = Path(__file__).resolve().parents[2]


def cli(cwd, *args, env=None, timeout=300) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("OPENAI_API_KEY", "QDRANT_URL", "QDRANT_PATH", "QDRANT_COLLECTION",
                         "DYNAMODB_TABLE", "LOG_LEVEL")}
    base.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "textbook_chat_cli", *args], cwd=cwd, env=base,
                          capture_output=True, text=True, timeout=timeout)


def test_progress_is_one_line_per_stage_off_a_terminal():
    out, now = io.StringIO(), iter([0.0, 0.5, 12.0, 13.0, 14.0]).__next__
    with bar(3, "Reading", unit="file", stream=out, clock=now) as tick:
        tick(1)
        tick(1)  # 0.5 s: no line
        tick(1)  # the last one: done
    assert out.getvalue().splitlines() == ["Reading: started (3 files)",
                                           "Reading: done, 3 files in 12.0 s"]
    out, now = io.StringIO(), iter([0.0, 11.0, 12.0]).__next__
    with bar(None, "Embedding", unit="chunk", stream=out, clock=now) as tick:
        tick(64)
        tick(64)  # 11 s later: a progress line
    assert out.getvalue().splitlines() == ["Embedding: started", "Embedding: 128 chunks, 11 s",
                                           "Embedding: done, 128 chunks in 12.0 s"]
    out = io.StringIO()
    with bar(None, "Embedding", stream=out):
        pass
    assert out.getvalue() == ""  # nothing to embed: silent


def test_an_index_run_says_each_stage_the_quotable_blocks_too(tmp_path, capsys):
    """The blocks an offline answer quotes are embedded after the chunks (about as long again on
    a new book): a stage of its own, so a log is never silent while they are."""
    from functions.settings import Settings
    from indexer.job import index_docs, resolve_job
    from tests.fakes.embedder import FakeEmbedder

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "motors.md").write_text("# Motors\n\n## Torque\n\nTorque turns the shaft.\n\n"
                                    "A gearbox trades speed for torque.\n\n## Speed\n\n"
                                    "Speed is set by the voltage.\n", encoding="utf-8")
    settings = Settings(qdrant_path=str(tmp_path / "q"), collection="t")
    first = index_docs(resolve_job(docs), settings, embedder=FakeEmbedder(), say=lambda _: None)
    lines = capsys.readouterr().err.splitlines()
    stages = [line.split(",")[0].split(" (")[0] for line in lines]
    assert stages == ["Reading: started", "Reading: done", "Embedding: started", "Embedding: done",
                      "Embedding quotable blocks: started", "Embedding quotable blocks: done"], lines
    blocks = [line for line in lines if line.startswith("Embedding quotable blocks: done, ")]
    assert first.embedded > 0 and len(blocks) == 1 and " 0 blocks" not in blocks[0]
    again = index_docs(resolve_job(docs), settings, embedder=FakeEmbedder(), say=lambda _: None)
    assert again.embedded == 0 and "Embedding" not in capsys.readouterr().err  # nothing new


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_index_reads_the_config_beside_the_docs_and_says_so(tmp_path):
    site = tmp_path / "website"
    (site / "docs").mkdir(parents=True)
    (site / "docusaurus.config.js").write_text(
        "module.exports = {baseUrl: '/my-book/', trailingSlash: true};\n")
    (site / "docs" / "intro.md").write_text("# Intro\n\n## First steps\n\nRead this first.\n")
    out = cli(tmp_path, "index", "website/docs", "--dry-run", "--export", "c.jsonl", "--json")
    assert out.returncode == 0, out.stderr
    assert ("Site settings: baseUrl /my-book/, routeBasePath docs, trailingSlash true, "
            "markdown mdx (from website/docusaurus.config.js, every setting read from the "
            "file)") in out.stderr
    assert "npm" not in out.stderr and "node_modules" not in out.stderr  # nothing to install
    assert "Reading: started (1 files)" in out.stderr  # progress on stderr ...
    assert json.loads(out.stdout)["chunks"] == 1  # ... the JSON alone on stdout
    urls = [json.loads(line)["url"] for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert urls == ["/my-book/docs/intro/#first-steps"]
    # Flags still win, and say so; with no config anywhere the line says how to give one.
    out = cli(tmp_path, "index", "website/docs", "--dry-run", "--base-url", "/other/")
    assert "baseUrl /other/" in out.stderr and "--base-url given" in out.stderr
    (site / "docusaurus.config.js").unlink()
    out = cli(tmp_path, "index", "website/docs", "--dry-run")
    assert "baseUrl /," in out.stderr and "pass --site-dir SITE" in out.stderr


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_usage_errors_exit_2_with_one_line(tmp_path):
    out = cli(tmp_path, "ask", "")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "question is empty" in out.stderr
    assert out.stdout == ""
    out = cli(tmp_path, "ask", "What is PID?")  # no index here: a failure, still one line
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert "textbook-chat index" in out.stderr and '{"level"' not in out.stderr
    for args, words in ((["ask"], "required: question"), (["index"], "required: docs_dir"),
                        (["serve", "--port", "x"], "'x' is not a port number"),
                        (["nope"], "invalid choice")):
        out = cli(tmp_path, *args)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert words in out.stderr and "--help" in out.stderr, out.stderr
    out = cli(tmp_path, "serve", "--help")
    assert "default: 8787" in out.stdout and "default: 127.0.0.1" in out.stdout


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs to run from a virtualenv")
def test_the_demo_s_next_steps_activate_the_venv_when_it_is_not_on_path(tmp_path):
    """scripts/demo.sh runs .venv/bin/textbook-chat with the venv inactive: the printed
    `textbook-chat ask …` lines would be 'command not found' without `. .venv/bin/activate`."""
    code = ("from textbook_chat_cli.demo import command_on_path; import json; "
            "print(json.dumps(command_on_path()))")
    bin_dir = str(Path(sys.prefix) / "bin")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p).resolve() != Path(bin_dir).resolve())
    for on_path, expected in ((path, [f". {Path(sys.prefix, 'bin', 'activate')}"]),
                              (bin_dir + os.pathsep + path, [])):
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "PATH": on_path})
        assert out.returncode == 0, out.stderr
        lines = json.loads(out.stdout)
        assert [line.split("  ")[0] for line in lines] == expected
        assert all("once per terminal" in line for line in lines)


@pytest.mark.slow
def test_demo_then_ask_and_eval_with_no_flags(tmp_path):
    first = cli(tmp_path, "demo")
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines()[0] == ("Using index: embedded at .textbook-chat/qdrant, "
                                            "collection 'textbook'")
    assert "Next, with no flags" in first.stderr and '{"level"' not in first.stderr
    ask = cli(tmp_path, "ask", "What does the derivative term of a PID controller do?")
    assert ask.returncode == 0, ask.stderr
    assert "/textbook-chat-sample/docs/pid-control" in ask.stdout  # the demo's index
    assert ask.stderr.splitlines()[0] == (  # and it says so: an author's question is not
        "Using index: embedded at .textbook-chat/qdrant, collection 'textbook', book "  # silently
        "'Signals, Sensors and Control' (textbook/docs) (the bundled sample: for your own "  # the
        "book, run the command in your book's folder, e.g. `cd ../my-book`, or set QDRANT_PATH)")
    questions = one_of_each_kind(tmp_path)  # the whole set is scored in test_eval_sample
    ev = cli(tmp_path, "eval", str(questions), "--json")
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["hit_at_5"] > 0.5
    # The demo's questions are not readers' questions.
    readers = tmp_path / ".textbook-chat" / "feedback.sqlite3"
    logged = [q for (q,) in sqlite3.connect(readers).execute("SELECT question FROM answers")]
    assert logged == ["What does the derivative term of a PID controller do?"]  # the `ask` only
    # A second run re-embeds nothing.
    again = cli(tmp_path, "demo", "--question", "What is loop jitter?")
    assert again.returncode == 0 and "0 embedded" in again.stderr + again.stdout


@pytest.mark.slow
def test_demo_never_syncs_over_an_authors_book(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "mine.md").write_text("# Mine\n\n## Kites\n\nA kite flies on a string in the wind.\n")
    assert cli(tmp_path, "index", "docs").returncode == 0
    demo = cli(tmp_path, "demo", "--question", "What is loop jitter?")
    assert demo.returncode == 0, demo.stderr
    assert "holds another book; the demo uses 'sample-textbook'" in demo.stderr
    assert ("Using index: embedded at .textbook-chat/qdrant, collection 'sample-textbook'"
            in demo.stderr.splitlines())  # the one it then writes and asks
    assert "QDRANT_COLLECTION=sample-textbook textbook-chat ask" in demo.stderr
    assert "Next, on the same index (the collection 'sample-textbook'):" in demo.stderr
    assert "with no flags" not in demo.stderr  # its commands carry the prefix
    ask = cli(tmp_path, "ask", "What flies on a string?")
    assert "docs/mine#kites" in ask.stdout  # the author's index is untouched


@pytest.mark.slow  # five CLI processes; tests/cli/test_another_book.py runs the rule in-process
def test_index_never_syncs_over_another_book(tmp_path):
    for name, text in (("kites", "# Kites\n\n## Lines\n\nA kite flies on a string.\n"),
                       ("boats", "# Boats\n\n## Sails\n\nA boat sails on the wind.\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.md").write_text(text)
    assert cli(tmp_path, "index", "kites").returncode == 0
    other = cli(tmp_path, "index", "boats")
    assert other.returncode == 2, other.stderr
    assert "holds another book (1 page, none of them in boats)" in other.stderr
    assert "Traceback" not in other.stderr
    ask = cli(tmp_path, "ask", "What flies on a string?")
    assert "kites#lines" in ask.stdout  # nothing was deleted
    (tmp_path / "kites" / "more.md").write_text("# More\n\nKites need wind.\n")
    assert cli(tmp_path, "index", "kites").returncode == 0  # the same book syncs as before
    assert cli(tmp_path, "index", "boats", "--recreate").returncode == 0
