"""Bad documents: a clear message naming the file, never a traceback, the rest still indexed."""

from __future__ import annotations

import json

import pytest

from textbook_chat_cli.main import main

GOOD = "---\ntitle: Good\n---\n\n## Fine section\n\n" + "Plenty of words in this paragraph. " * 20 + "\n"


@pytest.fixture
def docs(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "good.md").write_text(GOOD)
    return d


def run_dry(docs, tmp_path, capsys):
    out = tmp_path / "chunks.jsonl"
    code = main(["index", str(docs), "--dry-run", "--json", "--export", str(out)])
    captured = capsys.readouterr()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    return code, json.loads(captured.out), captured.err, rows


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("bad-front.md", b"---\ntitle: [unclosed\n---\n\n## X\n\ntext\n", "front matter"),
        ("latin1.md", "## Caf\xe9\n\ntext\n".encode("latin-1"), "UTF-8"),
        ("binary.md", bytes(range(256)) * 8, "bad"),
        ("unclosed-front.md", b"---\ntitle: x\n\n## A\n\ntext\n", "front matter"),
    ],
)
def test_broken_file_is_named_and_others_still_index(docs, tmp_path, capsys, name, data, expected):
    (docs / name).write_bytes(data)
    code, summary, err, rows = run_dry(docs, tmp_path, capsys)
    assert code == 1
    assert summary["failed"] == 1
    assert name in err and "Traceback" not in err
    assert expected.lower() in err.lower() or "binary" in err.lower()
    assert {r["doc_path"] for r in rows} == {"good.md"}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("empty.md", ""),
        ("no-headings.md", "Just a paragraph with no headings at all, " * 10),
        ("dups.md", "## Setup\n\n" + "a b c " * 30 + "\n\n## Setup\n\n" + "d e f " * 30),
        ("unclosed-fence.md", "## Code\n\n```python\nprint('x')\n## not a heading\n"),
    ],
)
def test_odd_but_valid_files_index(docs, tmp_path, capsys, name, text):
    (docs / name).write_text(text)
    code, summary, err, rows = run_dry(docs, tmp_path, capsys)
    assert code == 0 and summary["failed"] == 0, err
    urls = [r["url"] for r in rows if r["doc_path"] == name]
    assert len(urls) == len(set(urls)) or name != "dups.md"
    if name == "dups.md":
        assert {"/docs/dups#setup", "/docs/dups#setup-1"} <= set(urls)
    if name == "unclosed-fence.md":
        assert not any("not-a-heading" in u for u in urls)
        assert "unclosed-fence.md:3" in err and "never closed" in err
    if name == "empty.md":
        assert "empty.md" in err and "no text" in err


def test_slug_collision_names_both_files(docs, tmp_path, capsys):
    (docs / "a.md").write_text("---\nslug: /same\n---\n\n## A\n\n" + "words " * 60)
    (docs / "b.md").write_text("---\nslug: /same\n---\n\n## B\n\n" + "words " * 60)
    code, summary, err, rows = run_dry(docs, tmp_path, capsys)
    assert code == 1 and summary["failed"] == 1
    assert "a.md" in err and "b.md" in err and "slug" in err


@pytest.mark.slow  # parses and chunks 10 MB (~1.5 s)
def test_ten_megabyte_file(docs, tmp_path, capsys):
    para = "A long paragraph of text about sensors and control loops. " * 30 + "\n\n"
    body = "".join(f"## Section {i}\n\n{para * 3}" for i in range(2000))
    (docs / "huge.md").write_text(body)
    assert (docs / "huge.md").stat().st_size > 10_000_000
    code, summary, err, rows = run_dry(docs, tmp_path, capsys)
    assert code == 0 and summary["failed"] == 0
    assert all(r["token_count"] <= 512 for r in rows)


def test_missing_docs_dir_is_a_usage_error(tmp_path, capsys):
    assert main(["index", str(tmp_path / "nope"), "--dry-run"]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_other_model_exit_code_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "q"))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "docs").mkdir()
    assert main(["index", str(tmp_path / "docs")]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
