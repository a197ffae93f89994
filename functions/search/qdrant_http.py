"""A SearchBackend over Qdrant's REST API with httpx (qdrant_client costs ~1.2 s of cold start).

Server mode only (QDRANT_URL); the embedded default is functions.search.edge_store. The request is
functions.search.query's and the ranking of its points functions.search.ranking's, the same for every engine.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from urllib.parse import quote

import httpx

from functions.deadline import time_left
from functions.errors import Busy
from functions.search.contract import DENSE_VECTOR, SPARSE_VECTOR
from functions.search.qdrant_access import (
    QUERY,
    RETRY_STATUSES,
    collection_missing,
    key_refused,
    not_qdrant,
    out_of_time,
    server_failed,
    unreachable,
)
from functions.search.query import query_body
from functions.search.ranking import rank
from functions.search.types import SearchHit, SparseVec
from functions.services.httpclient import make_client


class QdrantHttp:
    """collection_meta() and search() against a Qdrant server or Qdrant Cloud."""

    def __init__(self, url: str, collection: str, api_key: str | None = None, *,
                 timeout: float = QUERY.timeout, retries: int = QUERY.retries,
                 transport: httpx.BaseTransport | None = None):
        self.url = url.rstrip("/")
        self.collection = collection
        self.retries = retries
        self.timeout = timeout
        headers = {"api-key": api_key} if api_key else {}
        self.client = make_client(self.url, headers=headers, transport=transport,
                                   timeout=httpx.Timeout(timeout, connect=min(timeout, QUERY.connect)))

    def _request(self, method: str, path: str, body: dict | None = None) -> httpx.Response:
        """The response, retried on 429/5xx and dropped connections within what is left of the
        request's deadline (functions.deadline)."""
        start, budget = time.monotonic(), time_left(float("inf"))
        for attempt in range(self.retries + 1):
            left = budget - (time.monotonic() - start)
            if left < 0.05:
                if attempt == 0:
                    raise Busy()
                break
            last = attempt == self.retries
            try:
                response = self.client.request(
                    method, self.url + path, json=body,
                    timeout=httpx.Timeout(min(self.timeout, left), connect=min(QUERY.connect, left)))
            except httpx.HTTPError as exc:
                if last:
                    raise unreachable(exc) from None
            else:
                if response.status_code not in RETRY_STATUSES or last:
                    return response
            time.sleep(QUERY.pause(attempt))
        raise out_of_time()

    @staticmethod
    def _json(response: httpx.Response) -> dict:
        try:
            data = response.json()
        except ValueError:  # a proxy's error page, a login wall: not Qdrant
            raise not_qdrant(response.text[:200]) from None
        if not isinstance(data, dict):
            raise not_qdrant(response.text[:200])
        return data

    def collection_meta(self) -> dict:
        return self._collection()[0]

    def index_status(self) -> dict:
        """The collection's metadata plus its point count (GET /health)."""
        meta, result = self._collection()
        return {**meta, "points": int(result.get("points_count") or 0)}

    def _collection(self) -> tuple[dict, dict]:
        response = self._request("GET", f"/collections/{quote(self.collection, safe='')}")
        if response.status_code == 404:
            raise collection_missing(self.collection)
        self._check(response)
        result = self._json(response).get("result") or {}
        return dict((result.get("config") or {}).get("metadata") or {}), result

    def search(self, dense: Sequence[float], sparse: SparseVec, limit: int,
               filters: dict[str, str] | None = None, mode: str = "hybrid") -> list[SearchHit]:
        body = query_body(dense, sparse, limit, filters, mode)
        response = self._request(
            "POST", f"/collections/{quote(self.collection, safe='')}/points/query", body)
        self._check(response)
        points = (self._json(response).get("result") or {}).get("points") or []
        return rank(dense, sparse, mode, (
            (p["id"], p.get("score") or 0.0, (p.get("vector") or {}).get(DENSE_VECTOR),
             ((p.get("vector") or {}).get(SPARSE_VECTOR) or {}).get("indices") or (),
             dict(p.get("payload") or {}))
            for p in points))

    def _check(self, response: httpx.Response) -> None:
        if response.status_code < 300:
            return
        if response.status_code in (401, 403):
            raise key_refused()
        try:
            detail = response.json().get("status", {}).get("error") or response.text[:200]
        except (ValueError, AttributeError):
            detail = response.text[:200]
        raise server_failed(response.status_code, detail)

    def close(self) -> None:
        self.client.close()
