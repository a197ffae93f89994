"""What a reader's question costs in each deployment mode: the tokens of the requests the code
builds, and dollars per 1,000 questions.

    python benchmarks/bench_answer_cost.py [CORPORA_DIR] [--top-k 5]

For the sample book and every corpus bench_eval.py finds (../shared/corpora), each answerable
question is retrieved as POST /chat does (hybrid, top 5; local MiniLM, embeddings cached like
bench_eval's) and the OpenAI mode's model request is built by the code itself:
functions.answers.prompt.chat_messages(question, hits). Counted with cl100k_base, the tokenizer shipped in
functions/data (text-embedding-3-small's own; gpt-4o-mini's o200k_base counts English text within
a few percent of it), plus OpenAI's 3 tokens per message and 3 priming the reply. The reply is at
most functions.services.openai_http.OpenAIChat.max_tokens (800); the table prices it at that ceiling and at 250
(an assumed typical cited paragraph: no model runs here). A follow-up adds the rewrite request
(functions.answers.prompt.rewrite_messages, at most 60 tokens out), shown for one previous turn.
The reply's claim check (functions/answers/claims.py) embeds its sentences and the cited passages' windows
with text-embedding-3-small: priced here as reply + the whole prompt, an upper bound.
The offline mode makes no paid call: 0 tokens.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_eval import (  # noqa: E402
    DEFAULT_CACHE,
    corpora_root,
    corpus_questions,
    find_corpora,
    index_corpus,
    make_local_embedder,
)
from functions.answers.prompt import chat_messages, rewrite_messages  # noqa: E402
from functions.answers.requests import Turn  # noqa: E402
from functions.search.retrieval import Retriever  # noqa: E402
from functions.search.store import QdrantStore  # noqa: E402
from functions.settings import Settings  # noqa: E402
from functions.tokens import encoding  # noqa: E402
from tests.functions.sample_rest import SAMPLE, sample_questions  # noqa: E402

# USD per 1M tokens, OpenAI's list prices when this was written (check openai.com/api/pricing)
PRICES = {"gpt-4o-mini input": 0.15, "gpt-4o-mini output": 0.60, "text-embedding-3-small": 0.02}
TYPICAL_REPLY = 250


def message_tokens(messages: list[dict]) -> int:
    enc = encoding()
    return sum(3 + len(enc.encode(m["content"], disallowed_special=())) for m in messages) + 3


def measure(name: str, docs_site: Path, questions: list[str], embedder, top_k: int) -> dict:
    folder = tempfile.mkdtemp(prefix="answer-cost-")  # the embedded engine, as `index` makes it
    store = QdrantStore.open(Settings(qdrant_path=folder, collection=name))
    index_corpus(docs_site, store, embedder)
    retriever = Retriever(store, embedder)
    prompt, query, rewrite = [], [], []
    for i, question in enumerate(questions):
        hits = retriever.retrieve(question, top_k=top_k)
        prompt.append(message_tokens(chat_messages(question, hits)))
        query.append(len(encoding().encode(question, disallowed_special=())))
        if i:  # this question as a follow-up of the previous one, answered in 150 words
            history = [Turn(role="user", content=questions[i - 1]),
                       Turn(role="assistant", content="word " * 150)]
            rewrite.append(message_tokens(rewrite_messages(question, history)))
    store.close()
    shutil.rmtree(folder, ignore_errors=True)
    return {"book": name, "questions": len(questions), "prompt": prompt, "query": query,
            "rewrite": rewrite}


def dollars_per_1000(prompt_in: float, reply_out: float, query: float) -> float:
    embedded = query + prompt_in + reply_out  # the question, then the claim check (upper bound)
    return 1000 * (prompt_in * PRICES["gpt-4o-mini input"] + reply_out * PRICES["gpt-4o-mini output"]
                   + embedded * PRICES["text-embedding-3-small"]) / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("corpora", nargs="?")
    ap.add_argument("--top-k", type=int, default=5)
    args = ap.parse_args(argv)
    embedder = make_local_embedder(Settings(), DEFAULT_CACHE)
    books = [("sample", SAMPLE, [q["question"] for q in sample_questions()])]
    for corpus in find_corpora(corpora_root(args.corpora)):
        books.append((corpus.name, corpus,
                      [q.question for q in corpus_questions(corpus) if q.answerable]))
    rows = [measure(name, folder, qs, embedder, args.top_k) for name, folder, qs in books]
    print(f"tokens per question (median / p90; top_k {args.top_k}; cl100k_base), and USD per "
          "1,000 questions in the OpenAI mode (the offline mode: 0)")
    print(f"{'book':<14}{'n':>4}{'prompt in':>14}{'query emb':>11}{'follow-up rewrite':>19}"
          f"{'$/1000: p50 in, 250 out':>25}{'p90 in, 800 out':>17}")
    for r in rows:
        p50, p90 = statistics.median(r["prompt"]), statistics.quantiles(r["prompt"], n=10)[-1]
        q50 = statistics.median(r["query"])
        w50 = statistics.median(r["rewrite"]) if r["rewrite"] else 0
        print(f"{r['book']:<14}{r['questions']:>4}{p50:>8.0f} / {p90:<4.0f}{q50:>11.0f}"
              f"{w50:>13.0f} (+60)"
              f"{dollars_per_1000(p50, TYPICAL_REPLY, q50):>25.2f}"
              f"{dollars_per_1000(p90, 800, q50):>17.2f}")
    print("prices (USD / 1M tokens): " + ", ".join(f"{k} {v}" for k, v in PRICES.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
