"""`textbook-chat demo`: index the bundled sample book into the default index, then ask it."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from functions.errors import ConfigError, ModelMismatchError
from functions.services.feedback import make_feedback_store
from functions.settings import Settings
from indexer.job import index_docs, resolve_job, say_stderr, shown, using_index
from indexer.plan import AnotherBook
from indexer.report import print_summary
from textbook_chat_cli.api import Question, ask

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "samples" / "textbook"
DEMO_QUESTIONS = (
    "What does the derivative term of a PID controller do?",
    "How do I find the gyroscope bias when the robot starts?",
    "How do I bake a sourdough loaf?",
)
DEMO_COLLECTION = "sample-textbook"  # used only when the default collection holds another book
DEMO_FEEDBACK = ".textbook-chat/demo-feedback.sqlite3"  # not the readers' log


def add_parsers(sub) -> None:
    p = sub.add_parser("demo", help="index the bundled sample textbook and ask it a few questions")
    p.add_argument("--question", action="append", help="ask this instead of the built-in questions")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args) -> int:
    """Index the bundled sample book into the default index (the one `ask`, `serve` and `eval`
    read with no flags), then ask it questions; the demo's questions stay out of the readers'
    feedback log."""
    from mangum import Mangum  # here: only the demo answers in-process

    from functions.api.app import create_app
    from functions.api.deps import Deps

    docs = SAMPLE_DIR / "docs"
    if not docs.is_dir():
        raise ConfigError(f"The sample textbook is missing at {docs}; run the demo from a clone.")
    settings = default = Settings.from_env(os.environ)
    say_stderr(using_index(settings))  # QDRANT_URL named by its setting: it may hold credentials
    say_stderr(f"Indexing the sample textbook ({shown(docs)}) ...")
    job = resolve_job(docs, site_dir=SAMPLE_DIR, say=say_stderr)
    try:
        summary = index_docs(job, settings)
    except (AnotherBook, ModelMismatchError) as exc:  # refused before anything was written
        what = "another book" if isinstance(exc, AnotherBook) else "an index of another model"
        print(f"The collection {settings.collection!r} holds {what}; the demo uses "
              f"{DEMO_COLLECTION!r} beside it.", file=sys.stderr)
        settings = settings.with_(collection=DEMO_COLLECTION)
        say_stderr(using_index(settings))
        summary = index_docs(job, settings)
    print_summary(summary, as_json=False)
    deps = Deps(settings, env=os.environ,
                feedback=make_feedback_store(settings, os.environ, path=DEMO_FEEDBACK))
    handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
    for question in args.question or DEMO_QUESTIONS:
        print(f"\nQ: {question}", flush=True)
        if ask(Question(question), handler=handler) != 0:
            return 1
    prefix = "" if settings.collection == default.collection else (
        f"QDRANT_COLLECTION={settings.collection} ")
    heading = ("Next, with no flags (same index):" if not prefix else
               f"Next, on the same index (the collection {settings.collection!r}):")
    activate = "".join(f"  {line}\n" for line in command_on_path())
    print(
        f"\n{heading}\n{activate}"
        f"  {prefix}textbook-chat ask \"What is loop jitter?\"\n"
        f"  {prefix}textbook-chat serve      the API on http://127.0.0.1:8787 for the widget "
        "(GET /health shows the index)\n"
        f"  {prefix}textbook-chat eval {shown(SAMPLE_DIR / 'questions.jsonl')}",
        file=sys.stderr,
    )
    return 0



def command_on_path() -> list[str]:
    """What to type first so the printed `textbook-chat …` lines run this very command:
    nothing when `textbook-chat` on PATH is this install's; the venv's activate script when it
    runs from a virtual environment that is not active (scripts/demo.sh runs .venv/bin/…),
    as the README does."""
    script = Path(sys.prefix) / "bin" / "textbook-chat"
    found = shutil.which("textbook-chat")
    if found and script.exists() and Path(found).resolve() == script.resolve():
        return []
    activate = Path(sys.prefix) / "bin" / "activate"
    if sys.prefix != sys.base_prefix and activate.is_file():
        return [f". {shown(activate)}        once per terminal: puts textbook-chat on PATH"]
    return []
