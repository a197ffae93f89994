"""OpenAI-compatible chat completions and query embeddings over httpx (no SDK on the cold path).

Keeps what the official SDK gives: retries with exponential backoff on 429/5xx/timeouts that
honour `Retry-After`, explicit timeouts, and typed errors (UpstreamError with the status).
The whole call, retries included, ends within `deadline` seconds and within what is left of
the request's deadline (functions.deadline: rewrite, retrieval and answer share one).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from functions.deadline import time_left
from functions.errors import UpstreamError
from functions.httpclient import make_client

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after-ms")
    if raw:
        try:
            return float(raw) / 1000
        except ValueError:
            pass
    raw = response.headers.get("retry-after")
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


def _message(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["message"])[:300]
    except Exception:
        return response.text[:300] or response.reason_phrase


class OpenAIHttp:
    """POST JSON to an OpenAI-compatible API with retries inside a deadline."""

    def __init__(self, api_key: str, base_url: str | None = None, *, timeout: float = 12.0,
                 connect_timeout: float = 3.0, max_retries: int = 2, deadline: float = 20.0,
                 transport: httpx.BaseTransport | None = None):
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries = max_retries
        self.deadline = deadline
        self.timeout = timeout
        self.client = make_client(
            self.base_url,
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            transport=transport,
        )

    def post(self, path: str, body: dict) -> dict:
        start = time.monotonic()
        deadline = time_left(self.deadline)
        attempt = 0
        while True:
            left = deadline - (time.monotonic() - start)
            if left <= 0.5:
                raise UpstreamError("The answer service did not respond in time.")
            wait: float | None
            try:
                response = self.client.post(
                    self.base_url + path, json=body, timeout=min(self.timeout, left)
                )
            except httpx.TimeoutException:
                error = UpstreamError("The answer service did not respond in time.")
                wait = None
            except httpx.HTTPError as exc:
                error = UpstreamError(f"The answer service cannot be reached ({type(exc).__name__}).")
                wait = None
            else:
                if response.status_code < 300:
                    try:
                        return response.json()
                    except ValueError:
                        raise UpstreamError("The answer service sent a reply that is not JSON.",
                                            status=response.status_code) from None
                wait = _retry_after(response)
                error = UpstreamError(
                    f"{response.status_code} from the answer service: {_message(response)}",
                    status=response.status_code, retry_after=wait,
                )
                if response.status_code not in RETRY_STATUSES:
                    raise error
            if attempt >= self.max_retries:
                raise error
            delay = wait if wait is not None else 0.5 * 2**attempt * (0.75 + random.random() / 2)
            if delay > deadline - (time.monotonic() - start) - 1.0:
                raise error  # waiting would overrun the request deadline
            time.sleep(delay)
            attempt += 1

    def close(self) -> None:
        self.client.close()


class OpenAIChat:
    """ChatModel: `complete(messages) -> Completion` with gpt-4o-mini defaults."""

    def __init__(self, http: OpenAIHttp, model: str = "gpt-4o-mini", temperature: float = 0.3,
                 max_tokens: int = 800):
        self.http = http
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens

    def complete(self, messages: Sequence[dict], max_tokens: int | None = None) -> Completion:
        data = self.http.post("/chat/completions", {
            "model": self.model, "messages": list(messages), "temperature": self.temperature,
            "max_tokens": max_tokens or self.max_tokens, "stream": False,
        })
        try:
            text = data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise UpstreamError("The answer service sent a reply without an answer.") from None
        usage = data.get("usage") or {}
        return Completion(text, int(usage.get("prompt_tokens") or 0),
                          int(usage.get("completion_tokens") or 0))


class HttpOpenAIEmbedder:
    """Embedder for the query path: the OpenAI embeddings endpoint over httpx (floats)."""

    paid = True  # the claim check counts what it embeds against the daily budget

    def __init__(self, http: OpenAIHttp, model_name: str = "text-embedding-3-small",
                 dimension: int | None = None):
        self.http = http
        self.model_name = model_name
        self.dimension = dimension or KNOWN_DIMENSIONS.get(model_name, 0)

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        data = self.http.post("/embeddings", {
            "model": self.model_name, "input": list(texts), "encoding_format": "float",
        })
        try:
            rows = sorted(data["data"], key=lambda row: row["index"])
            vectors = [list(map(float, row["embedding"])) for row in rows]
        except (KeyError, TypeError, ValueError):
            raise UpstreamError("The embedding service sent a reply without vectors.") from None
        if len(vectors) != len(texts):
            raise UpstreamError("The embedding service returned the wrong number of vectors.")
        if vectors and not self.dimension:
            self.dimension = len(vectors[0])
        return vectors
