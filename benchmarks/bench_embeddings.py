"""Benchmark: the local MiniLM runtimes vs sentence-transformers, `index` vs sentence-transformers,
and the 256-wordpiece window.

Prints figures; not a test. Run from the repository root:

    python benchmarks/bench_embeddings.py                # runtimes on ~200 chunks, index, window
    python benchmarks/bench_embeddings.py --chunks 100 --rounds 3 --skip-index
    python benchmarks/bench_embeddings.py --skip-speed --skip-window   # only `index` vs s-t
    python benchmarks/bench_embeddings.py --skip-speed --skip-index --chunks-jsonl chunks.jsonl
        # window figures of `textbook-chat index DOCS --dry-run --export chunks.jsonl`

sentence-transformers is only needed here (pip install torch==2.13.0 sentence-transformers);
without it those ratios are skipped with a message. OMP_NUM_THREADS defaults to the core count
(torch's, OpenBLAS's and our OpenVINO runtime's thread pools) and is printed. Rounds are
interleaved (the machine may be shared); best and median are printed, each as a ratio against
sentence-transformers measured in the same run.

`index` vs sentence-transformers: the whole command `textbook-chat index` (start-up, parsing,
embedding with the embedded defaults, writing a fresh local index) on a book of about
--book-chunks chunks made of the shared corpora's docs, against sentence-transformers encoding
just the same chunk texts (model loaded beforehand). The issue's bar: index <= 1/1.5 of it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
os.environ.setdefault("OMP_NUM_THREADS", str(CPUS))  # before numpy/torch start their pools

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from functions.search.embeddings.local import (  # noqa: E402
    MAX_SEQ_LENGTH,
    MODEL_NAME,
    LocalEmbedder,
    default_runtime,
    resolve_model,
    window_spans,
)
from functions.tokens import count_tokens  # noqa: E402
from indexer.build import build_chunks  # noqa: E402
from indexer.model import ChunkOptions, SiteSettings  # noqa: E402

SHARED = Path(os.environ.get("TEXTBOOK_CHAT_SHARED", ROOT.parent / "shared"))


def paragraphs() -> list[str]:
    """Paragraphs of the sample textbook, plus the shared corpora where present."""
    files = sorted((ROOT / "samples" / "textbook" / "docs").rglob("*.md*"))
    files += sorted((SHARED / "corpora").glob("pai-*/**/*.md*"))
    out = []
    for path in files:
        text = re.sub(r"\A---\n.*?\n---\n", "", path.read_text(errors="replace"), flags=re.S)
        out += [p.strip() for p in re.split(r"\n\s*\n", text)
                if p.strip() and not p.lstrip().startswith(("import ", "export "))]
    return out


def make_chunks(paras: list[str], count: int, low: int, high: int, seed: int = 7) -> list[str]:
    """Runs of consecutive paragraphs of low..high cl100k tokens, like the chunker's output."""
    rng = random.Random(seed)
    sizes = [count_tokens(p) for p in paras]
    chunks: list[str] = []
    while len(chunks) < count:
        target = rng.randint(low, high)
        i = rng.randrange(len(paras))
        parts, total = [], 0
        while i < len(paras) and total + sizes[i] <= high:
            parts.append(paras[i])
            total += sizes[i]
            i += 1
            if total >= target:
                break
        if total >= low:
            chunks.append("\n\n".join(parts))
    return chunks


def timed(fn, *args):
    started = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - started


def load_sentence_transformers(model: str = MODEL_NAME):
    """(encode function, description), or (None, why not)."""
    try:
        import torch
        from sentence_transformers import SentenceTransformer

        st, st_load = timed(lambda: SentenceTransformer(str(resolve_model(model)[1]), device="cpu"))
    except ImportError as exc:
        return None, (f"sentence-transformers not installed ({exc}); skipping its ratios. "
                      "pip install torch==2.13.0 sentence-transformers")
    about = f"sentence-transformers load: {st_load:.2f} s (torch {torch.__version__}, " \
            f"{torch.get_num_threads()} threads)"
    return (lambda texts: st.encode(texts, normalize_embeddings=True)), about


