"""A BERT encoder as an onnxruntime session, its ONNX graph built from safetensors (no PyTorch)."""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

BUILDER_VERSION = 1  # bump when the graph changes: it keys the cached .onnx file
GRAPHS = ("fused", "plain")  # com.microsoft contrib ops, or standard ops fused by ORT's optimizer
_MS = "com.microsoft"


def cache_dir() -> Path:
    base = os.environ.get("TEXTBOOK_CHAT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "textbook-chat")
    return Path(base)


def weights_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _linear(w: dict[str, np.ndarray], name: str) -> tuple[np.ndarray, np.ndarray]:
    """A torch Linear's weight as a MatMul right operand (in, out), and its bias."""
    return np.ascontiguousarray(w[name + ".weight"].T), w[name + ".bias"]


def build_model(weights: dict[str, np.ndarray], num_heads: int, eps: float, graph: str = "fused"):
    """onnx.ModelProto: (input_ids, attention_mask, token_type_ids) int32 (B, S) right-padded ->
    `pooled` (B, H) float32, the mean of the last hidden states over the mask (not normalised)."""
    from onnx import TensorProto, helper, numpy_helper

    w = {k.removeprefix("bert."): np.asarray(v, dtype=np.float32)
         for k, v in weights.items() if v.dtype != np.int64}
    inits: list = []
    nodes: list = []

    def const(name: str, value) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: list[str], out: str, domain: str = "", **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain, **attrs))
        return out

    hidden = w["embeddings.word_embeddings.weight"].shape[1]
    head_dim = hidden // num_heads
    emb = "embeddings."
    if graph == "fused":
        nodes.append(helper.make_node(
            "EmbedLayerNormalization",
            ["input_ids", "token_type_ids", const("word", w[emb + "word_embeddings.weight"]),
             const("position", w[emb + "position_embeddings.weight"]),
             const("segment", w[emb + "token_type_embeddings.weight"]),
             const("emb_ln_g", w[emb + "LayerNorm.weight"]), const("emb_ln_b", w[emb + "LayerNorm.bias"]),
             "attention_mask"], ["emb", "mask_index"], name="emb", domain=_MS, epsilon=eps))
        x = "emb"
    else:
        ids64 = node("Cast", ["input_ids"], "ids64", to=TensorProto.INT64)
        types64 = node("Cast", ["token_type_ids"], "types64", to=TensorProto.INT64)
        shape = node("Shape", ["input_ids"], "ids_shape")
        seq = node("Gather", [shape, const("one", np.asarray(1, np.int64))], "seq_len", axis=0)
        positions = node("Range", [const("zero", np.asarray(0, np.int64)), seq,
                                   const("one_step", np.asarray(1, np.int64))], "positions")
        summed = node("Add", [node("Gather", [const("word", w[emb + "word_embeddings.weight"]), ids64], "we"),
                              node("Gather", [const("position", w[emb + "position_embeddings.weight"]),
                                              positions], "pe")], "wpe")
        summed = node("Add", [summed, node("Gather", [const("segment", w[emb + "token_type_embeddings.weight"]),
                                                      types64], "te")], "emb_sum")
        x = node("LayerNormalization", [summed, const("emb_ln_g", w[emb + "LayerNorm.weight"]),
                                        const("emb_ln_b", w[emb + "LayerNorm.bias"])], "emb", axis=-1,
                 epsilon=eps)
        # additive mask (B, 1, 1, S): 0 where attended, -10000 on padding
        maskf = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
        bias = node("Mul", [node("Sub", [const("f_one", np.float32(1)), maskf], "mask_inv"),
                            const("neg", np.float32(-10000.0))], "mask_bias_flat")
        mask_bias = node("Unsqueeze", [bias, const("axes12", np.asarray([1, 2], np.int64))], "mask_bias")
        heads_shape = const("heads_shape", np.asarray([0, 0, num_heads, head_dim], np.int64))
        flat_shape = const("flat_shape", np.asarray([0, 0, hidden], np.int64))
    i = 0
    while f"encoder.layer.{i}.attention.self.query.weight" in w:
        p, t = f"encoder.layer.{i}.", f"l{i}_"
        q, k, v = (_linear(w, p + f"attention.self.{n}") for n in ("query", "key", "value"))
        w_out, b_out = _linear(w, p + "attention.output.dense")
        w_up, b_up = _linear(w, p + "intermediate.dense")
        w_down, b_down = _linear(w, p + "output.dense")
        ln1 = [const(t + "ln1_g", w[p + "attention.output.LayerNorm.weight"]),
               const(t + "ln1_b", w[p + "attention.output.LayerNorm.bias"])]
        ln2 = [const(t + "ln2_g", w[p + "output.LayerNorm.weight"]),
               const(t + "ln2_b", w[p + "output.LayerNorm.bias"])]
        if graph == "fused":
            ctx = node("Attention", [x, const(t + "w_qkv", np.concatenate([q[0], k[0], v[0]], axis=1)),
                                     const(t + "b_qkv", np.concatenate([q[1], k[1], v[1]])), "mask_index"],
                       t + "ctx", domain=_MS, num_heads=num_heads)
            proj = node("MatMul", [ctx, const(t + "w_out", w_out)], t + "proj")
            x1 = node("SkipLayerNormalization", [proj, x, *ln1, const(t + "b_out", b_out)], t + "x1",
                      domain=_MS, epsilon=eps)
            up = node("BiasGelu", [node("MatMul", [x1, const(t + "w_up", w_up)], t + "up"),
                                   const(t + "b_up", b_up)], t + "gelu", domain=_MS)
            down = node("MatMul", [up, const(t + "w_down", w_down)], t + "down")
            x = node("SkipLayerNormalization", [down, x1, *ln2, const(t + "b_down", b_down)], t + "x2",
                     domain=_MS, epsilon=eps)
        else:
            def dense(src: str, wb: tuple[np.ndarray, np.ndarray], name: str) -> str:
                mm = node("MatMul", [src, const(name + "_w", wb[0])], name + "_mm")
                return node("Add", [mm, const(name + "_b", wb[1])], name)

            def split_heads(src: str, perm: list[int]) -> str:
                return node("Transpose", [node("Reshape", [src, heads_shape], src + "_r")],
                            src + "_t", perm=perm)

            qh = split_heads(dense(x, q, t + "q"), [0, 2, 1, 3])
            kh = split_heads(dense(x, k, t + "k"), [0, 2, 3, 1])
            vh = split_heads(dense(x, v, t + "v"), [0, 2, 1, 3])
            scores = node("Div", [node("MatMul", [qh, kh], t + "qk"),
                                  const(t + "sqrt_d", np.float32(math.sqrt(head_dim)))], t + "scores")
            probs = node("Softmax", [node("Add", [scores, mask_bias], t + "masked")], t + "probs", axis=-1)
            ctx = node("Transpose", [node("MatMul", [probs, vh], t + "ctx_h")], t + "ctx_t", perm=[0, 2, 1, 3])
            ctx = node("Reshape", [ctx, flat_shape], t + "ctx")
            attn = node("Add", [dense(ctx, (w_out, b_out), t + "out"), x], t + "res1")
            x1 = node("LayerNormalization", [attn, *ln1], t + "x1", axis=-1, epsilon=eps)
            up = node("Gelu", [dense(x1, (w_up, b_up), t + "up")], t + "gelu")
            res2 = node("Add", [dense(up, (w_down, b_down), t + "down"), x1], t + "res2")
            x = node("LayerNormalization", [res2, *ln2], t + "x2", axis=-1, epsilon=eps)
        i += 1
    maskf = node("Cast", ["attention_mask"], "pool_mask", to=TensorProto.FLOAT)
    masked = node("Mul", [x, node("Unsqueeze", [maskf, const("axis2", np.asarray([2], np.int64))],
                                  "pool_mask3")], "masked_hidden")
    axis1 = const("axis1", np.asarray([1], np.int64))
    node("Div", [node("ReduceSum", [masked, axis1], "pool_sum", keepdims=0),
                 node("ReduceSum", [maskf, axis1], "pool_count", keepdims=1)], "pooled")
    ints = [helper.make_tensor_value_info(n, TensorProto.INT32, ["batch", "seq"])
            for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])]
    model = helper.make_model(helper.make_graph(nodes, "minilm", ints, out, inits),
                              opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid(_MS, 1)],
                              producer_name="textbook-chat")
    model.ir_version = 9
    return model


