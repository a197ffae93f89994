"""CLI commands of the API: `serve`, `ask` and `invoke` (real Mangum handlers, real events)."""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from pathlib import Path

LOCAL_ORIGINS = r"https?://(localhost|127\.0\.0\.1)(:\d+)?"
EXAMPLES = """examples:
  textbook-chat serve --cors-origin http://localhost:3000
  textbook-chat ask "What is loop jitter?" --page-url /docs/intro
  textbook-chat ask "Why does it drift?" --history talk.json   (continues talk.json)
  textbook-chat ask "What does this mean?" --selection "Jitter is how much the period varies."
  textbook-chat invoke chat --question "How do encoders count ticks?"
  textbook-chat invoke selection --event event.json
"""


def api_gateway_event(path: str, body: dict | str | bytes | None, method: str = "POST",
                      source_ip: str = "127.0.0.1", headers: dict | None = None) -> dict:
    """An API Gateway HTTP API (payload 2.0) event, as Lambda receives it."""
    raw = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
    binary = isinstance(raw, bytes)
    now = time.time()
    return {
        "version": "2.0", "routeKey": f"{method} {path}", "rawPath": path, "rawQueryString": "",
        "headers": {"content-type": "application/json", "host": "localhost",
                    "user-agent": "textbook-chat-cli", **(headers or {})},
        "requestContext": {
            "accountId": "000000000000", "apiId": "local", "domainName": "localhost",
            "domainPrefix": "localhost", "requestId": f"local-{int(now * 1000)}",
            "routeKey": f"{method} {path}", "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": source_ip, "userAgent": "textbook-chat-cli"},
        },
        "body": base64.b64encode(raw).decode() if binary else raw,
        "isBase64Encoded": binary,
    }


def _handler(function: str):
    if function == "selection":
        from functions.handlers.selection import handler
    else:
        from functions.handlers.chat import handler
    return handler


def _request(args) -> tuple[str, dict]:
    if getattr(args, "selected_text", None) or getattr(args, "selection", None):
        body = {"question": args.question,
                "selected_text": args.selected_text if hasattr(args, "selected_text")
                else args.selection}
        if args.page_url:
            body["page_url"] = args.page_url
        if getattr(args, "anchor", None):
            body["anchor"] = args.anchor
        return "selection", body
    body = {"question": args.question}
    if args.page_url:
        body["page_url"] = args.page_url
    if getattr(args, "history", None):
        body["history"] = _read_history(Path(args.history))
    return "chat", body


def _read_history(path: Path) -> list[dict]:
    """The conversation so far from --history FILE (a JSON list of {role, content}); a file
    that does not exist yet starts a new conversation."""
    from functions.errors import ConfigError

    if not path.exists():
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


def _port(raw: str) -> int:
    try:
        port = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a port number") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1-65535)")
    return port


def _read_event(path: Path) -> dict:
    """An API Gateway v2 / Function URL event from a JSON file, or a clear error."""
    from functions.errors import ConfigError

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
        function, body = _request(args)
        event = api_gateway_event(f"/{args.function}", body)
    else:
        print("textbook-chat invoke: give --event FILE or --question TEXT", file=sys.stderr)
        return 2
    response = _handler(args.function)(event, None)
    print(json.dumps(response, indent=2, ensure_ascii=False))
    return 0 if response.get("statusCode", 500) < 400 else 1


def cmd_ask(args, handler=None) -> int:
    """One answer through the Lambda handler (or `handler`, e.g. the demo's); exit 2 for a
    question the API refuses as input (empty, too long), 1 for any other failure."""
    from functions.errors import ConfigError

    os.environ.setdefault("LOG_LEVEL", "ERROR")  # one human line, not the JSON request log
    if not args.question.strip():
        print("textbook-chat ask: the question is empty; type one, e.g. "
              'textbook-chat ask "What is a PID controller?"', file=sys.stderr)
        return 2
    try:
        function, body = _request(args)
    except ConfigError as exc:
        print(f"textbook-chat ask: {exc}", file=sys.stderr)
        return 2
    response = (handler or _handler(function))(api_gateway_event(f"/{function}", body), None)
    data = json.loads(response.get("body") or "{}")
    if getattr(args, "history", None) and function == "chat" and "answer" in data:
        _save_history(Path(args.history), body, data["answer"])
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    elif "error" in data:
        print(f"textbook-chat: {data['error']['message']}", file=sys.stderr)
    else:
        print(data["answer"])
        for c in data.get("citations", []):
            print(f"  [{c['n']}] {c['title']} › {c['section_title']}  {c['url']}")
        for t in data.get("related_topics") or []:
            print(f"  see: {t['title']}  {t['url']}")
        if data.get("low_confidence"):
            print(f"  (low confidence: {data.get('confidence')})")
    status = response.get("statusCode", 500)
    return 0 if status < 400 else 2 if status in (400, 413, 422) else 1


