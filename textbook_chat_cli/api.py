"""`textbook-chat serve`, `ask` and `invoke`: the API's real Mangum handlers, fed real events."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from functions.errors import ConfigError
from functions.settings import Settings
from indexer import local_index
from indexer.using import say_stderr, using_index
from textbook_chat_cli.events import api_gateway_event
from textbook_chat_cli.options import (
    add_prune_option,
    add_rate_limit_option,
    add_site_options,
    index_job,
    local_env,
    port,
    say_rate_limits,
)

ASK_SERVE_SECONDS = 120  # a serve answers within its own request deadline (seconds)
LOCAL_ORIGINS = r"https?://(localhost|127\.0\.0\.1)(:\d+)?"
SERVE_EXAMPLES = """examples:
  textbook-chat serve                                 the API on http://127.0.0.1:8787
  textbook-chat serve --watch website/docs            ... re-indexing every page you save
  QDRANT_COLLECTION=other-book textbook-chat serve --watch ../other-book/docs   (a second book)
  textbook-chat serve --cors-origin http://localhost:3000
  textbook-chat serve --rate-limit                    with the published API's per-reader limits
  curl -s http://127.0.0.1:8787/health
  curl -s http://127.0.0.1:8787/chat -H 'Content-Type: application/json' \\
       -d '{"question": "What is loop jitter?"}'
"""
ASK_EXAMPLES = """examples:
  textbook-chat ask "What is loop jitter?" --page-url /docs/intro
  textbook-chat ask "Why does it drift?" --history talk.json   (continues talk.json)
  textbook-chat ask "What does this mean?" --selection "Jitter is how much the period varies."
  textbook-chat ask "How do encoders count ticks?" --json      (the API's response)
  QDRANT_PATH=../book/.textbook-chat/qdrant textbook-chat ask "..."   (an index made elsewhere)
"""
INVOKE_EXAMPLES = """examples:
  textbook-chat invoke chat --question "How do encoders count ticks?"
  textbook-chat invoke selection --question "Explain this" --selected-text "Jitter is ..."
  textbook-chat invoke selection --event event.json     (an API Gateway v2 event)
"""


@dataclass(frozen=True)
class Question:
    """A question as `ask` and `invoke` take it, and the API request it becomes."""

    text: str
    selected_text: str | None = None
    page_url: str | None = None
    anchor: str | None = None
    history: Path | None = None  # the conversation file `ask --history` continues

    def request(self) -> tuple[str, dict]:
        """(the Lambda function, the request body)."""
        body: dict = {"question": self.text}
        if self.selected_text:
            body["selected_text"] = self.selected_text
            if self.page_url:
                body["page_url"] = self.page_url
            if self.anchor:
                body["anchor"] = self.anchor
            return "selection", body
        if self.page_url:
            body["page_url"] = self.page_url
        if self.history:
            body["history"] = _read_history(self.history)
        return "chat", body


def lambda_handler(function: str):
    """The deployed function's own handler module (its app and clients built on import)."""
    if function == "selection":
        from functions.api.handlers.selection import handler  # here: only the function asked for
    else:
        from functions.api.handlers.chat import handler
    return handler


def _read_history(path: Path) -> list[dict]:
    """The conversation so far from --history FILE (a JSON list of {role, content}); a file
    that does not exist yet starts a new conversation."""
    if not path.exists():
        if not path.parent.is_dir():  # found out before asking, not after the answer
            raise ConfigError(f"--history {path}: the folder {path.parent} does not exist; "
                              "give a file in an existing folder (it is created there).")
        return []
    try:
        turns = json.loads(path.read_text(encoding="utf-8") or "[]")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"--history {path}: not a JSON conversation ({exc}).") from None
    if not isinstance(turns, list) or not all(
            isinstance(t, dict) and t.get("role") in ("user", "assistant")
            and isinstance(t.get("content"), str) for t in turns):
        raise ConfigError(f"--history {path}: must be a JSON list of "
                          '{"role": "user" | "assistant", "content": "..."}.')
    return [{"role": t["role"], "content": t["content"]} for t in turns][-40:]


