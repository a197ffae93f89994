"""Selected-text answers: only from the selection, capped in tokens, cited to page#anchor."""

from __future__ import annotations

import pytest

from functions.answers.requests import SelectionRequest
from functions.answers.selection import (
    EXAMPLE_NOTE,
    NO_EXAMPLE_NOTE,
    NOT_IN_SELECTION,
    REWRITE_NOTE,
    answer_selection,
    model_answer,
)
from functions.answers.types import Answer
from functions.api.http_errors import ApiError
from functions.api.validation import check_size
from tests.shared import stopwatch

REQ = SelectionRequest("What is jitter?", "Jitter is the variation of the loop period.",
                       "https://s.io/docs/loop#old", "loop-jitter")


def test_extractive_answer_from_the_selection():
    out = answer_selection(REQ, None, None, 2000)
    assert out.answer == "Jitter is the variation of the loop period [1]."
    assert out.citations[0]["url"] == "https://s.io/docs/loop#loop-jitter"


def test_a_lone_sentence_is_quoted_with_the_one_that_says_more_of_it():
    text = ("Jitter is easy to overlook and easy to measure. Record a timestamp at the top of "
            "each tick with a monotonic clock, compute the differences, and look at their "
            "spread. If the deviation is large, something is stealing time.")
    out = answer_selection(SelectionRequest("How do I measure jitter?", text), None, None, 2000)
    assert out.answer == ("Jitter is easy to overlook and easy to measure [1]. Record a timestamp "
                          "at the top of each tick with a monotonic clock, compute the "
                          "differences, and look at their spread [1].")
    assert not out.low_confidence


def test_refuses_beyond_the_selection():
    req = SelectionRequest("Who invented the telescope?", REQ.selected_text)
    out = answer_selection(req, None, None, 2000)
    assert out.as_dict() == {"answer": NOT_IN_SELECTION, "outcome": "not_covered",
                             "citations": [], "confidence": 0.0, "low_confidence": True}


def test_token_cap():
    assert check_size("short", 10) == 5
    with pytest.raises(ApiError) as err:
        check_size("tokens " * 50, 20)
    assert err.value.status == 413 and "51 tokens" in err.value.message


def test_model_reply_interpretation():
    assert model_answer(REQ, "It varies [1][2].").answer == "It varies [1]."
    assert model_answer(REQ, "It varies.").low_confidence is True
    assert model_answer(REQ, NOT_IN_SELECTION).citations == ()


QOS = ("Quality of Service settings decide how messages travel between nodes. Reliability can "
       "be reliable or best effort. Reliable delivery retries lost messages, which suits "
       "commands. Best effort drops late messages, which suits sensor streams such as camera "
       "images. History keeps the last messages for late subscribers. For example, a depth of "
       "10 keeps ten messages [3]. See [the docs](https://made-up.example.org/qos).")


def _ask(question: str, text: str = QOS) -> Answer:
    return answer_selection(SelectionRequest(question, text, "https://s.io/docs/qos",
                                             "125-quality-of-service-qos-settings",
                                             "12.5 Quality of Service (QoS) Settings"),
                            None, None, 2000)


def _quoted(answer: str) -> list[str]:
    """The selection's sentences an answer quotes, each checked to be one, in order."""
    found = [s.strip() for s in answer.split("\n\n")[-1].split("[1]") if s.strip(" .")]
    positions = [QOS.index(s.strip(" .")) for s in found]  # whole sentences of the selection
    assert positions == sorted(positions)
    return found


@pytest.mark.parametrize("question", ["Summarise this", "TL;DR", "What is this passage about?",
                                      "Can you sum it up?"])
def test_a_summary_is_the_selections_key_sentences(question):
    out = _ask(question)
    assert out.low_confidence is False and out.citations[0]["section_title"] == (
        "12.5 Quality of Service (QoS) Settings")
    assert 1 < len(_quoted(out.answer)) <= 3
    assert "[3]" not in out.answer and "http" not in out.answer


@pytest.mark.parametrize("question", ["Explain this more simply", "Explain this passage.",
                                      "What does this mean?", "Can you simplify it?",
                                      "Put it in plain English please", "ELI5"])
def test_a_rewrite_offline_says_it_can_only_quote_and_is_not_shown_as_confident(question):
    """Without a model nothing can be rewritten: the reader is told so plainly, and gets the
    key sentences, flagged (low_confidence), not passed off as an explanation."""
    out = _ask(question)
    assert out.answer.startswith(REWRITE_NOTE + "\n\n")
    assert out.low_confidence is True and out.citations
    assert 1 < len(_quoted(out.answer)) <= 3


