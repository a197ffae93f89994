"""The OpenAI-compatible API over httpx: one transport for the index and the query side.

One retry policy: 408/409/429/5xx, timeouts and dropped connections are retried with
exponential backoff and full jitter, or after the server's Retry-After; a wait longer than
`max_retry_after`, or than what is left of the deadline, is reported instead of waited for.
One exception: a chat completion that timed out waiting for its reply is not sent again
(`resend_after_timeout=False`): the server got it and is most likely still writing the answer,
and a slow local model (Ollama, llama.cpp) would be given the same work twice, each copy
slowing the other. A connect timeout is retried (the request never arrived). Every failure
that is the provider being slow, down or rate-limited is `transient` (the chat then gives the
offline answer); a rejected key, an unknown model or a reply that is not the API's is not.
The caller passes its budget: the query side (functions.api.deps) takes it from the settings
(OPENAI_TIMEOUT, OPENAI_CONNECT_TIMEOUT, OPENAI_MAX_RETRIES: by default 12 s, 3 s and 2
retries) within 20 s and within what is left of the request's deadline (functions.deadline:
rewrite, retrieval and answer share one); the index side (functions.search.embeddings.factory)
passes INDEX_BUDGET. Both sides embed with the same request (OpenAIEmbedder), so a collection's
vectors and its queries' come from the same model, size and encoding. No SDK: the openai
package would add about a second to a Lambda cold start.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import httpx

from functions.deadline import time_left
from functions.errors import UpstreamError
from functions.services.httpclient import make_client

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
# output sizes of the embedding models we know; another model needs its dimension given
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# the indexer's budget: a long run may wait longer and retry more than a reader's request
INDEX_BUDGET: Mapping[str, float | int | None] = {
    "max_retries": 5, "timeout": 30.0, "connect_timeout": 10.0, "deadline": None,
}
_MODEL_SETTING = {"/embeddings": "EMBEDDING_MODEL", "/chat/completions": "CHAT_MODEL"}


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from retry-after-ms or Retry-After (seconds form), if the server sent one."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw:
            try:
                return max(0.0, float(raw) * scale)
            except ValueError:
                continue  # an HTTP date: fall back to our own backoff
    return None


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["message"])[:300]
    except Exception:
        return response.text[:300] or response.reason_phrase


class OpenAIHttp:
    """POST JSON to an OpenAI-compatible API with retries inside a deadline (None: no limit)."""

    def __init__(self, api_key: str, base_url: str | None = None, *, timeout: float = 12.0,
                 connect_timeout: float = 3.0, max_retries: int = 2,
                 deadline: float | None = 20.0, backoff: float = 0.5, max_backoff: float = 20.0,
                 max_retry_after: float = 60.0, sleep: Callable[[float], None] = time.sleep,
                 transport: httpx.BaseTransport | None = None):
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.where = f"the API at {base_url}" if base_url else "the OpenAI API"
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_retries = max_retries
        self.deadline = deadline
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.sleep = sleep
        self.client = make_client(
            self.base_url,
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            transport=transport,
        )

    def post(self, path: str, body: dict, *, resend_after_timeout: bool = True) -> dict:
        """The reply's JSON. `resend_after_timeout=False`: a request the server received but did
        not answer in time is reported, not sent again (the module's docstring says why)."""
        model = body.get("model") or "the model"
        start = time.monotonic()
        budget = time_left(math.inf if self.deadline is None else self.deadline)
        attempt = 0
        while True:
            left = budget - (time.monotonic() - start)
            if left <= 0.5:
                raise UpstreamError(f"Calling {model} at {self.where} failed with no reply in "
                                    "time: the request's deadline had passed.", transient=True)
            status: int | None = None
            wait: float | None = None
            read_timeout = min(self.timeout, left)
            try:
                response = self.client.post(
                    self.base_url + path, json=body,
                    timeout=httpx.Timeout(read_timeout, connect=min(self.connect_timeout, left)),
                )
            except (httpx.ConnectTimeout, httpx.PoolTimeout):
                failure = "no connection in time"
            except httpx.TimeoutException:
                failure = "no reply in time"
                if not resend_after_timeout:
                    why = ("If the model needs longer, raise OPENAI_TIMEOUT."
                           if read_timeout >= self.timeout else "The request's time was up.")
                    raise UpstreamError(
                        f"{_sentence(model)} at {self.where} sent no reply within "
                        f"{read_timeout:.1f} s and is not asked again (it is probably still "
                        f"working on the first request). {why}", transient=True) from None
            except httpx.HTTPError as exc:
                failure = f"a connection error ({type(exc).__name__})"
            else:
                status = response.status_code
                if status < 300:
                    try:
                        return response.json()
                    except ValueError:
                        raise UpstreamError(f"{_sentence(self.where)} sent a reply that is not "
                                            "JSON; is OPENAI_BASE_URL an OpenAI-compatible API?",
                                            status=status) from None
                if status not in RETRY_STATUSES:
                    raise self._refused(path, model, response)
                wait = retry_after(response.headers)
                failure = f"HTTP {status}"
            attempt += 1
            if attempt > self.max_retries:
                raise UpstreamError(
                    f"Calling {model} at {self.where} failed with {failure} after {attempt} "
                    f"attempt{'s' if attempt > 1 else ''}. Try again later, or check the "
                    "provider's status and your account's rate limits.",
                    status=status, retry_after=wait, transient=True)
            left = budget - (time.monotonic() - start) - 1.0  # what the caller needs after
            if wait is not None and wait > min(self.max_retry_after, left):
                raise UpstreamError(
                    f"{_sentence(self.where)} asks to wait {wait:.0f} s before calling {model} "
                    f"again (HTTP {status}). Try again later.", status=status, retry_after=wait,
                    transient=True)
            delay = wait if wait is not None else self._backoff(attempt - 1)
            if delay > left:
                raise UpstreamError(
                    f"Calling {model} at {self.where} failed with {failure}, and there is no "
                    "time left to try again.", status=status, retry_after=wait, transient=True)
            self.sleep(delay)

    def stream(self, path: str, body: dict, on_data: Callable[[dict], None]) -> bool:
        """POST with `"stream": true`: each server-sent event's JSON to `on_data`, as it comes,
        in one attempt. False when nothing came (refused, not there, no reply in time: the
        caller asks again with `post`, its retries and its errors); an UpstreamError (transient)
        when the stream broke after its first event."""
        started = False
        start = time.monotonic()
        budget = time_left(math.inf if self.deadline is None else self.deadline)
        try:
            left = budget - (time.monotonic() - start)
            if left <= 0.5:
                return False
            timeout = httpx.Timeout(min(self.timeout, left), connect=min(self.connect_timeout, left))
            with self.client.stream("POST", self.base_url + path, json=body,
                                    timeout=timeout) as response:
                if response.status_code >= 300 or "text/event-stream" not in \
                        response.headers.get("content-type", ""):
                    return False
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    if budget - (time.monotonic() - start) <= 0:
                        raise httpx.ReadTimeout("the request's deadline passed")
                    try:
                        event = json.loads(data)
                    except ValueError:
                        continue
                    started = True
                    on_data(event)
            return started
        except httpx.HTTPError as exc:
            if not started:
                return False
            raise UpstreamError(f"The answer from {body.get('model') or 'the model'} at "
                                f"{self.where} broke off while it was written "
                                f"({type(exc).__name__}).", transient=True) from None

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter (AWS architecture blog's recommendation)."""
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))

    def _refused(self, path: str, model: str, response: httpx.Response) -> UpstreamError:
        status = response.status_code
        where = _sentence(self.where)
        if status == 401:
            message = (f"{where} refused the API key (HTTP 401). Check OPENAI_API_KEY (and "
                       "OPENAI_BASE_URL if you use another provider).")
        elif status == 403:
            message = (f"{where} denied access to {model} (HTTP 403). Check that the key in "
                       "OPENAI_API_KEY may use this model.")
        elif status == 404:
            setting = _MODEL_SETTING.get(path, "the model setting")
            message = (f"{where} does not know the model {model!r} (HTTP 404). Check {setting} "
                       "and OPENAI_BASE_URL.")
        else:
            message = f"{where} rejected the request to {model} (HTTP {status}): {_detail(response)}"
        return UpstreamError(message, status=status)

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
        }, resend_after_timeout=False)
        try:
            text = data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise UpstreamError("The answer service sent a reply without an answer.") from None
        usage = data.get("usage") or {}
        return Completion(text, int(usage.get("prompt_tokens") or 0),
                          int(usage.get("completion_tokens") or 0))


    def stream(self, messages: Sequence[dict], written: Callable[[str], None],
               max_tokens: int | None = None) -> Completion:
        """`complete`, read as the model writes it: `written(text so far)` at each piece. A
        stream that does not start (a provider without streaming, a refusal, a slow first
        token) is asked again as `complete` asks, with its retries."""
        parts: list[str] = []
        usage: dict = {}

        def take(event: dict) -> None:
            if isinstance(event.get("usage"), dict):
                usage.update(event["usage"])
            try:
                piece = event["choices"][0].get("delta", {}).get("content") or ""
            except (KeyError, IndexError, TypeError, AttributeError):
                return
            if piece:
                parts.append(piece)
                written("".join(parts))

        body = {"model": self.model, "messages": list(messages), "temperature": self.temperature,
                "max_tokens": max_tokens or self.max_tokens, "stream": True,
                "stream_options": {"include_usage": True}}
        if not self.http.stream("/chat/completions", body, take) or not parts:
            return self.complete(messages, max_tokens)
        return Completion("".join(parts), int(usage.get("prompt_tokens") or 0),
                          int(usage.get("completion_tokens") or 0))


