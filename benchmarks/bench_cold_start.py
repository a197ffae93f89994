"""Cold start of the Lambda handlers: import + first API Gateway v2 request, each in a fresh process.

    python benchmarks/bench_cold_start.py [--runs 5] [--importtime] [--no-lambda-init]
    python benchmarks/bench_cold_start.py --backend http --kinds chat,chat-ssm   # SSM at init
    python benchmarks/bench_cold_start.py --kinds chat-offline --offline-zip ZIP [--warm 30]

`chat-offline` is the keyless deployment as Lambda runs it: the unzipped package
(.serverless/chat.zip) of `serverless package --param="answers=offline"` in a Python that sees
only the zip (-I -S), the real local MiniLM on numpy, a Qdrant REST stand-in holding the sample
book on 127.0.0.1 (tests/functions/sample_rest.py), indexed as `index` writes it (each chunk's
blocks embedded), a sample question; `--warm N` more questions give the warm p50.
The zip for this machine and Lambda's Python 3.12, from a copy of the checkout (`npm ci` first):

    npx serverless package --stage ci --param="answers=offline" --param="pipArch=x86_64" \
        --param="pipPython=312" --param="pythonBin=PY312"

PY312 is a Python 3.12 with pip (e.g. ~/.pyenv/versions/3.12.1/bin/python3.12): pip fetches
the 3.12 manylinux wheels whatever Python runs it, and only with pythonBin of that version does
the package carry compiled .pyc (scripts/serverless-zip.js), as the deployed one does. Then
`--offline-zip .serverless/chat.zip --python PY312`.

For `chat`, `selection` and the naive baseline (benchmarks/naive_handler.py: fastapi + openai +
qdrant_client + mangum at top level), each run starts a new interpreter that imports the handler
module and sends one real API Gateway HTTP API (v2) event through its Mangum handler. Models
are zero-latency fakes (a fake embedder and search backend, extractive answers), so the figures
are the code's own cost. As on Lambda (AWS_LAMBDA_FUNCTION_NAME set), the handler's init builds
what the first request uses ("import" = the init phase SnapStart would snapshot; "1st req" = what
a reader waits for after it); `chat-ssm` reads the OpenAI key from SSM (moto) at init. Prints medians in ms, ratios to the naive module, the goals (chat
<= 1.0 s, selection <= 0.6 s), and with --importtime what dominates (`python -X importtime`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOALS_MS = {"chat": 1000.0, "selection": 600.0, "chat-offline": 1000.0}
OFFLINE_QUESTION = "Why do absolute encoders number their positions so that neighbouring positions differ in just one bit?"
ORIGIN = "https://example.github.io"
BODIES = {
    "chat": {"question": "How do encoders count pulses?",
             "page_url": "https://example.github.io/book/docs/ch1"},
    "selection": {"question": "What does the encoder count?",
                  "selected_text": "The quadrature encoder counts pulses on two channels. "
                                   "Their phase tells the direction of rotation.",
                  "page_url": "https://example.github.io/book/docs/ch1", "anchor": "encoders"},
}
BODIES["naive"] = BODIES["chat"]
BODIES["chat-offline"] = {"question": OFFLINE_QUESTION}


class LambdaContext:
    function_name, memory_limit_in_mb, aws_request_id = "bench", 1024, "bench-request"

    def get_remaining_time_in_millis(self) -> int:
        return 25_000


def _install_fakes(with_embedder: bool) -> None:
    """Zero-latency search backend (and embedder), given to Deps.from_env before the handler
    module builds its app (the handler's own import of functions.api.deps is then a cache hit)."""
    import functions.api.deps as deps_mod

    model, dim = ("fake-zero-latency", 8) if with_embedder else ("text-embedding-3-small", 1536)

    class FakeEmbedder:
        model_name, dimension = "fake-zero-latency", 8

        def embed_batch(self, texts):
            return [[1.0] + [0.0] * 7 for _ in texts]

    class FakeSearch:
        def collection_meta(self):
            return {"embedding_model": model, "embedding_dimension": dim}

        def search(self, dense, sparse, limit, filters=None, mode="hybrid"):
            from functions.search.types import SearchHit

            return [SearchHit(point_id=i, score=1 / (60 + i), dense_score=0.82 - i / 50,
                              payload=_payload(i)) for i in range(min(limit, 10))]

    fakes = {"search": FakeSearch(), **({"embedder": FakeEmbedder()} if with_embedder else {})}
    original = deps_mod.Deps.from_env.__func__
    deps_mod.Deps.from_env = classmethod(
        lambda cls, env=None, **given: original(cls, env, **{**fakes, **given}))


def _payload(i: int) -> dict:
    anchor = f"section-{i}-1"
    return {"chunk_id": f"{i:016x}", "doc_path": f"docs/ch{i}.md", "doc_id": f"ch{i}",
            "doc_title": f"Chapter {i}", "module": "Module 1",
            "heading_path": [f"Chapter {i}", f"Section {i}.1"], "section_title": f"Section {i}.1",
            "section_number": f"{i}.1", "heading_level": 2, "anchor": anchor,
            "url": f"https://example.github.io/book/docs/ch{i}#{anchor}",
            "page_url": f"https://example.github.io/book/docs/ch{i}", "chunk_index": 0,
            "token_count": 30, "content_type": "text", "tags": [], "content_hash": "0" * 64,
            "embedding_model": "fake-zero-latency",
            "content": f"Encoders count pulses on channel {i}. A quadrature encoder uses two "
                       f"channels to tell the direction. Section {i}.1 shows the wiring."}


def events(kind: str, warm: list[str] = ()) -> list[dict]:
    """The API Gateway HTTP API (v2) events of one run, built in the parent by the one builder
    (textbook_chat_cli.events) and handed to the child as JSON, so the child imports only the
    Lambda package: the first request, then the warm questions."""
    from textbook_chat_cli.events import api_gateway_event

    path = "/chat" if kind in ("naive", "chat-offline") else f"/{kind.removesuffix('-ssm')}"

    def event(body: dict) -> dict:
        raw = json.dumps(body)
        return api_gateway_event(
            path, raw, source_ip="203.0.113.9",
            headers={"content-length": str(len(raw)), "origin": ORIGIN,
                     "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https",
                     "x-forwarded-port": "443"},
            host="abc123.execute-api.us-east-1.amazonaws.com", api_id="abc123",
            account_id="123456789012", user_agent="bench-cold-start", request_id="bench-request",
            epoch_ms=1795309200000)

    return [event(BODIES[kind.removesuffix("-ssm")]), *(event({"question": q}) for q in warm)]


def child(kind: str, task: str | None, first: dict, warm: list[dict] = (),
          import_only: bool = False) -> None:
    """Runs in the fresh interpreter: import the handler, send one event, print timings (a
    first line as soon as the first answer is out, which the parent times; then the warm
    questions' line). import_only: the import alone, one line."""
    kind = kind.removesuffix("-ssm")  # the same handler, its key read from SSM at init
    t0 = time.perf_counter()
    sys.path.insert(0, task or str(ROOT))  # task: an unzipped Lambda package, nothing else
    if kind == "chat-offline":
        from functions.api.handlers import chat as module
    elif kind == "naive":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import naive_handler as module
    else:
        if kind == "chat":
            _install_fakes(with_embedder=not os.environ.get("OPENAI_BASE_URL"))
        import importlib

        module = importlib.import_module(f"functions.api.handlers.{kind}")
    t1 = time.perf_counter()
    if import_only:
        print(json.dumps({"import_ms": (t1 - t0) * 1000, "cpu_ms": _cpu_ms()}), flush=True)
        return
    response = module.handler(first, LambdaContext())
    t2 = time.perf_counter()
    body = json.loads(response["body"])
    print(json.dumps({
        "import_ms": (t1 - t0) * 1000, "first_ms": (t2 - t1) * 1000, "total_ms": (t2 - t0) * 1000,
        "cpu_ms": _cpu_ms(), "cited_urls": [c["url"] for c in body.get("citations", [])],
        "status": response["statusCode"], "cited": bool(body.get("citations")),
        "modules": len(sys.modules),
        "heavy": sorted(m for m in ("qdrant_client", "openai", "fastapi", "boto3", "botocore",
                                    "numpy", "tiktoken", "pydantic") if m in sys.modules),
    }), flush=True)
    warm_ms = []
    for event in warm:  # the same container, later readers
        start = time.perf_counter()
        r = module.handler(event, LambdaContext())
        assert r["statusCode"] == 200, r
        warm_ms.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"warm_ms": warm_ms}), flush=True)


