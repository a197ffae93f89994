"""Retrieval: embed the question with the collection's own model, hybrid search, re-rank
(functions.search.ranking)."""

from __future__ import annotations

import threading
from dataclasses import replace
from urllib.parse import unquote

from functions.errors import ModelMismatchError, UnknownFilter
from functions.search.contract import (
    CURRENT_VERSION,
    META_DIMENSION,
    META_MODEL,
    META_SITE_URL,
    Editions,
)
from functions.search.ranking import page_key, rerank, section_key
from functions.search.sparse import SHORT, encode_query, terms
from functions.search.types import SearchBackend, SearchHit
from functions.settings import LOCAL_EMBEDDING_MODEL, OPENAI_EMBEDDING_MODEL

# Fetched from Qdrant, then re-ranked down to top_k. Twice what is kept: with 10, a tie of RRF
# scores at the cut changed the 10th candidate between two askings of the same question (2 of
# 220 answers); with 20 such a tie still moved two decisions' probabilities, so the cut is now
# made in a fixed order (query.TIE_SLACK, ranking.rank).
CANDIDATES = 20
# A follow-up's context (functions.answers.prompt.follow_up_context) against its own words: the query
# vector is question + 0.5 * context (normalised), the context's other words weigh 0.5 in BM25.
# Chosen on pai-ali's follow-ups (0.5 and 0.7: 6/6 and 5/6 cite the expected section; 1.0, the
# previous question simply joined to the text, 4/6). A question of SHORT content words or
# fewer ("history please", "why?") says little on its own: its context counts fully.
CONTEXT_WEIGHT = 0.5


def deployment_mode(model: str | None) -> str | None:
    """The deployment mode whose API embeds with this model (docs/deploying.md: "Two ways to
    answer"): each embeds with one model only (serverless.yml sets no EMBEDDING_MODEL), so
    another model (text-embedding-3-large, all-mpnet-base-v2, a folder, a model served by
    Ollama) matches neither and None is returned."""
    return {LOCAL_EMBEDDING_MODEL: "offline", OPENAI_EMBEDDING_MODEL: "openai"}.get(model or "")


# how an author gets each mode: the API's deploy parameter and the reindex workflow's input
_MODE_HOW = {
    "offline": ('the offline mode (no OpenAI key): deploy the API with --param="answers=offline" '
                "(locally: EMBEDDING_PROVIDER=local)",
                "answers: offline"),
    "openai": ('the OpenAI mode: deploy the API with --param="answers=openai" and the OpenAI key '
               "(locally: OPENAI_API_KEY)",
               "answers: openai"),
}


def check_model(meta: dict, model_name: str, dimension: int) -> None:
    """Refuse to query a collection built with another embedding model, naming the deployment
    mode that matches the index and the reindex that matches the API."""
    built_model = meta.get(META_MODEL)
    built_dim = int(meta.get(META_DIMENSION) or 0)
    if built_model == model_name and (not dimension or built_dim == dimension):
        return
    message = (f"The index was built with {built_model!r} ({built_dim} dimensions) but the "
               f"assistant embeds questions with {model_name!r} ({dimension}).")
    built_mode, api_mode = deployment_mode(built_model), deployment_mode(model_name)
    if built_mode and api_mode and built_mode != api_mode:
        message += (f" This index matches {_MODE_HOW[built_mode][0]}; or keep this API and "
                    f"re-index with the reindex workflow's `{_MODE_HOW[api_mode][1]}`.")
    elif api_mode and not built_mode:  # no deployed API embeds with the index's model
        message += (f" A deployed API embeds only with {LOCAL_EMBEDDING_MODEL!r} "
                    f"(answers=offline) or {OPENAI_EMBEDDING_MODEL!r} (answers=openai): re-index "
                    f"with the reindex workflow's `{_MODE_HOW[api_mode][1]}` (locally: set "
                    "EMBEDDING_PROVIDER/EMBEDDING_MODEL to the index's model).")
    else:
        message += (" The site author should set EMBEDDING_PROVIDER/EMBEDDING_MODEL to the "
                    "index's model, or re-index with the new one.")
    raise ModelMismatchError(message)


