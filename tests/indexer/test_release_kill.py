"""`kill -9` at each step of `release stage` and `release switch`: the real command in a
subprocess, against a Qdrant server stand-in over HTTP (tests/functions/qdrant_rest.py over a
real local-mode engine), embeddings from the fake OpenAI server. The process SIGKILLs itself at
a named checkpoint (indexer/checkpoint.py), as a lost runner or the OOM killer would. After each
kill: `status`, `switch`, `rollback`, and the points readers see through the alias equal the
dry-run chunk count of the docs of the release they are on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from indexer.checkpoint import KILL_AT
from tests.functions.qdrant_rest import qdrant_rest
from textbook_chat_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## {title}\n\n{title} is explained in this section with words of its own: {words}.\n\n"


def write_book(docs: Path, pages: int, sections: int, edition: str) -> None:
    """pages x sections short sections (one chunk each): over 256 points, several copy batches."""
    for old in docs.glob("*.md"):
        old.unlink()
    docs.mkdir(parents=True, exist_ok=True)
    for p in range(pages):
        body = "".join(SECTION.format(title=f"Part {p} topic {s}",
                                      words=f"{edition} {p * 31 + s} gear cam belt shaft")
                       for s in range(sections))
        (docs / f"page-{p:02d}.md").write_text(f"# Page {p}\n\n{body}", encoding="utf-8")


@pytest.fixture
def book(tmp_path, monkeypatch, fake_openai):
    client = QdrantClient(":memory:")
    with qdrant_rest(client) as (url, seen):
        env = {"QDRANT_URL": url, "QDRANT_COLLECTION": "book", "OPENAI_API_KEY": "test-key",
               "OPENAI_BASE_URL": fake_openai.base_url, "EMBEDDING_PROVIDER": "openai",
               "CHAT_PROVIDER": "extractive"}
        for name in ("QDRANT_PATH", "QDRANT_API_KEY", "DYNAMODB_TABLE", KILL_AT):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(tmp_path)
        yield Book(tmp_path / "docs", client, env, seen)
    client.close()


class Book:
    def __init__(self, docs: Path, client, env: dict, seen: list[dict]):
        self.docs, self.client, self.env, self.seen = docs, client, env, seen

    def edition(self, name: str, pages: int) -> int:
        """Write this edition of the book; its dry-run chunk count (the reference)."""
        write_book(self.docs, pages, 10, name)
        return self.dry_run()

    def dry_run(self) -> int:
        out = _run(["index", str(self.docs), "--dry-run", "--json"])
        return json.loads(out.stdout)["chunks"]

    def killed(self, step: str, *args: str) -> None:
        env = {**{k: v for k, v in os.environ.items() if k not in self.env}, **self.env,
               KILL_AT: step, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        before = len(self.seen)
        proc = subprocess.run([sys.executable, "-m", "textbook_chat_cli", "release", *args],
                              env=env, capture_output=True, text=True, timeout=300)
        # it died at the step (if not: its output, what it asked of the server and what the
        # server held, in full: a str message is not shortened by pytest)
        assert proc.returncode == -signal.SIGKILL, (
            f"exit {proc.returncode}\nstderr:\n{proc.stderr}\nstdout:\n{proc.stdout}\n"
            f"requests:\n{self.requests(before)}\nserver:\n{self.server_state()}")

    def server_state(self) -> dict:
        """The aliases and each collection's metadata and point count, as the server holds them."""
        return {"aliases": {a.alias_name: a.collection_name for a in self.client.get_aliases().aliases},
                "collections": {c.name: (self.client.get_collection(c.name).config.metadata,
                                         self.client.count(c.name, exact=True).count)
                                for c in self.client.get_collections().collections}}

    def requests(self, since: int) -> str:
        """The requests the server answered since `since`, one line each (bodies shortened)."""
        return "\n".join(f"{r['method']} {r['path']} -> {r.get('status')} {str(r['body'])[:160]}"
                         for r in self.seen[since:])

    def readers(self) -> int:
        """The points a reader's query sees: through the alias, as the API asks."""
        names = {c.name for c in self.client.get_collections().collections}
        aliases = {a.alias_name for a in self.client.get_aliases().aliases}
        return self.client.count("book", exact=True).count if "book" in names | aliases else 0

    def names(self) -> list[str]:
        return sorted(c.name for c in self.client.get_collections().collections
                      if c.name.startswith("book--"))


class _Out:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


def _run(argv) -> _Out:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return _Out(code, out.getvalue(), err.getvalue())


def release(*args: str) -> _Out:
    return _run(["release", *args])


def publish(book: Book) -> str:
    staged = release("stage", str(book.docs))
    assert staged.returncode == 0, staged.stderr
    name = staged.stdout.strip().splitlines()[-1]
    assert release("switch", name).returncode == 0
    return name


