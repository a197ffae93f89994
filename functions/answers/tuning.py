"""Every tunable number of the answer layer, in one frozen record: its value, why, and what set it.

The decision to answer has its own fitted numbers per embedding model (functions.answers.decision,
`functions/data/answer_policy.json`, set by `benchmarks/fit_decision.py --write`); everything
else the answer layer weighs, cuts or counts is here. The modules read their constants from
TUNING (`extractive.SOURCES = TUNING.sources.value`, …) and nowhere else; tests/functions/
test_tuning.py checks that no answer module keeps a number of its own. Change a value here and
measure with the command given; `ask --explain` and the closing notes quote these names.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

EVAL = "python benchmarks/bench_eval.py --only pai-ali --only pai-hassaan"  # + the sample: samples
BLOCKS = f"{EVAL} (block choice: the quote cites the expected section)"
BY_HAND = "set by hand, a reading limit (no measure moves with it)"
CLAIMS = "python benchmarks/bench_claims.py (the model path's claim check)"
CALIBRATION = "benchmarks/calibration.md (the dense thresholds)"


@dataclass(frozen=True)
class Tunable:
    value: object
    reason: str  # one line: what it does
    set_by: str  # the command that measured it, or how it was set


@dataclass(frozen=True)
class AnswerTuning:
    # the offline quote (functions.answers.extractive)
    sources: Tunable = Tunable(4, "chunks quoted from, best first", BLOCKS)
    weak_source: Tunable = Tunable(
        0.5, "no block from a chunk whose similarity is under this share of the best one's",
        BLOCKS)
    block_weights: Tunable = Tunable(
        (0.7, 0.3, 0.5), "a block's score: (block cosine, rarity-weighted term coverage, chunk "
        "cosine); chosen on pai-hassaan, checked on pai-ali and the sample (.90/.88/.88 of "
        "answerable questions cite the expected section)", BLOCKS)
    rank_step: Tunable = Tunable(0.02, "a block's score loses this per rank of its chunk", BLOCKS)
    second_block: Tunable = Tunable(
        0.05, "a block from another section joins the quote when it scores within this of the "
        "best", BLOCKS)
    cover_margin: Tunable = Tunable(
        0.15, "a block covering the question's other terms may be this much weaker…", BLOCKS)
    cover_gain: Tunable = Tunable(
        0.2, "…when it holds this share (by weight) of the terms the best block lacks", BLOCKS)
    defines: Tunable = Tunable(
        0.08, "'What is X?': a block that defines X (X is…, a row or line headed X) gains this",
        BLOCKS)
    quantity_margin: Tunable = Tunable(
        0.08, "how much less relevant a block stating the asked number may be", BLOCKS)
    max_chars: Tunable = Tunable(
        700, "a quoted paragraph longer than this is cut to its best sentences", BY_HAND)
    explains_chars: Tunable = Tunable(
        300, "a paragraph this short right after a code block is quoted with it", BY_HAND)
    max_list_items: Tunable = Tunable(12, "list items quoted at most", BY_HAND)
    max_code_lines: Tunable = Tunable(30, "code lines quoted at most", BY_HAND)
    max_table_rows: Tunable = Tunable(14, "table rows quoted at most", BY_HAND)
    embed_chars: Tunable = Tunable(
        1200, "characters of a block embedded for its choice (MiniLM reads ~256 tokens anyway)",
        BY_HAND)
    # the dense thresholds, for embedding models with no fitted decision (functions.answers.confidence)
    thresholds: Tunable = Tunable(
        {"all-MiniLM-L6-v2": (0.35, 0.15), "text-embedding-3-small": (0.30, 0.15),
         "text-embedding-3-large": (0.30, 0.15), "text-embedding-ada-002": (0.78, 0.70)},
        "(low, none) per model: below low the answer is low confidence, below none nothing is "
        "relevant", CALIBRATION)
    default_thresholds: Tunable = Tunable((0.35, 0.18), "(low, none) for any other model",
                                          CALIBRATION)
    coverage_weights: Tunable = Tunable(
        {"all-MiniLM-L6-v2": 0.5}, "how far the best hit's word coverage moves the dense score, "
        "per model (others keep the dense-only rule)", CALIBRATION)
    coverage_pivot: Tunable = Tunable(0.75, "the coverage that leaves the dense score unchanged",
                                      CALIBRATION)
    sides: Tunable = Tunable(4, "a comparison's other side is looked for among this many best "
                             "hits", CALIBRATION)
    # reading the question (functions.answers.chat, functions.answers.question_kind)
    respell_rounds: Tunable = Tunable(
        2, "searches again with misspelt words respelt, at most this many times (a respelt word "
        "can bring the section that spells the next one)", EVAL)
    part_terms: Tunable = Tunable(
        2, "content words that let one part of a multi-part question be looked up alone",
        "tests/functions/test_answer_decision.py (the parts of the development books' multi "
        "questions)")
    # the chat sources of a model's prompt (functions.answers.sources)
    max_sources: Tunable = Tunable(3, "sections a model's answer is given", BY_HAND)
    # Ask about this (functions.answers.selection)
    max_sentences: Tunable = Tunable(3, "sentences of the selection quoted at most", BY_HAND)
    key_sentences: Tunable = Tunable(
        3, "the selection's key sentences quoted for 'explain more simply' offline", BY_HAND)
    answers_share: Tunable = Tunable(
        0.6, "share of a question's content words the selection must hold to answer it (no "
        "embedding model in the selection function)",
        "tests/functions/test_selection.py (the issue 25 examples)")
    # the model path's claim check (functions.answers.claims)
    lexical_weight: Tunable = Tunable(0.5, "a claim's support: weight of word overlap beside "
                                      "the cosine", CLAIMS)
    claim_threshold: Tunable = Tunable(0.6, "a sentence of the model's reply is kept from this "
                                       "support", CLAIMS)
    min_lexical: Tunable = Tunable(0.4, "… and with at least this word overlap", CLAIMS)
    lexical_only: Tunable = Tunable(0.8, "the word overlap needed when the embeddings failed",
                                    CLAIMS)
    code_share: Tunable = Tunable(0.8, "lines of a code block that must occur in a passage",
                                  CLAIMS)
    windows_per_passage: Tunable = Tunable(40, "sentence windows of a passage compared with a "
                                           "claim, at most", BY_HAND)
    mostly_supported: Tunable = Tunable(
        0.5, "below this share of a reply kept, the answer is shown flagged", CLAIMS)

    # the model path's budget and prompt (functions.answers.chat, functions.answers.prompt)
    context_tokens_estimate: Tunable = Tunable(
        450, "tokens reserved per context chunk against the spend cap before the model is asked",
        "python benchmarks/bench_answer_cost.py")
    rewrite_max_tokens: Tunable = Tunable(60, "tokens a follow-up's standalone rewrite may take",
                                          BY_HAND)
    bridge_sections: Tunable = Tunable(
        20, "chunks whose section names the model sees when it rewrites a question it was not "
        "answered in the book's terms", BY_HAND)
    bridge_tokens_estimate: Tunable = Tunable(
        15, "tokens reserved per section name of that rewrite", BY_HAND)
    history_turns: Tunable = Tunable(6, "earlier turns of the conversation sent to the model",
                                     BY_HAND)
    history_chars: Tunable = Tunable(1000, "characters per earlier message sent to the model",
                                     BY_HAND)
    # what a citation and an MDX component show (functions.answers.citations, jsx_view)
    snippet_chars: Tunable = Tunable(240, "characters of a citation's snippet", BY_HAND)
    jsx_max_value: Tunable = Tunable(2000, "characters read from one JSX attribute value",
                                     BY_HAND)
    jsx_max_depth: Tunable = Tunable(8, "nesting of JSX values read, at most", BY_HAND)

    def table(self) -> list[tuple[str, object, str, str]]:
        """(name, value, reason, set_by) of every tunable, in order."""
        return [(f.name, t.value, t.reason, t.set_by)
                for f in fields(self) for t in [getattr(self, f.name)]]


TUNING = AnswerTuning()
