"""Which doc keeps a page URL that several docs claim: the one indexed first, never the one that
merely sorts first. Docusaurus serves one page per URL, so the index holds one doc per URL."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    key: str  # the doc's key in the index (doc path, with version and locale)
    source: str  # the file, as the author knows it
    url: str  # the page URL it would be served at


@dataclass(frozen=True)
class Refusal:
    claim: Claim
    holder: Claim

    @property
    def reason(self) -> str:
        return (f"its page URL {self.claim.url} is already the URL of {self.holder.source}, which "
                "was indexed first; Docusaurus serves only one page there, so this one is not "
                "indexed. Give one of them another `slug:` (or `id:`) in its front matter.")


def resolve(claims: Iterable[Claim], indexed: Mapping[str, str]) -> list[Refusal]:
    """claims: every doc of this run in discovery order (unchanged docs too, at their stored
    URL); indexed: doc key -> page URL already in the index before this run.
    A doc already indexed at the URL keeps it; else the first claim in discovery order."""
    holders: dict[str, tuple[int, Claim]] = {}
    losers: list[Claim] = []
    for claim in claims:
        rank = 0 if indexed.get(claim.key) == claim.url else 1
        held = holders.get(claim.url)
        if held is None or rank < held[0]:
            if held is not None:
                losers.append(held[1])
            holders[claim.url] = (rank, claim)
        else:
            losers.append(claim)
    return [Refusal(c, holders[c.url][1]) for c in losers]
