"""Secrets read once at init from SSM Parameter Store, so no key sits in the function's settings.

The deployed function's environment holds parameter *names*: `OPENAI_API_KEY_SSM=/textbook-chat/
prod/OPENAI_API_KEY` means "OPENAI_API_KEY is the decrypted value of that SecureString". One
GetParameters call (SigV4 over httpx, as functions/services/dynamo.py does; no boto3) fetches them all
when the container starts; the values then live only in memory. Unset or empty `*_SSM`
variables are not read; a variable already set directly (tests, `serve`) wins.

Throttling (HTTP 400 `ThrottlingException`, which a burst of cold starts meets), 5xx and
dropped connections are retried with backoff within INIT_SECONDS; what still fails is
SecretsUnavailable, and functions.api.deps reads again on the next request, so a container recovers
by itself. A refusal (no such parameter, no permission) is a ConfigError naming the fix.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from functions.deadline import time_left
from functions.errors import ConfigError, SecretsUnavailable

SUFFIX = "_SSM"
NAMES = ("OPENAI_API_KEY", "QDRANT_API_KEY", "QDRANT_URL")  # what may come from SSM
TARGET = "AmazonSSM.GetParameters"
INIT_SECONDS = 6.0  # all tries together: Lambda's init phase has 10 s
# AWS's throttling and server-side error types (SSM answers throttling with HTTP 400)
RETRYABLE = {"ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded",
             "InternalServerError", "InternalFailure", "ServiceUnavailable"}


def ssm_names(env: Mapping[str, str]) -> dict[str, str]:
    """{setting: parameter name} for every `<setting>_SSM` to read (the setting itself unset)."""
    return {name: env[name + SUFFIX].strip() for name in NAMES
            if (env.get(name + SUFFIX) or "").strip() and not env.get(name)}


def with_ssm(env: Mapping[str, str], *, attempts: int = 4, timeout: float = 3.0,
             seconds: float = INIT_SECONDS) -> Mapping[str, str]:
    """`env` plus the decrypted values of its `*_SSM` parameters (env itself when there are none).

    Raises ConfigError naming the variable and the fix, SecretsUnavailable when SSM stays
    throttled or out of reach; never shows a value. All tries fit in `seconds`, or in what is
    left of the request's deadline when a request reads again.
    """
    wanted = ssm_names(env)
    if not wanted:
        return env
    import httpx

    from functions.services.dynamo import CredentialSource, sign
    from functions.services.httpclient import make_client

    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if not region:
        raise ConfigError(f"{', '.join(n + SUFFIX for n in wanted)} set but no AWS region is: "
                          "set AWS_REGION (Lambda sets it for you).")
    endpoint = (env.get("AWS_ENDPOINT_URL_SSM") or env.get("AWS_ENDPOINT_URL")
                or f"https://ssm.{region}.amazonaws.com").rstrip("/")
    body = json.dumps({"Names": sorted(set(wanted.values())), "WithDecryption": True}).encode()
    headers = {"content-type": "application/x-amz-json-1.1", "x-amz-target": TARGET}
    what = ", ".join(sorted(wanted))
    start, budget = time.monotonic(), time_left(seconds)
    failure = "no reply"
    with make_client(endpoint, timeout=httpx.Timeout(timeout, connect=2.0)) as http:
        for attempt in range(attempts):
            left = budget - (time.monotonic() - start)
            if left < 0.1:
                break
            try:
                creds = CredentialSource(env, http).get()
            except ConfigError:
                raise ConfigError("No AWS credentials to read the secrets from SSM Parameter "
                                  "Store (the function's role provides them on Lambda).") from None
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                failure, r = f"no credentials ({type(exc).__name__})", None
            else:
                amz_date = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                signed = sign("POST", endpoint + "/", headers, body, creds, region, "ssm", amz_date)
                try:
                    r = http.post(endpoint + "/", content=body, headers=signed,
                                  timeout=httpx.Timeout(min(timeout, left), connect=min(2.0, left)))
                except httpx.HTTPError as exc:
                    failure, r = type(exc).__name__, None
            if r is not None:
                if r.status_code == 200:
                    return _merge(env, wanted, r.json())
                code = _code(r)
                if r.status_code < 500 and r.status_code != 429 and code not in RETRYABLE:
                    raise _refused(code or f"HTTP {r.status_code}", what)
                failure = code or f"HTTP {r.status_code}"
            pause = 0.1 * 2**attempt * (1 + random.random())
            if attempt == attempts - 1 or budget - (time.monotonic() - start) < pause + 0.1:
                break
            time.sleep(pause)
    raise SecretsUnavailable(f"SSM Parameter Store did not give {what} ({failure}, "
                             f"{attempt + 1} tries); the next request asks again.")


def _code(r) -> str:
    try:
        return str(r.json().get("__type", "")).rsplit("#", 1)[-1]
    except (ValueError, AttributeError):
        return ""


def _merge(env: Mapping[str, str], wanted: dict[str, str], data: dict) -> dict[str, str]:
    values = {p.get("Name"): p.get("Value") for p in data.get("Parameters") or []}
    missing = [name for name, param in wanted.items() if values.get(param) is None]
    if missing:
        raise ConfigError(
            f"SSM has no parameter named by {', '.join(n + SUFFIX for n in sorted(missing))}: "
            "create it (`aws ssm put-parameter --type SecureString`, docs/deploying.md step 1) in this "
            "stage's region, or deploy with that parameter's name fixed.")
    merged = dict(env)
    merged.update({name: values[param] for name, param in wanted.items()})
    return merged


def _refused(code: str, what: str) -> ConfigError:
    if "KMS" in code:
        return ConfigError(f"SSM could not decrypt {what} ({code}): allow kms:Decrypt on the "
                           "parameters' KMS key for the function's role.")
    if code in ("AccessDeniedException", "AccessDenied", "UnrecognizedClientException",
                "InvalidSignatureException", "ExpiredTokenException"):
        return ConfigError(f"SSM refused to give {what} ({code}): the function's role needs "
                           "ssm:GetParameters on those parameters (serverless.yml grants it) "
                           "and, for a customer-managed KMS key, kms:Decrypt.")
    return ConfigError(f"SSM refused to give {what} ({code}).")
