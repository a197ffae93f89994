"""Which files are docs, found in one walk of the docs folder per index run."""

from __future__ import annotations

from pathlib import Path

from functions.settings import Settings
from indexer.discover import sources, walk
from indexer.job import build, index_docs, resolve_job
from tests.fakes.embedder import FakeEmbedder


def _docs(base: Path) -> Path:
    docs = base / "docs"
    (docs / "guide" / "_parts").mkdir(parents=True)
    (docs / ".hidden").mkdir()
    (docs / "node_modules").mkdir()
    (docs / "intro.md").write_text("# Intro\n\nEncoders count ticks of a shaft.\n")
    (docs / "guide" / "wiring.MDX").write_text("# Wiring\n\nWires join the boards.\n")
    (docs / "guide" / "_parts" / "note.md").write_text("A shared note.\n")
    (docs / "_snippet.mdx").write_text("Another partial.\n")
    (docs / ".hidden" / "secret.md").write_text("# Not a page\n")
    (docs / "node_modules" / "readme.md").write_text("# Vendored\n")
    (docs / "guide" / ".draft.md").write_text("# Hidden file\n")
    (docs / "image.png").write_bytes(b"\x89PNG")
    return docs


def test_one_walk_finds_the_docs_and_the_partials(tmp_path):
    docs = _docs(tmp_path)
    found, partial_files = walk(docs)
    assert found == ["guide/wiring.MDX", "intro.md"]
    assert partial_files == [docs / "_snippet.mdx", docs / "guide" / "_parts" / "note.md"]
    discovered = sources(docs, None)
    assert [f.key for f in discovered.files] == found and len(discovered) == 2
    assert discovered.partials_of(docs) == partial_files


def _count_walks(monkeypatch, docs: Path) -> list[Path]:
    """Every rglob of the docs folder (a spy: the real walk still runs)."""
    walks: list[Path] = []
    real = Path.rglob

    def rglob(self, pattern, *args, **kwargs):
        if self == docs:
            walks.append(self)
        return real(self, pattern, *args, **kwargs)

    monkeypatch.setattr(Path, "rglob", rglob)
    return walks


def test_an_index_run_walks_the_docs_folder_once(tmp_path, monkeypatch):
    docs = _docs(tmp_path)
    job = resolve_job(docs)
    walks = _count_walks(monkeypatch, docs)
    summary = index_docs(job, Settings(qdrant_path=str(tmp_path / "q"), collection="t"),
                         embedder=FakeEmbedder(), say=lambda _: None)
    assert summary.embedded > 0
    assert len(walks) == 1  # was three: the progress bar's count, the build, the partials
    walks.clear()
    assert build(job).chunks and len(walks) == 1