def test_an_example_request_offline_quotes_the_selections_own_example_and_says_so():
    out = _ask("Give me an example")
    assert out.answer.startswith(EXAMPLE_NOTE + "\n\n") and out.low_confidence is True
    assert "For example, a depth of 10 keeps ten messages [1]." in out.answer
    plain = _ask("Can you give an example?", "Jitter is the variation of the loop period. "
                 "Logging and garbage collection add jitter.")
    assert plain.answer == (f"{NO_EXAMPLE_NOTE}\n\nJitter is the variation of the loop "
                               "period [1]. Logging and garbage collection add jitter [1].")
    assert plain.low_confidence is True


@pytest.mark.parametrize(("question", "sentence"), [
    ("What does best effort mean here?",
     "Best effort drops late messages, which suits sensor streams such as camera images"),
    ("What is meant by history?", "History keeps the last messages for late subscribers"),
    ("What does 'reliable delivery' mean in this passage?",
     "Reliable delivery retries lost messages, which suits commands"),
])
def test_what_does_x_mean_here_quotes_the_sentence_about_x(question, sentence):
    out = _ask(question)
    assert out.answer == f"{sentence} [1]." and out.low_confidence is False
    defined = _ask("What does ZMP mean here?", "Walking needs balance. The ZMP, or zero moment "
                   "point, is the point where the net moment of the ground's forces is zero.")
    assert defined.answer.startswith("The ZMP, or zero moment point, is the point")
    missing = _ask("What does latency mean here?")
    assert missing.answer == ("The selected text doesn't use “latency”. Ask in the chat to "
                                 "search the whole book.")
    assert missing.citations == () and missing.low_confidence is True


@pytest.mark.parametrize("question", [
    "How do I set the QoS history depth in rclpy?",  # 2 of its 5 words are the selection's
    "Why does DDS drop messages on Wi-Fi?",  # a name the selection never uses
    "How long are lost messages retried for?",  # a length of time the selection never states
    "Who invented the telescope?",
])
def test_a_question_the_selection_does_not_answer_is_refused(question):
    assert _ask(question).as_dict() == {"answer": NOT_IN_SELECTION, "outcome": "not_covered",
                                        "citations": [], "confidence": 0.0,
                                        "low_confidence": True}


@pytest.mark.parametrize(("question", "sentence"), [
    ("Why do camera images sometimes get dropped?",
     "Best effort drops late messages, which suits sensor streams such as camera images"),
    ("What is reliable delivery good for?",
     "Reliable delivery retries lost messages, which suits commands"),
])
def test_a_question_the_selection_answers_quotes_the_sentence_that_does(question, sentence):
    out = _ask(question)
    assert f"{sentence} [1]." in out.answer and out.low_confidence is False
    assert len(_quoted(out.answer)) <= 3


def test_label_without_heading_text_is_readable():
    from functions.answers.selection import section_label

    assert section_label(SelectionRequest("q", "t", None, "125-quality-of-service-qos-settings")
                         ) == "Quality of service qos settings"


def test_model_sees_no_fake_markers_or_links_and_shows_none():
    from functions.answers.selection import messages

    sent = messages(SelectionRequest("Explain", QOS))[1]["content"]
    assert "[3]" not in sent and "https://" not in sent and sent.count("[1]") == 2
    shown = model_answer(REQ, "It varies, see [this](https://evil.example) or www.evil.example [1].")
    assert "evil" not in shown.answer and shown.answer.endswith("[1].")


