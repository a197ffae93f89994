"""How the runtime reaches a Qdrant index, stated once: each caller's timeout and retries
against a Qdrant server, and the messages a failure shows, whichever engine met it.

Both callers reach a server (QDRANT_URL) through the one REST client,
functions.search.qdrant_http: the query path (`POST /chat` on Lambda, QUERY) and the index side
(sync, release, eval: functions.search.store's QdrantStore, INDEX). The embedded engine
(functions.search.edge_store) reaches no server but shares the collection messages.
functions.search.store.open_index chooses the engine and the policy. No message names the
server's URL or key: a library's own text goes to `detail`, which only the operator's log shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from functions.errors import ModelMismatchError, StoreUnavailableError
from functions.search.contract import META_DIMENSION, META_MODEL


@dataclass(frozen=True)
class Policy:
    """How long one request may take and how often a failed one is tried again."""

    timeout: float  # seconds per request
    connect: float  # seconds to connect
    retries: int  # further attempts after a connection error or a RETRY_STATUSES reply
    backoff: float = 0.1  # seconds before the first retry, doubled for each next one
    # whether a connection that could not be made (refused: nothing listens there; no such
    # host) is tried again, or reported at once
    retry_refused: bool = True

    def pause(self, attempt: int) -> float:
        return self.backoff * 2**attempt


# A reader waits for the query: short timeouts, two quick retries within the request deadline.
QUERY = Policy(timeout=5.0, connect=3.0, retries=2)
# A sync or release can wait for a busy server: long timeouts (a batch of 256 points with their
# vectors is several MB), three retries over 3.5 s for a busy reply (429, 5xx), a timeout or a
# dropped connection. Every write it retries is idempotent (points by id, metadata, an index). A
# server that is not there is said at once: the author fixes QDRANT_URL and runs it again (it
# re-embeds nothing it stored).
INDEX = Policy(timeout=30.0, connect=10.0, retries=3, backoff=0.5, retry_refused=False)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def unreachable(exc: Exception) -> StoreUnavailableError:
    """The server did not answer (the URL may carry credentials: it goes to the log only)."""
    return StoreUnavailableError("Qdrant cannot be reached: check QDRANT_URL, QDRANT_API_KEY and "
                                 "that the cluster is running.",
                                 detail=f"{type(exc).__name__}: {exc}")


def key_refused() -> StoreUnavailableError:
    return StoreUnavailableError("Qdrant refused the API key: check QDRANT_API_KEY for this cluster.")


def server_failed(status: int, detail: str) -> StoreUnavailableError:
    """Any other error reply (the server's own text goes to the log only)."""
    if status >= 500:
        return StoreUnavailableError(f"Qdrant failed (HTTP {status}): the cluster may be busy "
                                     "or restarting; try again in a minute.", detail=detail)
    return StoreUnavailableError(f"Qdrant refused the request (HTTP {status}): check that the "
                                 "cluster behind QDRANT_URL runs a current Qdrant version.",
                                 detail=detail)


def not_qdrant(detail: str) -> StoreUnavailableError:
    """A reply that is not Qdrant's JSON (a proxy's error page, a login wall)."""
    return StoreUnavailableError("Qdrant sent a reply that is not its JSON: check that QDRANT_URL "
                                 "is the Qdrant server's address.", detail=detail)


def out_of_time() -> StoreUnavailableError:
    return StoreUnavailableError("Qdrant did not answer in the request's time: check that the "
                                 "cluster behind QDRANT_URL is running.")


def collection_missing(name: str) -> StoreUnavailableError:
    return StoreUnavailableError(
        f"The collection {name!r} does not exist yet: run `textbook-chat index DOCS_DIR` first.")


def unusable_path(path: Path, exc: OSError) -> StoreUnavailableError:
    """QDRANT_PATH cannot hold the local index: say why and what to do (the CLI exits 2)."""
    if isinstance(exc, NotADirectoryError | FileExistsError):
        why = "a file is in the way where the folder should be"
    elif isinstance(exc, PermissionError) or exc.errno == 30:  # 30: read-only file system
        why = "the folder is read-only for this user"
    else:
        why = exc.strerror or type(exc).__name__
    return StoreUnavailableError(
        f"QDRANT_PATH={path} cannot hold the local index: {why}. Set QDRANT_PATH to a folder "
        "this user can write (the default is .textbook-chat/qdrant), or fix its permissions.",
        detail=str(exc))


def same_model(collection: str, meta: dict, model: str, dimension: int, recreate: bool) -> bool:
    """Whether the collection was built with this model; another one is refused (the indexer
    exits 2) unless the run rebuilds it (recreate)."""
    if meta.get(META_MODEL) == model and int(meta.get(META_DIMENSION, 0)) == dimension:
        return True
    if not recreate:
        raise ModelMismatchError(
            f"The collection {collection!r} was built with {meta.get(META_MODEL)!r} "
            f"({meta.get(META_DIMENSION)} dimensions), but this run uses {model!r} ({dimension}). "
            "Vectors of different models cannot be mixed: rerun with --recreate to rebuild the "
            "index with the new model, or set EMBEDDING_PROVIDER/EMBEDDING_MODEL back.")
    return False