def int8_runner(model: LocalEmbedder, chunks: list[str]):
    """The same model with weights and activations in int8 (NNCF post-training quantization,
    calibrated on these chunks), when nncf is installed: (embed_array, what), else (None, why).
    Not a runtime textbook-chat ships: it is measured here to show what int8 buys on this CPU."""
    try:
        import nncf
        import openvino as ov
    except ImportError:
        return None, "nncf not installed (pip install nncf): no int8 row"
    import json as _json

    from safetensors.numpy import load_file

    from functions.search.embeddings.bert_numpy import bert_layout
    from functions.search.embeddings.openvino_minilm import build_model, default_threads

    config = _json.loads((model._path / "config.json").read_text())
    graph = build_model(bert_layout(load_file(str(model._path / "model.safetensors")), config),
                        config["num_attention_heads"], config["layer_norm_eps"])
    body = model.max_seq_length - 2
    samples = [[model._cls, *ids[:body], model._sep] for ids in model.wordpieces(chunks[:100])]

    def item(ids):
        ids = np.asarray([ids], dtype=np.int32)
        return {"input_ids": ids, "attention_mask": np.ones_like(ids)}

    quantized, took = timed(lambda: nncf.quantize(graph, nncf.Dataset(samples, item),
                                                  model_type=nncf.ModelType.TRANSFORMER,
                                                  subset_size=len(samples)))
    q = LocalEmbedder(model.model_name, path=model._path, long_text="truncate",
                      runtime="openvino", precision="f32").load()
    q._encoder.compiled = ov.Core().compile_model(quantized, "CPU", {
        "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": default_threads()})
    return q.embed_array, f"openvino int8 (NNCF, calibrated on {len(samples)} chunks in {took:.0f} s)"


