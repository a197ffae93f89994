"""The numpy BERT pieces: exact GELU, and attention (fast path and overflow fallback)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from functions.search.embeddings.bert_numpy import BertEncoder, gelu_


def test_gelu_matches_erf_definition():
    x = np.linspace(-15, 15, 30001).astype(np.float32)
    got = gelu_(x.copy(), np.empty((3, *x.shape), dtype=np.float32)).astype(np.float64)
    want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    assert np.abs(got - want).max() < 4e-7  # float32 rounding of values up to 15
    small = np.abs(x) < 1
    assert np.abs(got - want)[small].max() < 1.5e-7  # float32 ulp of 1 is 1.2e-7


def naive_attention(qkv: np.ndarray, heads: int) -> np.ndarray:
    n, hidden = qkv.shape[0], qkv.shape[1] // 3
    d = hidden // heads
    q, k, v = (qkv[:, i * hidden:(i + 1) * hidden].reshape(n, heads, d).transpose(1, 0, 2)
               for i in range(3))
    scores = (q @ k.transpose(0, 2, 1)).astype(np.float64)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return (weights @ v).transpose(1, 0, 2).reshape(n, hidden)


def encoder(heads: int = 4) -> BertEncoder:
    enc = BertEncoder.__new__(BertEncoder)  # only the attention step is exercised
    enc.heads = heads
    enc.relative = None  # BERT: no relative position bias (MPNet's: test_embedding_models.py)
    return enc


def test_attention_matches_naive_softmax():
    qkv = np.random.default_rng(1).standard_normal((37, 3 * 32)).astype(np.float32)
    ctx = np.empty((37, 32), dtype=np.float32)
    encoder()._attention(qkv, ctx)
    assert np.allclose(ctx, naive_attention(qkv, 4), atol=1e-5)


def test_attention_falls_back_when_scores_would_overflow():
    qkv = np.random.default_rng(2).standard_normal((20, 3 * 32)).astype(np.float32) * 12
    ctx = np.empty((20, 32), dtype=np.float32)
    encoder()._attention(qkv, ctx)
    assert np.isfinite(ctx).all()
    assert np.allclose(ctx, naive_attention(qkv, 4), atol=1e-4)


def test_mapped_weights_are_the_files_tensors_read_in_place():
    """map_safetensors (the Lambda's cold start) gives what safetensors reads, without copying."""
    from safetensors.numpy import load_file

    from functions.search.embeddings.bert_numpy import map_safetensors
    from functions.search.embeddings.local import model_dir

    path = model_dir() / "model.safetensors"
    mapped, loaded = map_safetensors(path), load_file(str(path))
    assert mapped.keys() == loaded.keys()
    for name, array in loaded.items():
        assert mapped[name].dtype == array.dtype and np.array_equal(mapped[name], array), name
    assert not mapped["embeddings.word_embeddings.weight"].flags.writeable  # a view of the file


def test_a_tensor_type_the_encoder_cannot_read_is_named(tmp_path):
    import json

    from functions.search.embeddings.bert_numpy import map_safetensors

    header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 4)
    with pytest.raises(ValueError, match=r"model\.safetensors: tensor w has dtype BF16"):
        map_safetensors(path)
