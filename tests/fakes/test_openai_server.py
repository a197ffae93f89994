"""The fake OpenAI server itself: chat completions, scripting, recording (used by other tests)."""

from __future__ import annotations

import openai
import pytest

from tests.fakes.embedder import FakeEmbedder
from tests.fakes.openai_server import DEFAULT_REPLY, FakeOpenAI


def client(server: FakeOpenAI) -> openai.OpenAI:
    return openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0, timeout=2.0)


def ask(server: FakeOpenAI, text: str = "What is PID?") -> str:
    response = client(server).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], temperature=0.3)
    return response.choices[0].message.content


def test_chat_default_then_scripted_replies_and_records(fake_openai):
    fake_openai.reply_next("Scripted [2].")
    assert ask(fake_openai) == "Scripted [2]."
    assert ask(fake_openai) == DEFAULT_REPLY and "[1]" in DEFAULT_REPLY
    bodies = [r.body for r in fake_openai.chat_requests]
    assert [b["messages"][0]["content"] for b in bodies] == ["What is PID?"] * 2
    assert bodies[0]["temperature"] == 0.3


def test_failures_aim_at_one_endpoint(fake_openai):
    fake_openai.fail_next(status=500, endpoint="chat")
    client(fake_openai).embeddings.create(model="m", input=["ok"])  # not affected
    with pytest.raises(openai.InternalServerError):
        ask(fake_openai)
    assert ask(fake_openai) == DEFAULT_REPLY


def test_429_carries_retry_after(fake_openai):
    fake_openai.fail_next(status=429, retry_after=7)
    with pytest.raises(openai.RateLimitError) as err:
        ask(fake_openai)
    assert err.value.response.headers["retry-after"] == "7"


def test_a_stream_comes_a_word_at_a_time_as_the_official_client_reads_it(fake_openai):
    fake_openai.reply_next("Kp sets the gain [1]. Ki removes the offset [2].")
    chunks = list(client(fake_openai).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True,
        stream_options={"include_usage": True}))
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(pieces) == "Kp sets the gain [1]. Ki removes the offset [2]."
    assert len(pieces) == 10
    assert chunks[-1].usage.completion_tokens == 10 and not chunks[-1].choices


def test_held_streams_stop_after_the_first_sentence_and_a_word(fake_openai):
    import threading

    fake_openai.reply_next("Kp sets the gain [1]. Ki removes the offset [2].")
    gate = fake_openai.hold_streams()
    seen: list[str] = []
    done = threading.Event()

    def read() -> None:
        stream = client(fake_openai).with_options(timeout=60).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True)
        for c in stream:
            if c.choices and c.choices[0].delta.content:
                seen.append(c.choices[0].delta.content)
        done.set()

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(600):  # until the held stream has sent what it sends first
        if "".join(seen) == "Kp sets the gain [1]. Ki ":
            break
        done.wait(0.1)
    assert "".join(seen) == "Kp sets the gain [1]. Ki " and not done.is_set()
    gate.set()
    reader.join(60)
    assert "".join(seen) == "Kp sets the gain [1]. Ki removes the offset [2]."


def test_delay_makes_the_client_time_out(fake_openai):
    fake_openai.delay_next(5.0)
    with pytest.raises(openai.APITimeoutError):
        openai.OpenAI(api_key="k", base_url=fake_openai.base_url, max_retries=0,
                      timeout=0.2).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}])
    assert ask(fake_openai) == DEFAULT_REPLY


def test_fake_embedder_is_deterministic_and_word_similar(fake_embedder):
    a, b, c = fake_embedder.embed_batch(["PID control loop", "the PID loop", "camera lens"])
    assert fake_embedder.calls == 1
    assert fake_embedder.texts_embedded == ["PID control loop", "the PID loop", "camera lens"]
    dot = lambda u, v: sum(x * y for x, y in zip(u, v, strict=True))  # noqa: E731
    assert abs(dot(a, a) - 1) < 1e-9 and dot(a, b) > dot(a, c)
    assert FakeEmbedder().embed_batch(["PID control loop"])[0] == a
    assert len(FakeEmbedder(dimension=8).embed_batch([""])[0]) == 8


def _passages(*blocks: tuple[str, str]) -> dict:
    """A chat request body as functions.answers.prompt builds it: numbered passages under their
    heading trails, then the question."""
    context = "\n\n".join(f"[{n}] {trail}\n{text}" for n, (trail, text) in enumerate(blocks, 1))
    return {"messages": [{"role": "system", "content": "rules"}, {"role": "user", "content": (
        f"<context>\n{context}\n</context>\n\n<question>\n{{q}}\n</question>\n")}]}


def _ask(body: dict, question: str) -> str:
    from tests.fakes.openai_server import passage_responder

    message = body["messages"][-1]
    return passage_responder({"messages": [body["messages"][0], {
        "role": "user", "content": message["content"].replace("{q}", question)}]})


def test_passage_responder_reads_word_forms_and_headings():
    body = _passages(
        ("Robot > Safety > Stopping", "The robot stops when it falls over and waits for help."),
        ("Robot > Safety > Recovery Behaviors",
         "- Back away from the obstacle\n- Balance recovered before moving on"))
    # "recover"/"recovered", "backing"/"back" are one word each; the first passage shares none
    assert _ask(body, "What other ways can it recover besides backing up?").endswith("[2].")
    body = _passages(
        ("Sim > Overview", "Every sensor is simulated the same way in several tools."),
        ("Sim > Range Sensors > Unity Implementation",
         "- Raycasting for each beam of the sensor\n- Noise modeling for realistic data"))
    # both share "sensor"; the second's own heading also names Unity, so it is quoted first
    reply = _ask(body, "How would the same sensor be done on the Unity side?")
    assert reply.startswith("- Raycasting") and "[2]." in reply


def test_passage_responder_quotes_a_code_block_with_its_lead_in_and_refuses_without_words():
    code = '```xml\n<joint name="shoulder_arm">\n  <child link="arm"/>\n</joint>\n```'
    body = _passages(("Model > Limbs", "Each arm has three segments of equal length."),
                     ("Model > Joints", f"Joints connect two parts of the model:\n\n{code}"))
    reply = _ask(body, "How do I attach the arm at the shoulder?")
    assert reply.startswith(f"Joints connect two parts of the model [2]:\n{code}"), reply
    assert _ask(body, "Which battery chemistry lasts longest?") == (
        "I couldn't find this in the book.")
