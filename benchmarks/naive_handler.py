"""The baseline for bench_cold_start: what a first Lambda usually looks like (SDKs imported at top).

FastAPI + the openai and qdrant_client SDKs + Mangum, clients built at import. Models and search
are the same zero-latency fakes as the real handlers get, so only imports and framework differ.
"""

from __future__ import annotations

from fastapi import FastAPI
from mangum import Mangum
from openai import OpenAI
from pydantic import BaseModel
from qdrant_client import QdrantClient

FAKE_HITS = [
    {"title": f"Chapter {i}", "section_title": f"Section {i}.1", "score": 0.8 - i / 100,
     "url": f"https://example.github.io/book/docs/ch{i}#section-{i}-1",
     "content": f"Section {i}.1 explains how encoders count pulses on channel {i}."}
    for i in range(5)
]

app = FastAPI()
openai_client = OpenAI(api_key="sk-naive-bench", base_url="http://127.0.0.1:9/v1")  # never called
qdrant = QdrantClient(url="http://127.0.0.1:6333", check_compatibility=False)  # never called


class ChatRequest(BaseModel):
    question: str
    page_url: str | None = None


def fake_search(question: str) -> list[dict]:
    return FAKE_HITS


@app.post("/chat")
def chat(req: ChatRequest) -> dict:
    hits = fake_search(req.question)
    answer = " ".join(f"{h['content']} [{n}]" for n, h in enumerate(hits[:2], 1))
    return {"answer": answer,
            "citations": [{"n": n, **h} for n, h in enumerate(hits[:2], 1)],
            "low_confidence": False}


handler = Mangum(app, lifespan="off")
