"""EMBEDDING_MODEL picks among local models: all-MiniLM-L6-v2 (the default), all-mpnet-base-v2,
both joined by '+' (one fused vector), or a sentence-transformers folder by path; the MPNet
family's parts (relative position bias, position offset, names) in both runtimes; an index built
with one model is never searched with another.

all-mpnet-base-v2's weights (438 MB) are not installed by CI: the tests marked `mpnet` run where
they are, found through TEXTBOOK_CHAT_MODELS (a folder holding all-mpnet-base-v2/), e.g.
`TEXTBOOK_CHAT_MODELS=/work/models pytest -m mpnet`; see docs/answers.md for how to get them."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from functions.errors import ConfigError, ModelMismatchError
from functions.search.embeddings.bert_numpy import (
    RELATIVE_BIAS,
    BertEncoder,
    bert_layout,
    relative_buckets,
)
from functions.search.embeddings.local import (
    MODEL_NAME,
    MODELS_ENV,
    MPNET,
    FusedEmbedder,
    LocalEmbedder,
    local_embedder,
    model_dir,
    resolve_model,
)
from functions.search.retrieval import check_model

HERE = Path(__file__).resolve().parent
MPNET_REFERENCE = HERE.parent / "data" / "mpnet-reference.json"
HAS_OPENVINO = importlib.util.find_spec("openvino") is not None


def test_relative_buckets_follow_mpnet_formula():
    """Values worked out by hand from MPNet's bucket rule (32 buckets, max distance 128): the
    first 8 distances exact, then logarithmic up to bucket 15; keys after the query +16."""
    b = relative_buckets(200)
    assert b[0, 0] == 0
    assert b[1, 0] == 1 and b[7, 0] == 7  # key before the query: distance itself
    assert b[0, 1] == 17 and b[0, 7] == 23  # key after the query: 16 + distance
    assert b[8, 0] == 8  # 8 + log(8/8)/log(16)*8
    assert b[16, 0] == 10  # 8 + log(2)/log(16)*8 = 10
    assert b[20, 0] == 10  # 8 + floor(log(2.5)/log(16)*8 = 2.64)
    assert b[127, 0] == 15 and b[199, 0] == 15  # capped at half - 1
    assert b[0, 199] == 31
    # a bucket depends on j - i only: a shorter sequence's table is the top-left block
    assert np.array_equal(relative_buckets(50), b[:50, :50])


def tiny_mpnet(tmp_path: Path, seed: int = 3) -> tuple[Path, dict]:
    """A random MPNet-family sentence-transformers folder (2 layers, 16-d), named as
    transformers names MPNet's weights, with MiniLM's tokenizer (its ids < the vocabulary)."""
    rng = np.random.default_rng(seed)
    hidden, heads, inter, vocab, positions = 16, 2, 32, 30522, 40
    w = {"embeddings.word_embeddings.weight": rng.normal(0, 0.5, (vocab, hidden)),
         "embeddings.position_embeddings.weight": rng.normal(0, 0.5, (positions, hidden)),
         "embeddings.LayerNorm.weight": 1 + rng.normal(0, 0.1, hidden),
         "embeddings.LayerNorm.bias": rng.normal(0, 0.1, hidden),
         RELATIVE_BIAS: rng.normal(0, 1.0, (32, heads)),
         "embeddings.position_ids": np.arange(positions, dtype=np.int64)[None]}
    for i in range(2):
        p = f"encoder.layer.{i}."
        for n in "qkvo":
            w[p + f"attention.attn.{n}.weight"] = rng.normal(0, 0.3, (hidden, hidden))
            w[p + f"attention.attn.{n}.bias"] = rng.normal(0, 0.1, hidden)
        w[p + "attention.LayerNorm.weight"] = 1 + rng.normal(0, 0.1, hidden)
        w[p + "attention.LayerNorm.bias"] = rng.normal(0, 0.1, hidden)
        w[p + "intermediate.dense.weight"] = rng.normal(0, 0.3, (inter, hidden))
        w[p + "intermediate.dense.bias"] = rng.normal(0, 0.1, inter)
        w[p + "output.dense.weight"] = rng.normal(0, 0.3, (hidden, inter))
        w[p + "output.dense.bias"] = rng.normal(0, 0.1, hidden)
        w[p + "output.LayerNorm.weight"] = 1 + rng.normal(0, 0.1, hidden)
        w[p + "output.LayerNorm.bias"] = rng.normal(0, 0.1, hidden)
    w = {k: (v if v.dtype == np.int64 else v.astype(np.float32)) for k, v in w.items()}
    folder = tmp_path / "tiny-mpnet"
    folder.mkdir()
    from safetensors.numpy import save_file

    save_file(w, str(folder / "model.safetensors"))
    config = {"model_type": "mpnet", "hidden_size": hidden, "num_attention_heads": heads,
              "layer_norm_eps": 1e-5, "max_position_embeddings": positions, "pad_token_id": 1,
              "relative_attention_num_buckets": 32}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 24}))
    shutil.copy(model_dir() / "tokenizer.json", folder / "tokenizer.json")
    return folder, w


def mpnet_by_hand(w: dict, ids: list[int], heads: int = 2, eps: float = 1e-5) -> np.ndarray:
    """MPNet's forward pass for one unpadded sequence, written out plainly from its definition
    (positions from pad + 1, relative bias per head, post-LayerNorm), mean-pooled, unit length."""
    def ln(x, p):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    from math import erf

    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][
        np.arange(n) + 2]
    x = ln(x, "embeddings.LayerNorm").astype(np.float64)
    hidden = x.shape[1]
    d = hidden // heads
    bias = np.zeros((heads, n, n))
    for i in range(n):
        for j in range(n):
            bias[:, i, j] = w[RELATIVE_BIAS][relative_buckets(n)[i, j]]
    for layer in range(2):
        p = f"encoder.layer.{layer}."
        q, k, v = (lin(x, p + f"attention.attn.{c}").reshape(n, heads, d).transpose(1, 0, 2)
                   for c in "qkv")
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = (s / s.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = ln(lin(ctx, p + "attention.attn.o") + x, p + "attention.LayerNorm")
        x = ln(lin(gelu(lin(x, p + "intermediate.dense")), p + "output.dense") + x,
               p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


RUNTIMES = ["numpy", pytest.param("openvino", marks=pytest.mark.skipif(
    not HAS_OPENVINO, reason="the openvino package is not installed"))]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_mpnet_family_matches_its_definition(tmp_path, runtime):
    folder, w = tiny_mpnet(tmp_path)
    model = LocalEmbedder("tiny-mpnet", path=folder, runtime=runtime, precision="f32",
                          long_text="truncate").load()
    assert model.dimension == 16 and model.max_seq_length == 24
    texts = ["Forward kinematics computes the pose.", "PID", "a b c d e f g h i j k l m n o p q r s"]
    got = model.embed_array(texts)
    for text, vec in zip(texts, got, strict=True):
        ids = model._tokenizer.encode(text, add_special_tokens=True).ids[:24]
        assert float(vec @ mpnet_by_hand(w, ids)) > 0.9999, text


def test_bert_layout_reads_mpnet_names_and_refuses_other_families():
    w = {"encoder.layer.0.attention.attn.q.weight": np.ones((2, 2), np.float32),
         "encoder.layer.0.attention.LayerNorm.bias": np.ones(2, np.float32),
         "embeddings.word_embeddings.weight": np.ones((5, 2), np.float32),
         "embeddings.position_embeddings.weight": np.arange(10, dtype=np.float32).reshape(5, 2)}
    out = bert_layout(w, {"model_type": "mpnet", "pad_token_id": 1})
    assert "encoder.layer.0.attention.self.query.weight" in out
    assert "encoder.layer.0.attention.output.LayerNorm.bias" in out
    assert out["embeddings.position_embeddings.weight"][0].tolist() == [4.0, 5.0]  # from pad+1
    assert not out["embeddings.token_type_embeddings.weight"].any()
    with pytest.raises(ValueError, match="model_type 'gpt2'.*bert or mpnet"):
        bert_layout(w, {"model_type": "gpt2"})
    assert BertEncoder.__init__  # the numpy encoder reads the same layout (tested above)


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_fused_vector_is_unit_and_its_cosine_the_mean_of_the_models():
    one = LocalEmbedder()
    other = LocalEmbedder("minilm-truncating", path=model_dir(), long_text="truncate")
    fused = FusedEmbedder([one, other])
    assert fused.model_name == f"{MODEL_NAME}+minilm-truncating" and fused.dimension == 768
    long = "A ROS 2 node publishes sensor messages on a topic. " * 40  # past the window
    texts = ["What is a PID controller?", long]
    v = fused.embed_array(texts)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    a, b = one.embed_array(texts), other.embed_array(texts)
    assert float(v[0] @ v[1]) == pytest.approx((a[0] @ a[1] + b[0] @ b[1]) / 2, abs=1e-5)
    assert float(a[0] @ a[1]) != pytest.approx(float(b[0] @ b[1]), abs=1e-4)  # parts differ


def test_model_names_and_paths_resolve_or_say_the_fix(tmp_path, monkeypatch):
    assert resolve_model(MODEL_NAME) == (MODEL_NAME, model_dir())
    with pytest.raises(ConfigError, match="is not a model textbook-chat knows.*all-mpnet-base-v2"):
        resolve_model("bert-large-nonsense")
    with pytest.raises(ConfigError, match="no sentence-transformers folder there"):
        resolve_model(str(tmp_path))
    shelf = tmp_path / "models"
    (shelf / MPNET).mkdir(parents=True)
    (shelf / MPNET / "config.json").write_text("{}")
    monkeypatch.setenv(MODELS_ENV, str(shelf))
    assert resolve_model(MPNET) == (MPNET, (shelf / MPNET).resolve())
    copy = tmp_path / "my-minilm"
    shutil.copytree(model_dir(), copy)
    assert resolve_model(str(copy)) == ("my-minilm", copy.resolve())
    with pytest.raises(ConfigError, match="name each model once"):
        local_embedder(f"{MODEL_NAME}+{MODEL_NAME}")


def test_an_index_of_one_model_is_not_searched_with_another():
    meta = {"embedding_model": MODEL_NAME, "embedding_dimension": 384}
    check_model(meta, MODEL_NAME, 384)
    with pytest.raises(ModelMismatchError) as err:
        check_model(meta, f"{MODEL_NAME}+{MPNET}", 1152)
    message = str(err.value)
    assert "'all-MiniLM-L6-v2' (384 dimensions)" in message and f"{MPNET}" in message
    assert "EMBEDDING_MODEL" in message and "re-index" in message


def mpnet_available() -> bool:
    try:
        resolve_model(MPNET)
    except ConfigError:
        return False
    return True


@pytest.mark.mpnet
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_mpnet_reproduces_sentence_transformers_reference(runtime):
    if not mpnet_available():
        pytest.skip(f"all-mpnet-base-v2 is not installed (set {MODELS_ENV})")
    reference = json.loads(MPNET_REFERENCE.read_text())
    items = reference["items"]
    assert len(items) == 10 and reference["max_seq_length"] == 384
    model = LocalEmbedder(MPNET, runtime=runtime, precision="f32", long_text="truncate").load()
    got = model.embed_array([item["text"] for item in items])
    want = np.asarray([item["vector"] for item in items], dtype=np.float32)
    want /= np.maximum(np.linalg.norm(want, axis=1, keepdims=True), 1e-12)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() >= 0.999, cosines


@pytest.mark.mpnet
def test_mpnet_weights_are_the_official_ones():
    if not mpnet_available():
        pytest.skip(f"all-mpnet-base-v2 is not installed (set {MODELS_ENV})")
    import hashlib

    _, folder = resolve_model(MPNET)
    digest = hashlib.sha256()
    with (folder / "model.safetensors").open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    assert digest.hexdigest() == json.loads(MPNET_REFERENCE.read_text())["model_safetensors_sha256"]