EDITION_KEYS = ("version", "locale")
PAGE_CHUNKS = 1000  # the most chunks of one page fetch_page reads (a long page has ~100)


def check_editions(filters: dict[str, str], known: Editions) -> None:
    """Refuse a `version` or `locale` filter the book was not indexed with, naming the ones
    it has."""
    for key, have, default, noun in (("version", known.versions, known.default_version, "version"),
                                     ("locale", known.locales, known.default_locale, "locale")):
        asked = filters.get(key)
        if asked is None or asked in have:
            continue
        if not have:
            raise UnknownFilter(f"This book has no {noun}s (it was indexed without them), so "
                                f'`filters.{key}` "{asked[:40]}" matches nothing; leave it out.')
        names = [f'"{v}"' + (" (the default)" if v == default else "") for v in have]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise UnknownFilter(f'This book has no {noun} "{asked[:40]}": `filters.{key}` may be '
                            f"{listed}, or leave it out to use the reader's page's {noun}.")


def named_version(filters: dict[str, str], known: Editions) -> dict[str, str]:
    """filters with `version` as the index names it: "next" (the unreleased docs in the site's
    URLs, `/docs/next/...`) is "current"; on a book without versions, "current" or "next" is
    the book itself (no filter)."""
    version = filters.get("version")
    if version not in ("next", CURRENT_VERSION) or version in known.versions:
        return filters
    if not known.versions:
        return {k: v for k, v in filters.items() if k != "version"}
    if CURRENT_VERSION in known.versions:
        return {**filters, "version": CURRENT_VERSION}
    return filters


def page_edition(page_url: str | None, known: Editions) -> dict[str, str]:
    """The version and locale a page that is not one of the book's (the home page, a blog post,
    a category index) shows in its path: Docusaurus serves another locale under
    `<baseUrl><locale>/` and another version under `<docs root>/<name>` ("next": current)."""
    segments = set(page_key(page_url).split("/"))
    out = {}
    labels = {("next" if v == CURRENT_VERSION else v): v for v in known.versions
              if v != known.default_version}
    version = next((labels[s] for s in labels if s in segments), None)
    if version:
        out["version"] = version
    locale = next((loc for loc in known.locales
                   if loc != known.default_locale and loc in segments), None)
    if locale:
        out["locale"] = locale
    return out


def page_variants(url: str | None) -> list[str]:
    """The ways the index may spell the reader's page URL (trailing slash, percent-encoding)."""
    key = page_key(url)
    if not key:
        return []
    out = []
    for path in (key, unquote(key)):
        for form in (path, path + "/" if path != "/" else path):
            if form not in out:
                out.append(form)
    return out


def site_url_of(meta: dict) -> str | None:
    """The site's address the index records (`https://you.github.io`), without a trailing
    slash; None when it was indexed without one (a URL is then the path on the site)."""
    url = meta.get(META_SITE_URL)
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return url.rstrip("/")
    return None


def absolute(url: str, site_url: str | None) -> str:
    """A site-relative URL (`/book/docs/x#y`, which holds the baseUrl) on the site's address."""
    return f"{site_url}{url}" if site_url and url.startswith("/") else url


