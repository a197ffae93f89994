"""A BERT encoder forward pass in numpy float32 (inference only), for MiniLM-sized models, and
the one reading of a model's weights that every runtime shares (`bert_layout`): BERT-family
weights as they are, MPNet-family weights (all-mpnet-base-v2) under BERT's names plus MPNet's
relative position bias."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Abramowitz & Stegun 7.1.26: erf(z) = 1 - t*(a1 + t*(a2 + ...)) * exp(-z^2), t = 1/(1 + p z),
# absolute error <= 1.5e-7, below float32 rounding of the values it feeds; numpy has no erf
# and scipy would add ~100 MB to a Lambda package for one function.
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
FFN_ROWS = 256  # rows per feed-forward block: bounds memory; smaller blocks make slower GEMMs
FAMILIES = ("bert", "mpnet")  # config.json model_type values the local runtimes compute
RELATIVE_BIAS = "encoder.relative_attention_bias.weight"  # (buckets, heads), MPNet only
_MPNET_NAMES = (("attention.attn.q.", "attention.self.query."),
                ("attention.attn.k.", "attention.self.key."),
                ("attention.attn.v.", "attention.self.value."),
                ("attention.attn.o.", "attention.output.dense."),
                ("attention.LayerNorm.", "attention.output.LayerNorm."))


def bert_layout(weights: dict[str, np.ndarray], config: dict) -> dict[str, np.ndarray]:
    """The encoder's float weights under BERT's names, whatever its family (config.json
    `model_type`). MPNet differs from BERT in three ways, all absorbed here or by RELATIVE_BIAS:
    its layers' names; no token types (a zero row stands in); positions counted from
    pad_token_id + 1 (the table is cut so that position 0 is the first token's)."""
    family = config.get("model_type", "bert")
    if family not in FAMILIES:
        raise ValueError(f"model_type {family!r} is not one the local runtimes compute; use a "
                         f"sentence-transformers model of the {' or '.join(FAMILIES)} family.")
    w = {k.removeprefix("bert.").removeprefix("mpnet."): v for k, v in weights.items()
         if v.dtype != np.int64}
    if family == "bert":
        return w
    out = {}
    for name, value in w.items():
        for old, new in _MPNET_NAMES:
            name = name.replace(old, new)
        out[name] = value
    hidden = out["embeddings.word_embeddings.weight"].shape[1]
    out["embeddings.token_type_embeddings.weight"] = np.zeros((1, hidden), dtype=np.float32)
    first = int(config.get("pad_token_id", 1)) + 1
    out["embeddings.position_embeddings.weight"] = out["embeddings.position_embeddings.weight"][first:]
    return out


def relative_buckets(length: int, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """(length, length) int32: MPNet's (T5's bidirectional) bucket of each key position j seen
    from query position i, as transformers' MPNet computes it (float32 logarithms)."""
    pos = np.arange(length)
    n = -(pos[None, :] - pos[:, None])  # context - memory
    half = num_buckets // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore"):  # n = 0 is "small": its logarithm is never used
        large = exact + (np.log(np.maximum(n, 1).astype(np.float32) / np.float32(exact))
                         / np.float32(math.log(max_distance / exact))
                         * np.float32(half - exact)).astype(np.int64)
    large = np.minimum(large, half - 1)
    return (out + np.where(n < exact, n, large)).astype(np.int32)


_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def map_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file as read-only arrays over one memory map of it: nothing
    is read or copied until used, so a cold start pays only for the pages a question touches
    (of the 47 MB word-embedding table, the rows of its wordpieces), not for reading 91 MB."""
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        if spec["dtype"] not in _DTYPES:
            raise ValueError(f"{path}: tensor {name} has dtype {spec['dtype']}, which the numpy "
                             f"encoder does not read ({', '.join(_DTYPES)})")
        start, end = spec["data_offsets"]
        out[name] = raw[start:end].view(_DTYPES[spec["dtype"]]).reshape(spec["shape"])
    return out


def gelu_(h: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU in place: relu(x) - |x| * Q(|x|), Q the normal upper tail.
    scratch: (3, *h.shape) float32 work space; call on cache-sized blocks."""
    a, t, poly = scratch[0], scratch[1], scratch[2]
    np.abs(h, out=a)
    np.minimum(a, np.float32(9.0), out=a)  # |x| Q(|x|) < 1e-18 past 9; avoids slow denormals
    np.multiply(a, np.float32(_P * _INV_SQRT2), out=t)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    np.multiply(t, np.float32(0.5 * _A[4]), out=poly)
    for coef in (_A[3], _A[2], _A[1], _A[0]):
        poly += np.float32(0.5 * coef)
        poly *= t
    np.multiply(a, a, out=t)
    t *= np.float32(-0.5)
    np.exp(t, out=t)
    poly *= t  # upper tail probability of |x|
    a *= poly
    np.maximum(h, np.float32(0.0), out=h)
    h -= a
    return h


def layer_norm_(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in place."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    x *= 1.0 / np.sqrt(var)
    x *= gamma
    x += beta
    return x


@dataclass(frozen=True)
class Layer:
    w_qkv: np.ndarray  # (H, 3H), query part pre-scaled by 1/sqrt(head_dim)
    b_qkv: np.ndarray
    w_out: np.ndarray
    b_out: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    w_up: np.ndarray
    b_up: np.ndarray
    w_down: np.ndarray
    b_down: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]


class BertEncoder:
    """Weights from a Hugging Face BertModel state dict; `forward` returns last hidden states.
    The dense layers' weights are used as given, (out, in), through their transposed views
    (BLAS reads them transposed at no cost): nothing is copied but the fused query/key/value."""

    def __init__(self, weights: dict[str, np.ndarray], num_heads: int, eps: float = 1e-12):
        w = {k.removeprefix("bert."): np.asarray(v, dtype=np.float32)
             for k, v in weights.items() if v.dtype != np.int64}
        self.relative = w.get(RELATIVE_BIAS)  # MPNet: (buckets, heads); BERT: None
        self._bias: np.ndarray | None = None  # for the longest sequence; shorter ones slice it
        self.heads = num_heads
        self.eps = eps
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type0 = w["embeddings.token_type_embeddings.weight"][0]
        self.ln_emb = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hidden = self.word.shape[1]
        scale = np.float32(1.0 / math.sqrt(hidden // num_heads))
        self.layers: list[Layer] = []
        i = 0
        while f"encoder.layer.{i}.attention.self.query.weight" in w:
            p = f"encoder.layer.{i}."
            q, k, v = (w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value"))
            bq, bk, bv = (w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value"))
            self.layers.append(Layer(
                w_qkv=np.ascontiguousarray(np.concatenate([q * scale, k, v]).T),
                b_qkv=np.concatenate([bq * scale, bk, bv]),
                w_out=w[p + "attention.output.dense.weight"].T,
                b_out=w[p + "attention.output.dense.bias"],
                ln1=(w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                w_up=w[p + "intermediate.dense.weight"].T,
                b_up=w[p + "intermediate.dense.bias"],
                w_down=w[p + "output.dense.weight"].T,
                b_down=w[p + "output.dense.bias"],
                ln2=(w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            ))
            i += 1

    @property
    def max_positions(self) -> int:
        return self.position.shape[0]

    def forward(self, sequences: list[np.ndarray]) -> np.ndarray:
        """Token ids of each sequence, packed without padding. Returns (total_tokens, H) float32:
        the last hidden states of all sequences, one after the other."""
        lengths = [len(seq) for seq in sequences]
        x = self.word[np.concatenate(sequences)]
        x += self.position[np.concatenate([np.arange(n) for n in lengths])]
        x += self.token_type0
        x = layer_norm_(x, *self.ln_emb, self.eps)
        bounds = np.cumsum([0, *lengths]).tolist()
        for layer in self.layers:
            x = self._layer(layer, x, bounds)
        return x

    def _layer(self, p: Layer, x: np.ndarray, bounds: list[int]) -> np.ndarray:
        qkv = x @ p.w_qkv
        qkv += p.b_qkv
        ctx = np.empty_like(x)
        for start, end in zip(bounds[:-1], bounds[1:], strict=True):
            self._attention(qkv[start:end], ctx[start:end])
        attn = ctx @ p.w_out
        attn += p.b_out
        attn += x
        x = layer_norm_(attn, *p.ln1, self.eps)
        return layer_norm_(self._feed_forward(p, x), *p.ln2, self.eps)

    def _feed_forward(self, p: Layer, x: np.ndarray) -> np.ndarray:
        """x + down(gelu(up(x))), by blocks of rows so the wide intermediate stays in cache."""
        rows = FFN_ROWS
        out = np.empty_like(x)
        up = np.empty((rows, p.w_up.shape[1]), dtype=np.float32)
        scratch = np.empty((3, *up.shape), dtype=np.float32)
        for start in range(0, x.shape[0], rows):
            block = x[start:start + rows]
            n = block.shape[0]
            np.matmul(block, p.w_up, out=up[:n])
            up[:n] += p.b_up
            gelu_(up[:n], scratch[:, :n])
            np.matmul(up[:n], p.w_down, out=out[start:start + n])
        out += p.b_down
        out += x
        return out

    def _attention(self, qkv: np.ndarray, ctx: np.ndarray) -> None:
        """Self-attention of one unpadded sequence, all heads in one batched matmul each:
        qkv (n, 3H) -> ctx (n, H)."""
        n, hidden = qkv.shape[0], qkv.shape[1] // 3
        heads, head_dim = self.heads, hidden // self.heads
        q, k, v = qkv.reshape(n, 3, heads, head_dim).transpose(1, 2, 0, 3)  # (heads, n, d) views
        kt = k.transpose(0, 2, 1)
        # softmax numerators without the usual max shift (scores stay far below exp's float32
        # overflow at 88); a ones column gives the row sums in the same matmul as the context;
        # an overflow or underflow falls back to the shifted form.
        v1 = np.empty((heads, n, head_dim + 1), dtype=np.float32)
        v1[:, :, :head_dim] = v
        v1[:, :, head_dim] = 1.0
        bias = self._relative_bias(n)  # MPNet: (heads, n, n); BERT: None
        scores = np.matmul(q, kt)
        if bias is not None:
            scores += bias
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            weighted = np.exp(scores, out=scores) @ v1
        sums = weighted[:, :, head_dim:]
        if not (np.isfinite(sums).all() and sums.min() > 1e-30):
            scores = np.matmul(q, kt)
            if bias is not None:
                scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            weighted = np.exp(scores, out=scores) @ v1
            sums = weighted[:, :, head_dim:]
        np.divide(weighted[:, :, :head_dim], sums,
                  out=ctx.reshape(n, heads, head_dim).transpose(1, 0, 2))

    def _relative_bias(self, n: int) -> np.ndarray | None:
        """MPNet's position bias for a sequence of n tokens, (heads, n, n); None for BERT."""
        if self.relative is None:
            return None
        if self._bias is None or self._bias.shape[1] < n:  # a bucket depends on j - i only
            size = max(n, self.max_positions)
            self._bias = np.ascontiguousarray(
                self.relative[relative_buckets(size, self.relative.shape[0])].transpose(2, 0, 1))
        return self._bias[:, :n, :n]
