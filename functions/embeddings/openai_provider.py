"""OpenAI (or any OpenAI-compatible) embeddings: batches of 100, retries with backoff and jitter."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from functions.errors import UpstreamError

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0  # seconds; a longer Retry-After is reported instead of waited for


class OpenAIEmbedder:
    """text-embedding-3-small (1536-d) by default. The openai client is imported on construction
    so the Lambda path imports it only when this provider is selected. Its own retries are
    turned off: this class retries 429/5xx/timeouts itself, with exponential backoff, full
    jitter and the server's Retry-After, and then raises UpstreamError."""

    def __init__(self, api_key: str, base_url: str | None = None,
                 model: str = "text-embedding-3-small", dimension: int = 1536,
                 batch_size: int = 100, max_retries: int = 5, timeout: float = 30.0,
                 backoff: float = 0.5, max_backoff: float = 20.0,
                 sleep: Callable[[float], None] = time.sleep):
        import openai

        self._openai = openai
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout,
                                     max_retries=0)
        self.model_name = model
        self.dimension = dimension
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        self._where = base_url or "the OpenAI API"

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_one_batch(list(texts[start:start + self.batch_size])))
        return vectors

    def _embed_one_batch(self, texts: list[str]) -> list[list[float]]:
        # the API rejects empty strings; an empty text gets the vector of a single space
        inputs = [t if t.strip() else " " for t in texts]
        extra = {} if self.dimension == 1536 else {"dimensions": self.dimension}
        attempt = 0
        while True:
            try:
                response = self._client.embeddings.create(model=self.model_name, input=inputs,
                                                          **extra)
                return self._vectors(response, len(inputs))
            except self._openai.APIStatusError as exc:
                status = exc.status_code
                if status not in RETRYABLE_STATUS:
                    raise self._fatal(exc) from exc
                wait = _retry_after(exc.response.headers)
                failure = f"HTTP {status}"
            except (self._openai.APITimeoutError, self._openai.APIConnectionError) as exc:
                status, wait = None, None
                failure = "a timeout" if isinstance(exc, self._openai.APITimeoutError) \
                    else f"a connection error ({exc})"
            if attempt >= self.max_retries:
                raise UpstreamError(
                    f"Embedding with {self.model_name} at {self._where} failed with {failure} "
                    f"after {attempt + 1} attempts. Try again later, or check the provider's "
                    "status and your account's rate limits.",
                    status=status, retry_after=wait)
            if wait is not None and wait > MAX_RETRY_AFTER:
                raise UpstreamError(
                    f"{self._where} asks to wait {wait:.0f} s before embedding again "
                    f"(HTTP {status}). Try again later.", status=status, retry_after=wait)
            self._sleep(wait if wait is not None else self._backoff(attempt))
            attempt += 1

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter (AWS architecture blog's recommendation)."""
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))

    def _vectors(self, response, expected: int) -> list[list[float]]:
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != expected:
            raise UpstreamError(f"{self._where} returned {len(data)} embeddings for {expected} "
                                "texts; is base_url an OpenAI-compatible embeddings API?")
        vectors = [list(item.embedding) for item in data]
        if vectors and len(vectors[0]) != self.dimension:
            raise UpstreamError(
                f"{self.model_name} returned {len(vectors[0])}-d vectors, expected "
                f"{self.dimension}; set the embedding dimension to match the model.")
        return vectors

    def _fatal(self, exc) -> UpstreamError:
        status = exc.status_code
        if status == 401:
            message = (f"{self._where} refused the API key (HTTP 401). Check OPENAI_API_KEY "
                       "(and OPENAI_BASE_URL if you use another provider).")
        elif status == 403:
            message = (f"{self._where} denied access to {self.model_name} (HTTP 403). Check that "
                       "the key in OPENAI_API_KEY may use this model.")
        elif status == 404:
            message = (f"{self._where} does not know the model {self.model_name!r} (HTTP 404). "
                       "Check EMBEDDING_MODEL and OPENAI_BASE_URL.")
        else:
            message = f"{self._where} rejected the embedding request (HTTP {status}): {_detail(exc)}"
        return UpstreamError(message, status=status)


def _retry_after(headers) -> float | None:
    """Seconds from Retry-After (seconds form) or retry-after-ms, if the server sent one."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw:
            try:
                return max(0.0, float(raw) * scale)
            except ValueError:
                continue  # an HTTP date: fall back to our own backoff
    return None


def _detail(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        return str(body.get("message") or body.get("error", {}).get("message") or body)
    return str(exc)
