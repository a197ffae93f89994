"""The chunk payload, point ids and collection layout shared by the indexer and the API."""

from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "sparse"
KEYWORD_INDEXES = ("module", "doc_path", "content_type", "tags", "version", "locale", "page_url")
# Keys stored in the collection's metadata so a query with another model is refused.
META_MODEL = "embedding_model"
META_DIMENSION = "embedding_dimension"
META_SCHEMA = "schema_version"
META_SYNCED_AT = "synced_at"  # ISO time of the last finished `index` / watch re-sync
META_EDITIONS = "editions"  # the versions and locales indexed (Editions.as_meta), at each sync
META_SITE_URL = "site_url"  # the site's address (docusaurus.config `url`), when the sync knew it
# Which book: {"title": the config's `title`, "site": its folder's name, "docs": the docs folder
# in it}, so every command can say what it answers from (names only: GET /health shows it).
META_BOOK = "book"
# Payload key of a chunk's quotable blocks embedded at index time (local models only), so the
# offline answer embeds only the question: {"keys": [block_key(text), ...], "f16": base64 of
# the vectors, little-endian float16, one after the other}. Absent in indexes written before it
# and in OpenAI-embedded ones: the blocks are then embedded when asked (the same answer).
BLOCK_VECTORS = "block_vectors"
SCHEMA_VERSION = 1
# The payload fields a sync reads of every point (indexer.sync): the embedded index's integrity
# check reads them in its scan, so a sync reads the payloads once (EdgeStore.verify).
SYNC_FIELDS = ("doc_path", "version", "locale", "content_hash", "source_hash", "page_url",
               "doc_title")
CURRENT_VERSION = "current"  # the docs plugin's name for the unreleased version (`docs/`)


def chunk_id(doc_path: str, chunk_index: int, edition: str = "") -> str:
    """Stable 16-hex id of a chunk: sha256(doc_path::chunk_index)[:16]; a doc of another
    version or locale ("1.0@en", "current@ur") hashes "edition|doc_path::chunk_index", so the
    same section in two editions is two points and an unversioned book keeps its ids."""
    key = f"{edition}|{doc_path}" if edition else doc_path
    return hashlib.sha256(f"{key}::{chunk_index}".encode()).hexdigest()[:16]


def point_id(chunk_hex: str) -> int:
    """Qdrant point id: the 64-bit unsigned integer of the chunk id."""
    return int(chunk_hex, 16)


def content_hash(text: str) -> str:
    """Hash of the exact text that is embedded; equal hashes may share a vector."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Editions:
    """The docs versions and locales a book was indexed with, and the ones Docusaurus serves at
    the docs root (default_version, e.g. "1.0" or "current") and at baseUrl (default_locale):
    what `filters.version`/`filters.locale` may name, and what a question with no page reads.
    Empty for a book indexed without a build manifest (its chunks have no version or locale)."""

    versions: tuple[str, ...] = ()
    locales: tuple[str, ...] = ()
    default_version: str = ""
    default_locale: str = ""

    def as_meta(self) -> dict:
        return {"versions": list(self.versions), "locales": list(self.locales),
                "default_version": self.default_version, "default_locale": self.default_locale}

    @classmethod
    def from_meta(cls, meta: dict) -> Editions | None:
        """The editions a collection's metadata records; None for an index written before
        they were recorded (the next `index` run records them)."""
        data = meta.get(META_EDITIONS)
        if not isinstance(data, dict):
            return None
        return cls(tuple(str(v) for v in data.get("versions") or ()),
                   tuple(str(v) for v in data.get("locales") or ()),
                   str(data.get("default_version") or ""), str(data.get("default_locale") or ""))


@dataclass(frozen=True)
class Chunk:
    """One Qdrant point's payload (DESIGN.md 'Chunk payload')."""

    chunk_id: str
    doc_path: str
    doc_id: str
    doc_title: str
    module: str
    heading_path: list[str]
    section_title: str
    section_number: str
    heading_level: int
    anchor: str
    url: str
    page_url: str
    chunk_index: int
    token_count: int
    content: str
    content_hash: str
    content_type: str
    tags: list[str] = field(default_factory=list)
    embedding_model: str = ""
    # The docs version ("current", "1.0") and locale the page belongs to ("" when indexed
    # without a build manifest); untranslated: a page of another locale that Docusaurus
    # serves with the default locale's text.
    version: str = ""
    locale: str = ""
    untranslated: bool = False
    # Every heading whose text the chunk holds: [{anchor, title, url, start, level}], start =
    # offset in `content` where that heading's text begins (functions.answers.sections reads
    # it), level = the heading's (1: the page's top; absent in indexes written before it).
    sections: list[dict] = field(default_factory=list)
    # The blocks that sit in an admonition (:::tip Title … :::), which the page shows as an
    # aside to the section's text: [{title, opens}], title = the admonition's (else its type),
    # opens = the block's first words (aside_opening). Absent in indexes written before it.
    asides: list[dict] = field(default_factory=list)
    # Hash of the source file and every setting that shaped this chunk: an unchanged file is
    # not even re-parsed on the next sync.
    source_hash: str = ""
    # Not stored in the payload: the text that is embedded (title + heading path + content).
    embed_text: str = ""

    def payload(self) -> dict:
        data = asdict(self)
        data.pop("embed_text")
        return data

    @property
    def point_id(self) -> int:
        return point_id(self.chunk_id)


def aside_opening(text: str) -> str:
    """A block's first words, as an admonition's block is recognised in a chunk's content
    (Chunk.asides): whitespace folded, at most 60 characters."""
    return " ".join(text.split())[:60]


def block_key(text: str) -> str:
    """The key a block's embedded text is stored under (BLOCK_VECTORS): 16 hex of its sha256.
    A text the answer code now builds otherwise has another key: it is embedded when asked."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def pack_block_vectors(texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> dict:
    """The BLOCK_VECTORS value of these texts' vectors (float16: ~1 kB of payload a block)."""
    flat = [float(x) for v in vectors for x in v]
    return {"keys": [block_key(t) for t in texts],
            "f16": base64.b64encode(struct.pack(f"<{len(flat)}e", *flat)).decode("ascii")}


def unpack_block_vectors(payload: Mapping) -> dict[str, tuple[float, ...]]:
    """block_key -> vector of a payload's BLOCK_VECTORS; empty when it has none or they do not
    read (an index written otherwise is answered as one without them)."""
    data = payload.get(BLOCK_VECTORS)
    if not isinstance(data, dict):
        return {}
    keys = data.get("keys")
    try:
        raw = base64.b64decode(str(data.get("f16", "")), validate=True)
    except ValueError:
        return {}
    if not isinstance(keys, list) or not keys or len(raw) % (2 * len(keys)):
        return {}
    flat = struct.unpack(f"<{len(raw) // 2}e", raw)
    size = len(flat) // len(keys)
    return {str(k): flat[i * size:(i + 1) * size] for i, k in enumerate(keys)}