def model_file(folder: Path, num_heads: int, eps: float, graph: str = "fused") -> Path | bytes:
    """The cached .onnx for these weights (built on first use, atomically), or the model's bytes
    when the cache folder is not writable (e.g. a read-only Lambda file system)."""
    weights_path = folder / "model.safetensors"
    key = f"minilm-{weights_sha256(weights_path)[:16]}-v{BUILDER_VERSION}-{graph}.onnx"
    target = cache_dir() / key
    if target.exists():
        return target
    from safetensors.numpy import load_file

    data = build_model(load_file(str(weights_path)), num_heads, eps, graph).SerializeToString()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".tmp", delete=False) as f:
            f.write(data)
        os.replace(f.name, target)
    except OSError:
        return data
    return target


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class OnnxEncoder:
    """Mean-pooled, L2-normalised vectors of token id sequences, by padded length-sorted batches."""

    def __init__(self, folder: Path, num_heads: int, eps: float, graph: str = "fused",
                 threads: int | None = None, batch_size: int = 16, batch_tokens: int = 4096):
        import onnxruntime as ort

        if graph not in GRAPHS:
            raise ValueError(f"graph={graph!r}: use one of {', '.join(GRAPHS)}.")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or cpu_count()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        source = model_file(folder, num_heads, eps, graph)
        self.session = ort.InferenceSession(source if isinstance(source, bytes) else str(source),
                                            options, providers=["CPUExecutionProvider"])
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens  # padded tokens per run: bounds the attention's memory

    def embed(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """(len(sequences), H) float32 unit vectors, in order. Each sequence is [CLS] ... [SEP]."""
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]), reverse=True)
        out: np.ndarray | None = None
        start = 0
        while start < len(order):
            width = len(sequences[order[start]])  # longest first: it sets the padded width
            count = max(1, min(self.batch_size, self.batch_tokens // max(1, width)))
            batch = order[start:start + count]
            ids = np.zeros((len(batch), width), dtype=np.int32)
            mask = np.zeros((len(batch), width), dtype=np.int32)
            for row, idx in enumerate(batch):
                ids[row, :len(sequences[idx])] = sequences[idx]
                mask[row, :len(sequences[idx])] = 1
            pooled = self.session.run(["pooled"], {"input_ids": ids, "attention_mask": mask,
                                                   "token_type_ids": np.zeros_like(ids)})[0]
            if out is None:
                out = np.empty((len(sequences), pooled.shape[1]), dtype=np.float32)
            out[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
            start += count
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)
