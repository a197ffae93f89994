"""The local MiniLM as the tests that read its answers use it: loaded once per test process and
remembering each text's vector (benchmarks/bench_eval.py's CachedEmbedder, in memory only), so
the sample book's chunks and the blocks an answer weighs are embedded once per process instead of
once per test (test_eval_sample, test_calibration). The vectors are the model's own, computed in
this run: nothing is kept between runs or written to disk, so a changed model or runtime is
always what the tests read. The embedder's own tests (test_embeddings_*) use it uncached."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_eval.py"
_lock = threading.Lock()
_shared: dict[str, object] = {}


def cached_minilm():
    """The process's one cached local embedder (EMBEDDING_MODEL's default, all-MiniLM-L6-v2)."""
    with _lock:
        if "embedder" not in _shared:
            from functions.search.embeddings.local import LocalEmbedder

            spec = importlib.util.spec_from_file_location("bench_eval_for_tests", _BENCH)
            bench = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(bench)
            _shared["embedder"] = bench.CachedEmbedder(LocalEmbedder().load(), None)
        return _shared["embedder"]
