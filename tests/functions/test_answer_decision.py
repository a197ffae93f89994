"""The decision to answer, through the real app: refuse by name what the book never mentions,
answer misspelt questions, and meet bad questions with a kind reply, never a crash."""

from __future__ import annotations

from functions.answers.finish import NAMED_REFUSAL, REFUSAL
from functions.answers.names import (
    absent_in,
    apply_spelling,
    is_common,
    missing,
    names,
    rare_unknown_words,
    respelled,
)
from functions.answers.question_kind import quantity_words, states_quantity
from functions.answers.types import CLOSEST_LEAD
from functions.tokens import common_words
from tests.functions.book import ALL_URLS


def ask(client, question: str) -> dict:
    r = client().post("/chat", json={"question": question})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_name_the_book_never_mentions_is_refused_by_name(client):
    body = ask(client, "How do I measure loop jitter with Foxglove Studio?")
    assert body["low_confidence"] is True and body["citations"] == []
    assert body["answer"] == NAMED_REFUSAL.format(names="“Foxglove Studio”")
    assert all(t["url"] in ALL_URLS for t in body["related_topics"])


def test_a_rare_word_the_book_never_uses_is_a_signal_not_a_refusal_by_name(client):
    # Readers' own words ("laggy", "jerky", "mishear") are rare words a book may never use: as
    # a refusal by name they refused 7 answerable questions in readers' words on the two
    # development books for 3 near-topic ones caught (benchmarks/calibration.md), so a rare
    # word is one signal of the fitted decision (functions.answers.decision), not a veto.
    body = ask(client, "My control loop feels laggy, how do I measure its jitter?")
    assert body["low_confidence"] is False
    assert body["citations"][0]["url"] == "/book/docs/loop#loop-jitter"
    body = ask(client, "How do I build my encoder package with colcon?")
    assert "“colcon”" not in body["answer"]


def test_a_misspelt_question_is_still_answered(client):
    body = ask(client, "how do I mesure the jiter of my loop?")
    assert body["low_confidence"] is False
    assert body["citations"][0]["url"] == "/book/docs/loop#loop-jitter"


def test_misspelt_words_are_respelt_from_the_retrieved_text():
    texts = ["A humanoid typically has 30 degrees of freedom. Lifecycle nodes start inactive."]
    question = "how many degres of freedom does a humaniod typicaly have? colcon lifecyle?"
    fixes = respelled(question, texts, common_words)
    assert fixes == {"degres": "degrees", "humaniod": "humanoid", "typicaly": "typically",
                     "lifecyle": "lifecycle"}  # "colcon" is no slip of any word of the text
    assert apply_spelling(question, fixes) == (
        "how many degrees of freedom does a humanoid typically have? colcon lifecycle?")
    # everyday words the text lacks are left as they are, and nothing is loaded for them
    assert respelled("Why do humanoids fall?", texts, lambda: frozenset({"fall"})) == {}


def test_a_slip_inside_an_inflected_word_is_respelt():
    texts = ["Debouncing a switch in software waits for the bounce to settle."]
    assert respelled("how do I debounse a switch", texts, common_words) == {
        "debounse": "debouncing"}
    # a correct inflection of a word of the text is no slip
    assert respelled("why debounced switches", texts, lambda: frozenset()) == {}


def test_quantities_and_model_numbers_are_not_absent_names():
    from functions.answers.names import absent_in, names

    # "12V" is a number the book writes "12 V", not a name to look for
    assert names("LDO power loss 12V to 3.3V") == ["LDO"]
    assert names("I calibrated at 1280x720 and now run 640×360") == []
    # two words of the book run together are no unknown word
    from functions.answers.names import rare_unknown_words
    from functions.search.sparse import terms

    book = set(terms("Objects far away get noisy depth."))
    assert rare_unknown_words("Why is depth noisy for faraway objects?", book, frozenset()) == []
    # "Cortex-M4" is in a text that says "Cortex-M3 or M4"; "Cortex-M7" is not
    text = ["Breakpoints use comparators; a Cortex-M3 or M4 has 6."]
    assert not absent_in("Cortex-M4", text)
    assert absent_in("Cortex-M7", text) and absent_in("GPT-4", ["GPT-3 has 4 layers."])


