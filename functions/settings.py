"""Settings: one frozen object built from a mapping (os.environ in production, a dict in tests)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from functions.errors import ConfigError

DEFAULT_QDRANT_PATH = ".textbook-chat/qdrant"
DEFAULT_COLLECTION = "textbook"
LOCAL_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={raw!r} is not a yes/no value; use true or false.")


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a whole number.") from None


def _float(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number.") from None


def allowed_origins(env: Mapping[str, str]) -> tuple[str, ...]:
    """ALLOWED_ORIGINS as a tuple, each without a trailing slash."""
    return tuple(
        o.strip().rstrip("/") for o in env.get("ALLOWED_ORIGINS", "").split(",") if o.strip()
    )


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = _float(env, name, default)
    if value is None or not 0 < value <= 600:
        raise ConfigError(f"{name}={env.get(name)!r} is not a wait in seconds; use a number "
                          "above 0 and at most 600, e.g. 30 for a slow local model.")
    return value


def _count(env: Mapping[str, str], name: str, default: int, most: int) -> int:
    value = _int(env, name, default)
    if not 0 <= value <= most:
        raise ConfigError(f"{name}={env.get(name)!r} is out of range; use a whole number from 0 "
                          f"to {most} (0: never ask again).")
    return value


@dataclass(frozen=True)
class Settings:
    # vector store
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_path: str = DEFAULT_QDRANT_PATH
    collection: str = DEFAULT_COLLECTION
    # models
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    embedding_provider: str = "local"  # local | openai
    embedding_model: str = LOCAL_EMBEDDING_MODEL
    chat_provider: str = "extractive"  # extractive | openai
    chat_model: str = "gpt-4o-mini"
    # the query side's calls to the OpenAI-compatible API (functions.services.openai_http)
    openai_timeout: float = 12.0  # seconds to wait for a reply; a chat completion is sent once
    openai_connect_timeout: float = 3.0
    openai_max_retries: int = 2  # after 429/5xx and dropped connections
    low_confidence_threshold: float | None = None  # None: the calibrated default of the model
    # public endpoint safety
    allowed_origins: tuple[str, ...] = ()
    rate_limit_per_minute: int = 10
    rate_limit_per_day: int = 200
    # the widget's box searching as the reader types (no model; docs/http-api.md measures one)
    search_rate_limit_per_minute: int = 120
    search_rate_limit_per_day: int = 5000
    daily_token_budget: int = 2_000_000
    dynamodb_table: str | None = None
    max_selection_tokens: int = 2000

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        key = env.get("OPENAI_API_KEY") or None
        embedding_provider = env.get("EMBEDDING_PROVIDER") or ("openai" if key else "local")
        if embedding_provider not in ("local", "openai"):
            raise ConfigError(
                f"EMBEDDING_PROVIDER={embedding_provider!r} is not known; use local or openai."
            )
        if embedding_provider == "openai" and not key:
            raise ConfigError("EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY to be set.")
        default_model = (
            OPENAI_EMBEDDING_MODEL if embedding_provider == "openai" else LOCAL_EMBEDDING_MODEL
        )
        chat_provider = env.get("CHAT_PROVIDER") or ("openai" if key else "extractive")
        if chat_provider not in ("extractive", "openai"):
            raise ConfigError(
                f"CHAT_PROVIDER={chat_provider!r} is not known; use extractive or openai."
            )
        if chat_provider == "openai" and not key:
            raise ConfigError("CHAT_PROVIDER=openai needs OPENAI_API_KEY to be set.")
        origins = allowed_origins(env)
        return cls(
            qdrant_url=env.get("QDRANT_URL") or None,
            qdrant_api_key=env.get("QDRANT_API_KEY") or None,
            qdrant_path=env.get("QDRANT_PATH") or DEFAULT_QDRANT_PATH,
            collection=env.get("QDRANT_COLLECTION") or DEFAULT_COLLECTION,
            openai_api_key=key,
            openai_base_url=env.get("OPENAI_BASE_URL") or None,
            embedding_provider=embedding_provider,
            embedding_model=env.get("EMBEDDING_MODEL") or default_model,
            chat_provider=chat_provider,
            chat_model=env.get("CHAT_MODEL") or "gpt-4o-mini",
            openai_timeout=_seconds(env, "OPENAI_TIMEOUT", 12.0),
            openai_connect_timeout=_seconds(env, "OPENAI_CONNECT_TIMEOUT", 3.0),
            openai_max_retries=_count(env, "OPENAI_MAX_RETRIES", 2, most=10),
            low_confidence_threshold=_float(env, "LOW_CONFIDENCE_THRESHOLD", None),
            allowed_origins=origins,
            rate_limit_per_minute=_int(env, "RATE_LIMIT_PER_MINUTE", 10),
            rate_limit_per_day=_int(env, "RATE_LIMIT_PER_DAY", 200),
            search_rate_limit_per_minute=_int(env, "SEARCH_RATE_LIMIT_PER_MINUTE", 120),
            search_rate_limit_per_day=_int(env, "SEARCH_RATE_LIMIT_PER_DAY", 5000),
            daily_token_budget=_int(env, "DAILY_TOKEN_BUDGET", 2_000_000),
            dynamodb_table=env.get("DYNAMODB_TABLE") or None,
            max_selection_tokens=_int(env, "MAX_SELECTION_TOKENS", 2000),
        )

    def with_(self, **changes) -> Settings:
        return replace(self, **changes)


__all__ = ["Settings", "_bool"]