class OpenAIEmbedder:
    """Embedder for both sides: the embeddings endpoint in batches of 100, as floats.

    `dimensions` is sent only when the size asked for is not the model's own (text-embedding-3
    models can shorten their vectors; ada-002 cannot and gets none); a model missing from
    KNOWN_DIMENSIONS learns its size from the first reply unless one is given."""

    paid = True  # the claim check counts what it embeds against the daily budget

    def __init__(self, http: OpenAIHttp, model_name: str = "text-embedding-3-small",
                 dimension: int | None = None, batch_size: int = 100):
        self.http = http
        self.model_name = model_name
        self.dimension = dimension or KNOWN_DIMENSIONS.get(model_name, 0)
        self.batch_size = batch_size

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed(list(texts[start:start + self.batch_size])))
        return vectors

    def _embed(self, texts: list[str]) -> list[list[float]]:
        # the API rejects empty strings; an empty text gets the vector of a single space
        body = {"model": self.model_name, "input": [t if t.strip() else " " for t in texts],
                "encoding_format": "float"}
        if self.dimension and self.dimension != KNOWN_DIMENSIONS.get(self.model_name):
            body["dimensions"] = self.dimension
        data = self.http.post("/embeddings", body)
        where = _sentence(self.http.where)
        try:
            rows = sorted(data["data"], key=lambda row: row["index"])
            vectors = [list(map(float, row["embedding"])) for row in rows]
        except (KeyError, TypeError, ValueError):
            raise UpstreamError(f"{where} sent an embeddings reply without vectors; is "
                                "OPENAI_BASE_URL an OpenAI-compatible embeddings API?") from None
        if len(vectors) != len(texts):
            raise UpstreamError(f"{where} returned {len(vectors)} embeddings for {len(texts)} "
                                "texts; is OPENAI_BASE_URL an OpenAI-compatible embeddings API?")
        if vectors and not self.dimension:
            self.dimension = len(vectors[0])
        if vectors and len(vectors[0]) != self.dimension:
            raise UpstreamError(
                f"{self.model_name} returned {len(vectors[0])}-d vectors, expected "
                f"{self.dimension}; set the embedding dimension to match the model.")
        return vectors
