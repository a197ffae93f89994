"""LocalEmbedder: reproduces sentence-transformers' vectors; windows for texts past 256 wordpieces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from functions.search.embeddings.local import MAX_SEQ_LENGTH, LocalEmbedder, window_spans
from tests.shared import shared_dir, stopwatch

SHARED = shared_dir()
REFERENCE = SHARED / "data" / "minilm-reference.json"
TEXTS = [
    "Forward kinematics maps joint angles to the pose of the gripper.",
    "How do I add a sidebar to my site?",
    "",
    "x",
    "def f(x):\n    return x ** 2",
    "Inverse kinematics solves for joint angles that reach a target pose.",
]


@pytest.fixture(scope="module")
def model() -> LocalEmbedder:
    return LocalEmbedder().load()


@pytest.fixture(scope="module")
def truncating() -> LocalEmbedder:
    return LocalEmbedder(long_text="truncate").load()


HEAD = ("A ROS 2 node publishes sensor messages on a topic, and subscribers with a compatible "
        "quality of service profile receive them through the middleware. ")
TAIL = "Bake the sourdough bread at two hundred and thirty degrees until the crust is brown."


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_reproduces_sentence_transformers_reference(truncating):
    if not REFERENCE.exists():
        pytest.skip(f"{REFERENCE} is absent (set TEXTBOOK_CHAT_SHARED)")
    reference = json.loads(REFERENCE.read_text())
    assert reference["max_seq_length"] == MAX_SEQ_LENGTH
    texts = [item["text"] for item in reference["items"]]
    expected = np.asarray([item["vector"] for item in reference["items"]])
    got = truncating.embed_array(texts)
    cosines = np.sum(got * expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() >= 0.999, dict(zip(texts, cosines.round(5), strict=True))
    # the reference's long text is past the window: sentence-transformers truncates it
    assert max(len(ids) for ids in truncating.wordpieces(texts)) > MAX_SEQ_LENGTH


def test_unit_norm_deterministic_and_in_order(model):
    first = np.asarray(model.embed_batch(TEXTS))
    assert first.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(first, np.asarray(model.embed_batch(TEXTS)))
    alone = np.asarray([model.embed_batch([t])[0] for t in TEXTS])
    assert np.allclose(first, alone, atol=1e-5)  # batching and packing change nothing
    assert np.allclose(np.asarray(model.embed_batch(TEXTS[::-1]))[::-1], first, atol=1e-5)


def test_similar_texts_are_closer(model):
    fk, sidebar, _, _, _, ik = model.embed_array(TEXTS)
    assert fk @ ik > fk @ sidebar + 0.2


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_windows_cover_long_texts_and_truncate_does_not(model, truncating):
    text = HEAD * 12 + TAIL  # the tail sits past the first 254 wordpieces
    assert len(model.wordpieces([text])[0]) > MAX_SEQ_LENGTH + 64
    windowed, truncated = model.embed_array([text])[0], truncating.embed_array([text])[0]
    tail_vec = model.embed_array([TAIL])[0]
    assert windowed @ tail_vec > truncated @ tail_vec + 0.05
    short = TEXTS[0]  # within the window both modes agree exactly
    assert np.allclose(model.embed_array([short]), truncating.embed_array([short]), atol=1e-6)


@pytest.mark.parametrize("length", [0, 1, 254, 255, 300, 508, 640, 2000])
def test_window_spans_cover_everything_with_overlap(length):
    spans = window_spans(length, 254, 32)
    covered = set()
    for start, end in spans:
        assert 0 <= start < end <= max(length, 1) or length == 0
        assert end - start <= 254
        covered.update(range(start, end))
    assert covered == set(range(length))
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert end - start >= 32


def test_rejects_unknown_long_text_mode():
    with pytest.raises(ValueError, match="windows, truncate"):
        LocalEmbedder(long_text="first")


def test_loads_lazily_and_quickly():
    embedder = LocalEmbedder()
    assert embedder._encoder is None
    with stopwatch() as took:
        embedder.load()
    assert took.within(work=1.0), took  # 1 s on an idle machine


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_never_imports_torch():
    code = ("import sys; from functions.search.embeddings.local import LocalEmbedder; "
            "LocalEmbedder().embed_batch(['hello']); assert 'torch' not in sys.modules, 'torch'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])
