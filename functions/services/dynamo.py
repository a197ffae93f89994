"""A tiny DynamoDB client over httpx (SigV4, retries, typed errors): boto3 costs ~0.45 s of cold start.

Why not boto3: `import boto3` + `boto3.client("dynamodb")` measured 430-600 ms here, more than
the whole selection budget; httpx is already imported by the app, and the rate limiter needs
only UpdateItem/PutItem. Credentials: environment (plain Lambda), the container endpoint
(Lambda SnapStart, ECS), else botocore's own chain, imported only then (a laptop profile).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from functions.deadline import time_left
from functions.errors import Busy, ConfigError, ServiceUnavailableError

TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"
MIN_CALL_SECONDS = 0.05  # a try with less time left than this is not started
_RETRYABLE = {"ThrottlingException", "ProvisionedThroughputExceededException",
              "RequestLimitExceeded", "InternalServerError", "ServiceUnavailable"}


class DynamoError(ServiceUnavailableError):
    """DynamoDB refused or could not be reached; `code` is its error type (e.g. ResourceNotFound)
    and `service` what the call was for (limits, feedback: each has its own HTTP error)."""

    def __init__(self, message: str, code: str = "", *, service: str = "dynamodb",
                 detail: str | None = None):
        super().__init__(message, service, detail=detail)
        self.code = code


class ConditionFailed(DynamoError):
    """A ConditionExpression was false: for counters, the limit is reached."""


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str = ""
    token: str | None = None
    expires_at: float | None = None  # epoch seconds; None = never


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes, creds: Credentials,
         region: str, service: str, amz_date: str) -> dict[str, str]:
    """SigV4: the headers to send (given ones + x-amz-date, token, authorization)."""
    parts = urlsplit(url)
    out = {k.lower(): v for k, v in headers.items()}
    out["host"] = parts.netloc
    out["x-amz-date"] = amz_date
    if creds.token:
        out["x-amz-security-token"] = creds.token
    names = sorted(out)
    canonical = "\n".join([
        method, parts.path or "/", parts.query,
        "".join(f"{n}:{' '.join(out[n].split())}\n" for n in names),
        ";".join(names), hashlib.sha256(body).hexdigest(),
    ])
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + creds.secret_key).encode()
    for part in (amz_date[:8], region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out["authorization"] = (f"AWS4-HMAC-SHA256 Credential={creds.access_key}/{scope}, "
                            f"SignedHeaders={';'.join(names)}, Signature={signature}")
    return out


class CredentialSource:
    """Environment keys, else the container credentials endpoint, else botocore; cached."""

    def __init__(self, env: Mapping[str, str], http):
        self.env, self.http = env, http
        self._cached: Credentials | None = None
        self._lock = threading.Lock()

    def get(self) -> Credentials:
        with self._lock:
            c = self._cached
            if c is None or (c.expires_at is not None and c.expires_at - time.time() < 300):
                self._cached = c = self._resolve()
            return c

    def _resolve(self) -> Credentials:
        env = self.env
        if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
            return Credentials(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"],
                               env.get("AWS_SESSION_TOKEN") or None)
        uri = env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        if not uri and env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
            uri = "http://169.254.170.2" + env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"]
        if uri:
            token = env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN")
            if not token and env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"):
                with open(env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"]) as f:
                    token = f.read().strip()
            r = self.http.get(uri, headers={"Authorization": token} if token else {}, timeout=2)
            r.raise_for_status()
            d = r.json()
            exp = datetime.fromisoformat(d["Expiration"].replace("Z", "+00:00")).timestamp()
            return Credentials(d["AccessKeyId"], d["SecretAccessKey"], d.get("Token"), exp)
        import botocore.session  # only off Lambda: profiles, SSO

        found = botocore.session.get_session().get_credentials()
        if found is None:
            raise ConfigError("No AWS credentials found for DynamoDB: set AWS_PROFILE or "
                              "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or unset DYNAMODB_TABLE "
                              "to keep limits and feedback on this machine.")
        f = found.get_frozen_credentials()
        return Credentials(f.access_key, f.secret_key, f.token, time.time() + 900)


class DynamoClient:
    """`call(op, payload)` for the DynamoDB JSON API; one per container, thread-safe."""

    def __init__(self, region: str, endpoint: str | None = None, env: Mapping[str, str] | None = None,
                 attempts: int = 3, timeout: float = 3.0):
        import httpx

        from functions.services.httpclient import make_client  # one TLS context per container

        self.region = region
        self.endpoint = endpoint or f"https://dynamodb.{region}.amazonaws.com"
        self.attempts = attempts
        self.timeout = timeout
        self.http = make_client(self.endpoint, timeout=httpx.Timeout(timeout, connect=2.0))
        self.credentials = CredentialSource(os.environ if env is None else env, self.http)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DynamoClient:
        env = os.environ if env is None else env
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if not region:
            raise ConfigError("DYNAMODB_TABLE is set but no AWS region is: set AWS_REGION "
                              "(Lambda sets it for you).")
        endpoint = env.get("AWS_ENDPOINT_URL_DYNAMODB") or env.get("AWS_ENDPOINT_URL")
        return cls(region, endpoint, env)

    def call(self, op: str, payload: dict, use: str = "dynamodb") -> dict:
        """The operation's reply. Throttling and 5xx are retried with backoff, within what is
        left of the request's deadline (functions.deadline); a failure is a DynamoError for
        `use` (limits, feedback), a deadline already past before the first try is Busy."""
        import httpx

        body = json.dumps(payload).encode()
        headers = {"content-type": CONTENT_TYPE, "x-amz-target": TARGET_PREFIX + op}
        start, budget = time.monotonic(), time_left(float("inf"))
        for attempt in range(self.attempts):
            left = budget - (time.monotonic() - start)
            if left < MIN_CALL_SECONDS:
                if attempt == 0:
                    raise Busy()
                raise DynamoError(f"DynamoDB did not answer {op} in the request's time.",
                                  "Deadline", service=use)
            last = attempt == self.attempts - 1
            try:
                creds = self.credentials.get()
                amz_date = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                signed = sign("POST", self.endpoint + "/", headers, body, creds, self.region,
                              "dynamodb", amz_date)
                r = self.http.post(self.endpoint + "/", content=body, headers=signed,
                                   timeout=httpx.Timeout(min(self.timeout, left),
                                                         connect=min(2.0, left)))
            except httpx.HTTPError as exc:
                if last:
                    raise DynamoError("DynamoDB cannot be reached; check AWS_REGION and "
                                      "AWS_ENDPOINT_URL_DYNAMODB.", "Unreachable", service=use,
                                      detail=f"{self.endpoint}: {exc}") from None
            else:
                if r.status_code == 200:
                    return r.json()
                data = _json(r)
                code = str(data.get("__type", "")).rsplit("#", 1)[-1] or f"HTTP{r.status_code}"
                message = data.get("message") or data.get("Message") or r.text[:200]
                if code == "ConditionalCheckFailedException":
                    raise ConditionFailed(message, code, service=use)
                if last or not (code in _RETRYABLE or r.status_code >= 500):
                    raise _error(code, message, payload.get("TableName", ""), self.region, use)
            pause = 0.05 * 2**attempt * (1 + random.random())
            if budget - (time.monotonic() - start) - pause < MIN_CALL_SECONDS:
                raise DynamoError(f"DynamoDB failed {op} and the request had no time to try "
                                  "again.", "Deadline", service=use)
            time.sleep(pause)
        raise AssertionError("unreachable")


def _json(r) -> dict:
    try:
        data = r.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _error(code: str, message: str, table: str, region: str, use: str) -> DynamoError:
    """The error for the author's terminal and the operator's log (a reader never sees it)."""
    if code == "ResourceNotFoundException":
        return DynamoError(f"The DynamoDB table {table!r} does not exist in {region}: deploy the "
                           "stack (`serverless deploy`) or fix DYNAMODB_TABLE/AWS_REGION.", code,
                           service=use)
    if code in ("AccessDeniedException", "UnrecognizedClientException",
                "InvalidSignatureException", "ExpiredTokenException"):
        return DynamoError(f"DynamoDB refused the credentials ({code}): check the function's "
                           f"IAM role allows this table {table!r}.", code, service=use,
                           detail=message)
    return DynamoError(f"DynamoDB failed ({code}).", code, service=use, detail=message)


_shared_lock = threading.Lock()
_shared: dict[str, DynamoClient] = {}


def shared_client(env: Mapping[str, str] | None = None) -> DynamoClient:
    """The container's one client (keep-alive connection reused across invocations)."""
    env = os.environ if env is None else env
    key = f"{env.get('AWS_REGION')}|{env.get('AWS_ENDPOINT_URL_DYNAMODB') or env.get('AWS_ENDPOINT_URL')}"
    with _shared_lock:
        if key not in _shared:
            _shared[key] = DynamoClient.from_env(env)
        return _shared[key]
