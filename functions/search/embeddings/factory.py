"""Build the configured Embedder once; imports only the selected provider's code."""

from __future__ import annotations

from functions.errors import ConfigError
from functions.search.embeddings import Embedder
from functions.settings import OPENAI_EMBEDDING_MODEL, Settings


def make_embedder(settings: Settings, dimension: int | None = None) -> Embedder:
    """The local model(s) EMBEDDING_MODEL names or the OpenAI embedder (with the indexer's retry
    budget), per settings.embedding_provider."""
    if settings.embedding_provider == "local":
        from functions.search.embeddings.local import local_embedder

        return local_embedder(settings.embedding_model)
    if settings.embedding_provider == "openai":
        from functions.services.openai_http import (
            INDEX_BUDGET,
            KNOWN_DIMENSIONS,
            OpenAIEmbedder,
            OpenAIHttp,
        )

        if not settings.openai_api_key:
            raise ConfigError("EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY to be set.")
        model = settings.embedding_model or OPENAI_EMBEDDING_MODEL
        size = dimension or KNOWN_DIMENSIONS.get(model)
        if size is None:
            raise ConfigError(
                f"The size of {model!r}'s vectors is not known; use one of "
                f"{', '.join(KNOWN_DIMENSIONS)} or pass its dimension."
            )
        # the query side's is built in functions.api.deps with the request's budget
        http = OpenAIHttp(settings.openai_api_key, settings.openai_base_url, **INDEX_BUDGET)
        return OpenAIEmbedder(http, model, dimension=size)
    raise ConfigError(
        f"EMBEDDING_PROVIDER={settings.embedding_provider!r} is not known; use local or openai."
    )
