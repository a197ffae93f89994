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


@pytest.mark.parametrize(("name", "text", "line", "opening"), [
    ("tag.mdx", "# Racks\n\n## Pinion\n\nA rack is a bar.\n\n<Unclosed attr={1\n\nMore.\n", 7,
     "JSX tag (`<Unclosed attr={1`)"),
    ("inline.md", "## Part\n\nSee <Figure src={img} for the\ndiagram, then carry on.\n", 3,
     "JSX tag (`<Figure src={img} for the`)"),  # .md is MDX too (markdown.format mdx)
    ("expr.mdx", "## Part\n\nText.\n\n{props.items.map((x) => x.name\n", 5,
     "`{` expression (`{props.items.map((x) => x.name`)"),
])
def test_mdx_a_docusaurus_build_stops_on_is_indexed_with_a_warning_naming_its_line(
        docs, tmp_path, capsys, name, text, line, opening):
    """An MDX tag or {expression} never closed: Docusaurus fails to build the page; the index
    keeps its text and says where, once (MDX stops at the first)."""
    (docs / name).write_text(text)
    code, summary, err, rows = run_dry(docs, tmp_path, capsys)
    assert code == 0 and summary["failed"] == 0, err
    assert any(r["doc_path"] == name for r in rows)
    warnings = [w for w in err.splitlines() if "MDX:" in w]
    assert warnings == [f"warning: {name}:{line}: MDX: this {opening} is never closed, so "
                        "Docusaurus cannot build the page; close it, or write `\\<` or `\\{` "
                        "for the character itself"], err


def test_mdx_that_builds_gives_no_warning(docs, tmp_path, capsys):
    """Tags and expressions that close, across lines too, a '<' followed by a space, code spans
    and code blocks; and Markdown with `markdown.format: detect` (.md is CommonMark there)."""
    (docs / "fine.mdx").write_text(
        "## Part\n\nPress <kbd>Ctrl</kbd> then `a <b` and x < y, {props.x} here.\n\n"
        "<Tabs>\n<TabItem value=\"a\" label={`A ${1}`}>\n\nText in a tab.\n\n</TabItem>\n</Tabs>\n\n"
        "<Quiz questions={[\n  {q: 'a > b?'},\n]} />\n\n```jsx\n<Open attr={1\n```\n\n"
        "- a list <Badge text=\"new\" /> item\n")
    code, summary, err, rows = run_dry(docs, tmp_path, capsys)
    assert code == 0 and "MDX:" not in err, err
    (docs / "plain.md").write_text("## Part\n\nA <Unclosed attr={1 in CommonMark is text.\n")
    assert main(["index", str(docs), "--dry-run", "--markdown-format", "detect"]) == 0
    assert "MDX:" not in capsys.readouterr().err  # .md is CommonMark with `detect`
    assert main(["index", str(docs), "--dry-run"]) == 0
    assert "plain.md:3: MDX:" in capsys.readouterr().err  # and MDX by default
