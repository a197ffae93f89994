"""bench_eval --fake-model: the questions go through POST /chat's model path, over HTTP to the
fake OpenAI-compatible server in passage mode, which stops with the run."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import httpx
import pytest

from tests.fakes.embedder import FakeEmbedder
from tests.fakes.openai_server import FakeOpenAI, passage_responder

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_eval", ROOT / "benchmarks" / "bench_eval.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

pytestmark = pytest.mark.slow


def test_fake_model_server_answers_from_passages_and_stops_with_the_run():
    with bench._fake_model(True) as url:
        port = int(url.split(":")[2].split("/")[0])
        reply = httpx.post(f"{url}/chat/completions", json={"messages": [{
            "role": "user", "content": "<context>\n[1] Loop\nJitter is the variation of the "
                                       "loop period.\n</context>\n<question>\nWhat is jitter?"
                                       "\n</question>"}]}).json()
        assert reply["choices"][0]["message"]["content"] == (
            "Jitter is the variation of the loop period [1].")
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # stopped
    with bench._fake_model(False) as url:
        assert url is None


def test_every_question_goes_through_the_model_over_http(tmp_path):
    corpus = ROOT / "samples" / "textbook"
    questions = bench.corpus_questions(corpus)
    with FakeOpenAI(responder=passage_responder) as server:
        runs = bench.bench_corpus(corpus, tmp_path, embedder=FakeEmbedder(64),
                                  runs=(("hybrid", "hybrid", None),), model_url=server.base_url)
        answers = [r for r in server.chat_requests
                   if "<context>" in r.body["messages"][-1]["content"]]
    assert runs["hybrid"]["n"] == len(questions)
    assert answers  # the questions that were not refused before the model were sent to it
    assert all(r.headers["authorization"] == "Bearer fake-model" for r in server.chat_requests)


def test_answer_all_lowers_the_fitted_threshold_only_while_the_run_lasts():
    from functions.answers import decision

    fitted = {m: p.threshold for m, p in decision.policies().items()}
    assert fitted and all(t > 0 for t in fitted.values())
    with bench._answer_all(True):
        assert all(decision.policy_for(m).threshold == 0.0 for m in fitted)
        assert all(decision.policy_for(m).weights == decision.policies()[m].weights
                   for m in fitted)
    assert {m: decision.policy_for(m).threshold for m in fitted} == fitted
    with bench._answer_all(False):
        assert {m: decision.policy_for(m).threshold for m in fitted} == fitted


def test_a_fused_embedder_s_models_are_cached_each_in_its_file(tmp_path, monkeypatch):
    """make_local_embedder wraps each model of `a+b` in its own cache and fuses them again (it
    swapped the parts of the fused embedder in place before): vectors equal the uncached ones,
    and a second run embeds nothing."""
    import numpy as np

    from functions.search.embeddings.local import FusedEmbedder
    from functions.settings import Settings

    class Part(FakeEmbedder):
        runtime, runtime_label = "numpy", "numpy float32"

        def embed_array(self, texts):
            return np.asarray(self.embed_batch(texts), dtype=np.float32)

    parts = [Part(8, "model-a"), Part(4, "model-b")]
    monkeypatch.setattr(bench, "make_embedder", lambda _settings: FusedEmbedder(parts))
    texts = ["Jitter is the variation of the loop period.", "A PID controller"]
    want = FusedEmbedder(parts).embed_array(texts)
    for _run in range(2):
        cached = bench.make_local_embedder(Settings(), tmp_path)
        assert isinstance(cached, FusedEmbedder) and cached.model_name == "model-a+model-b"
        assert cached.runtime_label == "numpy float32"
        assert np.allclose(cached.embed_array(texts), want)
        assert [p.calls for p in parts] == [2, 2]  # the second run read both files
    assert sorted(f.name for f in tmp_path.iterdir()) == ["model-a.jsonl", "model-b.jsonl"]
