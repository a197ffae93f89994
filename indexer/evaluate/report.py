"""Render an eval summary: a table for people, one JSON object for machines."""

from __future__ import annotations

import json
from collections.abc import Mapping

JSON_KEYS = (
    "hit_at_1",
    "hit_at_5",
    "mrr_at_10",
    "page_hit_at_5",
    "abstain_unanswerable",
    "abstain_answerable",
    "citation_validity",
    "by_kind",
    "misses",
    "latency_ms",
)
_ROWS = (
    ("hit_at_1", "section hit@1"),
    ("hit_at_5", "section hit@5"),
    ("mrr_at_10", "section MRR@10"),
    ("page_hit_at_5", "page hit@5"),
    ("abstain_unanswerable", "unanswerable flagged low-confidence"),
    ("abstain_answerable", "answerable wrongly flagged"),
    ("citation_validity", "citations that are indexed sections"),
)


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def to_json(summary: Mapping) -> str:
    """One JSON object with exactly the keys of JSON_KEYS (issue 5)."""
    return json.dumps({key: summary[key] for key in JSON_KEYS}, indent=2)


def not_indexed_lines(summary: Mapping) -> list[str]:
    return [
        f"{item['id']} (line {item['line']}): {item['reason']}: {item['expected']}"
        for item in summary.get("not_indexed", [])
    ]


def to_table(summary: Mapping, title: str = "") -> str:
    out = [title] if title else []
    for key, label in _ROWS:
        out.append(f"  {label:<38} {fmt(summary[key])}")
    lat = summary["latency_ms"]
    out.append(f"  {'latency p50 / p95 (ms)':<38} {fmt(lat['p50'], 1)} / {fmt(lat['p95'], 1)}")
    out += ["", f"  {'kind':<13} {'n':>3} {'hit@1':>6} {'hit@5':>6} {'MRR':>6} {'page@5':>7}"
            f" {'flagged':>8} {'not indexed':>12}"]
    for kind, s in summary["by_kind"].items():
        flagged = s.get("abstain_unanswerable", s.get("abstain_answerable"))
        out.append(
            f"  {kind:<13} {s['n']:>3} {fmt(s.get('hit_at_1'), 2):>6} "
            f"{fmt(s.get('hit_at_5'), 2):>6} {fmt(s.get('mrr_at_10'), 2):>6} "
            f"{fmt(s.get('page_hit_at_5'), 2):>7} {fmt(flagged, 2):>8} "
            f"{s.get('not_indexed', 0):>12}"
        )
    if summary["misses"]:
        out += ["", f"  misses ({len(summary['misses'])}):"]
        for m in summary["misses"]:
            out.append(f"  - {m['id']} (line {m['line']}, {m['kind']}): {m['question']}")
            out.append(f"      expected {m['expected'] or 'low confidence'}: {m['reason']}")
            for i, url in enumerate(m["retrieved"], start=1):
                out.append(f"      {i}. {url}")
    lines = not_indexed_lines(summary)
    if lines:
        out += ["", f"  expected section not indexed ({len(lines)}; left out of the scores):"]
        out += [f"  - {line}" for line in lines]
    return "\n".join(out)


_COMPARE = (
    ("hit_at_1", "hit@1"),
    ("hit_at_5", "hit@5"),
    ("mrr_at_10", "MRR@10"),
    ("page_hit_at_5", "page@5"),
    ("abstain_unanswerable", "unans.flag"),
    ("abstain_answerable", "ans.flag"),
    ("citation_validity", "citations"),
)


def comparison_table(rows: Mapping[str, Mapping]) -> str:
    """One line per run (label -> summary), for comparing retrieval modes and corpora."""
    width = max([len(label) for label in rows] + [10])
    head = f"{'run':<{width}} " + " ".join(f"{name:>10}" for _, name in _COMPARE)
    out = [head + f" {'p50 ms':>8} {'p95 ms':>8}"]
    for label, s in rows.items():
        cells = " ".join(f"{fmt(s[key]):>10}" for key, _ in _COMPARE)
        lat = s["latency_ms"]
        out.append(
            f"{label:<{width}} {cells} {fmt(lat['p50'], 1):>8} {fmt(lat['p95'], 1):>8}"
        )
    return "\n".join(out)