class Retriever:
    """Question → top chunks. Checks the collection's model once per container."""

    def __init__(self, backend: SearchBackend, embedder):
        self.backend = backend
        self.embedder = embedder
        self._checked = False
        self.editions: Editions | None = None  # what the index records (None: not recorded)
        self.site_url: str | None = None  # the site's address, when the index records it
        self._plain = False  # the book has no versions or locales (learnt from the first page)
        self._lock = threading.Lock()  # local-mode Qdrant is not safe across threads

    def ensure_model(self) -> None:
        if not self._checked:
            meta = self.backend.collection_meta()
            check_model(meta, self.embedder.model_name, int(self.embedder.dimension or 0))
            self.editions = Editions.from_meta(meta)
            self.site_url = site_url_of(meta)
            self._plain = self.editions is not None and not (self.editions.versions
                                                             or self.editions.locales)
            self._checked = True

    def reload(self) -> None:
        """Read the collection's metadata again on the next question (its model and editions):
        `serve --watch` calls it after each re-sync, which may add a version or a locale."""
        with self._lock:
            self._checked, self._plain, self.editions = False, False, None

    def candidates(self, query: str, filters: dict[str, str] | None = None,
                   mode: str = "hybrid", limit: int = CANDIDATES,
                   context: str = "") -> list[SearchHit]:
        """`context`: earlier words of the conversation that say what the query's "it" or
        "that route" is, searched at CONTEXT_WEIGHT against the query's own words."""
        with self._lock:
            self.ensure_model()
            # Embedded in sparse mode too: the dense similarity is what confidence is made of.
            if not context.strip():
                dense = self.embedder.embed_batch([query])[0]
                return self.backend.search(dense, encode_query(query), limit, filters or None,
                                           mode)
            weight = CONTEXT_WEIGHT if len(set(terms(query))) > SHORT else 1.0
            own, extra = self.embedder.embed_batch([query, context])
            dense = [a + weight * b for a, b in zip(own, extra, strict=True)]
            norm = sum(v * v for v in dense) ** 0.5 or 1.0
            indices, weights = encode_query(query)
            words = dict(zip(indices, weights, strict=True))
            for index in encode_query(context)[0]:
                words.setdefault(index, weight)
            sparse = (sorted(words), [words[i] for i in sorted(words)])
            return self.backend.search([v / norm for v in dense], sparse, limit,
                                       filters or None, mode)

    def page_chunks(self, url: str, limit: int = PAGE_CHUNKS) -> list[dict]:
        """The payloads of every chunk of the page `url` (a page or section URL, absolute or a
        path on the site), in the page's order; [] when the book has no such page."""
        variants = page_variants(url)
        if not variants:
            return []
        with self._lock:
            self.ensure_model()
            unit = [1.0] + [0.0] * (int(self.embedder.dimension or 1) - 1)  # any vector finds them
            hits = self.backend.search(unit, ([], []), limit, {"page_url": variants}, "dense")
        return sorted((h.payload for h in hits), key=lambda p: int(p.get("chunk_index") or 0))

    def word_search(self, text: str, filters: dict[str, str] | None = None,
                    limit: int = 10) -> list[SearchHit]:
        """The chunks that best match text's words (BM25 only, no embedding): where, if
        anywhere, the book uses a name."""
        with self._lock:
            self.ensure_model()
            zero = [0.0] * int(self.embedder.dimension or 1)
            return self.backend.search(zero, encode_query(text), limit, filters or None, "sparse")

    def retrieve(self, query: str, page_url: str | None = None,
                 filters: dict[str, str] | None = None, mode: str = "hybrid",
                 top_k: int = 5, context: str = "") -> list[SearchHit]:
        return self.ranked(query, page_url, filters, mode, top_k, context)[0]

    def ranked(self, query: str, page_url: str | None = None,
               filters: dict[str, str] | None = None, mode: str = "hybrid", top_k: int = 5,
               context: str = "") -> tuple[list[SearchHit], list[SearchHit]]:
        """The top chunks with the reader's page lifted, and the same search's top chunks
        without it (what the decision to answer reads): one embedding, one search."""
        filters = self.edition_filters(page_url, filters)
        fallback = self.fallback_locale(filters)
        if fallback:  # the reader's locale first, the default language where it says more
            both = {**filters, "locale": [filters["locale"], fallback]}
            found = self.into_locale(self.candidates(query, both, mode, 2 * CANDIDATES,
                                                     context), filters)
        else:
            found = self.candidates(query, filters, mode, context=context)
        lifted = rerank(found, page_url, top_k)
        return lifted, (rerank(found, None, top_k) if page_url else lifted)

    def edition_filters(self, page_url: str | None, filters: dict[str, str] | None) -> dict:
        """filters, plus the version and locale of the reader's page where not given, else the
        ones Docusaurus serves at the docs root and at baseUrl: an answer comes from one edition
        and language, the one being read. A version or locale the book lacks is refused."""
        filters = dict(filters or {})
        with self._lock:
            self.ensure_model()
        known = self.editions
        if known is not None:
            filters = named_version(filters, known)
            check_editions(filters, known)
        variants = page_variants(page_url)
        if self._plain or ("version" in filters and "locale" in filters):
            return filters
        hits = []
        if variants:
            with self._lock:
                # Any vector finds a point of that page; a unit one is valid for cosine.
                unit = [1.0] + [0.0] * (int(self.embedder.dimension or 1) - 1)
                hits = self.backend.search(unit, ([], []), 1, {"page_url": variants}, "dense")
        if hits:
            edition = {k: str(hits[0].payload[k]) for k in EDITION_KEYS if hits[0].payload.get(k)}
            self._plain = not edition  # indexed without a manifest: one edition, no lookups
            filters = {**edition, **filters}
        elif known is not None and page_url:
            filters = {**page_edition(page_url, known), **filters}
        if known is not None:  # no page of the book: the site's own default edition
            if known.default_version:
                filters.setdefault("version", known.default_version)
            if known.default_locale:
                filters.setdefault("locale", known.default_locale)
        return filters

    def fallback_locale(self, filters: dict) -> str | None:
        """The default locale, when the question reads another one: a translated page's text
        is in its own language, and a question in the book's first language finds the right
        section only in the original (an English question on an Urdu page)."""
        known, locale = self.editions, filters.get("locale")
        if known and known.default_locale and locale and locale != known.default_locale:
            return known.default_locale
        return None

    def into_locale(self, found: list[SearchHit], filters: dict) -> list[SearchHit]:
        """The hits of the reader's locale, and those of the default locale that say more
        (a higher cosine than the locale's best) brought into it: the same text on the
        locale's page (an untranslated page) is that page's point; a section the locale's
        page has (the same heading id, or the heading in the same place of a translation
        with as many headings) is cited there, with the original's words as they matched (in
        place of the locale's own chunks of that section, which matched less); a section the
        locale does not have stays the default locale's, marked `untranslated`."""
        locale = filters["locale"]
        own = [h for h in found if h.payload.get("locale") == locale]
        best = max((h.dense_score for h in own), default=0.0)
        other = [h for h in found if h.payload.get("locale") != locale and h.dense_score > best]
        if not other:
            return own
        where = {"doc_path": sorted({str(h.payload.get("doc_path", "")) for h in other}),
                 "locale": [locale, self.fallback_locale(filters)],
                 **({"version": filters["version"]} if "version" in filters else {})}
        with self._lock:
            unit = [1.0] + [0.0] * (int(self.embedder.dimension or 1) - 1)
            pages = self.backend.search(unit, ([], []), 1024, where, "dense")
        theirs = [p for p in pages if p.payload.get("locale") == locale]
        same_text = {str(p.payload.get("content_hash")): p for p in theirs}
        page_of = {str(p.payload.get("doc_path", "")): p for p in theirs}
        headings = _translated_headings(theirs, [p for p in pages
                                                 if p.payload.get("locale") != locale])
        out = list(own)
        for hit in other:
            twin = same_text.get(str(hit.payload.get("content_hash")))
            doc = str(hit.payload.get("doc_path", ""))
            if twin is not None:
                moved = replace(hit, point_id=twin.point_id, payload=twin.payload)
            elif str(hit.payload.get("anchor") or "") in headings.get(doc, {}):
                moved = replace(hit, payload=_cited_in(hit.payload, page_of[doc].payload,
                                                       headings[doc]))
            else:
                moved = replace(hit, payload={**hit.payload, "untranslated": True})
            # the original said more than the locale's own words for this section
            out = [h for h in out if h.payload.get("locale") != locale
                   or section_key(h) != section_key(moved)]
            if moved.point_id not in {h.point_id for h in out}:
                out.append(moved)
        return sorted(out, key=lambda h: -h.score)