def _save_history(path: Path, body: dict, answer: str) -> None:
    """Append the question and its answer, so the next `ask --history FILE` continues."""
    turns = [*body.get("history", []), {"role": "user", "content": body["question"]},
             {"role": "assistant", "content": answer}]
    path.write_text(json.dumps(turns[-40:], indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")


# The API names its body's fields; `ask` says which of its own flags to change instead.
ASK_FLAGS = {"question": "the question", "page_url": "--page-url", "selected_text": "--selection",
             "anchor": "--anchor", "history": "--history"}


def _as_flags(message: str) -> str:
    for field, flag in ASK_FLAGS.items():
        message = message.replace(f"`{field}`", flag)
    return message


def _read_event(path: Path) -> dict:
    """An API Gateway v2 / Function URL event from a JSON file, or a clear error."""
    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--event {path}: cannot read it ({exc.strerror}).") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"--event {path}: not a JSON event ({exc}).") from None
    if not isinstance(event, dict) or "requestContext" not in event:
        raise ConfigError(
            f"--event {path}: not an API Gateway v2 or Function URL event (no requestContext); "
            "`textbook-chat invoke chat --question ...` builds one for you."
        )
    return event


def cmd_invoke(args) -> int:
    if args.event:
        event = _read_event(Path(args.event))
    elif args.question:
        question = Question(args.question, args.selected_text, args.page_url, args.anchor)
        event = api_gateway_event(f"/{args.function}", question.request()[1])
    else:
        print("textbook-chat invoke: give --event FILE or --question TEXT", file=sys.stderr)
        return 2
    if args.function == "chat":  # `selection` reads no index
        say_index_in_use()
    response = lambda_handler(args.function)(event, None)
    print(json.dumps(response, indent=2, ensure_ascii=False))
    return 0 if response.get("statusCode", 500) < 400 else 1


def cmd_ask(args) -> int:
    if args.anchor and not args.selection:
        print("textbook-chat ask: --anchor goes with --selection (the id of the heading above "
              "the selected text); without --selection, --page-url names the reader's page.",
              file=sys.stderr)
        return 2
    history = Path(args.history) if args.history else None
    return ask(Question(args.question, args.selection, args.page_url, args.anchor, history),
               as_json=args.json, explain=args.explain)


def ask(question: Question, as_json: bool = False, handler=None, explain: bool = False) -> int:
    """One answer through the Lambda handler (or `handler`, e.g. the demo's), printed for a
    person; exit 2 for a question the API refuses as input (empty, too long), 1 for any other
    failure. `explain`: then why the chat path answered or refused (explain_decision)."""
    if not question.text.strip():
        print("textbook-chat ask: the question is empty; type one, e.g. "
              'textbook-chat ask "What is a PID controller?"', file=sys.stderr)
        return 2
    try:
        function, body = question.request()
    except ConfigError as exc:
        print(f"textbook-chat ask: {exc}", file=sys.stderr)
        return 2
    hint = missing_index_hint("ask") if function == "chat" and handler is None else None
    if function == "chat" and handler is None and not hint:  # the hint names where it looked;
        say_index_in_use()  # `--selection` reads no index
    if hint and not as_json:  # the API's own message may not name the folder: it is ours
        print(f"{hint}.", file=sys.stderr)
        return 1
    served = None
    if function == "chat" and handler is None and not explain:  # the running serve answers:
        served = ask_serve(body)  # it holds the index and the model already (seconds saved)
    with contextlib.ExitStack() as stack:
        deps = None
        if served is not None:
            response = served
        else:
            from functions.api.http_errors import configure_logging  # here: it loads starlette

            if handler is None:
                handler, deps = _handler(function, stack)
            if "LOG_LEVEL" not in os.environ:  # one human line, not the JSON request log (after
                configure_logging(logging.ERROR)  # the app is built: create_app sets LOG_LEVEL's)
            from functions.deadline import unhurried

            with unhurried():  # the author at a terminal waits; a served reader is told busy
                response = handler(api_gateway_event(f"/{function}", body), None)
        why = explain_decision(body, deps) if explain and function == "chat" and deps else []
    data = json.loads(response.get("body") or "{}")
    lost = None
    if question.history and function == "chat" and "answer" in data:
        try:
            _save_history(question.history, body, data["answer"])
        except OSError as exc:  # the answer is still shown; the conversation file is not updated
            lost = f"--history {question.history}: cannot write it ({exc.strerror or exc})"
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        if hint:
            print(f"{hint}.", file=sys.stderr)
    elif "error" in data:
        print(f"textbook-chat: {_as_flags(data['error']['message'])}", file=sys.stderr)
    else:
        print("\n".join(answer_lines(data, function)))
    if why and "error" not in data:
        print("\n".join([*why, f"  confidence: {data.get('confidence')}"
                                f"{' (low)' if data.get('low_confidence') else ''}"]))
    if lost:
        print(f"textbook-chat ask: {lost}; this question and answer are not in it.",
              file=sys.stderr)
        return 1
    status = response.get("statusCode", 500)
    return 0 if status < 400 else 2 if status in (400, 413, 422) else 1


def ask_serve(body: dict) -> dict | None:
    """The answer of the `serve` that holds this index (recorded in QDRANT_PATH), as a Lambda
    response; None when none runs or it does not answer (then `ask` answers by itself)."""
    import urllib.error
    import urllib.request

    try:
        settings = Settings.from_env(os.environ)
    except ConfigError:
        return None
    server = local_index.running_server(settings)
    if server is None or not server.url or server.collection != settings.collection:
        return None
    request = urllib.request.Request(f"{server.url}/chat", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=ASK_SERVE_SECONDS) as reply:
            status, text = reply.status, reply.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode("utf-8", "replace")
    except (OSError, ValueError):  # not listening (yet), or gone: answer here instead
        return None
    if status >= 500 and status != 503:
        return None
    say_stderr(f"Answered by the `textbook-chat serve` running on {server.url} (pid {server.pid}).")
    return {"statusCode": status, "body": text}


def answer_lines(data: dict, function: str = "chat") -> list[str]:
    """An answer as `ask` prints it: the text, its citations (`[1] Page › Section  URL`, without
    the parts a selection's citation lacks), related sections, and for a weak answer one line an
    author can act on. The confidence figure itself is --explain's (a refusal says it refuses;
    a selection's note says what it did)."""
    lines = [data["answer"]]
    for c in data.get("citations", []):
        where = " › ".join(part for part in (c.get("title"), c.get("section_title")) if part)
        lines.append(f"  [{c['n']}] {where}  {c['url']}" if c.get("url") else f"  [{c['n']}] {where}")
    lines += [f"  see: {t['title']}  {t['url']}" for t in data.get("related_topics") or []]
    if data.get("low_confidence") and not data.get("refusal") and function == "chat" \
            and data.get("outcome") != "closest":
        lines.append("  (a weak match: the cited sections may not answer exactly this; "
                     "--explain says why)")
    return lines


def explain_decision(body: dict, deps) -> list[str]:
    """Why the chat path answered or refused `body` (functions.answers.chat.explain_chat, the
    same code with the same clients the handler just used): the rule that decided, the policy's
    probability, every signal it read and the sections the quote was chosen among."""
    from functions.answers.chat import explain_chat
    from functions.answers.decision import FEATURES, POLICY_FILE, policy_for
    from functions.api.validation import chat_request

    _, decision = explain_chat(chat_request(body), deps.retriever, deps.chat_model,
                               deps.spend_cap, deps.settings, deps.paid)
    if decision is None:
        return ["why: the question is empty"]
    signals = decision.signals
    lines = [f"why: {decision.action} ({decision.rule})",
             f"  question: {decision.kind or 'open'}",
             "  signals: " + " · ".join(f"{name} {getattr(signals, name):.3f}"
                                        for name in FEATURES)]
    if decision.topic:
        lines.append(f"  follow-up: searched beside “{decision.topic}”, quoted for "
                     f"“{decision.quoted_for}”")
    elif decision.quoted_for:  # a model's rewrite is searched alone
        lines.append(f"  follow-up: quoted for “{decision.quoted_for}”")
    lines += [f"  read: {url}" for url in decision.chosen]
    lines += [f"  not answered: “{part}” (it names what the book never mentions)" for part in decision.uncovered]
    policy = policy_for(deps.embedder.model_name)
    if policy is not None:
        fitted = ", ".join(policy.notes.get("fitted_on", []))
        lines.append(f"  policy: {POLICY_FILE.name} (fitted on {fitted}: `{policy.command}`)")
    return lines


def _handler(function: str, stack: contextlib.ExitStack):
    """The deployed function's own handler and its clients; while another process (e.g.
    `serve`) holds the local index, the same app over a read-only copy of it
    (indexer/local_index.py)."""
    if function == "chat":
        try:
            settings = Settings.from_env(os.environ)
        except ConfigError:  # the handler answers it, as the API does
            settings = None
        readable = stack.enter_context(local_index.readable(settings)) if settings else None
        if readable is not None and readable is not settings:
            from mangum import Mangum

            from functions.api.app import create_app
            from functions.api.deps import Deps

            deps = Deps.from_env({**os.environ, "QDRANT_PATH": readable.qdrant_path})
            return Mangum(create_app(deps, "chat", threaded=False), lifespan="off"), deps
    handler = lambda_handler(function)
    if function != "chat":
        return handler, None
    from functions.api.handlers import chat

    return handler, chat.deps


def cmd_serve(args) -> int:
    """`serve`, plus `--watch DOCS`: sync first, then serve while re-syncing on changes."""
    check_port(args.host, args.port)  # before any indexing, and before saying where it serves
    if not args.watch:
        if args.recreate or args.prune:
            flag = "--recreate" if args.recreate else "--prune"
            raise ConfigError(f"{flag} goes with --watch DOCS_DIR (it rebuilds the index from "
                              "DOCS_DIR at start); without --watch, serve only reads the index.")
        say_index_in_use()
        hint_missing_index()
        try:
            settings = Settings.from_env(os.environ)
        except ConfigError:  # the API answers it on every route
            return serve(args)
        with local_index.record_server(settings, None, local_index.serve_url(args.host, args.port)):
            return serve(args)
    from functions.api.deps import Deps  # here: it loads the app's services (~90 ms)
    from functions.search.store import QdrantStore  # here, as the indexer: `ask` stays light
    from indexer.job import DEFAULT_MANIFEST, check_docs_dir, index_docs
    from indexer.report import print_summary
    from indexer.site_config import find_config
    from indexer.watch import LockedStore, Watcher

    docs = Path(args.watch)
    check_docs_dir(docs)
    first = index_job(args, say_stderr, docs_dir=docs)  # a bad flag stops here, before serving
    settings = Settings.from_env(os.environ)
    say_stderr(using_index(settings))
    store = LockedStore(QdrantStore.open(settings))
    deps = Deps.from_env(local_env(args.rate_limit), search=store)
    stack = contextlib.ExitStack()
    stack.enter_context(local_index.record_server(  # `index` names this serve, `ask` asks it
        settings, docs, local_index.serve_url(args.host, args.port)))

    def sync(job, say=None, recreate=False):
        return index_docs(job, settings, embedder=deps.embedder, store=store, recreate=recreate,
                          say=say or (lambda _: None), prune=args.prune)

    def resync() -> str:
        """The docs as they are now, the site config and manifest re-read (both are watched)."""
        start = time.perf_counter()
        s = sync(index_job(args, docs_dir=docs))
        deps.retriever.reload()  # the versions and locales it now holds
        problems = "".join(f"\n  {p}" for p in s.problems)
        problems += "".join(f"\n  warning: {w}" for w in s.warnings)  # e.g. MDX a build rejects
        return (f"re-synced {docs}: sections embedded {s.embedded}, removed {s.deleted}, "
                f"failed {s.failed} ({time.perf_counter() - start:.1f} s){problems}")

    try:
        print_summary(sync(first, say_stderr, recreate=args.recreate), as_json=False)
        site_dir = args.site_dir or docs.resolve().parent
        watcher = Watcher(docs, resync, files=(find_config(Path(site_dir)), first.manifest
                                               or Path(site_dir) / DEFAULT_MANIFEST))
        watcher.start()
        print(f"textbook-chat serve: watching {docs} (a saved change is re-indexed within ~2 s)",
              file=sys.stderr)
        return serve(args, deps=deps)
    finally:
        store.close()
        stack.close()


def say_index_in_use() -> None:
    """`Using index: …` on stderr (indexer.job.using_index); a setting that does not parse is
    left to the API's own error, which names it."""
    try:
        settings = Settings.from_env(os.environ)
    except ConfigError:
        return
    say_stderr(using_index(settings))


def missing_index_hint(command: str, settings: Settings | None = None) -> str | None:
    """Where the command looked when there is plainly no local index (without opening it:
    local Qdrant is opened on the first question, so `index` may still run). QDRANT_PATH is
    shown as configured: this is the author's own machine (the API never shows it)."""
    try:
        settings = settings or Settings.from_env(os.environ)
    except Exception:  # noqa: BLE001 (the API answers a configuration error itself)
        return None
    from functions.search.edge_layout import has_index

    if settings.qdrant_url or has_index(settings.qdrant_path, settings.collection):
        return None
    path = Path(settings.qdrant_path)
    where = f"{path} (QDRANT_PATH, relative to this folder)" if not path.is_absolute() else path
    others = sorted({p.name.removesuffix(".json") for p in (path / "edge").glob("*")}
                    | {p.name for p in (path / "collection").glob("*")})
    fix = (f"set QDRANT_COLLECTION to the one it holds ({', '.join(others[:5])})" if others
           else "set QDRANT_PATH to the folder that holds the index")
    return (f"textbook-chat {command}: there is no index at {where} for the collection "
            f"{settings.collection!r}: run `textbook-chat index DOCS_DIR` here first, or {fix}")


def check_port(host: str, port: int) -> None:
    """A port another program holds is a one-line error naming it, not uvicorn's log line."""
    import socket

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            sock.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"--port {port}: port {port} on {host} is in use (another "
                              "`textbook-chat serve`?); stop what holds it or choose another "
                              "with --port.") from None
        raise ConfigError(f"--host {host} --port {port}: cannot listen there "
                          f"({exc.strerror or exc}); use --host 127.0.0.1 or an address of this "
                          "machine, and a port from 1024 up.") from None


def hint_missing_index() -> None:
    """Say at start when there is no local index yet (GET /health would answer 503)."""
    hint = missing_index_hint("serve")
    if hint:
        print(f"{hint}; or serve with `--watch DOCS_DIR`.", file=sys.stderr)


def serve(args, deps=None) -> int:
    """The API on args.host:args.port; deps: given by `--watch`, which shares its open index."""
    import uvicorn

    from functions.api.app import create_app
    from functions.api.deps import Deps

    deps = deps or Deps.from_env(local_env(args.rate_limit))
    if deps.config_error is None:
        say_rate_limits(deps.settings, "serve")
        started = time.perf_counter()
        deps.warm("chat", index=False)  # as a Lambda container's init: the first reader does
        # not wait for the model (the index is opened on the first question, as before)
        print(f"textbook-chat: embedding model loaded in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
    origins = args.cors_origin or list(deps.allowed_origins) or None  # flag, else ALLOWED_ORIGINS
    app = create_app(deps, "all", cors_origins=origins or [],
                     cors_origin_regex=None if origins else LOCAL_ORIGINS, allowed_by=SERVE_FIX)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"textbook-chat serve: listening on {args.host}, reachable from other machines",
              file=sys.stderr)
    print(f"textbook-chat: POST http://{args.host}:{args.port}/chat  /sources  /selection  /feedback  /mcp  "
          f"GET /health (Ctrl+C stops)", file=sys.stderr)
    # uvicorn would believe X-Forwarded-For from any local client, who could then rotate it
    # past the per-IP limit: only behind a reverse proxy, when told which one
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                proxy_headers=bool(args.trust_proxy), forwarded_allow_ips=args.trust_proxy or None)
    return 0


