"""Render an eval summary: a table for people, one JSON object for machines."""

from __future__ import annotations

import json
from collections.abc import Mapping

JSON_KEYS = (
    "n",
    "outcomes",
    "answered_cites_expected",
    "reached",
    "unanswerable_answered",
    "answer_cites_expected",
    "answer_cites_also",
    "abstain_answerable",
    "abstain_unanswerable",
    "hit_at_1",
    "hit_at_5",
    "mrr_at_10",
    "page_hit_at_5",
    "citation_validity",
    "by_kind",
    "misses",
    "not_citable",
    "latency_ms",
)
_ROWS = (
    ("answered_cites_expected", "answered: citing the expected section"),
    ("reached", "expected section reached"),
    ("unanswerable_answered", "unanswerable answered"),
    ("answer_cites_expected", "answers citing the expected section"),
    ("answer_cites_also", "multi: answers citing the second section"),
    ("abstain_answerable", "answerable refused"),
    ("abstain_unanswerable", "unanswerable refused"),
    ("hit_at_1", "section hit@1"),
    ("hit_at_5", "section hit@5"),
    ("mrr_at_10", "section MRR@10"),
    ("page_hit_at_5", "page hit@5"),
    ("citation_validity", "citations that exist"),
)


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def to_json(summary: Mapping) -> str:
    """One JSON object with exactly the keys of JSON_KEYS (issue 5)."""
    return json.dumps({key: summary[key] for key in JSON_KEYS}, indent=2)


def not_citable_lines(summary: Mapping) -> list[str]:
    return [
        f"{item['id']} (line {item['line']}): {item['reason']}: {item['expected']}"
        for item in summary.get("not_citable", [])
    ]


def outcome_counts(summary: Mapping) -> str:
    """answered / closest / not covered, as counts."""
    counts = summary.get("outcomes") or {}
    return "/".join(str(counts.get(k, 0)) for k in ("answered", "closest", "not_covered"))


def to_table(summary: Mapping, title: str = "") -> str:
    out = [title] if title else []
    out.append(f"  {'answered / closest / not covered':<38} {outcome_counts(summary)}")
    for key, label in _ROWS:
        out.append(f"  {label:<38} {fmt(summary[key])}")
    lat = summary["latency_ms"]
    out.append(f"  {'latency p50 / p95 (ms)':<38} {fmt(lat['p50'], 1)} / {fmt(lat['p95'], 1)}")
    out += ["", f"  {'kind':<12} {'n':>3} {'ans/clo/not':>11} {'reached':>7} {'cites':>6} "
            f"{'also':>6} {'refused':>8} {'hit@1':>6} {'hit@5':>6} {'MRR':>6} {'not citable':>12}"]
    for kind, s in summary["by_kind"].items():
        refused = s.get("abstain_unanswerable", s.get("abstain_answerable"))
        out.append(
            f"  {kind:<12} {s['n']:>3} {outcome_counts(s):>11} {fmt(s.get('reached'), 2):>7} "
            f"{fmt(s.get('answer_cites_expected'), 2):>6} "
            f"{fmt(s.get('answer_cites_also'), 2) if 'answer_cites_also' in s else '':>6} "
            f"{fmt(refused, 2):>8} {fmt(s.get('hit_at_1'), 2):>6} {fmt(s.get('hit_at_5'), 2):>6} "
            f"{fmt(s.get('mrr_at_10'), 2):>6} {s.get('not_citable', ''):>12}"
        )
    if summary["misses"]:
        out += ["", f"  misses ({len(summary['misses'])}):"]
        for m in summary["misses"]:
            out.append(f"  - {m['id']} (line {m['line']}, {m['kind']}): {m['question']}")
            out.append(f"      expected {m['expected'] or 'no answer'}: {m['reason']}")
            if m["cited"]:
                out.append(f"      cited: {', '.join(m['cited'])}")
            answer = " ".join(m.get("answer", "").split())
            if answer:
                out.append(f"      answer: {answer[:160]}{'…' if len(answer) > 160 else ''}")
    return "\n".join(out)


_COMPARE = (
    ("answered_cites_expected", "ans.cites"),
    ("reached", "reached"),
    ("unanswerable_answered", "unans.answ"),
    ("answer_cites_expected", "cites"),
    ("abstain_answerable", "ans.refused"),
    ("abstain_unanswerable", "unans.refus"),
    ("hit_at_1", "hit@1"),
    ("hit_at_5", "hit@5"),
    ("mrr_at_10", "MRR@10"),
    ("page_hit_at_5", "page@5"),
    ("citation_validity", "citations"),
)


def comparison_table(rows: Mapping[str, Mapping]) -> str:
    """One line per run (label -> summary), for comparing retrieval modes and corpora."""
    width = max([len(label) for label in rows] + [10])
    head = f"{'run':<{width}} " + " ".join(f"{name:>11}" for _, name in _COMPARE)
    out = [head + f" {'p50 ms':>8} {'p95 ms':>8}"]
    for label, s in rows.items():
        cells = " ".join(f"{fmt(s.get(key)):>11}" for key, _ in _COMPARE)
        lat = s["latency_ms"]
        out.append(
            f"{label:<{width}} {cells} {fmt(lat['p50'], 1):>8} {fmt(lat['p95'], 1):>8}"
        )
    return "\n".join(out)
