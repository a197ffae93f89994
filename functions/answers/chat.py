"""The chat answer: standalone query → evidence (retrieval, respelling, names, the blocks that
would be quoted) → one decision (functions.answers.decision) → the answer, offline or from the
model → citations (functions.answers.finish)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from functions.answers import extractive
from functions.answers.confidence import assess
from functions.answers.decision import Decision, Signals, policy_for, signals
from functions.answers.finish import (
    EMPTY_QUESTION,
    NAMED_REFUSAL,
    REFUSAL,
    finish,
    nearest,
    refusal,
)
from functions.answers.generation import model_answer, offline_answer, offline_quote
from functions.answers.prompt import (
    bridge_messages,
    follow_up_context,
    recent,
    resolve,
    rewrite_messages,
    section_names,
    shown_before,
)
from functions.answers.question_kind import Reading, empty_question, read
from functions.answers.requests import ChatRequest
from functions.answers.tuning import TUNING
from functions.answers.types import NOT_COVERED, Answer, offline_fallback, refused
from functions.deadline import REQUEST_SECONDS, REWRITE_SECONDS, within
from functions.errors import UpstreamError
from functions.search.ranking import chunk_text
from functions.services.budget import approx_tokens, reserve, settle

UNCOVERED_PART = "The book doesn't mention {names}, so this part is not answered: “{part}”."
CONTEXT_TOKENS_ESTIMATE = TUNING.context_tokens_estimate.value
REWRITE_MAX_TOKENS = TUNING.rewrite_max_tokens.value
# A respelt word can bring the sections that spell the next one ("debounse a push buton":
# "debouncing" finds the section that says "button").
RESPELL_ROUNDS = TUNING.respell_rounds.value
BRIDGE_SECTIONS = TUNING.bridge_sections.value
BRIDGE_TOKENS = TUNING.bridge_tokens_estimate.value
# the offline outcomes, worst first: a search again in the book's terms is kept when it does
# better (the rewrite's own words would lift its signals: kept on a par, it led the fake model
# of tests/fakes to answer more unanswerable questions)
_OUTCOMES = ("refuse", "closest", "answer")


def standalone_query(req: ChatRequest, llm) -> tuple[str, str, int]:
    """The search query, the follow-up context searched beside it (functions.search.retrieval), and
    the tokens that cost. With a model, its standalone rewrite of the question; without one
    (or when the rewrite fails), the question and the topic of the conversation it leans on
    (prompt.follow_up_context)."""
    if not req.history:
        return req.question, "", 0
    if llm is None:
        return req.question, follow_up_context(req.question, req.history), 0
    try:
        with within(REWRITE_SECONDS):  # a slow rewrite must leave time for the answer
            completion = llm.complete(rewrite_messages(req.question, req.history),
                                      max_tokens=REWRITE_MAX_TOKENS)
    except UpstreamError:
        return req.question, follow_up_context(req.question, req.history), 0
    query = " ".join(completion.text.split())[:500]
    return query or req.question, "", completion.total_tokens


def estimate_tokens(req: ChatRequest, llm) -> int:
    history = sum(approx_tokens(m["content"]) for m in recent(req.history))
    question = approx_tokens(req.question)
    if llm is None:  # only the paid query embedding, if any
        return question + history
    rewrite = (history + question + 100 + REWRITE_MAX_TOKENS) if req.history else 0
    bridge = question + 100 + BRIDGE_SECTIONS * BRIDGE_TOKENS + REWRITE_MAX_TOKENS
    return (300 + history + question + req.top_k * CONTEXT_TOKENS_ESTIMATE + llm.max_tokens
            + rewrite + bridge)


def answer_chat(req: ChatRequest, retriever, llm, spend_cap, settings, paid: bool) -> Answer:
    """`paid`: whether any model call costs money (OpenAI chat or embeddings). The rewrite,
    retrieval and answer share one deadline (functions.deadline)."""
    with within(REQUEST_SECONDS):
        return _answer_chat(req, retriever, llm, spend_cap, settings, paid)


@dataclass
class Evidence:
    """What the chat path found for a question, before deciding whether to answer."""

    reading: Reading  # the question read once: as asked (misspelt words respelt as the book
    # spells them), what was searched, what it asks for (question_kind.read)
    query: str  # what was searched (a follow-up: with its context beside it)
    context: str
    hits: list  # the retrieved chunks, best first
    follows: bool  # a follow-up that leans on the previous turn
    absent: list[str]  # names the question uses and the book never mentions
    unknown: list[str]  # rare words of the question the book never uses
    composed: extractive.Composed | None  # the offline quote and its blocks' scores (None: not
    # chosen yet, see gather's `meaning`)
    signals: Signals
    embedded: tuple[str, ...] = ()  # texts embedded for the block choice (paid with OpenAI)

    @property
    def question(self) -> str:
        return self.reading.asked


def gather(req: ChatRequest, retriever, query: str, context: str, meaning: bool = True
           ) -> Evidence:
    """Retrieve (again with misspelt words respelt), look for the names and rare words the book
    never uses, and choose the blocks that would be quoted: everything the decision reads.
    `meaning`: False when no fitted policy reads the blocks and a model writes the answer (an
    OpenAI embedding model): the blocks are chosen only if the model fails (`quote`)."""
    hits, ranked = retriever.ranked(query, req.page_url, req.filters, req.mode, req.top_k,
                                    context=context)
    question = req.question
    for _ in range(RESPELL_ROUNDS):  # "humaniod" searched again as the book spells it
        question, query, respelt = _respell(question, query, hits)
        if not respelt:
            break
        hits, ranked = retriever.ranked(query, req.page_url, req.filters, req.mode, req.top_k,
                                        context=context)
    # Word coverage is judged on what the reader asks now, and not for a follow-up that
    # leans on the previous turn ("What's the catch with going that route?": its words are
    # conversation, not the book's), with or without a model (a model's rewrite is in its
    # own words).
    follows = bool(follow_up_context(req.question, req.history))
    absent, unknown = _absent_words(question, hits, retriever, req.filters)
    embedded: list[str] = []
    vectors: dict[str, list[float]] = {}  # a text is embedded once per question

    def embed(texts: list[str]) -> list[list[float]]:
        todo = list(dict.fromkeys(t for t in texts if t not in vectors))
        if todo:
            embedded.extend(todo)
            vectors.update(zip(todo, retriever.embedder.embed_batch(todo), strict=True))
        return [vectors[t] for t in texts]

    # the quote is chosen for what the follow-up asks about the topic ("How do I prevent
    # integral windup?"), not for the topic's own question
    reading = read(question, resolve(query, req.history) if context else query,
                   shown_before(req.history) if follows else "")
    if not meaning:
        found = signals(None if follows else question, ranked, 0.0, 0.0, len(unknown))
        return Evidence(reading, query, context, hits, follows, absent, unknown, None, found)
    composed = extractive.compose(reading, hits, embed, req.page_url)
    # The reader's page lifts its own sections for the quote, never the decision: the signals
    # are read from the same search ranked without it, so asking from another page can not turn
    # an answer into a refusal (nor the page holding it a refusal into an answer).
    plain = extractive.compose(reading, ranked, embed, None) if req.page_url \
        else composed
    found = signals(None if follows else question, ranked, plain.top_sem, plain.top_lex,
                    len(unknown), plain.mean_sem)
    return Evidence(reading, query, context, hits, follows, absent, unknown, composed, found,
                    tuple(embedded))


def decide(evidence: Evidence, model: str, override: float | None, with_model: bool) -> Decision:
    """Answer, show the closest passage, say the book does not cover it, or ask the model (and
    why), from the fitted policy of the embedding model (functions.answers.decision); a model
    without one keeps the dense thresholds of functions.answers.confidence (below `low`: the
    closest passage; below `none`: not covered). `override`: LOW_CONFIDENCE_THRESHOLD, the
    probability to answer at (the cosine level for a model without a policy)."""
    decision = _decide(evidence, model, override, with_model)
    sources = evidence.composed.sources if evidence.composed is not None else ()
    chosen = tuple(dict.fromkeys(str(h.payload.get("url", "")) for h in sources))
    follow = evidence.follows
    return replace(decision, chosen=chosen, kind=evidence.reading.kind,
                   topic=evidence.context if follow else "",
                   quoted_for=evidence.reading.searched if follow else "")


def _decide(evidence: Evidence, model: str, override: float | None, with_model: bool
            ) -> Decision:
    policy = policy_for(model)
    if policy is None:
        verdict = assess(evidence.hits, model, override,
                         query=None if evidence.follows else evidence.question)
        confidence, sure = verdict.confidence, not verdict.low
        maybe, near = sure, verdict.level != "none"
        rule = f"dense score {confidence:.3f} (no fitted policy for {model})"
    else:
        confidence = round(policy.probability(evidence.signals), 3)
        threshold = policy.threshold if override is None else override
        sure, maybe = confidence >= threshold, confidence >= min(policy.ask_model, threshold)
        near = (evidence.signals.cosine >= policy.near
                or evidence.signals.passage_terms >= policy.near_terms)
        rule = f"policy p={confidence:.3f}, answers from {threshold:.2f}" + (
            f", asks the model from {min(policy.ask_model, threshold):.2f}" if with_model
            else "") + ("" if near else f"; nothing near (cosine {evidence.signals.cosine:.2f}"
                        f" < {policy.near:.2f})")
    if evidence.absent:
        return Decision("refuse", min(confidence, 0.2), "names the book never mentions: "
                        + ", ".join(evidence.absent), evidence.signals, "not_mentioned")
    if not near:
        return Decision("refuse", confidence, rule, evidence.signals)
    if with_model and maybe:
        return Decision("model", confidence, rule, evidence.signals)
    if with_model:
        return Decision("closest", confidence, rule, evidence.signals)
    if sure and evidence.composed is not None \
            and not extractive.supported(evidence.composed, evidence.reading.quantity):
        return Decision("closest", min(confidence, 0.3), "asks for a number the quote does not "
                        "state", evidence.signals)
    return Decision("answer" if sure else "closest", confidence, rule, evidence.signals)


def _answer_chat(req: ChatRequest, retriever, llm, spend_cap, settings, paid: bool) -> Answer:
    return explain_chat(req, retriever, llm, spend_cap, settings, paid)[0]


def explain_chat(req: ChatRequest, retriever, llm, spend_cap, settings, paid: bool
                 ) -> tuple[Answer, Decision | None]:
    """The answer and the decision behind it (None when the question was empty)."""
    reserved = reserve(spend_cap, estimate_tokens(req, llm)) if paid else 0
    used = 0
    try:
        query, context, used = standalone_query(req, llm)
        used += approx_tokens(f"{query} {context}") if paid else 0
        if empty_question(req.question):
            return refused(EMPTY_QUESTION, 0.0, [], {"code": "empty_question"}), None
        model = retriever.embedder.model_name
        evidence = gather(req, retriever, query, context,
                          meaning=llm is None or policy_for(model) is not None)
        if getattr(retriever.embedder, "paid", False):
            used += sum(approx_tokens(t) for t in evidence.embedded)
        override = settings.low_confidence_threshold
        offline, rewritten = decide(evidence, model, override, False), ""
        if llm is not None and offline.action != "answer" and offline.case != "not_mentioned":
            try:  # the reader's words bridged to the book's, and searched again
                evidence, offline, tokens, rewritten = bridged(
                    req, evidence, offline, retriever, llm, query, context, model, override)
            except UpstreamError as exc:  # slow or down: the offline outcome, at once
                offline_answer(exc)  # a key or model the provider rejects is raised
                answer, tokens = offline_outcome(evidence, offline, retriever, req.page_url)
                used += tokens
                return offline_fallback(answer), offline
            used += tokens if paid else 0
        decision = offline if llm is None else decide(evidence, model, override, True)
        if rewritten:
            decision = replace(decision, rule=f"{decision.rule}; searched again as "
                                              f"“{rewritten}”")
        hits = evidence.hits
        if decision.case == "not_mentioned":
            partial = None if llm is not None else answer_in_part(
                req, evidence.reading, retriever, model, settings.low_confidence_threshold)
            if partial is not None:
                return partial
            return refusal(_named_refusal(evidence.absent), decision.confidence, hits,
                           {"code": "not_mentioned", "names": evidence.absent[:3]}), decision
        if decision.action == "refuse":
            return refusal(REFUSAL, decision.confidence, hits), decision
        if decision.action == "closest":
            composed, tokens = quote(evidence, retriever, req.page_url)
            used += tokens
            return nearest(composed, hits, decision.confidence), decision
        if decision.action == "model":  # links removed, claims checked against the passages
            try:
                result, tokens = model_answer(req.question, req.history, hits, llm,
                                              retriever.embedder, decision.confidence)
            except UpstreamError as exc:  # slow, down or rate-limited: the offline outcome
                offline_answer(exc)  # a key or model the provider rejects is raised
                result, tokens = offline_outcome(evidence, offline, retriever, req.page_url)
                used += tokens
                return offline_fallback(result), decision
            used += tokens
            if result.outcome == NOT_COVERED and (result.refusal or {}).get("code") == \
                    "not_covered" and offline.action != "refuse":  # the model found nothing
                composed, tokens = quote(evidence, retriever, req.page_url)  # it can support
                used += tokens
                result = nearest(composed, hits, min(decision.confidence, result.confidence))
            return result, decision
    finally:
        if paid:
            settle(spend_cap, reserved, used)
    composed = evidence.composed
    return finish(composed.text, composed.sources, hits, decision.confidence), decision


def bridged(req: ChatRequest, evidence: Evidence, offline: Decision, retriever, llm, query: str,
            context: str, model: str, override: float | None
            ) -> tuple[Evidence, Decision, int, str]:
    """A question the book did not answer offline, rewritten by the model in the book's terms
    (one short call within REWRITE_SECONDS, the names of the sections nearest the question as
    context) and searched again: the evidence and offline decision kept (the new search's when
    its offline outcome is better), the tokens the call and the new search's embeddings cost, and the
    rewrite when its search was kept (else ""). Raises UpstreamError when the model fails."""
    near = retriever.retrieve(query, req.page_url, req.filters, req.mode, BRIDGE_SECTIONS,
                              context=context)
    with within(REWRITE_SECONDS):
        completion = llm.complete(bridge_messages(req.question, section_names(near)),
                                  max_tokens=REWRITE_MAX_TOKENS)
    tokens = completion.total_tokens
    rewritten = " ".join(completion.text.split())[:500]
    if not rewritten or rewritten.lower() == query.lower():
        return evidence, offline, tokens, ""
    # the book's terms searched beside the reader's own words (as a follow-up's topic is), and
    # judged on the reader's words: alone, the rewrite's words match the heading it names and
    # lift the signals whatever the section holds
    again = gather(req, retriever, query, f"{context} {rewritten}".strip())
    tokens += approx_tokens(rewritten)
    if getattr(retriever.embedder, "paid", False):
        tokens += sum(approx_tokens(t) for t in again.embedded)
    decision = decide(again, model, override, False)
    if _OUTCOMES.index(decision.action) <= _OUTCOMES.index(offline.action):
        return evidence, offline, tokens, ""
    return again, decision, tokens, rewritten


def offline_outcome(evidence: Evidence, decision: Decision, retriever, page_url: str | None
                    ) -> tuple[Answer, int]:
    """What the offline path shows for this evidence and its offline decision (the quote, the
    closest passage or the refusal), and the paid tokens its quote embedded: what a reader gets
    when the model is slow or down."""
    if decision.case == "not_mentioned":
        return refusal(_named_refusal(evidence.absent), decision.confidence, evidence.hits,
                       {"code": "not_mentioned", "names": evidence.absent[:3]}), 0
    if decision.action == "refuse":
        return refusal(REFUSAL, decision.confidence, evidence.hits), 0
    composed, tokens = quote(evidence, retriever, page_url)
    if decision.action == "closest":
        return nearest(composed, evidence.hits, decision.confidence), tokens
    return offline_quote(composed, evidence.hits, evidence.reading.quantity,
                         decision.confidence), tokens


def passage_while_writing(req: ChatRequest, retriever, spend_cap, settings, paid: bool
                          ) -> tuple[list, Answer | None]:
    """POST /sources where a model writes the answers (functions.answers.sources): the hits
    /chat's decision would give the model (empty when it refuses), and the offline answer its
    fallback would show over them (`quote`, then generation.offline_quote), or None when that
    is a refusal. No model is called: a follow-up is searched with the conversation's topic beside it,
    as /chat does when the model's rewrite fails. Spends as /chat does on the same search."""
    context = follow_up_context(req.question, req.history)
    searched = approx_tokens(f"{req.question} {context}")
    paid_embedder = getattr(retriever.embedder, "paid", False)
    reserved = reserve(spend_cap, searched + (req.top_k * CONTEXT_TOKENS_ESTIMATE
                                              if paid_embedder else 0)) if paid else 0
    used = searched if paid else 0
    try:
        if empty_question(req.question):
            return [], None
        model = retriever.embedder.model_name
        evidence = gather(req, retriever, req.question, context,
                          meaning=policy_for(model) is not None)
        if paid_embedder:
            used += sum(approx_tokens(t) for t in evidence.embedded)
        decision = decide(evidence, model, settings.low_confidence_threshold, True)
        if decision.action != "model":
            return [], None
        composed, tokens = quote(evidence, retriever, req.page_url)
        used += tokens
        shown = offline_quote(composed, evidence.hits, evidence.reading.quantity,
                              decision.confidence)
        return evidence.hits, None if shown.low_confidence else shown
    finally:
        if paid:
            settle(spend_cap, reserved, used)