def test_a_model_sentence_stating_a_number_the_selection_never_writes_is_dropped():
    """Grounded in the selection only: a number the selection never writes ("first measured in
    1987") is not the selection's, so that sentence goes; with nothing else left it is the
    refusal. Words are not judged (an explanation restates in plain words)."""
    true = "Jitter is how much the loop period varies [1]."
    out = model_answer(REQ, f"{true} It was first measured in 1987 [1].")
    assert out.answer == true and out.citations and 0 < out.confidence < 1.0
    assert model_answer(REQ, true).confidence == 1.0
    alone = model_answer(REQ, "It was first measured in 1987 [1].")
    assert alone.answer == NOT_IN_SELECTION and alone.citations == ()


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_a_hung_model_gives_the_offline_answer_within_the_request_deadline(fake_openai, monkeypatch):
    from functions.answers import selection
    from functions.services.openai_http import OpenAIChat, OpenAIHttp
    from functions.services.ratelimit import MemorySpendCap

    monkeypatch.setattr(selection, "REQUEST_SECONDS", 1.5)
    fake_openai.delay_next(30.0, times=5, endpoint="chat")
    llm = OpenAIChat(OpenAIHttp("k", fake_openai.base_url, timeout=20.0, deadline=20.0))
    cap = MemorySpendCap(10_000_000)
    with stopwatch() as took:
        out = answer_selection(REQ, llm, cap, 20)
    assert took.within(waits=1.5, work=0.5), took  # the request's deadline, not the model's 30 s
    assert out.as_dict() == {**answer_selection(REQ, None, cap, 20).as_dict(),
                             "mode": "offline-fallback"}
    assert cap._used == 0  # the reservation was settled


def test_a_selection_cut_mid_sentence_is_not_echoed_cut():
    """The reader's selection may start or end inside a sentence: those pieces are left out
    when whole sentences remain; a selection that is one piece is quoted as it is."""
    cut = ("of the loop period from one tick to the next. Reliable delivery retries lost "
           "messages, which suits commands. Best effort drops late messages, which suits "
           "sensor streams. History keeps the last")
    out = answer_selection(SelectionRequest("Summarise this passage.", cut), None, None, 2000)
    assert out.answer == ("Reliable delivery retries lost messages, which suits commands [1]. "
                             "Best effort drops late messages, which suits sensor streams [1].")
    out = answer_selection(SelectionRequest("What is reliable delivery for?", cut), None, None,
                           2000)
    assert out.answer.startswith("Reliable delivery retries") and "History keeps" not in (
        out.answer)
    listed = "Two policies matter here:\n\n- Reliable delivery for commands\n- Best effort for streams"
    assert "Best effort for streams" in answer_selection(
        SelectionRequest("Summarise this", listed), None, None, 2000).answer
    piece = "retries lost messages, which suits commands"
    assert answer_selection(SelectionRequest("Sum this up", piece), None, None,
                            2000).answer == f"{piece} [1]"


@pytest.mark.parametrize("text", [
    "import rclpy\nfrom rclpy.node import Node\nrclpy.init() starts the client library.",
    "# not a heading: a comment in a shell listing that sets up the workspace",
    "<Tabs> holds three listings of the same publisher, one per language.",
])
def test_any_visible_text_can_be_asked_about_offline(text):
    """The widget sends the text as the page shows it (issue 27): a code line, a shell comment
    or text that opens with '<' is what the reader sees, not Markdown to leave out."""
    out = _ask("Explain this.", text)
    assert out.answer.startswith(REWRITE_NOTE), out.answer
    assert out.citations and out.answer != NOT_IN_SELECTION


# Issue 37: any text the page shows can be asked about, read as the reader sees it (the widget
# sends the page's text: code lines apart, a table's cells apart by tabs, no Markdown).
PUBLISHER = ("class MinimalPublisher(Node):\n    def __init__(self):\n"
             "        super().__init__('minimal_publisher')\n"
             "        self.timer = self.create_timer(0.5, self.timer_callback)")


def test_a_single_code_line_answers_what_it_names():
    out = _ask("What is the node called?", "node = Node('my_python_node')")
    assert out.answer == "From your selection [1]:\n\n```\nnode = Node('my_python_node')\n```"
    assert out.citations and out.low_confidence is False


def test_code_keeps_its_lines_when_quoted():
    out = _ask("What is the node called?", PUBLISHER)
    assert out.answer == f"From your selection [1]:\n\n```\n{PUBLISHER}\n```"
    explained = _ask("Explain this.", PUBLISHER)
    assert explained.answer == f"{REWRITE_NOTE}\n\nFrom your selection [1]:\n\n```\n{PUBLISHER}\n```"
    # prose around the code stays prose; the code between keeps its lines
    mixed = ("Create the publisher in the node's constructor.\n" + PUBLISHER +
             "\nThe timer calls timer_callback every half second.")
    out = _ask("How often does the timer call timer_callback?", mixed)
    assert "The timer calls timer_callback every half second [1]." in out.answer
    assert "```\n" + PUBLISHER + "\n```" in out.answer


