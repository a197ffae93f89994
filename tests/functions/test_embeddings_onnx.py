"""The onnxruntime MiniLM: sentence-transformers' reference vectors, numpy parity, batching, cache."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from tests.shared import shared_dir

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from functions.embeddings import onnx_minilm  # noqa: E402
from functions.embeddings.local import LocalMiniLM, default_runtime, model_dir  # noqa: E402

SHARED = shared_dir()
REFERENCE = SHARED / "data" / "minilm-reference.json"
TEXTS = [
    "Forward kinematics maps joint angles to the pose of the gripper.",
    "How do I add a sidebar to my site?",
    "",
    "x",
    "def f(x):\n    return x ** 2",
    "A ROS 2 node publishes sensor messages on a topic. " * 40,  # past the 256 window
]


@pytest.fixture(scope="module", params=onnx_minilm.GRAPHS)
def onnx_model(request, tmp_path_factory) -> LocalMiniLM:
    os.environ["TEXTBOOK_CHAT_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    try:
        yield LocalMiniLM(runtime="onnx", onnx_graph=request.param).load()
    finally:
        del os.environ["TEXTBOOK_CHAT_CACHE"]


@pytest.fixture(scope="module")
def numpy_model() -> LocalMiniLM:
    return LocalMiniLM(runtime="numpy").load()


def test_onnx_is_the_default_when_installed():
    assert default_runtime() == "onnx"
    assert LocalMiniLM().runtime == "onnx"
    with pytest.raises(ValueError, match="runtime"):
        LocalMiniLM(runtime="torch")


def test_reproduces_sentence_transformers_reference(onnx_model):
    if not REFERENCE.exists():
        pytest.skip(f"{REFERENCE} is absent (set TEXTBOOK_CHAT_SHARED)")
    items = json.loads(REFERENCE.read_text())["items"]
    assert len(items) == 10
    truncating = LocalMiniLM(runtime="onnx", long_text="truncate", onnx_graph=onnx_model.onnx_graph)
    got = truncating.embed_array([item["text"] for item in items])
    expected = np.asarray([item["vector"] for item in items])
    cosines = np.sum(got * expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() >= 0.999, cosines.round(6)


@pytest.mark.parametrize("long_text", ["windows", "truncate"])
def test_equals_numpy_backend(onnx_model, numpy_model, long_text):
    onnx_model.long_text = numpy_model.long_text = long_text
    try:
        got, want = onnx_model.embed_array(TEXTS), numpy_model.embed_array(TEXTS)
    finally:
        onnx_model.long_text = numpy_model.long_text = "windows"
    assert got.shape == (len(TEXTS), 384)
    assert np.abs(got - want).max() < 1e-4
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_batch_invariance(onnx_model):
    together = onnx_model.embed_array(TEXTS)  # padded to the longest in its batch
    alone = np.concatenate([onnx_model.embed_array([t]) for t in TEXTS])
    assert np.abs(together - alone).max() < 1e-5
    reversed_ = onnx_model.embed_array(TEXTS[::-1])[::-1]
    assert np.abs(together - reversed_).max() < 1e-5
    encoder = onnx_model._encoder
    small = onnx_minilm.OnnxEncoder.__new__(onnx_minilm.OnnxEncoder)
    small.session, small.batch_size, small.batch_tokens = encoder.session, 2, 4096
    sequences = [[101, *range(2000, 2000 + n), 102] for n in (3, 50, 7, 120, 1, 30, 9)]
    assert np.abs(small.embed(sequences) - encoder.embed(sequences)).max() < 1e-5


def test_graph_is_cached_and_reloads_fast(onnx_model):
    cached = list(Path(os.environ["TEXTBOOK_CHAT_CACHE"]).glob(f"*-{onnx_model.onnx_graph}.onnx"))
    assert len(cached) == 1 and f"-v{onnx_minilm.BUILDER_VERSION}-" in cached[0].name
    assert onnx_minilm.weights_sha256(model_dir() / "model.safetensors")[:16] in cached[0].name
    started = time.perf_counter()
    LocalMiniLM(runtime="onnx", onnx_graph=onnx_model.onnx_graph).load()
    assert time.perf_counter() - started < 3.0  # ~0.4 s here; loose for a loaded CI machine


def test_unwritable_cache_builds_in_memory(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("TEXTBOOK_CHAT_CACHE", str(blocker / "cache"))  # mkdir fails
    source = onnx_minilm.model_file(model_dir(), 12, 1e-12, "fused")
    assert isinstance(source, bytes) and len(source) > 80_000_000