def cmd_serve(args, deps=None) -> int:
    """deps: given by `serve --watch` (indexer.watch), which shares its open index."""
    import uvicorn

    from functions.app import create_app
    from functions.deps import Deps

    deps = deps or Deps.from_env()
    origins = args.cors_origin or list(deps.allowed_origins) or None  # flag, else ALLOWED_ORIGINS
    app = create_app(deps, "all", cors_origins=origins or [],
                     cors_origin_regex=None if origins else LOCAL_ORIGINS)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"textbook-chat serve: listening on {args.host}, reachable from other machines",
              file=sys.stderr)
    print(f"textbook-chat: POST http://{args.host}:{args.port}/chat  /selection  /feedback  "
          f"GET /health (Ctrl+C stops)", file=sys.stderr)
    # uvicorn would believe X-Forwarded-For from any local client, who could then rotate it
    # past the per-IP limit: only behind a reverse proxy, when told which one
    trusted = getattr(args, "trust_proxy", None)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                proxy_headers=bool(trusted), forwarded_allow_ips=trusted or None)
    return 0


def register(sub) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("serve", help="run the chat and selection API on 127.0.0.1",
                       epilog=EXAMPLES, formatter_class=fmt)
    p.add_argument("--host", default=os.environ.get("TEXTBOOK_CHAT_HOST", "127.0.0.1"),
                   help="address to listen on (default: %(default)s; env TEXTBOOK_CHAT_HOST)")
    p.add_argument("--port", type=_port, default=os.environ.get("TEXTBOOK_CHAT_PORT", "8787"),
                   help="port (default: %(default)s; env TEXTBOOK_CHAT_PORT)")
    p.add_argument("--cors-origin", action="append",
                   help="a site origin allowed to call the API (repeatable; default: "
                        "ALLOWED_ORIGINS, else any http://localhost or 127.0.0.1 port)")
    p.add_argument("--trust-proxy", nargs="?", const="127.0.0.1,::1", metavar="IPS",
                   default=os.environ.get("TEXTBOOK_CHAT_TRUST_PROXY") or None,
                   help="behind a reverse proxy at these addresses (default 127.0.0.1,::1): take "
                        "the reader's IP from its X-Forwarded-For. Without it the header is "
                        "ignored (env TEXTBOOK_CHAT_TRUST_PROXY)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("ask", help="ask the book a question (the Lambda code path, locally)",
                       epilog=EXAMPLES, formatter_class=fmt)
    p.add_argument("question")
    p.add_argument("--selection", help="answer only from this selected text")
    p.add_argument("--page-url", help="the page the reader is on (boosts its sections)")
    p.add_argument("--anchor", help="with --selection: the heading id nearest the selection")
    p.add_argument("--history", metavar="FILE",
                   help="continue the conversation kept in FILE (JSON [{role, content}]); "
                        "the question and answer are appended to it")
    p.add_argument("--json", action="store_true", help="print the API response as JSON")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("invoke", help="call a Lambda handler with an API Gateway v2 event",
                       epilog=EXAMPLES, formatter_class=fmt)
    p.add_argument("function", choices=("chat", "selection"))
    p.add_argument("--event", help="a JSON file holding the event")
    p.add_argument("--question")
    p.add_argument("--selected-text")
    p.add_argument("--page-url")
    p.add_argument("--anchor")
    p.set_defaults(func=cmd_invoke)