def test_stop_words_only_get_a_kind_prompt(client):
    for question in ("what is the?", "?!?", "how to do it"):
        body = ask(client, question)
        assert body["low_confidence"] is True and body["citations"] == []
        assert body["answer"].startswith("Please ask a question about the book")


def test_a_long_question_and_another_script_are_answered_safely(client):
    long = ("Tell me about the loop. " * 90)[:2000]
    body = ask(client, long)
    assert body["citations"] == [] or all(c["url"] in ALL_URLS for c in body["citations"])
    for question in ("¿Cómo se mide el jitter del bucle?", "如何测量循环抖动？", "Как измерить джиттер?"):
        body = ask(client, question)
        assert body["low_confidence"] is True or all(c["url"] in ALL_URLS
                                                     for c in body["citations"])
        if body["outcome"] == "not_covered":
            assert body["answer"] in (REFUSAL,) or body["answer"].startswith("The book doesn't")
        elif body["outcome"] == "closest":  # the closest passage says it may not answer
            assert body["answer"].startswith(CLOSEST_LEAD) and body["low_confidence"] is True


def test_names_are_capitalised_words_acronyms_and_identifiers():
    assert names("How do I use Isaac Lab with ros2_control and RT-2?") == [
        "Isaac Lab", "ros2_control", "RT-2"]
    assert names("What is a Jetson-powered robot?") == ["Jetson"]
    assert names("How does the loop work?") == []


def test_a_name_matches_whole_words_plurals_and_spacing():
    assert not absent_in("ROS 2", ["built on ros2 today"])
    assert not absent_in("HTN", ["two HTNs plan"])
    assert absent_in("Isaac Lab", ["Isaac Sim labels images"])
    assert missing("Use ROS 2 Python nodes?", ["ROS 2 nodes in Python"]) == []
    # a CamelCase identifier mentions its words: ROS# talks over WebSocketSharp
    assert not absent_in("WebSocket", ['new RosSocket(RosBridgeProtocol.WebSocketSharp, url)'])
    assert absent_in("WebSocket", ["a plain socket on the web"])


def test_rare_words_skip_everyday_english_and_misspellings():
    common = common_words()
    assert is_common("heaviest", common) and is_common("insted", common)
    assert not is_common("colcon", common) and not is_common("fiducial", common)
    vocabulary = {"lifecycl", "node", "humanoid"}
    assert rare_unknown_words("why use lifecyle nodes on a humaniod?", vocabulary, common) == []
    assert rare_unknown_words("detect fiducial tags", vocabulary, common) == ["fiducial"]


def test_quantity_questions_need_a_number_of_their_unit():
    hours = quantity_words("How many hours can it run on one charge?")
    assert states_quantity("It runs for about 3 hours.", hours)
    assert not states_quantity("It warns at 10 percent.", hours)
    assert states_quantity("The delay is 50 ms.", quantity_words("How many milliseconds?"))
    assert quantity_words("What is the loop?") is None
    # an asked rate is answered in a rate's units, not by any number near the words
    rate = quantity_words("At what sample rate should I record audio?")
    assert states_quantity("Record at 16 kHz.", rate)
    assert not states_quantity("self.mics = [(0, 0), (0.1, 0)]", rate)
    assert states_quantity("Whisper reaches a 5% error rate.",
                           quantity_words("What word error rate does Whisper reach?"))
    # units the question names are the ones that count
    horizon = quantity_words("How long a horizon, in steps or seconds, should MPC use?")
    assert states_quantity("a horizon of 20 steps", horizon)
    assert not states_quantity("update_rate: 1000  # Hz", horizon)
    took = quantity_words("How long does it take in ROS?")  # ROS is no unit: how long's are
    assert "ros" not in took and {"second", "s", "m"} <= took
    # "how much" asks for an amount in any unit of measure
    assert states_quantity("Give it 60 ml per minute.", quantity_words("How much water?"))
    # … and its noun beside a number is no amount: a setting named after it says nothing
    memory = quantity_words("How much GPU memory does each model size need?")
    assert not states_quantity("self.gpu_memory_fraction = 0.5", memory)
    assert states_quantity("The large model needs about 10 GB.", memory)
    assert states_quantity("The kit costs $700.", quantity_words("How much does the kit cost?"))
    # naming the units of its answer asks for a number, whatever the wording
    meters = quantity_words("How accurate, in meters, is the simulated GPS indoors?")
    assert meters is not None and not states_quantity("GPS is simulated with noise.", meters)
    assert states_quantity("Indoors it drifts by about 3 m.", meters)
    # a comparison is not a number
    assert quantity_words("What is the speed versus accuracy trade-off of the models?") is None