def answer_in_part(req: ChatRequest, reading: Reading, retriever, model: str,
                   override: float | None) -> tuple[Answer, Decision] | None:
    """A multi-part question refused for a name the book never mentions ("What is a URDF, and
    how do I install it on Windows?"): the parts that name nothing missing are looked up and
    decided alone, as questions of their own; those the policy answers are quoted (one after
    the other) and each part that names something missing is said not to be answered. None
    when no part is answered, or none names anything missing (the whole refusal stands)."""
    asked = reading.parts
    if not asked or req.history:
        return None
    decided = []
    for part in asked:
        evidence = gather(replace(req, question=part), retriever, part, "")
        decided.append((part, evidence, _decide(evidence, model, override, False)))
    answered = [(e, d) for _, e, d in decided if d.action == "answer" and e.composed is not None]
    missing = [(p, e) for p, e, d in decided if d.case == "not_mentioned"]
    if not answered or not missing:
        return None
    texts, sources = [], []
    for evidence, _ in answered:  # each quote's [n] renumbered after the quotes before it
        offset = len(sources)
        texts.append(re.sub(r"\[(\d+)\]", lambda m, k=offset: f"[{int(m[1]) + k}]",
                            evidence.composed.text))
        sources += evidence.composed.sources
    notes = [UNCOVERED_PART.format(names=_names(e.absent), part=p.rstrip("?.! "))
             for p, e in missing]
    confidence = min(d.confidence for _, d in answered)
    answer = finish("\n\n".join(texts), sources, answered[0][0].hits, confidence)
    if answer.low_confidence:
        return None
    answer = replace(answer, answer=f"{answer.answer}\n\n{' '.join(notes)}")
    first = answered[0][1]
    chosen = tuple(dict.fromkeys(str(h.payload.get("url", "")) for h in sources))
    return answer, replace(first, rule=f"answered in part ({len(answered)} of {len(asked)}); "
                           + first.rule, chosen=chosen, uncovered=tuple(p for p, _ in missing))


