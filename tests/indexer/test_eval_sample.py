"""End-to-end eval of the sample textbook with its own questions, through the POST /chat path.

The real local MiniLM must clear the thresholds; a random embedder (same dimension, vectors
that carry no meaning) must miss them, so the thresholds can tell broken retrieval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer.build import build_chunks
from indexer.chunker import ChunkOptions
from indexer.evaluate.questions import read_questions
from indexer.evaluate.report import JSON_KEYS
from indexer.evaluate.runner import indexed_urls, run_eval
from indexer.site_config import read_site_config
from indexer.sync import sync_chunks
from tests.fakes.embedder import RandomEmbedder
from tests.minilm import cached_minilm
from textbook_chat_cli.main import main

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "textbook"
QUESTIONS = SAMPLE / "questions.jsonl"
COLLECTION = "sample-eval"
# What the sample must reach with MiniLM + hybrid (measured with the decision fitted on pai-ali,
# functions/data/answer_policy.json, on its 39 answerable questions and 8 unanswerable ones:
# 31 answered / 15 closest / 1 not covered, answers cite the expected section 28 of 31 times,
# the expected section is reached for 36 of 39, no unanswerable question answered; hit@5 0.974).
MIN_ANSWERED_CITES, MIN_REACHED, MAX_UNANSWERABLE_ANSWERED = 0.85, 0.85, 0.15
MIN_HIT5, MIN_MRR = 0.9, 0.75

pytestmark = pytest.mark.slow


def index_sample(path: Path, embedder) -> Settings:
    settings = Settings(qdrant_path=str(path), collection=COLLECTION)
    built = build_chunks(SAMPLE / "docs", read_site_config(SAMPLE), ChunkOptions())
    assert not built.failed, built.failed
    store = QdrantStore.open(settings)
    try:
        sync_chunks(built, store, embedder, recreate=True)
    finally:
        store.close()
    return settings


@pytest.fixture(scope="module")
def minilm_index(tmp_path_factory):
    embedder = cached_minilm()  # each text embedded once in this process (tests/minilm.py)
    return index_sample(tmp_path_factory.mktemp("qdrant-minilm"), embedder), embedder


@pytest.fixture(scope="module")
def hybrid_run(minilm_index):
    """The sample's questions through the hybrid chat path, once for the tests that read it."""
    settings, embedder = minilm_index
    return run_eval(read_questions(QUESTIONS), settings, "hybrid", embedder=embedder)


def passes(summary: dict) -> bool:
    return (
        (summary["answered_cites_expected"] or 0.0) >= MIN_ANSWERED_CITES
        and summary["reached"] >= MIN_REACHED
        and summary["hit_at_5"] >= MIN_HIT5
        and summary["mrr_at_10"] >= MIN_MRR
        and summary["unanswerable_answered"] <= MAX_UNANSWERABLE_ANSWERED
    )


def test_minilm_hybrid_clears_the_thresholds(hybrid_run):
    s = hybrid_run.summary
    assert passes(s), {k: s[k] for k in JSON_KEYS if k not in ("misses", "by_kind")}
    assert s["citation_validity"] == 1.0
    assert s["page_hit_at_5"] >= s["hit_at_5"]


def test_a_first_sentence_of_the_top_hit_answerer_misses_the_thresholds(minilm_index, hybrid_run):
    """The same retrieval, answered the naive way (always answer, cite the top chunk)."""
    from dataclasses import replace

    from indexer.evaluate.metrics import summarize

    settings, run = minilm_index[0], hybrid_run
    naive = [replace(o, citations=o.ranking[:1], low_confidence=False, outcome="answered")
             for o in run.outcomes]
    store = QdrantStore.open(settings)
    try:
        urls = indexed_urls(store)
    finally:
        store.close()
    assert not passes(summarize(naive, urls))
    assert passes(run.summary)


def test_every_sample_question_names_an_indexed_section(minilm_index):
    settings, _ = minilm_index
    store = QdrantStore.open(settings)
    try:
        urls = indexed_urls(store)
    finally:
        store.close()
    expected = [q for q in read_questions(QUESTIONS) if q.answerable]
    assert [q.expected_url for q in expected if q.expected_url not in urls] == []


def test_a_random_embedder_misses_the_thresholds(tmp_path):
    embedder = RandomEmbedder()
    settings = index_sample(tmp_path / "qdrant-random", embedder)
    s = run_eval(read_questions(QUESTIONS), settings, "hybrid", embedder=embedder).summary
    assert not passes(s)
    dense = run_eval(read_questions(QUESTIONS), settings, "dense", embedder=embedder).summary
    assert dense["hit_at_5"] < 0.5


def _cli(tmp_path, monkeypatch, capsys, settings, *args) -> tuple[int, str, str]:
    monkeypatch.setenv("QDRANT_PATH", settings.qdrant_path)
    monkeypatch.setenv("QDRANT_COLLECTION", settings.collection)
    for name in ("QDRANT_URL", "OPENAI_API_KEY", "EMBEDDING_PROVIDER", "CHAT_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    code = main(["eval", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def one_of_each_kind(folder: Path, *extra: dict) -> Path:
    """The sample's first question of each kind (and extra rows) as a question file: what the
    command's output and exit code are checked on (the whole set is scored above, in process)."""
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    firsts = list({row["kind"]: row for row in reversed(rows)}.values())[::-1]
    path = folder / "kinds.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in [*firsts, *extra]),
                    encoding="utf-8")
    return path