def _cpu_ms() -> float:
    """CPU time of this process so far (user + system), interpreter start included: what the
    cold start costs whatever else the machine runs."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def run_child(kind: str, importtime: bool = False, extra: dict | None = None,
              lambda_init: bool = True, offline: dict | None = None,
              import_only: bool = False) -> tuple[dict, str]:
    """One fresh process; result["process_ms"]: from its start to its first line (the first
    answer sent, or with import_only the import done), as a reader of a cold start waits."""
    if kind == "chat-offline":
        extra = offline["env"]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "QDRANT_", "AWS_", "DYNAMODB_", "EMBEDDING_",
                                "CHAT_", "OMP_", "OPENBLAS_", "MKL_"))}
    env.update(ALLOWED_ORIGINS=ORIGIN, **(extra or {}))
    if kind.endswith("-ssm"):  # the deployed stack's way: the key's SSM name, read at init
        env["OPENAI_API_KEY_SSM"] = env.pop("SSM_OPENAI_API_KEY_NAME")
        env.pop("OPENAI_API_KEY")
    env.pop("SSM_OPENAI_API_KEY_NAME", None)
    if lambda_init:  # as on Lambda: the handler's init builds what the first request uses
        env["AWS_LAMBDA_FUNCTION_NAME"] = f"bench-{kind}"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    python = offline["python"] if kind == "chat-offline" else sys.executable
    cmd = [python, *(["-X", "importtime"] if importtime else []), __file__, "--child", kind]
    if kind == "chat-offline":  # only the zip and the standard library; /var/task is
        cmd[1:1] = ["-I", "-S", "-B"]  # read-only on Lambda: every cold start compiles the .py
        cmd += ["--task", offline["task"]]
    if import_only:
        cmd.append("--import-only")
    env["BENCH_EVENTS"] = json.dumps(events(kind, offline["warm"] if kind == "chat-offline"
                                            else []))
    with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryFile("w+") as err:
        wall = time.perf_counter()  # local SQLite feedback lands in cwd
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=err,
                                text=True)
        line = proc.stdout.readline()
        wall = (time.perf_counter() - wall) * 1000
        rest = proc.stdout.read()
        proc.wait(timeout=300)
        err.seek(0)
        stderr = err.read()
    if proc.returncode != 0 or not line:
        raise SystemExit(f"{kind} failed:\n{stderr[-3000:]}")
    result = json.loads(line)
    for later in rest.splitlines():
        result.update(json.loads(later))
    result["process_ms"] = wall
    return result, stderr


@contextmanager
def http_backends():
    """The deployed code path with near-zero-latency services on 127.0.0.1: a fake
    OpenAI-compatible server (embeddings, chat) and moto's DynamoDB (limits, spend, records)."""
    import logging

    sys.path.insert(0, str(ROOT))
    from moto.server import ThreadedMotoServer

    from tests.fakes.openai_server import FakeOpenAI
    from tests.functions.test_ratelimit import aws_env, create_table

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    import boto3

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    endpoint = "http://{}:{}".format(*moto.get_host_and_port())
    aws = aws_env(endpoint)
    boto3.client("ssm", endpoint_url=endpoint, region_name=aws["AWS_REGION"],
                 aws_access_key_id=aws["AWS_ACCESS_KEY_ID"],
                 aws_secret_access_key=aws["AWS_SECRET_ACCESS_KEY"]).put_parameter(
        Name="/bench/OPENAI_API_KEY", Value="sk-bench", Type="SecureString")
    try:
        with FakeOpenAI(dimension=1536) as openai_server:
            yield {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": openai_server.base_url,
                   "SSM_OPENAI_API_KEY_NAME": "/bench/OPENAI_API_KEY",
                   "DYNAMODB_TABLE": create_table(endpoint), "RATE_LIMIT_PER_MINUTE": "100000",
                   "RATE_LIMIT_PER_DAY": "100000", **aws_env(endpoint)}
    finally:
        moto.stop()


