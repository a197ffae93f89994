"""The one client of a Qdrant server (QDRANT_URL): Qdrant's REST API over httpx, for the query
path on Lambda and for the index side (sync, release), each with its policy of
functions.search.qdrant_access (qdrant_client would cost ~1.2 s of cold start).

`call` is every request: the caller's timeouts and retries within what is left of the request's
deadline, and a failure as one of qdrant_access's messages. The query path's reads are here
(collection_meta, index_status, search); the index side's writes are functions.search.store's
QdrantStore, over the same client. The embedded default is functions.search.edge_store. The
request is functions.search.query's and the ranking of its points functions.search.ranking's,
the same for every engine.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from urllib.parse import quote

import httpx

from functions.deadline import time_left
from functions.errors import Busy
from functions.search.contract import DENSE_VECTOR, SPARSE_VECTOR
from functions.search.qdrant_access import (
    QUERY,
    RETRY_STATUSES,
    Policy,
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
    """One collection of a Qdrant server or Qdrant Cloud cluster, reached with `policy`
    (`timeout` and `retries`, when given, override its own)."""

    def __init__(self, url: str, collection: str, api_key: str | None = None, *,
                 policy: Policy = QUERY, timeout: float | None = None,
                 retries: int | None = None, transport: httpx.BaseTransport | None = None,
                 client: httpx.Client | None = None):
        self.url = url.rstrip("/")
        self.collection = collection
        if timeout is not None:
            policy = replace(policy, timeout=timeout, connect=min(timeout, policy.connect))
        if retries is not None:
            policy = replace(policy, retries=retries)
        self.policy = policy
        self.owner = client is None
        headers = {"api-key": api_key} if api_key else {}
        self.client = client or make_client(
            self.url, headers=headers, transport=transport,
            timeout=httpx.Timeout(policy.timeout, connect=policy.connect))

    def for_collection(self, name: str) -> QdrantHttp:
        """Another collection of the same server, through the same connection and policy."""
        return QdrantHttp(self.url, name, policy=self.policy, client=self.client)

    def close(self) -> None:
        if self.owner:
            self.client.close()

    # --- every request ----------------------------------------------------------------------
    def call(self, method: str, path: str = "", body: dict | None = None, *,
             params: dict | None = None, server: bool = False):
        """The `result` of one request to the collection (`path` after /collections/<name>), or
        to the server itself when `server` (`path` from the root). A 404 is the collection
        missing; every other failure one of qdrant_access's messages."""
        where = path if server else f"/collections/{quote(self.collection, safe='')}{path}"
        response = self._request(method, where, body, params)
        if response.status_code == 404:
            raise collection_missing(self.collection)
        self._check(response)
        return self._json(response).get("result")

    def _request(self, method: str, path: str, body: dict | None,
                 params: dict | None = None) -> httpx.Response:
        """The response, retried on 429/5xx and dropped connections as the policy says, within
        what is left of the request's deadline (functions.deadline)."""
        policy = self.policy
        start, budget = time.monotonic(), time_left(float("inf"))
        for attempt in range(policy.retries + 1):
            left = budget - (time.monotonic() - start)
            if left < 0.05:
                if attempt == 0:
                    raise Busy()
                break
            last = attempt == policy.retries
            try:
                response = self.client.request(
                    method, self.url + path, json=body, params=params,
                    timeout=httpx.Timeout(min(policy.timeout, left),
                                          connect=min(policy.connect, left)))
            except httpx.HTTPError as exc:
                if last or (isinstance(exc, httpx.ConnectError) and not policy.retry_refused):
                    raise unreachable(exc) from None
            else:
                if response.status_code not in RETRY_STATUSES or last:
                    return response
            pause = policy.pause(attempt)
            if pause + 0.05 > budget - (time.monotonic() - start):
                break  # the pause would outlast the request's deadline: say so now
            time.sleep(pause)
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

    @staticmethod
    def _check(response: httpx.Response) -> None:
        if response.status_code < 300:
            return
        if response.status_code in (401, 403):
            raise key_refused()
        try:
            detail = response.json().get("status", {}).get("error") or response.text[:200]
        except (ValueError, AttributeError):
            detail = response.text[:200]
        raise server_failed(response.status_code, detail)

    # --- the query path's reads -------------------------------------------------------------
    def collection_meta(self) -> dict:
        return dict((self._info().get("config") or {}).get("metadata") or {})

    def index_status(self) -> dict:
        """The collection's metadata plus its point count (GET /health)."""
        info = self._info()
        return {**dict((info.get("config") or {}).get("metadata") or {}),
                "points": int(info.get("points_count") or 0)}

    def _info(self) -> dict:
        return self.call("GET") or {}

    def search(self, dense: Sequence[float], sparse: SparseVec, limit: int,
               filters: dict[str, str] | None = None, mode: str = "hybrid") -> list[SearchHit]:
        result = self.call("POST", "/points/query", query_body(dense, sparse, limit, filters, mode))
        return rank(dense, sparse, mode, (
            (p["id"], p.get("score") or 0.0, (p.get("vector") or {}).get(DENSE_VECTOR),
             ((p.get("vector") or {}).get(SPARSE_VECTOR) or {}).get("indices") or (),
             dict(p.get("payload") or {}))
            for p in (result or {}).get("points") or []), limit)