def _in_order(points: list[SearchHit]) -> list[tuple[str, str, str, int | None]]:
    """A page's headings (id, url, title, level) in reading order, from its points."""
    out: dict[str, tuple[str, str, str, int | None]] = {}
    for p in sorted(points, key=lambda p: int(p.payload.get("chunk_index") or 0)):
        sections = p.payload.get("sections") or [{
            "anchor": p.payload.get("anchor"), "url": p.payload.get("url"),
            "title": p.payload.get("section_title"), "level": p.payload.get("heading_level")}]
        for s in sections:
            anchor = str(s.get("anchor") or "")
            level = s.get("level")
            out.setdefault(anchor, (anchor, str(s.get("url") or ""), str(s.get("title") or ""),
                                    int(level) if level is not None else None))
    return list(out.values())


def _translated_headings(theirs: list[SearchHit], original: list[SearchHit]
                         ) -> dict[str, dict[str, tuple[str, str, str]]]:
    """doc_path -> the original's heading id -> (id, url, title) on the locale's page: the same id
    (`{#id}`, which Docusaurus's write-heading-ids gives every heading), else the heading in
    the same place of the translation (`_same_places`)."""
    out: dict[str, dict[str, tuple[str, str, str]]] = {}
    for doc in {str(p.payload.get("doc_path", "")) for p in theirs}:
        mine = _in_order([p for p in theirs if p.payload.get("doc_path") == doc])
        first = _in_order([p for p in original if p.payload.get("doc_path") == doc])
        out[doc] = {heading[0]: heading[:3] for heading in mine}
        for a, heading in _same_places(first, mine):
            out[doc].setdefault(a, heading[:3])
    return out


