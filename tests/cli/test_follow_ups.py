"""Follow-up questions without a model, as a reader asks them: `textbook-chat ask --history FILE`
in fresh processes, through the real Lambda handler, over the sample book indexed by
`textbook-chat index` with the local MiniLM model into embedded Qdrant (the keyless defaults).

A follow-up is searched and answered for the topic of the conversation (the last question that
stands alone, through any chain of follow-ups) and quotes what it asks about that topic, not the
block the previous answer already showed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "textbook"
DOCS = "/textbook-chat-sample/docs"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sample_env(tmp_path_factory):
    folder = tmp_path_factory.mktemp("follow-ups")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "QDRANT_URL", "QDRANT_COLLECTION", "DYNAMODB_TABLE",
                        "CHAT_PROVIDER", "EMBEDDING_PROVIDER", "LOG_LEVEL")}
    env.update(PYTHONPATH=str(ROOT), QDRANT_PATH=str(folder / "qdrant"))
    out = cli(env, folder, "index", str(SAMPLE / "docs"), "--site-dir", str(SAMPLE))
    assert out.returncode == 0, out.stderr
    return env, folder


def cli(env, cwd, *args, timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "textbook_chat_cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def converse(sample_env, talk: Path, questions: list[str]) -> list[dict]:
    """Each question asked in turn, the conversation kept in `talk`; the answers' JSON bodies."""
    env, cwd = sample_env
    bodies = []
    for question in questions:
        out = cli(env, cwd, "ask", question, "--history", str(talk), "--json")
        assert out.returncode == 0, out.stderr
        bodies.append(json.loads(out.stdout))
    assert len(json.loads(talk.read_text())) == 2 * len(questions)
    return bodies


def cited(body: dict) -> list[str]:
    return [c["url"] for c in body["citations"]]


def test_how_do_i_prevent_it_quotes_the_cure_not_the_definition_again(sample_env, tmp_path):
    first, then = converse(sample_env, tmp_path / "talk.json",
                           ["What is integral windup?", "How do I prevent it?"])
    assert cited(first) == [f"{DOCS}/pid-control#integral-windup"]
    assert "This is **integral windup**" in first["answer"]
    assert not then["low_confidence"]
    assert cited(then) == [f"{DOCS}/pid-control#clamping-the-integrator"]
    assert then["answer"].startswith("The simplest cure is conditional integration")
    assert "clamp the integral itself" in then["answer"]
    assert "oversized integral" not in then["answer"]  # the definition is not quoted again


def test_a_chain_of_follow_ups_keeps_the_first_question_s_topic(sample_env, tmp_path):
    """"How do I fix it?" after "Why does it drift?": "it" is still the gyroscope's bias, not
    the drift of a loop's timing."""
    first, why, fix = converse(sample_env, tmp_path / "talk.json",
                               ["What is gyroscope bias?", "Why does it drift?",
                                "How do I fix it?"])
    assert cited(first) == [f"{DOCS}/sensors/imu#bias-and-drift"]
    assert cited(why) == [f"{DOCS}/sensors/imu#bias-and-drift"]  # what answers it, shown again
    assert "This growth is called **drift**" in why["answer"]
    assert not fix["low_confidence"]
    assert cited(fix) == [f"{DOCS}/sensors/imu#estimating-bias-at-startup"]
    assert "average the gyroscope readings" in fix["answer"]
    assert "def estimate_gyro_bias(samples):" in fix["answer"]
    assert "loop" not in fix["answer"]


def test_give_an_example_quotes_the_topic_s_example(sample_env, tmp_path):
    first, example = converse(sample_env, tmp_path / "talk.json",
                              ["What is a hobby servo?", "Can you give an example?"])
    assert cited(first) == [f"{DOCS}/motors-and-actuators#hobby-servos"]
    assert not example["low_confidence"]
    assert cited(example) == [f"{DOCS}/motors-and-actuators#example-1"]
    assert "send a pulse of 1.5 + 45 / 90 × 0.5 = 1.75 ms" in example["answer"]
    assert "potentiometer on the output shaft" not in example["answer"]


def test_explain_shows_the_topic_a_follow_up_was_searched_with(sample_env, tmp_path):
    env, cwd = sample_env
    talk = tmp_path / "talk.json"
    converse(sample_env, talk, ["What is integral windup?"])
    out = cli(env, cwd, "ask", "How do I prevent it?", "--history", str(talk), "--explain")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert ("  follow-up: searched beside “integral windup”, quoted for “How do I prevent "
            "integral windup?”") in lines
    assert f"  read: {DOCS}/pid-control#clamping-the-integrator" in lines
    # a question that stands alone says nothing of the conversation
    out = cli(env, cwd, "ask", "What does an H-bridge do?", "--history", str(talk), "--explain")
    assert out.returncode == 0, out.stderr
    assert not any(ln.startswith("  follow-up:") for ln in out.stdout.splitlines())
    assert f"  read: {DOCS}/motors-and-actuators#the-h-bridge" in out.stdout.splitlines()