def top_imports(stderr: str, n: int = 12, max_depth: int = 2) -> list[tuple[str, float]]:
    """The slowest imports of an -X importtime log, nested at most max_depth (cumulative ms)."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|", 2)
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
        if depth <= max_depth:
            rows.append(("  " * depth + name.strip(), int(cumulative) / 1000))
    return sorted(rows, key=lambda r: -r[1])[:n]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kinds", default="chat,selection,naive")
    ap.add_argument("--importtime", action="store_true", help="show what each import costs")
    ap.add_argument("--backend", choices=("fakes", "http"), default="fakes",
                    help="fakes: in-process fakes, local limits and SQLite records; http: the "
                         "deployed path (httpx to a fake OpenAI server, DynamoDB on moto)")
    ap.add_argument("--no-lambda-init", dest="lambda_init", action="store_false",
                    help="leave AWS_LAMBDA_FUNCTION_NAME unset: init builds nothing ahead")
    ap.add_argument("--offline-zip", help="the offline package (.zip or unzipped folder) for "
                                          "the chat-offline kind")
    ap.add_argument("--python", help="chat-offline: the interpreter that runs the package (the "
                                      "functions' Python, e.g. python3.12)")
    ap.add_argument("--warm", type=int, default=30, help="chat-offline: warm requests per run")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--task", help=argparse.SUPPRESS)
    ap.add_argument("--import-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        first, *warm = json.loads(os.environ["BENCH_EVENTS"])
        child(args.child, args.task, first, warm, args.import_only)
        return 0
    with (http_backends() if args.backend == "http" else _no_backends()) as extra, \
            offline_backend(args) as args.offline:
        return report(args, extra)


@contextmanager
def offline_backend(args):
    """For chat-offline: the unzipped package, and the sample book behind a REST stand-in."""
    if "chat-offline" not in args.kinds.split(","):
        yield None
        return
    if not args.offline_zip:
        raise SystemExit("chat-offline needs --offline-zip (see the top of this file)")
    import zipfile

    sys.path.insert(0, str(ROOT))
    from tests.functions.sample_rest import COLLECTION, sample_book_rest, sample_questions

    questions = [q["question"] for q in sample_questions()][:args.warm]
    with tempfile.TemporaryDirectory() as unzipped, sample_book_rest() as url:
        task = args.offline_zip
        if zipfile.is_zipfile(task):
            zipfile.ZipFile(task).extractall(unzipped)
            task = unzipped
        yield {"task": task, "warm": questions, "python": args.python or sys.executable,
               "env": {"QDRANT_URL": url, "QDRANT_COLLECTION": COLLECTION,
                       "EMBEDDING_PROVIDER": "local", "CHAT_PROVIDER": "extractive",
                       "RATE_LIMIT_PER_MINUTE": "100000", "RATE_LIMIT_PER_DAY": "100000"}}


@contextmanager
def _no_backends():
    yield {}


def report(args, extra: dict) -> int:
    kinds = args.kinds.split(",")
    results: dict[str, list[dict]] = {k: [] for k in kinds}
    imports: list[dict] = []  # chat-offline: the same zip's import alone, in the same rounds
    for _ in range(args.runs):  # interleaved, so drift hits every kind alike
        for kind in kinds:
            if kind == "chat-offline":
                imports.append(run_child(kind, extra=extra, lambda_init=args.lambda_init,
                                         offline=args.offline, import_only=True)[0])
            results[kind].append(run_child(kind, extra=extra, lambda_init=args.lambda_init,
                                           offline=args.offline)[0])
    fields = ("import_ms", "first_ms", "total_ms", "process_ms", "cpu_ms")
    med = {k: {f: statistics.median(r[f] for r in rs) for f in fields}
           for k, rs in results.items()}
    print(f"cold start, median of {args.runs} fresh processes (python {sys.version.split()[0]}, "
          f"backend {args.backend}, load average {os.getloadavg()[0]:.1f})")
    print(f"{'handler':<13}{'import':>8}{'1st req':>9}{'total':>8}{'process':>9}{'CPU':>7}  "
          "status  ratio  goal")
    for kind in kinds:
        m, last = med[kind], results[kind][-1]
        ratio = m["total_ms"] / med["naive"]["total_ms"] if "naive" in med else float("nan")
        goal = GOALS_MS.get(kind)
        verdict = "" if goal is None else (
            f"<= {goal:.0f} ms {'ok' if m['process_ms'] <= goal else 'MISSED'}")
        print(f"{kind:<13}{m['import_ms']:>8.0f}{m['first_ms']:>9.0f}{m['total_ms']:>8.0f}"
              f"{m['process_ms']:>9.0f}{m['cpu_ms']:>7.0f}  {last['status']:>6}  {ratio:5.2f}  "
              f"{verdict}")
        print(f"{'':<13}heavy modules loaded: {', '.join(last['heavy']) or 'none'}; "
              f"{last['modules']} modules")
        if kind == "chat-offline":
            report_offline(args, m, last, results[kind], imports)
    if args.importtime:
        for kind in kinds:
            print(f"\n{kind}: slowest imports (cumulative ms, python -X importtime)")
            for name, ms in top_imports(run_child(kind, True, extra, args.lambda_init,
                                                  args.offline)[1]):
                print(f"  {ms:8.1f}  {name}")
    return 0


def report_offline(args, m: dict, last: dict, runs: list[dict], imports: list[dict]) -> None:
    """The keyless zip's cold start against its own import alone, measured in the same rounds."""
    alone = {f: statistics.median(r[f] for r in imports) for f in ("import_ms", "cpu_ms")}
    alone["process_ms"] = statistics.median(r["process_ms"] for r in imports)
    python = subprocess.run([args.offline["python"], "-c", "import platform; "
                             "print(platform.python_version())"], capture_output=True,
                            text=True).stdout.strip()
    print(f"\nkeyless zip alone (python {python}), {args.runs} interleaved rounds, medians in ms:")
    print(f"  {'':<24}{'process':>8}{'CPU':>7}{'in-process':>11}")
    print(f"  {'import alone':<24}{alone['process_ms']:>8.0f}{alone['cpu_ms']:>7.0f}"
          f"{alone['import_ms']:>11.0f}")
    print(f"  {'import + 1st /chat':<24}{m['process_ms']:>8.0f}{m['cpu_ms']:>7.0f}"
          f"{m['total_ms']:>11.0f}")
    print(f"  cold start / import alone: process x{m['process_ms'] / alone['process_ms']:.2f}, "
          f"CPU x{m['cpu_ms'] / alone['cpu_ms']:.2f}; the 1st /chat adds "
          f"{m['process_ms'] - alone['process_ms']:.0f} ms")
    goal = GOALS_MS["chat-offline"]
    print(f"  goal: import + 1st /chat <= {goal:.0f} ms (process): "
          f"{'ok' if m['process_ms'] <= goal else 'MISSED'}; with SnapStart (snapshot after "
          f"init): 1st request {m['first_ms']:.0f} ms + restore")
    print(f"  cited: {last['cited_urls'][:2]}")
    warm = [ms for r in runs for ms in r.get("warm_ms", ())]
    if len(warm) > 1:
        print(f"  warm /chat: p50 {statistics.median(warm):.0f} ms, p90 "
              f"{statistics.quantiles(warm, n=10)[-1]:.0f} ms over {len(warm)} requests")


if __name__ == "__main__":
    sys.exit(main())