def _same_places(first: list[tuple], mine: list[tuple]) -> list[tuple[str, tuple]]:
    """(original id, translated heading) for the translation's headings whose ids the original
    lacks (a heading translated without `{#id}` is slugged from its translated text). The
    headings both share cut both pages into runs, taken in pairs: in a pair of runs as long as
    each other (a whole translation, or a part translated in place) the headings pair in order;
    in a shorter translated run (a translation that stops partway, or lags sections the
    original added later) they pair from the run's start as long as their levels agree, and
    then a heading whose level only one of the original's remaining headings has pairs with
    that one. Anything less certain stays unpaired: cited on the original's page, marked."""
    ids, first_ids = {heading[0] for heading in mine}, {heading[0] for heading in first}
    cuts, last = [], -1
    for i, heading in enumerate(first):  # the shared ids, in an order both pages keep
        j = next((k for k, h in enumerate(mine) if h[0] == heading[0]), -1)
        if j > last:
            cuts.append((i, j))
            last = j
    pairs: list[tuple[str, tuple]] = []
    ends = [(-1, -1), *cuts, (len(first), len(mine))]
    for (i0, j0), (i1, j1) in zip(ends, ends[1:], strict=False):
        theirs_run = [h for h in first[i0 + 1:i1] if h[0] not in ids]
        mine_run = [h for h in mine[j0 + 1:j1] if h[0] not in first_ids]
        if not mine_run or not theirs_run:
            continue
        if len(mine_run) == len(theirs_run):
            pairs += [(a[0], b) for a, b in zip(theirs_run, mine_run, strict=True)]
            continue
        k = 0
        while (k < len(mine_run) and k < len(theirs_run) and mine_run[k][3] is not None
               and mine_run[k][3] == theirs_run[k][3]):
            pairs.append((theirs_run[k][0], mine_run[k]))
            k += 1
        rest, at = theirs_run[k:], 0
        for heading in mine_run[k:]:
            same = [n for n, h in enumerate(rest) if heading[3] is not None and h[3] == heading[3]]
            if len(same) == 1 and same[0] >= at:
                pairs.append((rest[same[0]][0], heading))
                at = same[0] + 1
    return pairs


def _cited_in(original: dict, page: dict, headings: dict[str, tuple[str, str, str]]) -> dict:
    """The original's text cited on the locale's page: that page's URLs and titles, each
    heading the chunk holds linked where the locale's page has it."""
    own = headings.get(str(original.get("anchor") or "")) or ("", str(page.get("url")), "")
    sections = [{**s, "anchor": found[0], "url": found[1], "title": found[2] or s.get("title")}
                for s in original.get("sections") or []
                if (found := headings.get(str(s.get("anchor") or "")))]
    return {**original, "anchor": own[0], "url": own[1],
            "section_title": own[2] or original.get("section_title"),
            "page_url": page.get("page_url"), "locale": page.get("locale"),
            "doc_title": page.get("doc_title") or original.get("doc_title"),
            "sections": sections}