def test_cli_json_has_exactly_the_issue_keys(minilm_index, tmp_path, monkeypatch, capsys):
    code, out, _ = _cli(tmp_path, monkeypatch, capsys, minilm_index[0], one_of_each_kind(tmp_path),
                        "--json", "--min-hit5", "0.5")
    assert code == 0
    data = json.loads(out)
    assert tuple(data) == JSON_KEYS
    assert set(data["by_kind"]) == {"concept", "fact", "howto", "keyword", "unanswerable",
                                    "followup"}
    assert set(data["latency_ms"]) == {"p50", "p95"}


def test_cli_exits_1_below_a_threshold(minilm_index, tmp_path, monkeypatch, capsys):
    # one question expects a section it does not ask about: no retrieval ranks it first
    first = json.loads(QUESTIONS.read_text(encoding="utf-8").splitlines()[0])
    elsewhere = {**first, "id": "elsewhere", "question": "What is aliasing?"}
    code, out, err = _cli(tmp_path, monkeypatch, capsys, minilm_index[0],
                          one_of_each_kind(tmp_path, elsewhere),
                          "--retrieval", "sparse", "--min-hit1", "1.0", "--min-mrr", "1")
    assert code == 1
    assert "section hit@1" in out and "FAILED: section hit@1" in err


def test_cli_usage_errors_exit_2(minilm_index, tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exc:
        _cli(tmp_path, monkeypatch, capsys, minilm_index[0], QUESTIONS, "--min-hit5", "1.5")
    assert exc.value.code == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    code, _, err = _cli(tmp_path, monkeypatch, capsys, minilm_index[0], bad)
    assert code == 2 and f"{bad}:1: missing field(s)" in err


def test_cli_counts_a_section_that_cannot_be_cited_as_a_miss(minilm_index, tmp_path,
                                                               monkeypatch, capsys):
    first = json.loads(QUESTIONS.read_text(encoding="utf-8").splitlines()[0])
    gone = {**first, "id": "gone", "expected_url": first["expected_page"] + "#no-such-heading"}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(gone) + "\n", encoding="utf-8")
    code, out, err = _cli(tmp_path, monkeypatch, capsys, minilm_index[0], path, "--json")
    assert code == 0
    assert err.count("gone (line 2): expected section cannot be cited") == 1  # printed once
    data = json.loads(out)
    assert [m["id"] for m in data["misses"] if m["id"] == "gone"] == ["gone"]
    assert data["by_kind"][first["kind"]]["not_citable"] == 1
    assert data["answer_cites_expected"] <= 0.5


def test_cli_exits_1_when_nothing_can_be_scored(minilm_index, tmp_path, monkeypatch, capsys):
    first = json.loads(QUESTIONS.read_text(encoding="utf-8").splitlines()[0])
    moved = {**first, "expected_url": "/elsewhere" + first["expected_url"],
             "expected_page": "/elsewhere" + first["expected_page"]}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(moved) + "\n", encoding="utf-8")
    code, _, err = _cli(tmp_path, monkeypatch, capsys, minilm_index[0], path)
    assert code == 1
    assert "nothing could be scored" in err and "--site-dir" in err


def test_naive_baseline_builds_its_own_collection(minilm_index):
    settings, embedder = minilm_index
    run = run_eval(read_questions(QUESTIONS), settings, "hybrid", baseline="naive",
                   embedder=embedder)
    assert run.collection == COLLECTION + "-naive"
    assert run.summary["citation_validity"] in (None, 1.0)


def test_an_admonition_is_an_aside_to_its_section(minilm_index, monkeypatch, capsys):
    """The README's own question: 'Derivative kick' holds one paragraph and a ':::tip Log
    everything while tuning' that MiniLM rates a hair closer to the question; the paragraph
    that answers is quoted, and a question about the tip's own text still gets the tip."""
    settings = minilm_index[0]
    monkeypatch.setenv("QDRANT_PATH", settings.qdrant_path)
    monkeypatch.setenv("QDRANT_COLLECTION", settings.collection)
    for name in ("QDRANT_URL", "OPENAI_API_KEY", "EMBEDDING_PROVIDER", "CHAT_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    assert main(["ask", "--json", "What is derivative kick and how do I avoid it?"]) == 0
    kick = json.loads(capsys.readouterr().out)
    assert "from the measurement instead" in kick["answer"]
    assert "Record setpoint" not in kick["answer"]  # the tip, quoted alone before
    assert kick["citations"][0]["url"].endswith("/pid-control#derivative-kick")
    assert main(["ask", "--json", "Why should I not use time.time() to measure loop intervals?"]) == 0
    clock = json.loads(capsys.readouterr().out)
    assert clock["answer"].startswith("`time.time()` can jump")  # ':::tip Use a monotonic clock'
    # "What is X?" quotes where the book names X ("… called an alias"), not a later use of it
    assert main(["ask", "--json", "What is aliasing?"]) == 0
    alias = json.loads(capsys.readouterr().out)
    assert "called an alias" in alias["answer"], alias["answer"]
