"""A BERT encoder compiled by OpenVINO, its graph built from the safetensors weights (no PyTorch).

bf16 where the CPU computes in it natively (AVX512-BF16 or AMX: OpenVINO lists "BF16" among
the CPU's optimisation capabilities), float32 elsewhere; both reproduce sentence-transformers'
vectors at cosine >= 0.999 (tests/functions/test_embeddings_runtimes.py).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

PRECISIONS = ("bf16", "f32")
# A batch holds only sequences at least this share of its longest one: every row is computed
# at the longest's width, so the answer's 10-13 blocks of 9 to 180 tokens padded into one
# batch cost 0.93 s of CPU, and 0.55 s in batches of like lengths (one infer call each costs
# little next to the padding; benchmarks/bench_readers.py).
PADDED = 0.8


def default_threads() -> int:
    """One per core, or OMP_NUM_THREADS when that is set lower (OpenVINO's own thread pool
    does not read it; benchmarks and shared machines set it)."""
    from functions.cpu_turns import cores

    wanted = os.environ.get("OMP_NUM_THREADS", "")
    return max(1, min(cores(), int(wanted))) if wanted.isdigit() and int(wanted) > 0 else cores()


def best_precision(core=None) -> str:
    """bf16 when this CPU computes in it natively, else f32."""
    import openvino as ov

    capabilities = (core or ov.Core()).get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return "bf16" if "BF16" in capabilities else "f32"


def build_model(weights: dict[str, np.ndarray], num_heads: int, eps: float):
    """openvino.Model: (input_ids, attention_mask) int32 (B, S) right-padded -> `pooled` (B, H)
    float32, the mean of the last hidden states over the mask (not normalised). `weights`
    under BERT's names (bert_numpy.bert_layout); MPNet's relative position bias when present."""
    import openvino as ov
    import openvino.opset15 as op

    from functions.search.embeddings.bert_numpy import RELATIVE_BIAS, relative_buckets

    w = {k.removeprefix("bert."): np.ascontiguousarray(v, dtype=np.float32)
         for k, v in weights.items() if v.dtype != np.int64}
    hidden = w["embeddings.word_embeddings.weight"].shape[1]
    head_dim = hidden // num_heads

    def const(value):
        return op.constant(np.asarray(value))

    def norm(x, prefix: str):
        x = op.mvn(x, const(np.asarray([-1], np.int64)), True, eps, "inside_sqrt")
        return op.add(op.multiply(x, const(w[prefix + ".weight"])), const(w[prefix + ".bias"]))

    def dense(x, prefix: str):
        return op.add(op.matmul(x, const(w[prefix + ".weight"]), False, True),
                      const(w[prefix + ".bias"]))

    heads_shape = const(np.asarray([0, 0, num_heads, head_dim], np.int64))
    flat_shape = const(np.asarray([0, 0, hidden], np.int64))

    def split_heads(x):  # (B, S, H) -> (B, heads, S, head_dim)
        return op.transpose(op.reshape(x, heads_shape, True), const(np.asarray([0, 2, 1, 3])))

    ids = op.parameter([-1, -1], ov.Type.i32, name="input_ids")
    mask = op.parameter([-1, -1], ov.Type.i32, name="attention_mask")
    zero = const(np.int64(0))
    seq_len = op.gather(op.shape_of(ids), const(np.int64(1)), zero)
    positions = op.range(zero, seq_len, const(np.int64(1)), "i64")
    x = op.add(op.gather(const(w["embeddings.word_embeddings.weight"]), ids, zero),
               op.gather(const(w["embeddings.position_embeddings.weight"]), positions, zero))
    x = norm(op.add(x, const(w["embeddings.token_type_embeddings.weight"][0])), "embeddings.LayerNorm")
    maskf = op.convert(mask, "f32")
    # additive attention mask (B, 1, 1, S): 0 where attended, -10000 on padding
    bias = op.multiply(op.subtract(const(np.float32(1)), maskf), const(np.float32(-10000.0)))
    bias = op.unsqueeze(bias, const(np.asarray([1, 2], np.int64)))
    if RELATIVE_BIAS in w:  # MPNet: + table[bucket(j - i)] per head -> (B, heads, S, S)
        table = w[RELATIVE_BIAS]
        buckets = const(relative_buckets(w["embeddings.position_embeddings.weight"].shape[0],
                                         table.shape[0]))
        square = op.concat([op.unsqueeze(seq_len, const(np.int64(0)))] * 2, 0)
        idx = op.slice(buckets, const(np.asarray([0, 0], np.int64)), square,
                       const(np.asarray([1, 1], np.int64)))
        relative = op.transpose(op.gather(const(table), idx, zero), const(np.asarray([2, 0, 1])))
        bias = op.add(bias, op.unsqueeze(relative, const(np.asarray([0], np.int64))))
    i = 0
    while f"encoder.layer.{i}.attention.self.query.weight" in w:
        p = f"encoder.layer.{i}."
        q, k, v = (split_heads(dense(x, p + f"attention.self.{n}")) for n in ("query", "key", "value"))
        ctx = op.scaled_dot_product_attention(q, k, v, bias, causal=False)
        ctx = op.reshape(op.transpose(ctx, const(np.asarray([0, 2, 1, 3]))), flat_shape, True)
        x = norm(op.add(dense(ctx, p + "attention.output.dense"), x), p + "attention.output.LayerNorm")
        up = op.gelu(dense(x, p + "intermediate.dense"), "erf")
        x = norm(op.add(dense(up, p + "output.dense"), x), p + "output.LayerNorm")
        i += 1
    axis1 = const(np.asarray([1], np.int64))
    summed = op.reduce_sum(op.multiply(x, op.unsqueeze(maskf, const(np.int64(2)))), axis1, False)
    pooled = op.divide(summed, op.reduce_sum(maskf, axis1, True))
    pooled.output(0).get_tensor().set_names({"pooled"})
    return ov.Model([pooled], [ids, mask], "minilm")


class OpenVINOEncoder:
    """Mean-pooled, L2-normalised vectors of token id sequences, in length-sorted batches of
    like lengths (PADDED)."""

    def __init__(self, weights: dict[str, np.ndarray], num_heads: int, eps: float,
                 precision: str | None = None, threads: int | None = None,
                 batch_size: int = 16, batch_tokens: int = 4096):
        import openvino as ov

        core = ov.Core()
        self.precision = precision or best_precision(core)
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision={self.precision!r}: use one of {', '.join(PRECISIONS)}.")
        config = {"INFERENCE_PRECISION_HINT": self.precision, "PERFORMANCE_HINT": "LATENCY",
                  "INFERENCE_NUM_THREADS": threads or default_threads()}
        self.compiled = core.compile_model(build_model(weights, num_heads, eps), "CPU", config)
        self._local = threading.local()  # an infer request serves one call at a time
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens  # padded tokens per run: bounds the attention's memory

    def _request(self):
        """This thread's infer request (serve answers on several threads at once)."""
        request = getattr(self._local, "request", None)
        if request is None:
            request = self._local.request = self.compiled.create_infer_request()
        return request

    def embed(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """(len(sequences), H) float32 unit vectors, in order. Each sequence is [CLS] ... [SEP]."""
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]), reverse=True)
        out: np.ndarray | None = None
        start = 0
        while start < len(order):
            width = len(sequences[order[start]])  # longest first: it sets the padded width
            count = max(1, min(self.batch_size, self.batch_tokens // max(1, width)))
            batch = [i for i in order[start:start + count]
                     if len(sequences[i]) >= PADDED * width]  # sorted: a prefix
            ids = np.zeros((len(batch), width), dtype=np.int32)
            mask = np.zeros((len(batch), width), dtype=np.int32)
            for row, idx in enumerate(batch):
                ids[row, :len(sequences[idx])] = sequences[idx]
                mask[row, :len(sequences[idx])] = 1
            pooled = self._request().infer({"input_ids": ids, "attention_mask": mask})["pooled"]
            if out is None:
                out = np.empty((len(sequences), pooled.shape[1]), dtype=np.float32)
            out[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
            start += len(batch)
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)
