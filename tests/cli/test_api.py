"""`ask`, `invoke` and `serve` in fresh processes, with the real handler modules and a real
local index of the tiny book embedded by the local MiniLM model (the embedded defaults)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from functions.search.store import QdrantStore
from functions.settings import Settings
from tests.functions.conftest import index_book
from tests.ports import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm_env(tmp_path_factory):
    from functions.search.embeddings.local import LocalEmbedder

    folder = tmp_path_factory.mktemp("cli")
    store = QdrantStore.open(Settings(qdrant_path=str(folder / "qdrant")))
    index_book(store, LocalEmbedder())
    store.close()
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "QDRANT_URL", "DYNAMODB_TABLE")}
    env.update(PYTHONPATH=str(ROOT), QDRANT_PATH=str(folder / "qdrant"))
    return env, folder


def cli(env, cwd, *args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "textbook_chat_cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def test_invoke_chat_with_a_question(minilm_env):
    env, cwd = minilm_env
    out = cli(env, cwd, "invoke", "chat", "--question", "How do I measure loop jitter?")
    assert out.returncode == 0, out.stderr
    response = json.loads(out.stdout)
    assert response["statusCode"] == 200
    body = json.loads(response["body"])
    assert body["citations"][0]["url"] == "/book/docs/loop#loop-jitter"
    assert body["low_confidence"] is False


def test_ask_off_topic_and_selection(minilm_env):
    env, cwd = minilm_env
    out = cli(env, cwd, "ask", "What is the capital of Australia?", "--json")
    body = json.loads(out.stdout)
    assert out.returncode == 0 and body["low_confidence"] is True and body["related_topics"]
    out = cli(env, cwd, "ask", "What is the capital of Australia?")  # the same, for a person
    assert out.stdout.splitlines()[0] == body["answer"] and "see: " in out.stdout
    assert "confidence" not in out.stdout  # a refusal says so; the figure is --explain's
    out = cli(env, cwd, "ask", "What is the capital of Australia?", "--explain")
    assert f"  confidence: {body['confidence']} (low)" in out.stdout.splitlines()
    out = cli(env, cwd, "ask", "What does this mean?", "--selection",
              "Jitter is the variation of the loop period.")  # no page: nothing after the title
    assert "  [1] Your selection" in out.stdout.splitlines(), out.stdout
    out = cli(env, cwd, "ask", "What is jitter?", "--selection",
              "Jitter is the variation of the loop period.", "--page-url", "/book/docs/loop",
              "--anchor", "loop-jitter")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "Jitter is the variation of the loop period [1]."
    assert "/book/docs/loop#loop-jitter" in out.stdout


def test_ask_explain_prints_why_it_answered_and_no_request_log(minilm_env):
    env, cwd = minilm_env
    env = {k: v for k, v in env.items() if k != "LOG_LEVEL"}
    out = cli(env, cwd, "ask", "How do I measure loop jitter?", "--explain")
    assert out.returncode == 0, out.stderr
    # one human answer: the JSON request log stays off; stderr says only which index it read
    [line] = out.stderr.splitlines()
    assert line.startswith("Using index: embedded at qdrant, collection 'textbook'")
    lines = out.stdout.splitlines()
    why = next(i for i, ln in enumerate(lines) if ln.startswith("why: "))
    from functions.answers.decision import policy_for

    threshold = policy_for("all-MiniLM-L6-v2").threshold  # the fitted policy's, whatever it is
    assert lines[why].startswith("why: answer (policy p=")
    assert f"answers from {threshold:.2f}" in lines[why], (lines[why], threshold)
    p = float(lines[why].split("p=")[1].split(",")[0])
    assert 0.5 <= p <= 1.0
    assert lines[why + 1] == "  question: open"  # what it asks for, read once
    assert lines[why + 2].startswith("  signals: cosine ") and "· passage " in lines[why + 2]
    assert "  read: /book/docs/loop#loop-jitter" in lines
    assert any(ln.startswith("  policy: answer_policy.json (fitted on pai-ali") for ln in lines)
    out = cli(env, cwd, "ask", "How do I train a walking policy in Isaac Lab?", "--explain")
    assert "why: refuse (names the book never mentions: Isaac Lab)" in out.stdout


def test_ask_continues_a_conversation_with_history(minilm_env, tmp_path):
    env, cwd = minilm_env
    talk = tmp_path / "talk.json"
    first = cli(env, cwd, "ask", "What is a complementary filter?", "--history", str(talk))
    assert first.returncode == 0, first.stderr
    turns = json.loads(talk.read_text())
    assert [t["role"] for t in turns] == ["user", "assistant"]
    out = cli(env, cwd, "ask", "What blend factor is typical for it?", "--history", str(talk),
              "--json")
    body = json.loads(out.stdout)
    assert out.returncode == 0 and body["citations"][0]["url"].endswith("#complementary-filter")
    assert len(json.loads(talk.read_text())) == 4
    talk.write_text('{"role": "user"}')
    bad = cli(env, cwd, "ask", "And then?", "--history", str(talk))
    assert bad.returncode == 2 and "--history" in bad.stderr and "JSON list" in bad.stderr


def test_invoke_event_file_with_bad_json(minilm_env, tmp_path):
    from textbook_chat_cli.events import api_gateway_event

    env, cwd = minilm_env
    event = tmp_path / "event.json"
    event.write_text(json.dumps(api_gateway_event("/selection", '{"question": ')))
    out = cli(env, cwd, "invoke", "selection", "--event", str(event))
    assert out.returncode == 1
    response = json.loads(out.stdout)
    assert response["statusCode"] == 400
    assert json.loads(response["body"])["error"]["code"] == "invalid_json"


def _free_port() -> int:
    return free_port()


def test_serve_runs_both_apps_on_localhost(minilm_env):
    env, cwd = minilm_env
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "textbook_chat_cli", "serve", "--port", str(port)],
                            env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, 30, proc)
        r = httpx.post(base + "/chat", json={"question": "How does a gyroscope drift?"},
                       headers={"Origin": "http://localhost:3000"}, timeout=60)
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert r.json()["citations"][0]["url"].endswith("#gyroscope-drift")
        r = httpx.post(base + "/selection", json={"question": "what?", "selected_text": "text"},
                       headers={"Origin": "https://evil.example"}, timeout=10)
        assert r.status_code == 403 and "access-control-allow-origin" not in r.headers
        assert r.json()["error"]["code"] == "origin_not_allowed"  # another site: no work
        message = r.json()["error"]["message"]  # the fix that applies here, not the Lambda's
        assert "start it again with `--cors-origin ORIGIN`" in message, message
        assert "SSM" not in message and "localhost:3000" not in message
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    said = proc.stderr.read().decode()
    listening = said.index(
        f"POST http://127.0.0.1:{port}/chat  /sources  /selection  /feedback  /mcp  GET /health")
    # the model is loaded before the first reader's question, as a Lambda container does at init
    assert -1 < said.find("textbook-chat: embedding model loaded in ") < listening


def test_bad_event_files_and_ports_are_usage_errors(tmp_path, capsys):
    from textbook_chat_cli.main import main

    bad = tmp_path / "bad.json"
    bad.write_text("{bad")
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    for path, words in ((tmp_path / "nope.json", "cannot read"), (bad, "not a JSON event"),
                        (empty, "requestContext")):
        assert main(["invoke", "chat", "--event", str(path)]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--port", "99999"])
    assert exit_.value.code == 2 and "1-65535" in capsys.readouterr().err


def test_ask_without_an_index_names_the_folder_it_looked_in(tmp_path, monkeypatch, capsys):
    from textbook_chat_cli.main import main

    for name in ("QDRANT_URL", "QDRANT_PATH", "QDRANT_COLLECTION", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # a folder with no index: as after `cd` out of the clone
    assert main(["ask", "What is loop jitter?"]) == 1
    err = capsys.readouterr().err
    assert "no index at .textbook-chat/qdrant (QDRANT_PATH, relative to this folder)" in err
    assert "collection 'textbook'" in err and "set QDRANT_PATH" in err
    assert not (tmp_path / ".textbook-chat").exists()  # nothing opened, nothing created
    other = tmp_path / "index"
    (other / "edge" / "my-book").mkdir(parents=True)
    monkeypatch.setenv("QDRANT_PATH", str(other))
    assert main(["ask", "What is loop jitter?"]) == 1
    err = capsys.readouterr().err
    assert f"no index at {other} for the collection 'textbook'" in err
    assert "set QDRANT_COLLECTION to the one it holds (my-book)" in err


@pytest.mark.parametrize("command", ["serve", "ask", "invoke", "index", "check", "mcp"])
def test_each_command_s_help_shows_its_own_examples(command, capsys):
    from textbook_chat_cli.main import main

    with pytest.raises(SystemExit):
        main([command, "--help"])
    examples = capsys.readouterr().out.split("examples:\n", 1)[1]
    commands = [line.split("textbook-chat ", 1)[1].split()[0]
                for line in examples.splitlines() if "textbook-chat " in line]
    assert commands and set(commands) == {command}, examples


def test_serve_on_a_port_in_use_is_a_one_line_error(capsys):
    import socket

    from textbook_chat_cli.main import main

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"--port {port}: port {port} on 127.0.0.1 is in use" in err
    assert "POST http://" not in err and "Errno" not in err  # nothing said about serving


def test_ask_history_in_a_folder_that_does_not_exist_is_refused_before_asking(tmp_path, capsys):
    from textbook_chat_cli.main import main

    talk = tmp_path / "no-such-folder" / "talk.json"
    assert main(["ask", "What is loop jitter?", "--history", str(talk)]) == 2
    err = capsys.readouterr().err
    assert f"--history {talk}: the folder {talk.parent} does not exist" in err
    assert "Traceback" not in err


def test_ask_names_its_own_flags_in_the_api_s_refusals(minilm_env, capsys):
    from textbook_chat_cli.main import main

    env, cwd = minilm_env
    out = cli(env, cwd, "ask", "What is loop jitter?", "--page-url", "loop")
    assert out.returncode == 2 and "--page-url must be an http(s) URL or a path" in out.stderr
    out = cli(env, cwd, "ask", "What?", "--selection", "Jitter varies.", "--anchor", "a b")
    assert out.returncode == 2 and "--anchor must be a heading id" in out.stderr
    assert main(["ask", "What is loop jitter?", "--anchor", "loop-jitter"]) == 2  # no selection
    assert "--anchor goes with --selection" in capsys.readouterr().err
