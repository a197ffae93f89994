"""Deps: the clients one container needs, built lazily once from Settings (tests pass fakes).

The chat path imports Qdrant and embedding code on first use; the selection path never does.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable, Mapping

from functions.api.http_errors import register_sensitive, register_sensitive_env
from functions.errors import ConfigError, SecretsUnavailable
from functions.services.feedback import make_feedback_store
from functions.services.ratelimit import make_limits
from functions.services.ssm import with_ssm
from functions.settings import Settings
from functions.settings import allowed_origins as origins_in
from functions.tokens import common_words

_UNSET = object()
RECHECK_SECONDS = 60.0  # a parameter SSM refused is asked for again after this long


class Deps:
    """Every attribute is either given (tests) or built on first use and then kept."""

    def __init__(self, settings: Settings | None = None, *, config_error: str | None = None,
                 env: Mapping[str, str] | None = None, search=None, embedder=None,
                 chat_model=_UNSET, rate_limiter=None, spend_cap=None, feedback=None,
                 clock: Callable[[], float] = time.monotonic):
        self._settings = settings
        self.config_error = config_error
        self.env = os.environ if env is None else env
        self._clock = clock
        self._source: Mapping[str, str] | None = None  # from_env: read again after a failure
        self._error_type: type[Exception] = ConfigError
        self._retry_at: float | None = None
        self._given = {"search": search, "embedder": embedder, "rate_limiter": rate_limiter,
                       "spend_cap": spend_cap, "feedback": feedback}
        if chat_model is not _UNSET:
            self._given["chat_model"] = chat_model
        self._built: dict[str, object] = {}
        self._lock = threading.RLock()
        # keys, connection URLs and paths are masked in every error body and log line
        register_sensitive_env(self.env)
        if settings is not None:
            register_sensitive(settings.openai_api_key, settings.openai_base_url,
                               settings.qdrant_url, settings.qdrant_api_key, settings.qdrant_path)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *,
                 clock: Callable[[], float] = time.monotonic, **given) -> Deps:
        """Never raises: a configuration error is kept and answered as a 503 by every route.
        What SSM did not give is asked for again: at the next request when SSM was throttled
        or out of reach, after RECHECK_SECONDS when it refused (a parameter may be created or a
        permission granted without a redeploy). The environment itself never changes."""
        deps = cls(env=os.environ if env is None else env, clock=clock, **given)
        deps._source = deps.env
        deps._load()
        return deps

    def _load(self) -> None:
        try:
            env = with_ssm(self._source)  # secrets named by `*_SSM` variables (deployed stack)
        except SecretsUnavailable as exc:
            self._failed(exc, retry_in=0.0)
            return
        except ConfigError as exc:
            self._failed(exc, retry_in=RECHECK_SECONDS)
            return
        try:
            settings = Settings.from_env(env)
        except ConfigError as exc:
            self._failed(exc, retry_in=None)
            return
        self.env, self._settings, self.config_error, self._retry_at = env, settings, None, None
        register_sensitive_env(env)
        register_sensitive(settings.openai_api_key, settings.openai_base_url, settings.qdrant_url,
                           settings.qdrant_api_key, settings.qdrant_path)

    def _failed(self, exc: Exception, retry_in: float | None) -> None:
        # the sites the app allows are known without SSM: CORS is set up once, at create_app
        self._settings = Settings(allowed_origins=origins_in(self._source or {}))
        self.config_error, self._error_type = str(exc), type(exc)
        self._retry_at = None if retry_in is None else self._clock() + retry_in

    def warm(self, routes: str = "chat", index: bool = True) -> None:
        """Build at init what the first request would: clients, the model side, the tokenizer.
        index=False leaves the index unopened (`textbook-chat serve`: a local index is opened
        on the first question, so `index` may still run beside it until then).

        On Lambda the handlers call this while the container starts, so a SnapStart snapshot
        holds it and, without SnapStart, the first reader's request does not pay for it (init
        runs at full CPU). Never calls a service; whatever fails here is built, and answered
        with its message, by the request that needs it.
        """
        if self.config_error:
            return
        names = ["rate_limiter", "spend_cap", "feedback", "chat_model"]
        if routes == "chat":
            names += ["embedder", "retriever"] if index else ["embedder"]
        for name in names:
            try:
                getattr(self, name)
            except Exception:  # noqa: BLE001 - the request reports it
                pass
        if routes == "chat":  # the words respelling reads (the tokenizer itself: selection only,
            common_words()  # for huge selections)
            load = getattr(self._built.get("embedder"), "load", None)
            if load:  # the local model (offline mode): weights in memory, first pass done
                try:
                    load().embed_batch(["warm"])
                except Exception:  # noqa: BLE001 - the request reports it
                    pass

    @property
    def settings(self) -> Settings:
        if self.config_error and self._retry_at is not None and self._clock() >= self._retry_at:
            with self._lock:  # one request reads again; the others wait for its result
                if self.config_error and self._retry_at is not None \
                        and self._clock() >= self._retry_at:
                    self._load()
        if self.config_error:
            raise self._error_type(self.config_error)
        return self._settings or Settings()

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return self._settings.allowed_origins if self._settings else ()

    def _get(self, name: str, build: Callable[[], object]):
        if self._given.get(name) is not None or name in self._given and name == "chat_model":
            return self._given[name]
        with self._lock:
            if name not in self._built:
                self._built[name] = build()
            return self._built[name]

    # --- model providers ---------------------------------------------------------------------
    def _openai_http(self):
        from functions.services.openai_http import OpenAIHttp

        s = self.settings
        return OpenAIHttp(s.openai_api_key or "", s.openai_base_url, timeout=s.openai_timeout,
                          connect_timeout=s.openai_connect_timeout,
                          max_retries=s.openai_max_retries)

    @property
    def chat_model(self):
        """OpenAIChat, or None for the offline extractive answerer."""
        def build():
            if self.settings.chat_provider != "openai":
                return None
            from functions.services.openai_http import OpenAIChat

            return OpenAIChat(self._openai_http(), model=self.settings.chat_model)
        return self._get("chat_model", build)

    @property
    def embedder(self):
        def build():
            s = self.settings
            if s.embedding_provider == "openai":  # httpx: the SDK would add ~1 s of cold start
                from functions.services.openai_http import OpenAIEmbedder

                return OpenAIEmbedder(self._openai_http(), s.embedding_model)
            try:
                from functions.search.embeddings.factory import make_embedder
            except ImportError:  # the factory is optional: the local model is the default
                from functions.search.embeddings.local import local_embedder

                return local_embedder(s.embedding_model)
            return make_embedder(s)
        return self._get("embedder", build)

    @property
    def search(self):
        def build():
            from functions.search.store import open_index

            store = open_index(self.settings, reader=True)
            atexit.register(store.close)  # local mode flushes and unlocks its folder
            return store
        return self._get("search", build)

    @property
    def retriever(self):
        def build():
            from functions.search.retrieval import Retriever

            return Retriever(self.search, self.embedder)
        return self._get("retriever", build)

    @property
    def paid(self) -> bool:
        s = self.settings
        return s.chat_provider == "openai" or s.embedding_provider == "openai"

    # --- limits and feedback -------------------------------------------------------------------
    def _limits(self):
        return make_limits(self.settings, self.env)

    @property
    def rate_limiter(self):
        return self._get("rate_limiter", lambda: self._get("limits", self._limits)[0])

    @property
    def spend_cap(self):
        return self._get("spend_cap", lambda: self._get("limits", self._limits)[1])

    @property
    def feedback(self):
        def build():
            return make_feedback_store(self.settings, self.env)
        return self._get("feedback", build)
