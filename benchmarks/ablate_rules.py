"""Which rules of the offline answer layer change no answer: `python benchmarks/ablate_rules.py`.

Each module-level rule (a compiled regex, a word set or table) of the answer modules is disabled
alone (a regex that never matches, an empty set or table) and every answer of the development
books' three question sets and the sample textbook's questions is compared with the baseline
(its text and whether it is a refusal), on the offline path and, with `--model`, on the model
path too (the fake OpenAI-compatible server of tests/fakes in passage mode, over HTTP, as
`bench_eval.py --fake-model`). Prints one JSON line per rule: how many answers changed and the
first ids, then the rules that changed none. A rule read at import time (a default argument, a
cached function) looks like it changes nothing: read the code before deleting one.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_eval  # noqa: E402

from functions.answers.chat import explain_chat  # noqa: E402
from functions.answers.requests import ChatRequest, Turn  # noqa: E402
from functions.api.deps import Deps  # noqa: E402
from functions.search.store import QdrantStore  # noqa: E402
from functions.services.ratelimit import MemorySpendCap  # noqa: E402
from functions.settings import Settings  # noqa: E402

MODULES = ("extractive", "names", "question_kind", "reader_blocks", "jsx_view", "text", "prompt",
           "citations", "finish")
BOOKS = ("pai-ali", "pai-hassaan", "textbook")  # textbook: samples/ in the repository
NEVER = re.compile(r"(?!x)x")


def open_books(workdir: Path) -> list[tuple[Deps, list]]:
    books = []
    for name in BOOKS:
        corpus = (ROOT / "samples" if name == "textbook" else bench_eval.corpora_root()) / name
        settings = Settings(qdrant_path=str(workdir / name), collection=name)
        embedder = bench_eval.make_local_embedder(settings, bench_eval.DEFAULT_CACHE)
        store = QdrantStore.open(settings)
        bench_eval.index_corpus(corpus, store, embedder)
        deps = Deps(settings, search=store, embedder=embedder, spend_cap=MemorySpendCap(10**12))
        books.append((deps, [q for which in bench_eval.SETS
                             for q in bench_eval.corpus_questions(corpus, which)]))
    return books


def answers(books, model_url: str | None) -> dict[str, tuple[str, bool]]:
    """Every question's answer offline, and on the model path when model_url is given."""
    out = {}
    for deps, questions in books:
        paths = [("offline", None, deps.settings)]
        if model_url:
            settings = deps.settings.with_(chat_provider="openai", openai_api_key="fake-model",
                                           openai_base_url=model_url)
            paths.append(("model", Deps(settings, search=deps.search, embedder=deps.embedder,
                                        spend_cap=deps.spend_cap).chat_model, settings))
        for path, llm, settings in paths:
            for q in questions:
                req = ChatRequest(question=q.question, history=tuple(
                    Turn(t["role"], t["content"]) for t in q.history))
                try:
                    answer, _ = explain_chat(req, deps.retriever, llm, deps.spend_cap,
                                             settings, False)
                    out[f"{path} {q.id}"] = (answer.answer, answer.low_confidence)
                except Exception as exc:  # a rule the code cannot do without: a change too
                    out[f"{path} {q.id}"] = (f"error {type(exc).__name__}", True)
    return out


def disabled(value):
    """What stands in for a rule while it is off, or None for a value that is no rule."""
    if isinstance(value, re.Pattern):
        return NEVER
    if isinstance(value, (set, frozenset)) and value and all(isinstance(v, str) for v in value):
        return type(value)()
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        return {}
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="store_true",
                        help="also answer on the model path (fake OpenAI-compatible server)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="textbook-chat-ablate-") as tmp, \
            bench_eval._fake_model(args.model) as model_url:
        books = open_books(Path(tmp))
        base = answers(books, model_url)
        idle = []
        for name in MODULES:
            module = importlib.import_module(f"functions.answers.{name}")
            for attr, value in list(vars(module).items()):
                stand_in = disabled(value)
                if stand_in is None or not attr.lstrip("_").isupper():
                    continue
                setattr(module, attr, stand_in)
                try:
                    now = answers(books, model_url)
                finally:
                    setattr(module, attr, value)
                changed = [k for k in base if now.get(k) != base[k]]
                rule = f"{name}.{attr}"
                print(json.dumps({"rule": rule, "changed": len(changed), "ids": changed[:6]}),
                      flush=True)
                if not changed:
                    idle.append(rule)
        print(f"{len(idle)} rules change no answer of {len(base)}: {', '.join(idle)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
