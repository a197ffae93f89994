"""Build: discover -> parse -> chunk. Every doc of a docs folder (or of every version and
locale a build manifest lists) becomes chunks; one broken doc is recorded as a Problem and the
rest go on. Nothing here touches the store: `indexer.sync` writes what this builds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from functions.errors import ConfigError
from functions.search import sparse
from functions.search.contract import Chunk, chunk_id
from indexer.collisions import Claim, resolve
from indexer.discover import Discovered, partials, sources
from indexer.lint import doc_warnings
from indexer.model import ChunkOptions, Problem, SiteSettings
from indexer.plan import doc_key

# Bump when parsing or chunking changes what a file becomes: every file is re-parsed once.
PIPELINE_VERSION = "4"  # 2: chunks list the sections they hold; 3: with their heading levels;
# 4: and which blocks sit in an admonition (Chunk.asides)


@dataclass
class BuildResult:
    """Chunks of every doc that parsed, and the problems of those that did not."""

    chunks: list[Chunk] = field(default_factory=list)
    files: int = 0
    failed: list[Problem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # drafts
    unchanged_docs: list[str] = field(default_factory=list)  # doc keys with the same source hash
    warnings: list[Problem] = field(default_factory=list)  # indexed, but the author should look
    refused: list[str] = field(default_factory=list)  # doc keys whose page URL another doc holds
    docs_dir: Path | None = None  # what was read (messages name it)

    @property
    def failed_docs(self) -> list[str]:
        """Docs whose stored points stay: they failed this run (a refused doc's points go)."""
        return [p.key or p.source for p in self.failed if (p.key or p.source) not in self.refused]


def build_chunks(
    docs_dir: Path,
    site: SiteSettings,
    chunk_options: ChunkOptions,
    routes: dict | None = None,
    progress: Callable[[str], None] | None = None,
    known: Mapping[str, str] | None = None,
    indexed: Mapping[str, str] | None = None,
    found: Discovered | None = None,
) -> BuildResult:
    """Parse and chunk every doc (of every version and locale the manifest routes list);
    one broken doc is recorded and the rest go on.
    known: doc key -> source hash already indexed; such files are not parsed again.
    indexed: doc key -> page URL already indexed; of docs sharing a URL, that one keeps it.
    found: the run's discovery (indexer.discover.sources), when the caller already walked."""
    result = BuildResult(docs_dir=docs_dir)
    claims: list[Claim] = []  # every doc's page URL, in discovery order
    parsed = []
    fingerprints: dict[Path, str] = {}  # per docs folder: its partials shape its docs
    found = found or sources(docs_dir, routes)
    result.skipped = list(found.skipped)
    result.files = len(found)
    for src in found.files:
        rel, route = src.key, src.route
        key = doc_key(src.doc_path, route.version if route else "", route.locale if route else "")

        def problem(line, reason, rel=rel, key=key):
            result.failed.append(Problem(rel, line, reason, key))

        if progress:
            progress(rel)
        try:
            if src.root not in fingerprints:
                fingerprints[src.root] = settings_fingerprint(src.root, site, chunk_options,
                                                              found.partials_of(src.root))
            source_hash = file_hash(src.path, fingerprints[src.root], route)
        except FileNotFoundError:
            problem(None, f"is not found at {src.path}" + (
                ": give the docs folder of the site the build manifest was written for "
                "(e.g. website/docs), or rebuild the site" if route else ""))
            continue
        except OSError as exc:
            problem(None, f"could not be read ({exc.strerror})")
            continue
        if known and known.get(key) == source_hash:
            result.unchanged_docs.append(key)
            if indexed and indexed.get(key):
                claims.append(Claim(key, rel, indexed[key]))
            continue
        from indexer.markdown import parse_document  # here: a no-op sync never imports it

        try:
            doc = parse_document(src.path, src.root, site, route=route)
        except Problem as exc:
            where = rel if exc.source in ("", src.doc_path) else exc.source
            result.failed.append(Problem(where, exc.line, exc.reason, key))
            continue
        except Exception as exc:  # a parser bug must not stop the other documents
            problem(None, f"could not be read ({type(exc).__name__}: {exc})")
            continue
        if doc is None:  # draft
            result.skipped.append(rel)
            continue
        claims.append(Claim(key, rel, doc.url))
        parsed.append((key, rel, doc, route, source_hash))
    refused = {r.claim.key: r for r in resolve(claims, indexed or {})}
    if parsed:
        from indexer.chunker import chunk_document
        from indexer.markdown import is_mdx
    for key, rel, doc, route, source_hash in parsed:
        if key in refused:
            continue
        try:
            chunks = chunk_document(doc, chunk_options)
            result.chunks.extend(_in_edition(c, route, source_hash) for c in chunks)
            result.warnings.extend(doc_warnings(doc, chunks, mdx=is_mdx(rel, site)))
        except Exception as exc:
            result.failed.append(Problem(rel, None, f"could not be chunked ({type(exc).__name__}: "
                                         f"{exc})", key))
    for key, refusal in refused.items():  # its old points go: the URL shows the other page
        result.failed.append(Problem(refusal.claim.source, None, refusal.reason, key))
        result.refused.append(key)
        if key in result.unchanged_docs:
            result.unchanged_docs.remove(key)
    return result


def _in_edition(chunk: Chunk, route, source_hash: str) -> Chunk:
    """The chunk as a point of its version and locale (ids of the default edition unchanged)."""
    if route is None or not route.version:
        return replace(chunk, source_hash=source_hash)
    return replace(
        chunk, source_hash=source_hash, version=route.version, locale=route.locale,
        untranslated=route.untranslated,
        chunk_id=chunk_id(chunk.doc_path, chunk.chunk_index, route.edition),
    )


def settings_fingerprint(docs_dir: Path, site: SiteSettings, chunk_options: ChunkOptions,
                         partial_files: list[Path] | None = None) -> str:
    """Everything besides a file's own bytes that shapes its chunks, partials included
    (`partial_files`: docs_dir's, when the caller's walk found them)."""
    bm25 = (sparse.K1, sparse.B, sparse.AVG_DOC_WORDS, sparse.STEMMER_VERSION)  # stored too
    h = hashlib.sha256(f"{PIPELINE_VERSION}|{bm25}|{site}|{chunk_options}".encode())
    for f in partials(docs_dir) if partial_files is None else partial_files:
        h.update(f.as_posix().encode() + f.read_bytes())
    return h.hexdigest()


def file_hash(path: Path, fingerprint: str, route) -> str:
    h = hashlib.sha256(fingerprint.encode())
    h.update(repr(route).encode())
    h.update(path.read_bytes())
    return h.hexdigest()[:32]


def require_docs(built: BuildResult, docs_dir: Path, with_manifest: bool) -> None:
    """Indexing nothing is a mistake (a wrong folder), not a success that empties the index."""
    if built.chunks or built.unchanged_docs or built.failed:
        return
    if with_manifest:
        raise ConfigError(
            "nothing to index: none of the docs the build manifest lists was found "
            f"from {docs_dir}. Give the docs folder the manifest's site was built from "
            "(e.g. website/docs), or rebuild the site so the manifest is current.")
    raise ConfigError(
        f"nothing to index: {docs_dir} holds no Markdown docs with text ({built.files} files "
        f"read, {len(built.skipped)} drafts). Give the Docusaurus docs folder, e.g. website/docs.")


def export_jsonl(chunks: list[Chunk], path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for chunk in chunks:
            fh.write(json.dumps(chunk.payload(), ensure_ascii=False) + "\n")
