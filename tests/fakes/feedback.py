"""A FeedbackStore in memory (the interface of functions.services.feedback's SQLite and DynamoDB stores)."""

from __future__ import annotations


class MemoryFeedback:
    """Answer records and ratings in dicts, for tests that look at what was recorded."""

    def __init__(self):
        self.answers: dict[str, dict] = {}
        self.feedback: dict[str, tuple[str, str | None]] = {}

    def record_answer(self, request_id, question, citations, low_confidence, mode) -> None:
        self.answers[request_id] = {"question": question, "citations": citations,
                                    "low_confidence": low_confidence, "mode": mode}

    def save_feedback(self, request_id, rating, comment) -> bool:
        if request_id not in self.answers:
            return False
        self.feedback[request_id] = (rating, comment)
        return True