def quote(evidence: Evidence, retriever, page_url: str | None,
          error: UpstreamError | None = None) -> tuple[extractive.Composed, int]:
    """The offline quote over the evidence's hits, and the paid tokens it embedded: the one
    gather chose, or, when it chose none, chosen now (by words alone when the embeddings fail
    too). `error`: the model's failure, when the quote replaces its answer; a model rejected for
    good is raised again first (generation.offline_answer). None: while a model writes
    (`passage_while_writing`)."""
    if evidence.composed is not None or (error is not None and not error.transient):
        return evidence.composed, 0
    embedded: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        vectors = retriever.embedder.embed_batch(texts)
        embedded.extend(texts)
        return vectors
    try:
        composed = extractive.compose(evidence.reading, evidence.hits, embed, page_url)
    except UpstreamError:
        composed = extractive.compose(evidence.reading, evidence.hits, None, page_url)
    paid = getattr(retriever.embedder, "paid", False)
    return composed, sum(approx_tokens(t) for t in embedded) if paid else 0


def _respell(question: str, query: str, hits) -> tuple[str, str, bool]:
    """The question and query with misspelt words respelt as the retrieved text spells
    them (functions.answers.names.respelled), and whether any was."""
    from functions.answers.names import apply_spelling, respelled
    from functions.tokens import common_words

    fixes = respelled(question, [chunk_text(h) for h in hits], common_words)
    if not fixes:
        return question, query, False
    return apply_spelling(question, fixes), apply_spelling(query, fixes), True


