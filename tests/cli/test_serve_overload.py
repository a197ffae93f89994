"""`serve` under more readers than it can answer at once: every answer ends within the request's
deadline by serve's own clock, the others are told 503 `busy` with Retry-After, and the day's
budget holds nothing once no one is waiting (a real `textbook-chat serve` process over a real
local index, the limits in moto's DynamoDB, the model a fake OpenAI server with a healthy
latency); and a reader who leaves before sending the whole question is not logged as a failure."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from functions.deadline import REQUEST_SECONDS
from functions.search.store import QdrantStore
from functions.settings import Settings
from tests.fakes.aws import MotoServer, create_table
from tests.fakes.openai_server import FakeOpenAI, passage_responder
from tests.functions.conftest import index_book
from tests.ports import free_port, wait_until_serving
from tests.shared import eventually

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
QUESTIONS = ("How do I measure loop jitter?", "What makes a gyroscope drift?",
             "How does a quadrature encoder tell the direction?",
             "What is the difference between open and closed loop control?")
READERS = 60  # a burst: more than serve can answer within the deadline on any machine here
BURSTS = 2
MODEL_SECONDS = 3.0  # what the fake model takes to answer
BUDGET = 200_000  # the day's budget: reservations in flight are counted, none may stay held


@pytest.fixture(scope="module")
def local_index(tmp_path_factory):
    from functions.search.embeddings.local import LocalEmbedder

    folder = tmp_path_factory.mktemp("overload")
    store = QdrantStore.open(Settings(qdrant_path=str(folder / "qdrant")))
    index_book(store, LocalEmbedder())
    store.close()
    return folder


@pytest.fixture(scope="module")
def aws():
    pytest.importorskip("flask", reason="moto's server needs moto[server] (flask)")
    with MotoServer() as server:
        yield server


@pytest.fixture(scope="module")
def served(local_index, aws):
    """`textbook-chat serve` answering with the local model's index and a fake OpenAI chat model
    (healthy, at MODEL_SECONDS an answer), the day's budget in DynamoDB; yields (base url,
    fake, stderr lines so far, the spend item's reader). One for both tests (it takes a warm
    answer to start): neither leaves a 499 or an error."""
    table = create_table(aws.endpoint)

    def spend() -> dict:
        items = aws.client("dynamodb").scan(TableName=table)["Items"]
        item = next((i for i in items if i["pk"]["S"] == "spend"), {})
        return {k: int(float(v["N"])) for k, v in item.items() if "N" in v}

    with FakeOpenAI(responder=passage_responder) as fake:
        port = free_port(18200, 18249)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENAI_", "QDRANT_", "AWS_", "DYNAMODB_", "EMBEDDING_"))}
        env.update(PYTHONPATH=str(ROOT), QDRANT_PATH=str(local_index / "qdrant"),
                   EMBEDDING_PROVIDER="local", CHAT_PROVIDER="openai", OPENAI_API_KEY="sk-load",
                   OPENAI_BASE_URL=fake.base_url, RATE_LIMIT_PER_MINUTE="0",
                   RATE_LIMIT_PER_DAY="0", LOG_LEVEL="INFO", DAILY_TOKEN_BUDGET=str(BUDGET),
                   **aws.env(DYNAMODB_TABLE=table))
        fake.delay_next(MODEL_SECONDS, times=10_000, endpoint="chat")
        proc = subprocess.Popen([sys.executable, "-m", "textbook_chat_cli", "serve", "--port",
                                 str(port)], env=env, cwd=local_index, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        lines: list[str] = []
        threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(base, 30, proc, said=lambda: "".join(lines)[-2000:])
            r = httpx.post(base + "/chat", json={"question": QUESTIONS[0]}, timeout=60)
            assert r.status_code == 200, r.text  # warm: the model loaded, one answer given
            eventually(lambda: [e for e in _logged(lines) if e.get("msg") == "request"],
                       "the warm answer's log line")  # read before a test counts its own
            yield base, fake, lines, spend
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def _logged(lines: list[str]) -> list[dict]:
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _burst(base: str) -> list[tuple[int, dict, dict]]:
    """READERS POST /chat at once: each reply's (status, body, headers)."""
    results: list[tuple[int, dict, dict]] = []
    lock = threading.Lock()

    def reader(i: int) -> None:
        try:
            r = httpx.post(base + "/chat", json={"question": QUESTIONS[i % len(QUESTIONS)]},
                           timeout=REQUEST_SECONDS + 120)
            got = (r.status_code, r.json(), dict(r.headers))
        except httpx.HTTPError as exc:
            got = (0, {"error": {"code": type(exc).__name__}}, {})
        with lock:
            results.append(got)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(READERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_bursts_are_answered_within_the_deadline_or_told_busy(served):
    """Bursts of READERS: serve answers what it can finish within the request's deadline (its
    admission is sized to the cores, and the CPU steps take turns only while the deadline holds
    them) and tells the others busy at once; no answer is late, by serve's own log of each
    request's time (from its arrival to its reply, the span the deadline bounds). It used to
    let 16 answers work at once on 2 cores: 46 of 48 answered past the 18 s deadline, up to 79 s.
    Once the bursts are over, the day's budget holds nothing: every reservation was settled."""
    base, _, lines, spend = served
    said_before = len(lines)
    results = [reply for _ in range(BURSTS) for reply in _burst(base)]
    codes = sorted((status, body.get("error", {}).get("code")) for status, body, _ in results)
    summary = {c: codes.count(c) for c in set(codes)}

    def chats() -> list[dict]:
        return [e for e in _logged(lines[said_before:])
                if e.get("msg") == "request" and e.get("route") == "chat"]

    eventually(lambda: len(chats()) >= len(results), "serve's log line of every request")
    answered = [e["ms"] / 1000 for e in chats() if e["status"] == 200]
    print(f"{BURSTS} bursts of {READERS}: {summary}; answered by serve's clock in "
          f"{sorted(round(s, 1) for s in answered)} s (deadline {REQUEST_SECONDS:.0f} s)")
    assert set(summary) <= {(200, None), (503, "busy")}, summary
    assert summary.get((200, None), 0) >= 1  # the server kept answering
    assert len(answered) == summary.get((200, None), 0)
    assert max(answered) <= REQUEST_SECONDS, sorted(answered)  # no answer past its deadline
    for status, body, headers in results:
        if status == 503:  # told when to come back, in words a reader understands
            assert int(headers["retry-after"]) >= 1
            assert "busy" in body["error"]["message"]
    assert not [e for e in _logged(lines) if e.get("msg") == "request" and e["status"] == 500]
    assert not [e for e in _logged(lines) if e.get("msg") == "settle failed"]
    day = spend()
    assert day["held"] == 0, day  # nothing in flight: nothing held
    assert 0 < day["tokens"] < BUDGET, day  # what the answers used, and no more


def test_a_reader_who_leaves_mid_question_is_not_a_server_error(served):
    base, _, lines, _ = served
    said_before = len(lines)  # what the burst's test logged is not this test's
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:  # promises 2000 bytes, sends 20
        sock.sendall(b"POST /chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 2000\r\n\r\n{\"question\": \"How d")
        time.sleep(0.3)
    r = httpx.post(base + "/chat", json={"question": QUESTIONS[1]}, timeout=60)
    # the server carries on (an answer; or busy, when the machine's load leaves no answer
    # inside the deadline)
    assert r.status_code == 200 or r.json()["error"]["code"] == "busy", r.text

    def chats() -> list[dict]:
        return [e for e in _logged(lines[said_before:])
                if e.get("msg") == "request" and e.get("route") == "chat"]

    # logged as what it was: the client closed the request (once its line is written)
    eventually(lambda: [e for e in chats() if e["status"] == 499], "the 499 of the reader who left")
    requests = chats()
    assert [e["status"] for e in requests if e["status"] >= 500] == []
    gone = [e for e in requests if e["status"] == 499]
    assert len(gone) == 1
    assert not [e for e in _logged(lines[said_before:]) if e.get("level") == "error"]


def test_assistants_told_busy_get_a_tool_result_they_can_retry(served):
    """MCP clients at once past capacity: each is answered on its own request id with HTTP 200,
    ask_book's answer or its error result `busy` with `retry_after` (was: HTTP 503 with no id,
    which a client reports as a failed transport, not a result the model can act on)."""
    base, *_ = served
    callers = 60
    replies: list[tuple[int, int, dict]] = []
    lock = threading.Lock()

    def assistant(i: int) -> None:
        message = {"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                   "params": {"name": "ask_book",
                              "arguments": {"question": QUESTIONS[i % len(QUESTIONS)]}}}
        r = httpx.post(base + "/mcp", json=message, timeout=REQUEST_SECONDS + 30,
                       headers={"accept": "application/json, text/event-stream",
                                "mcp-protocol-version": "2025-11-25"})
        with lock:
            replies.append((i, r.status_code, r.json()))

    threads = [threading.Thread(target=assistant, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(i for i, _, _ in replies) == list(range(callers))
    outcomes = []
    for i, status, reply in replies:
        assert status == 200 and reply["id"] == 1000 + i, (status, reply)
        result = reply["result"]
        if result["isError"]:
            error = result["structuredContent"]["error"]
            assert error["code"] == "busy" and error["retry_after"] >= 1, error
            assert "Try again in" in result["content"][0]["text"]
        else:
            assert result["structuredContent"]["answer"], result
        outcomes.append("busy" if result["isError"] else "answered")
    print({o: outcomes.count(o) for o in set(outcomes)})
    # serve keeps answering (12 of 60 at load ~15) and turns the rest away as results
    assert outcomes.count("answered") >= 1 and outcomes.count("busy") >= callers // 3, outcomes