# What a refused site is told on a local serve (functions/api/crosssite.py's DEPLOYED_FIX there).
SERVE_FIX = ("the sites this `textbook-chat serve` was started for: start it again with "
             "`--cors-origin ORIGIN` for each site that calls it (by default any "
             "http://localhost or 127.0.0.1 port)")


def add_parsers(sub) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("serve", help="run the chat and selection API on 127.0.0.1",
                       epilog=SERVE_EXAMPLES, formatter_class=fmt)
    p.add_argument("--host", default=os.environ.get("TEXTBOOK_CHAT_HOST", "127.0.0.1"),
                   help="address to listen on (default: %(default)s; env TEXTBOOK_CHAT_HOST)")
    p.add_argument("--port", type=port, default=os.environ.get("TEXTBOOK_CHAT_PORT", "8787"),
                   help="port (default: %(default)s; env TEXTBOOK_CHAT_PORT)")
    p.add_argument("--cors-origin", action="append",
                   help="a site origin allowed to call the API (repeatable; default: "
                        "ALLOWED_ORIGINS, else any http://localhost or 127.0.0.1 port)")
    p.add_argument("--trust-proxy", nargs="?", const="127.0.0.1,::1", metavar="IPS",
                   default=os.environ.get("TEXTBOOK_CHAT_TRUST_PROXY") or None,
                   help="behind a reverse proxy at these addresses (default 127.0.0.1,::1): take "
                        "the reader's IP from its X-Forwarded-For. Without it the header is "
                        "ignored (env TEXTBOOK_CHAT_TRUST_PROXY)")
    add_rate_limit_option(p, "serve")
    p.add_argument("--watch", type=Path, metavar="DOCS_DIR",
                   default=os.environ.get("TEXTBOOK_CHAT_WATCH"),
                   help="index DOCS_DIR at start and re-index each change while serving "
                        "(site settings as `index` reads them: the options below)")
    p.add_argument("--recreate", action="store_true",
                   help="with --watch: drop the collection and index DOCS_DIR into it from "
                        "scratch (a new model, or to replace another book)")
    add_prune_option(p)
    add_site_options(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("ask", help="ask the book a question (the Lambda code path, locally)",
                       epilog=ASK_EXAMPLES, formatter_class=fmt)
    p.add_argument("question")
    p.add_argument("--selection", help="answer only from this selected text")
    p.add_argument("--page-url", help="the page the reader is on (boosts its sections)")
    p.add_argument("--anchor", help="with --selection: the heading id nearest the selection")
    p.add_argument("--history", metavar="FILE",
                   help="continue the conversation kept in FILE (JSON [{role, content}]); "
                        "the question and answer are appended to it")
    p.add_argument("--json", action="store_true", help="print the API response as JSON")
    p.add_argument("--explain", action="store_true",
                   help="also print why it answered or refused: the rule, the fitted "
                        "policy's probability, the signals it read, the sections quoted")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("invoke", help="call a Lambda handler with an API Gateway v2 event",
                       epilog=INVOKE_EXAMPLES, formatter_class=fmt)
    p.add_argument("function", choices=("chat", "selection"))
    p.add_argument("--event", help="a JSON file holding the event")
    p.add_argument("--question")
    p.add_argument("--selected-text")
    p.add_argument("--page-url")
    p.add_argument("--anchor")
    p.set_defaults(func=cmd_invoke)