def test_a_callout_written_on_one_line_is_read():
    # shown as text when written on one line: the ':::' must not drop it
    callout = (":::tip One node per device Keep one node per piece of hardware, so a driver "
               "that crashes takes down only its own device. :::")
    out = _ask("What does a crashing driver take down?", callout)
    assert out.answer != NOT_IN_SELECTION
    assert "takes down only its own device [1]." in out.answer and ":::" not in out.answer
    assert ":::" not in _ask("Summarise this", callout).answer


def test_a_heading_or_a_callouts_label_is_never_glued_to_the_first_sentence():
    selected = ("tip\nMeasuring loop jitter\nJitter is easy to overlook and easy to measure. "
                "Record a timestamp at the top of each tick with a monotonic clock.")
    out = _ask("Summarise this", selected)
    assert out.answer == ("Jitter is easy to overlook and easy to measure [1]. Record a timestamp "
                          "at the top of each tick with a monotonic clock [1].")
    # without the heading, the same words are read the same way
    assert _ask("How do I measure jitter?", selected).answer == _ask(
        "How do I measure jitter?", selected.split("\n", 2)[2]).answer


@pytest.mark.parametrize(("selected", "question", "quoted"), [
    ("Robot\tHeight\tMass\nOptimus\t1.73 m\t56 kg\nAtlas\t1.5 m\t89 kg", "What mass does Atlas have?",
     "Robot | Height | Mass\nAtlas | 1.5 m | 89 kg [1]"),
    ("1.73 m", "What does this mean?", "1.73 m [1]"),  # one table cell
    ("Web server :80", "Which port does the web server use?", "Web server :80 [1]"),
    ("Orders database", "Explain this", "Orders database [1]"),  # a diagram's label
])
def test_a_table_cell_row_or_diagram_label_is_answer_material(selected, question, quoted):
    out = _ask(question, selected)
    assert quoted in out.answer and out.citations


# What Chromium gives for a drag from the paragraph above a Mermaid diagram (Docusaurus 3.10.2,
# @docusaurus/theme-mermaid) to the one below: the drawing's labels, a line each.
ACROSS_DIAGRAM = ("The cluster looks as follows. Each box is a server/VM.\n\nHTTP :80\n\n"
                  "SQL :5432\n\nLoad balancer\n\nWeb server\n\nOrders database\n\n"
                  "Orders are written by the web server only.")


def test_a_selection_across_a_diagram_keeps_its_labels_apart():
    out = _ask("Summarise this", ACROSS_DIAGRAM)
    assert out.answer == ("The cluster looks as follows [1]. Each box is a server/VM [1]. Orders "
                          "are written by the web server only [1].")
    # a label is quoted when only it holds the question's words
    assert _ask("What is on HTTP?", ACROSS_DIAGRAM).answer == "HTTP :80 [1]"


def test_code_lines_and_prose_lines_of_the_development_books_are_told_apart():
    """Every line the two development books show (../shared corpora): a line of a code block is
    read as code, a paragraph or list item as prose, each at least 99% of the time (measured
    when written: code 8,272 of 8,303 lines, prose 2,766 of 2,769 paragraphs and items; some
    "code" blocks hold prose)."""
    import re

    from functions.answers.reader_blocks import split_blocks
    from functions.answers.selection import is_code_line
    from functions.answers.text import plain_text
    from tests.shared import shared_dir

    books = [shared_dir() / "corpora" / name / "docs" for name in ("pai-ali", "pai-hassaan")]
    if not all(b.is_dir() for b in books):
        pytest.skip("the development books (../shared/corpora) are not here")
    code, prose = [], []
    for path in sorted(p for book in books for p in book.rglob("*.md*")):
        text = path.read_text(encoding="utf-8")
        if text.startswith("---") and "\n---" in text[3:]:
            text = text[3:].split("\n---", 1)[1]  # the front matter is not shown
        for block in split_blocks(text):
            if block.noise:
                continue
            if block.kind == "code":
                code += [is_code_line(ln) for ln in block.text.split("\n")[1:-1] if ln.strip()]
            elif block.kind in ("paragraph", "list", "definition"):
                # as the browser sends it: a line per paragraph and per list item
                items = re.split(r"\n(?=\s*(?:[-*+]|\d+[.)])\s)", block.text)
                prose += [not is_code_line(plain_text(item)) for item in items
                          if plain_text(item).strip() and "```" not in item]
    assert len(code) > 8000 and len(prose) > 2000
    assert sum(code) >= 0.99 * len(code) and sum(prose) >= 0.99 * len(prose)
