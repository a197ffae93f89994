"""On Lambda, init builds what the first request would load (so SnapStart snapshots it and the
first reader does not wait), without calling any service; elsewhere nothing changes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, sys
import functions.api.handlers.{kind} as h
import functions.tokens as t
print(json.dumps({{"built": sorted(h.deps._built), "encoding": t.encoding.cache_info().currsize,
                  "words": t.common_words.cache_info().currsize,
                  "model_loaded": getattr(h.deps._built.get("embedder"), "_encoder", None) is not None,
                  "bad": sorted(m for m in sys.modules if m.startswith(("functions.search.embeddings",
                                "functions.search.store", "functions.search.retrieval", "functions.search.qdrant_http")))}}))
"""


def _init(kind: str, tmp_path: Path, on_lambda: bool, offline: bool = False) -> tuple[dict, bool]:
    """Imports the handler in a fresh process; services point at a socket that records whether
    anything connected."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", free_port(18730, 18739)))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENAI_", "QDRANT_", "AWS_", "DYNAMODB_", "EMBEDDING_"))}
        env.update(PYTHONPATH=str(ROOT), OPENAI_API_KEY="sk-init-test", OPENAI_BASE_URL=url,
                   QDRANT_URL=url, QDRANT_PATH=str(tmp_path / "none"))
        if on_lambda:
            env["AWS_LAMBDA_FUNCTION_NAME"] = f"textbook-chat-ci-{kind}"
        if offline:  # --param="answers=offline": the local model, no key
            env.update(EMBEDDING_PROVIDER="local", CHAT_PROVIDER="extractive")
            del env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"]
        out = subprocess.run([sys.executable, "-c", PROBE.format(kind=kind)], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        listener.settimeout(0.05)
        try:
            listener.accept()[0].close()
            connected = True
        except TimeoutError:
            connected = False
    return json.loads(out.stdout.strip().splitlines()[-1]), connected


def test_chat_init_on_lambda_builds_clients_and_common_words_without_calling_anything(tmp_path):
    got, connected = _init("chat", tmp_path, on_lambda=True)
    assert {"embedder", "retriever", "rate_limiter", "spend_cap", "feedback",
            "chat_model"} <= set(got["built"]), got["built"]
    # the words respelling reads, without building the tokenizer (only huge selections count)
    assert got["words"] == 1 and got["encoding"] == 0
    assert not connected  # building is not calling: no request leaves init


def test_selection_init_on_lambda_stays_clear_of_search(tmp_path):
    got, connected = _init("selection", tmp_path, on_lambda=True)
    assert {"rate_limiter", "chat_model"} <= set(got["built"])
    assert "retriever" not in got["built"] and got["bad"] == [] and not connected
    assert not (tmp_path / "none").exists()


def test_off_lambda_nothing_is_built_before_a_request(tmp_path):
    got, _ = _init("chat", tmp_path, on_lambda=False)
    assert got["built"] == [] and got["encoding"] == 0


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_offline_chat_init_on_lambda_loads_the_local_model_without_calling_anything(tmp_path):
    got, connected = _init("chat", tmp_path, on_lambda=True, offline=True)
    assert got["model_loaded"] is True  # the weights are in the snapshot, not the first request
    assert not connected
    got, _ = _init("chat", tmp_path, on_lambda=False, offline=True)
    assert got["model_loaded"] is False  # off Lambda nothing is built ahead


def test_serve_warms_the_model_but_leaves_the_index_for_the_first_question(tmp_path):
    """`textbook-chat serve` warms as Lambda does, minus the index: a local index is opened on
    the first question, so `textbook-chat index` may still run beside serve until then."""
    from functions.api.deps import Deps

    deps = Deps.from_env({"QDRANT_PATH": str(tmp_path / "index"), "EMBEDDING_PROVIDER": "local",
                          "CHAT_PROVIDER": "extractive"})
    deps.warm("chat", index=False)
    assert "embedder" in deps._built and deps._built["embedder"]._encoder is not None
    assert "retriever" not in deps._built and "search" not in deps._built
    assert not (tmp_path / "index").exists()