def bench_speed(chunks: list[str], rounds: int, model_name: str = MODEL_NAME,
                int8: bool = True) -> None:
    print(f"== speed: {model_name}, {len(chunks)} chunks, {min(map(count_tokens, chunks))}-"
          f"{max(map(count_tokens, chunks))} cl100k tokens (mean "
          f"{np.mean([count_tokens(c) for c in chunks]):.0f}), {CPUS} CPUs, "
          f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    paths = [("numpy", {"runtime": "numpy"})]
    if default_runtime() == "openvino":
        from functions.search.embeddings.openvino_minilm import best_precision

        paths = [(f"openvino {p}", {"runtime": "openvino", "precision": p})
                 for p in dict.fromkeys([best_precision(), "f32"])] + paths
    runners = {}
    for name, kwargs in paths:
        model, load_s = timed(lambda kw=kwargs: LocalEmbedder(model_name, long_text="truncate",
                                                              **kw).load())
        print(f"{name} load: {load_s:.2f} s")
        runners[f"{name} (truncate)"] = model.embed_array
        if int8 and name == "openvino f32":
            run, what = int8_runner(model, chunks)
            print(what)
            if run:
                runners["openvino int8 (truncate)"] = run
    default = LocalEmbedder(model_name).load()
    runners[f"default {default.runtime_label} (windows)"] = default.embed_array
    st, about = load_sentence_transformers(model_name)
    print(about)
    if st:
        runners["sentence-transformers"] = st
    for run in runners.values():
        run(chunks[:4])  # warm-up
    rates: dict[str, list[float]] = {name: [] for name in runners}
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    vectors = {}
    for _ in range(rounds):  # interleaved: the machine may be shared
        for name, run in runners.items():
            time.sleep(0.5)  # let the previous runtime's spinning threads stop
            started = time.process_time()
            vectors[name], dt = timed(run, chunks)
            rates[name].append(len(chunks) / dt)
            cpu[name].append(time.process_time() - started)
    for name, values in rates.items():
        print(f"{name:34s} best {max(values):7.2f}  median {statistics.median(values):7.2f} "
              f"chunks/s, CPU {statistics.median(cpu[name]):.1f} s")
    if not st:
        return
    theirs = vectors["sentence-transformers"]
    for name in runners:
        if name == "sentence-transformers":
            continue
        if "(truncate)" in name:
            cos = np.sum(vectors[name] * theirs, axis=1)
            print(f"cosine {name} vs sentence-transformers: min {cos.min():.6f}")
        best = max(rates[name]) / max(rates["sentence-transformers"])
        median = statistics.median(rates[name]) / statistics.median(rates["sentence-transformers"])
        by_cpu = statistics.median(cpu["sentence-transformers"]) / statistics.median(cpu[name])
        print(f"ratio {name} / sentence-transformers: best {best:.2f}x, median {median:.2f}x, "
              f"CPU time {by_cpu:.2f}x")


def make_book(target: int, folder: Path) -> tuple[Path, list[str]]:
    """A docs folder of about `target` chunks from the shared corpora's docs (whole files, in
    order), and the texts the indexer embeds for it."""
    docs = folder / "docs"
    sources = [(corpus.name, corpus / "docs") for corpus in sorted((SHARED / "corpora").glob("pai-*"))]
    if not sources:
        sys.exit(f"no corpora under {SHARED / 'corpora'} (set TEXTBOOK_CHAT_SHARED)")
    for name, src in sources:
        shutil.copytree(src, docs / name)
    built = build_chunks(docs, SiteSettings(), ChunkOptions())
    per_file: dict[str, int] = {}
    for chunk in built.chunks:
        per_file[chunk.doc_path] = per_file.get(chunk.doc_path, 0) + 1
    total = len(built.chunks)
    for doc_path in sorted(per_file, reverse=True):  # drop whole files from the end
        if total - per_file[doc_path] < target:
            break
        (docs / doc_path).unlink()
        total -= per_file[doc_path]
    built = build_chunks(docs, SiteSettings(), ChunkOptions())
    return docs, [chunk.embed_text for chunk in built.chunks]


def bench_index(target: int, rounds: int) -> None:
    """`textbook-chat index` of a fresh book vs sentence-transformers encoding its chunk texts."""
    st, about = load_sentence_transformers()
    with tempfile.TemporaryDirectory(prefix="textbook-chat-bench-index-") as tmp:
        docs, texts = make_book(target, Path(tmp))
        print(f"== index vs sentence-transformers: a book of {len(texts)} chunks, "
              f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
        print(about)
        command = [sys.executable, "-m", "textbook_chat_cli", "index", str(docs)]
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENAI_API_KEY", "QDRANT_URL", "EMBEDDING_PROVIDER", "EMBEDDING_MODEL")}
        index_s: list[float] = []
        st_s: list[float] = []
        said = ""
        for i in range(rounds):  # interleaved: the machine may be shared
            if st:
                time.sleep(0.5)
                st_s.append(timed(st, texts)[1])
            time.sleep(0.5)
            env.update(QDRANT_PATH=str(Path(tmp) / f"qdrant-{i}"), QDRANT_COLLECTION="bench")
            started = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            index_s.append(time.perf_counter() - started)
            if done.returncode != 0:
                sys.exit(f"index failed ({done.returncode}):\n{done.stderr[-2000:]}")
            said = next((line for line in done.stderr.splitlines() if line.startswith("Embedded")),
                        "(index did not say what embedded)")
        print(f"index says: {said}")
        print(f"textbook-chat index (whole command): best {min(index_s):.1f} s, median "
              f"{statistics.median(index_s):.1f} s")
        if not st_s:
            return
        print(f"sentence-transformers encode only:   best {min(st_s):.1f} s, median "
              f"{statistics.median(st_s):.1f} s")
        print(f"ratio index / sentence-transformers encode: best {min(index_s) / min(st_s):.2f} "
              f"(1/{min(st_s) / min(index_s):.2f}), median "
              f"{statistics.median(index_s) / statistics.median(st_s):.2f} "
              f"(1/{statistics.median(st_s) / statistics.median(index_s):.2f}); the bar is <= 1/1.5")


def bench_window(chunks: list[str]) -> None:
    """How many chunks pass the 256-wordpiece window, and what truncation loses."""
    model = LocalEmbedder().load()
    truncating = LocalEmbedder(long_text="truncate").load()
    body = MAX_SEQ_LENGTH - 2
    pieces = [len(ids) for ids in model.wordpieces(chunks)]
    tokens = [count_tokens(c) for c in chunks]
    long = [i for i, n in enumerate(pieces) if n > body]
    lost = sum(max(0, n - body) for n in pieces)
    print(f"== window: {len(chunks)} chunks <= {max(tokens)} cl100k tokens; wordpieces/cl100k "
          f"token = {sum(pieces) / max(1, sum(tokens)):.2f}")
    print(f"chunks over {body} wordpieces: {len(long)} ({len(long) / len(chunks):.0%}); "
          f"wordpieces dropped by truncation: {lost} of {sum(pieces)} ({lost / sum(pieces):.0%}); "
          f"in the long chunks {np.mean([1 - body / pieces[i] for i in long] or [0]):.0%} each")
    if not long:
        return
    seconds: dict[str, list[float]] = {"windows": [], "truncate": []}
    cpu: dict[str, list[float]] = {"windows": [], "truncate": []}
    for _ in range(3):  # interleaved, warm: what the windows cost
        for name, runner in (("windows", model), ("truncate", truncating)):
            time.sleep(0.5)
            started = time.process_time()
            out, dt = timed(runner.embed_array, chunks)
            seconds[name].append(dt)
            cpu[name].append(time.process_time() - started)
            if name == "windows":
                win = out
            else:
                trunc = out
    sequences = sum(len(window_spans(n, body, model.window_overlap)) for n in pieces)
    print(f"embedding time ({model.runtime_label}, median of 3): windows "
          f"{statistics.median(seconds['windows']):.1f} s ({sequences} sequences), truncate "
          f"{statistics.median(seconds['truncate']):.1f} s ({len(chunks)}): windows/truncate wall "
          f"{statistics.median(seconds['windows']) / statistics.median(seconds['truncate']):.2f}x, "
          f"CPU {statistics.median(cpu['windows']) / statistics.median(cpu['truncate']):.2f}x")
    cos = np.sum(win[long] * trunc[long], axis=1)
    print(f"cosine windows vs truncate on long chunks: mean {cos.mean():.3f}, min {cos.min():.3f}")
    # queries from the part truncation drops (the last sentence) and from the part it keeps
    # (the first sentence): windows should win the first and not lose the second
    for where, pick in (("tail", -1), ("head", 0)):
        queries, targets = [], []
        for i in long:
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", chunks[i].strip()) if len(s) > 40]
            if sentences:
                queries.append(sentences[pick][:300])
                targets.append(i)
        q = model.embed_array(queries)
        for name, matrix in (("windows", win), ("truncate", trunc)):
            ranks = [int((matrix @ qv > matrix[t] @ qv).sum()) + 1
                     for qv, t in zip(q, targets, strict=True)]
            print(f"{where}-sentence queries ({len(queries)}), {name:8s}: hit@1 "
                  f"{np.mean([r == 1 for r in ranks]):.0%}, hit@5 "
                  f"{np.mean([r <= 5 for r in ranks]):.0%}, MRR {np.mean([1 / r for r in ranks]):.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunks-jsonl", type=Path, help="window figures of an --export file")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--model", default=MODEL_NAME,
                        help="the speed rows' model (e.g. all-mpnet-base-v2, found as EMBEDDING_MODEL is)")
    parser.add_argument("--no-int8", action="store_true", help="skip the NNCF int8 row")
    parser.add_argument("--skip-window", action="store_true")
    parser.add_argument("--skip-index", action="store_true")
    parser.add_argument("--book-chunks", type=int, default=776, help="size of the indexed book")
    parser.add_argument("--index-rounds", type=int, default=3)
    args = parser.parse_args(argv)
    paras = paragraphs()
    if not args.skip_speed:
        bench_speed(make_chunks(paras, args.chunks, 100, 400), args.rounds, args.model,
                    not args.no_int8)
    if not args.skip_index:
        bench_index(args.book_chunks, args.index_rounds)
    if args.skip_window:
        return 0
    if args.chunks_jsonl:
        rows = [json.loads(line) for line in args.chunks_jsonl.read_text().splitlines() if line]
        window_chunks = [" > ".join([r.get("doc_title", ""), *r.get("heading_path", [])]) + "\n\n"
                         + r["content"] for r in rows]
    else:  # what a 512-token chunker yields: runs of paragraphs of 50..512 tokens
        window_chunks = make_chunks(paras, 300, 50, 512, seed=11)
    bench_window(window_chunks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
