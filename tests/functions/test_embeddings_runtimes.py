"""Every runtime we ship for the local MiniLM reproduces sentence-transformers' vectors, and the
runtimes agree with each other, so a book indexed with one is queried with another."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from functions.search.embeddings.local import RUNTIMES, LocalEmbedder, default_runtime
from tests.functions.test_embeddings_local import TEXTS as SHORT_TEXTS
from tests.shared import shared_dir

REFERENCE = shared_dir() / "data" / "minilm-reference.json"
TEXTS = [*SHORT_TEXTS, "A ROS 2 node publishes sensor messages on a topic. " * 40]  # past 256
HAS_OPENVINO = importlib.util.find_spec("openvino") is not None
NO_OPENVINO = "the openvino package is not installed (pip install openvino; CI installs it)"


def cpu_has_bf16() -> bool:
    from functions.search.embeddings.openvino_minilm import best_precision

    return best_precision() == "bf16"


# (runtime, precision): every path LocalEmbedder can take
PATHS = [("openvino", "bf16"), ("openvino", "f32"), ("numpy", None)]


def require(runtime: str, precision: str | None) -> None:
    if runtime == "openvino" and not HAS_OPENVINO:
        pytest.skip(NO_OPENVINO)
    if precision == "bf16" and not cpu_has_bf16():
        pytest.skip("this CPU has no native bf16 (no AVX512-BF16/AMX): the default runs f32 here")


@pytest.fixture(scope="module")
def models():
    made: dict = {}

    def get(runtime: str, precision: str | None, long_text: str = "windows") -> LocalEmbedder:
        require(runtime, precision)
        key = (runtime, precision, long_text)
        if key not in made:
            made[key] = LocalEmbedder(runtime=runtime, precision=precision, long_text=long_text).load()
        return made[key]

    return get


@pytest.mark.parametrize(("runtime", "precision"), PATHS)
@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_reproduces_sentence_transformers_reference(models, runtime, precision):
    require(runtime, precision)
    if not REFERENCE.exists():
        pytest.skip(f"{REFERENCE} is absent (set TEXTBOOK_CHAT_SHARED)")
    items = json.loads(REFERENCE.read_text())["items"]
    assert len(items) == 10
    got = models(runtime, precision, "truncate").embed_array([item["text"] for item in items])
    expected = np.asarray([item["vector"] for item in items])
    cosines = np.sum(got * expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() >= 0.999, cosines.round(6)


@pytest.mark.parametrize(("runtime", "precision"), PATHS[:2])
# windows: two more models loaded and a long text embedded in 256-token windows (~20 s)
@pytest.mark.parametrize("long_text", [pytest.param("windows", marks=pytest.mark.slow), "truncate"])
@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_agrees_with_the_numpy_fallback(models, runtime, precision, long_text):
    """An index built here and queried by the Lambda package's numpy runtime (or the reverse)."""
    got = models(runtime, precision, long_text).embed_array(TEXTS)
    want = models("numpy", None, long_text).embed_array(TEXTS)
    assert got.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(got * want, axis=1)
    assert cosines.min() >= (0.9999 if precision == "f32" else 0.999), cosines.round(6)


# bf16: one more model loaded (~1-2 s); its agreement with numpy stays in the quick loop
@pytest.mark.parametrize(("runtime", "precision"),
                         [pytest.param(*PATHS[0], marks=pytest.mark.slow), PATHS[1]])
@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_batching_changes_nothing(models, runtime, precision):
    model = models(runtime, precision)
    together = model.embed_array(TEXTS)  # padded to the longest in its batch
    alone = np.concatenate([model.embed_array([t]) for t in TEXTS])
    assert np.sum(together * alone, axis=1).min() >= 0.9999
    reversed_ = model.embed_array(TEXTS[::-1])[::-1]
    assert np.sum(together * reversed_, axis=1).min() >= 0.9999
    encoder = model._encoder
    sequences = [[101, *range(2000, 2000 + n), 102] for n in (3, 50, 7, 120, 1, 30, 9)]
    full, size = encoder.embed(sequences), encoder.batch_size
    encoder.batch_size = 2
    try:
        pairs = encoder.embed(sequences)
    finally:
        encoder.batch_size = size
    assert np.sum(full * pairs, axis=1).min() >= 0.9999


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_a_batch_holds_sequences_of_like_length(models):
    """Every row of a batch is computed at its longest sequence's width: an answer's blocks
    (9 to 180 tokens) padded into one batch cost 0.93 s of CPU, in batches of like lengths 0.55."""
    from functions.search.embeddings.openvino_minilm import PADDED

    if not HAS_OPENVINO:
        pytest.skip(NO_OPENVINO)
    encoder = models("openvino", None)._encoder
    sequences = [[101, *range(2000, 2000 + n - 2), 102]
                 for n in (83, 9, 180, 43, 163, 70, 159, 31, 102, 76)]
    shapes: list[tuple[int, int, int]] = []  # (rows, width, real tokens) of each run
    request = encoder._request()

    class Recording:
        def infer(self, inputs):
            shapes.append((*inputs["input_ids"].shape, int(inputs["attention_mask"].sum())))
            return request.infer(inputs)

    encoder._local.request = Recording()
    try:
        together = encoder.embed(sequences)
    finally:
        encoder._local.request = request
    assert sum(rows for rows, _, _ in shapes) == len(sequences)
    assert len(shapes) < len(sequences)  # like lengths still share a run (163, 159)
    for rows, width, real in shapes:
        assert real >= PADDED * rows * width, shapes  # little padding in any run
    alone = np.concatenate([encoder.embed([s]) for s in sequences])
    assert np.sum(together * alone, axis=1).min() >= 0.9999


def test_default_runtime_and_what_it_says(models):
    assert set(RUNTIMES) == {"openvino", "numpy"}
    assert LocalEmbedder(runtime="numpy").runtime_label == "numpy float32"
    with pytest.raises(ValueError, match="openvino, numpy"):
        LocalEmbedder(runtime="onnx")
    if not HAS_OPENVINO:
        assert default_runtime() == "numpy"
        pytest.skip(NO_OPENVINO)
    assert default_runtime() == "openvino"
    model = models("openvino", None)  # LocalEmbedder() as the default builds it
    expected = "bf16" if cpu_has_bf16() else "f32"
    assert (model.runtime, model.precision) == ("openvino", expected)
    assert model.runtime_label == f"OpenVINO {expected}"
    with pytest.raises(ValueError, match="bf16, f32"):
        LocalEmbedder(runtime="openvino", precision="int8").load()


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_threads_embed_at_once(models):
    """serve embeds questions on several threads at once: each gets its own, right, vectors."""
    from concurrent.futures import ThreadPoolExecutor

    if not HAS_OPENVINO:
        pytest.skip(NO_OPENVINO)
    model = models("openvino", None)
    texts = [f"word{k} " * k for k in range(1, 40)]  # each length its own shape
    want = model.embed_array(texts)
    with ThreadPoolExecutor(4) as pool:  # one shared infer request gave cosines of 0.39 here
        got = list(pool.map(lambda i: model.embed_array([texts[i % len(texts)]])[0], range(200)))
    cosines = [vector @ want[i % len(texts)] for i, vector in enumerate(got)]
    assert min(cosines) >= 0.9999