def test_refusals_carry_their_case_for_the_widget(client):
    named = ask(client, "How do I measure loop jitter with Foxglove Studio?")
    assert named["refusal"] == {"code": "not_mentioned", "names": ["Foxglove Studio"]}
    assert ask(client, "what is the?")["refusal"] == {"code": "empty_question"}
    assert ask(client, "How are capital gains taxed?")["refusal"] == {"code": "not_covered"}
    # the fake embedder has no fitted policy: between its dense `none` and `low`, the closest
    # passage, which is no refusal
    near = ask(client, "Who won the football world cup?")
    assert near["outcome"] == "closest" and "refusal" not in near
    assert "refusal" not in ask(client, "How do I measure loop jitter?")


def test_the_widget_default_labels_are_the_api_wordings():
    """A site that does not translate shows exactly what the API says."""
    import json
    import re
    from pathlib import Path

    from functions.answers.finish import EMPTY_QUESTION, OFF_TOPIC

    source = (Path(__file__).resolve().parents[2] / "site-plugin" / "src" / "server"
              / "options.js").read_text(encoding="utf-8")

    def label(key: str) -> str:
        match = re.search(rf"^\s*{key}: (\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'),$", source, re.M)
        assert match, key
        raw = match.group(1)
        return json.loads(raw) if raw[0] == '"' else raw[1:-1]

    assert label("refusalNotCovered") == REFUSAL
    assert label("refusalNotMentioned") == NAMED_REFUSAL
    assert label("refusalEmptyQuestion") == EMPTY_QUESTION
    assert label("refusalOffTopic") == OFF_TOPIC


def test_a_multi_part_question_is_answered_in_part_and_says_which_part_is_not():
    from functions.answers.question_kind import parts

    assert parts("What is a URDF? How much does the Jetson kit cost?") == (
        "What is a URDF?", "How much does the Jetson kit cost?")
    assert parts("When should I use a service versus an action, and what does an action give "
                 "me that a service doesn't?") == (
        "When should I use a service versus an action",
        "what does an action give me that a service doesn't?")
    # too short to look up alone, or one question about two things: one part
    assert parts("How should the visual geometry differ from the collision geometry, and why?") == ()
    assert parts("Is renting cheaper than buying, and by how much?") == ()
    assert parts("How do topics and services differ in how the data flows?") == ()


def test_the_part_naming_what_the_book_never_mentions_is_named_and_the_rest_answered(client):
    body = ask(client, "How do I measure loop jitter, and how do I plot it in Foxglove Studio?")
    assert body["low_confidence"] is False and "refusal" not in body
    assert body["citations"] and all(c["url"] in ALL_URLS for c in body["citations"])
    assert body["answer"].endswith(
        "The book doesn't mention “Foxglove Studio”, so this part is not answered: "
        "“how do I plot it in Foxglove Studio”.")
    # asked alone, the covered part gets the same quote
    alone = ask(client, "How do I measure loop jitter")
    assert body["answer"].startswith(alone["answer"])
    # no part the book answers: the whole refusal by name stands
    none = ask(client, "Who won the football world cup, and what is Foxglove Studio?")
    assert none["low_confidence"] is True and none["refusal"]["code"] == "not_mentioned"