def _absent_words(question: str, hits, retriever, filters) -> tuple[list[str], list[str]]:
    """What the question uses that the book never mentions, as written: its names (products,
    tools, acronyms, identifiers: refused by name) and its rare words ("colcon", but also a
    reader's own "laggy": one signal of the decision). Each is looked for in the retrieved
    chunks first, then by a word search of the whole book."""
    from functions.answers.names import absent_in, missing, rare_unknown_words
    from functions.search.sparse import terms
    from functions.tokens import common_words

    texts = [chunk_text(h) for h in hits]
    vocabulary = {t for text in texts for t in terms(text)}
    names = missing(question, texts)
    words = [w for w in rare_unknown_words(question, vocabulary, common_words())
             if not any(w.lower() in a.lower() for a in names)]

    def nowhere(found: list[str]) -> list[str]:
        return [w for w in found[:4]
                if absent_in(w, [chunk_text(h) for h in retriever.word_search(w, filters)])]

    return nowhere(names), nowhere(words)


def _named_refusal(names: list[str]) -> str:
    return NAMED_REFUSAL.format(names=_names(names))


def _names(names: list[str]) -> str:
    """“A”, “B” or “C”: the names the book never mentions, as a refusal shows them."""
    shown = [f"“{n}”" for n in names[:3]]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
