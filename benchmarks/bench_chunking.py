"""Parse+chunk throughput on a generated 5 MB textbook, against LangChain's Markdown splitters.

    python benchmarks/bench_chunking.py [--chapters 100] [--megabytes 5] [--repeat 3] [--profile]

Ours: indexer.markdown.parse_text then indexer.chunker.chunk_document (anchors, URLs, exact
token limits). LangChain: MarkdownHeaderTextSplitter (H1-H4) then
RecursiveCharacterTextSplitter.from_tiktoken_encoder(cl100k_base, chunk_size=512,
chunk_overlap=50), on the same in-memory text, in the same process (needs
`pip install langchain-text-splitters`; tiktoken reads our shipped cl100k_base file).
Prints figures; not a test. Token caches are cleared before every run. Times are CPU seconds of
this process (time.process_time), steady on a busy machine; wall seconds are printed beside.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gen_corpus import generate  # noqa: E402
from functions import tokens  # noqa: E402
from indexer import splitting  # noqa: E402
from indexer.chunker import ChunkOptions, chunk_document  # noqa: E402
from indexer.markdown import parse_text  # noqa: E402
from indexer.model import SiteSettings  # noqa: E402

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def offline_tiktoken_cache() -> Path:
    """A TIKTOKEN_CACHE_DIR holding our shipped file under the name tiktoken looks for."""
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-cache-"))
    name = hashlib.sha1(_BLOB.encode()).hexdigest()
    shutil.copyfile(Path(tokens.__file__).parent / "data" / "cl100k_base.tiktoken", cache / name)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return cache


def ours(files: list[tuple[str, str]], parse_text) -> tuple[int, float, float, float]:
    """(chunks, parse CPU seconds, chunk CPU seconds, wall seconds)."""
    splitting.count.cache_clear()
    site, options = SiteSettings(), ChunkOptions()
    parse_s = chunk_s = 0.0
    n = 0
    wall = time.perf_counter()
    for rel, text in files:
        t0 = time.process_time()
        doc = parse_text(text, rel, site)
        t1 = time.process_time()
        n += len(chunk_document(doc, options)) if doc else 0
        parse_s += t1 - t0
        chunk_s += time.process_time() - t1
    return n, parse_s, chunk_s, time.perf_counter() - wall


def langchain(files: list[tuple[str, str]]) -> tuple[int, float, float]:
    """(chunks, CPU seconds, wall seconds)."""
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    t0, wall = time.process_time(), time.perf_counter()
    headers = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2"), ("###", "h3"), ("####", "h4")])
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name="cl100k_base", chunk_size=512, chunk_overlap=50
    )
    n = 0
    for _, text in files:
        n += len(splitter.split_documents(headers.split_text(text)))
    return n, time.process_time() - t0, time.perf_counter() - wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chapters", type=int, default=100)
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print the top functions of ours")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-chunking-"))
    try:
        paths = generate(work, args.chapters, args.megabytes)
        docs = work / "docs"
        files = [(p.relative_to(docs).as_posix(), p.read_text(encoding="utf-8")) for p in paths]
        mb = sum(len(text.encode()) for _, text in files) / 1e6
        print(f"corpus: {len(files)} files, {mb:.2f} MB (python benchmarks/gen_corpus.py)")
        tokens.encoding()  # load the tokenizer outside the timings
        offline_tiktoken_cache()
        best_ours = best_lc = (float("inf"), 0.0)
        for _ in range(args.repeat):
            n_ours, parse_s, chunk_s, wall = ours(files, parse_text)
            if parse_s + chunk_s < best_ours[0]:
                best_ours, best_split = (parse_s + chunk_s, wall), (parse_s, chunk_s)
            n_lc, lc_s, lc_wall = langchain(files)
            best_lc = min(best_lc, (lc_s, lc_wall))
        print(
            f"ours: parse+chunk {mb / best_ours[0]:6.2f} MB/s  ({best_ours[0]:.2f} CPU s = parse "
            f"{best_split[0]:.2f} + chunk {best_split[1]:.2f}; wall {best_ours[1]:.2f} s; "
            f"{n_ours} chunks)"
        )
        print(
            f"langchain: header + recursive tiktoken splitters {mb / best_lc[0]:6.2f} MB/s  "
            f"({best_lc[0]:.2f} CPU s; wall {best_lc[1]:.2f} s; {n_lc} chunks)"
        )
        print(f"ratio ours/langchain: {best_lc[0] / best_ours[0]:.2f}x (target >= 1.0x)")
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(ours, files, parse_text)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