SLOW = pytest.mark.slow  # a subprocess each (~5 s): every step runs in the whole suite (scripts/test.sh)
STAGE_STEPS = [pytest.param("stage-created", marks=SLOW), pytest.param("stage-copied-1", marks=SLOW),
               pytest.param("stage-seeded", marks=SLOW), pytest.param("sync-upserted", marks=SLOW),
               pytest.param("stage-synced", marks=SLOW)]


@pytest.mark.parametrize("step", STAGE_STEPS)
def test_a_stage_killed_before_its_last_write_is_never_published(book, step):
    n1 = book.edition("first", 30)  # 300 sections: two copy batches of 256
    live = publish(book)
    assert book.readers() == n1
    n2 = book.edition("second", 27)
    book.killed(step, "stage", str(book.docs))
    half = [n for n in book.names() if n != live]
    assert len(half) == 1, book.names()
    if step == "stage-copied-1":  # the case: 256 of the live release's 300 points
        assert book.client.count(half[0], exact=True).count == 256 < n1
    status = release("status")
    assert status.stdout.splitlines()[0] == f"book -> {live}"
    assert f"  {half[0]}  INCOMPLETE: its stage did not finish" in status.stdout
    refused = release("switch", half[0])
    assert refused.returncode == 2 and "is incomplete" in refused.stderr
    back = release("rollback")
    assert back.returncode == 2 and "No earlier release" in back.stderr
    assert book.readers() == n1  # readers never left the complete release
    # the workflow's clean-up, then the next run publishes the new edition
    assert release("discard", "--incomplete").returncode == 0
    assert book.names() == [live]
    second = publish(book)
    assert book.readers() == n2
    assert release("rollback").returncode == 0 and book.readers() == n1
    assert release("switch", second).returncode == 0 and book.readers() == n2


@SLOW
def test_a_stage_killed_after_its_last_write_can_be_published(book):
    n1 = book.edition("first", 30)
    live = publish(book)
    n2 = book.edition("second", 27)
    book.killed("stage-complete", "stage", str(book.docs))  # before printing its name
    (staged,) = [n for n in book.names() if n != live]
    assert f"  {staged}  complete, {n2} points; never live" in release("status").stdout
    assert release("switch", staged).returncode == 0 and book.readers() == n2
    assert release("rollback").returncode == 0 and book.readers() == n1


@pytest.mark.parametrize("step", [pytest.param("switch-recorded", marks=SLOW), pytest.param("switch-aliased", marks=SLOW),
                                  pytest.param("switch-pruned-1", marks=SLOW)])
def test_a_switch_killed_at_any_step_leaves_readers_on_a_complete_release(book, step):
    n1 = book.edition("first", 30)
    first = publish(book)
    second = publish(book)  # the same text: n1 points
    n3 = book.edition("third", 27)
    staged = release("stage", str(book.docs)).stdout.strip().splitlines()[-1]
    book.killed(step, "switch", staged, "--keep", "1")
    now = n1 if step == "switch-recorded" else n3
    assert book.readers() == now
    status = release("status").stdout.splitlines()
    assert status[0] == f"book -> {second if step == 'switch-recorded' else staged}"
    if step == "switch-recorded":  # readers never saw it: not "was live"
        assert f"  {staged}  complete, {n3} points; never live" in status
    # switch again (finishes pruning; a no-op once readers see it), then roll back and forth
    assert release("switch", staged, "--keep", "1").returncode == 0
    assert book.readers() == n3
    assert first not in book.names()  # pruned: neither live nor readers' previous
    assert release("rollback").returncode == 0 and book.readers() == n1
    assert book.names() == [second, staged]  # the one readers were on before is never pruned


@SLOW
def test_a_first_switch_killed_between_its_two_requests_says_what_to_run(book):
    n1 = book.edition("first", 30)
    assert _run(["index", str(book.docs)]).returncode == 0  # a plain collection `book`
    assert book.readers() == n1
    staged = release("stage", str(book.docs)).stdout.strip().splitlines()[-1]
    book.killed("switch-legacy-deleted", "switch", staged)
    assert book.readers() == 0  # the one gap Qdrant cannot close: now open until re-run
    status = release("status").stdout.splitlines()
    assert status[0] == (f"book -> nothing: readers see no index. A switch to {staged} was "
                         f"stopped half-way; run `textbook-chat release switch {staged}` to "
                         "finish it.")
    back = release("rollback")
    assert back.returncode == 2 and f"textbook-chat release switch {staged}" in back.stderr
    again = release("switch", staged)
    assert again.returncode == 0 and book.readers() == n1
    assert "before: book" in again.stderr


def test_an_uninterrupted_first_switch_prints_its_gap(book):
    book.edition("first", 3)
    assert _run(["index", str(book.docs)]).returncode == 0
    staged = release("stage", str(book.docs)).stdout.strip().splitlines()[-1]
    done = release("switch", staged)
    assert done.returncode == 0
    assert "The plain collection 'book' made by `index` was replaced by the alias: for " in done.stderr
    assert " ms (deleting it, then creating the alias) no index was live" in done.stderr
