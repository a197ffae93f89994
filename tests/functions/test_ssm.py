"""Secrets read at init from SSM Parameter Store (moto's server over real HTTP, SigV4 signed)."""

from __future__ import annotations

import json
import time

import boto3
import pytest

from functions.api.deps import Deps
from functions.errors import ConfigError, SecretsUnavailable
from functions.services.ssm import ssm_names, with_ssm
from tests.ports import free_port

moto_server = pytest.importorskip("moto.server")

KEY = "sk-test-from-ssm-0123456789"


@pytest.fixture(scope="module")
def ssm_endpoint():
    port = free_port(18700, 18719)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("ssm", region_name="us-east-1", endpoint_url=endpoint,
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    client.put_parameter(Name="/textbook-chat/prod/OPENAI_API_KEY", Value=KEY, Type="SecureString")
    client.put_parameter(Name="/textbook-chat/prod/QDRANT_API_KEY", Value="qdrant-secret-42",
                         Type="SecureString")
    yield endpoint
    server.stop()


def _env(endpoint: str, **more) -> dict[str, str]:
    return {"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_SSM": endpoint,
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", **more}


def test_secrets_are_read_once_and_decrypted(ssm_endpoint):
    env = _env(ssm_endpoint, OPENAI_API_KEY_SSM="/textbook-chat/prod/OPENAI_API_KEY",
               QDRANT_API_KEY_SSM="/textbook-chat/prod/QDRANT_API_KEY", QDRANT_URL="https://q")
    got = with_ssm(env)
    assert got["OPENAI_API_KEY"] == KEY and got["QDRANT_API_KEY"] == "qdrant-secret-42"
    settings = Deps.from_env(env).settings
    assert settings.openai_api_key == KEY and settings.chat_provider == "openai"


def test_nothing_to_read_makes_no_call():
    env = {"OPENAI_API_KEY_SSM": "", "QDRANT_URL": "https://q"}
    assert with_ssm(env) is env  # no region, no endpoint: would fail if it tried
    # a value given directly (serve, tests) wins over its parameter name
    assert ssm_names({"OPENAI_API_KEY": "sk-direct", "OPENAI_API_KEY_SSM": "/x"}) == {}


def test_a_missing_parameter_names_the_variable_and_the_fix(ssm_endpoint):
    env = _env(ssm_endpoint, OPENAI_API_KEY_SSM="/textbook-chat/prod/OPENAI_API_KEY",
               QDRANT_API_KEY_SSM="/textbook-chat/other/QDRANT_API_KEY")
    with pytest.raises(ConfigError) as e:
        with_ssm(env)
    assert "QDRANT_API_KEY_SSM" in str(e.value) and "put-parameter" in str(e.value)
    assert "OPENAI_API_KEY_SSM" not in str(e.value)


def test_unreachable_ssm_is_a_config_error_without_urls_or_values():
    port = free_port(18720, 18729)  # nothing listens there
    env = _env(f"http://127.0.0.1:{port}", OPENAI_API_KEY_SSM="/textbook-chat/prod/OPENAI_API_KEY")
    with pytest.raises(SecretsUnavailable) as e:  # short-lived: asked again, not misconfigured
        with_ssm(env, attempts=2, timeout=0.5)
    assert "did not give OPENAI_API_KEY" in str(e.value) and "127.0.0.1" not in str(e.value)


def test_the_handler_answers_503_naming_the_setting_when_a_secret_is_missing(ssm_endpoint):
    from starlette.testclient import TestClient

    from functions.api.app import create_app

    env = _env(ssm_endpoint, OPENAI_API_KEY_SSM="/textbook-chat/prod/NOPE",
               QDRANT_URL="https://qdrant.invalid")
    client = TestClient(create_app(Deps.from_env(env), "chat"))
    r = client.get("/health")
    assert r.status_code == 503
    body = json.dumps(r.json())
    assert "OPENAI_API_KEY_SSM" in body and KEY not in body and ssm_endpoint not in body


# --- throttling and recovery: moto's SSM behind faults (tests/fakes/aws.py) -------------------
@pytest.fixture
def aws():
    from tests.fakes.aws import MotoServer

    with MotoServer(region="us-east-1") as server:
        ssm = server.client("ssm")
        for name, value in (("OPENAI_API_KEY", KEY), ("QDRANT_API_KEY", "qdrant-secret-42")):
            ssm.put_parameter(Name=f"/textbook-chat/prod/{name}", Value=value,
                              Type="SecureString", Overwrite=True)
        server.calls.clear()
        yield server


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_throttled_and_failing_calls_are_retried_with_backoff(aws):
    """GetParameters throttling comes back as HTTP 400 ThrottlingException: retried, as a 5xx is."""
    aws.fail_next(times=2, target="AmazonSSM.")
    aws.fail_next(error="InternalServerError", status=500, target="AmazonSSM.")
    env = _env(aws.endpoint, OPENAI_API_KEY_SSM="/textbook-chat/prod/OPENAI_API_KEY")
    start = time.monotonic()
    assert with_ssm(env)["OPENAI_API_KEY"] == KEY
    assert aws.calls == [("AmazonSSM.GetParameters", 400)] * 2 + [
        ("AmazonSSM.GetParameters", 500), ("AmazonSSM.GetParameters", 200)]
    assert time.monotonic() - start >= 0.1 + 0.2 + 0.4  # it backed off between tries


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_throttling_that_lasts_is_a_short_lived_error_not_a_misconfiguration(aws):
    aws.fail_next(times=20, target="AmazonSSM.")
    env = _env(aws.endpoint, OPENAI_API_KEY_SSM="/textbook-chat/prod/OPENAI_API_KEY")
    with pytest.raises(SecretsUnavailable) as e:
        with_ssm(env)
    assert "ThrottlingException" in str(e.value)
    assert aws.endpoint not in str(e.value) and KEY not in str(e.value)


@pytest.mark.slow  # ~3 s of retry backoff; the quick loop stays under 90 s (docs/development.md)
def test_a_container_whose_init_was_throttled_recovers_on_the_next_request(aws):
    """The real handler's way (Deps.from_env at import, Mangum over the app) fed API Gateway
    events: the first request finds SSM still throttled and is told to come back; the next one
    reads the key (the fake model accepts only that key) and answers."""
    from mangum import Mangum

    from functions.api.app import create_app
    from tests.fakes.openai_server import FakeOpenAI
    from tests.functions.events import http_api_v2

    aws.fail_next(times=12, target="AmazonSSM.")  # init's tries, and the first request's
    with FakeOpenAI(api_key=KEY) as fake:
        env = _env(aws.endpoint, OPENAI_API_KEY_SSM="/textbook-chat/prod/OPENAI_API_KEY",
                   OPENAI_BASE_URL=fake.base_url, EMBEDDING_PROVIDER="local")
        deps = Deps.from_env(env)
        handler = Mangum(create_app(deps, "selection", threaded=False), lifespan="off")
        event = http_api_v2("/selection", {"question": "What is jitter?", "selected_text":
                                           "Jitter is the variation of the loop period."})
        first = handler(event, None)
        assert first["statusCode"] == 503
        error = json.loads(first["body"])["error"]
        assert error["code"] == "secrets_unavailable" and "try again" in error["message"]
        assert int(first["headers"]["retry-after"]) >= 1
        assert aws.endpoint not in first["body"] and "us-east-1" not in first["body"]
        while aws.pending():  # the throttling ends
            handler(event, None)
        second = handler(event, None)
        assert second["statusCode"] == 200, second["body"]
        assert json.loads(second["body"])["answer"] and fake.chat_requests
        assert deps.settings.openai_api_key == KEY


def test_a_missing_parameter_is_asked_again_but_not_on_every_request(aws):
    """A parameter created after the deploy is found without a redeploy; until then the
    container does not call SSM for every reader."""
    clock = [1000.0]
    env = _env(aws.endpoint, OPENAI_API_KEY_SSM="/textbook-chat/prod/LATER")
    deps = Deps.from_env(env, clock=lambda: clock[0])
    with pytest.raises(ConfigError, match="LATER|OPENAI_API_KEY_SSM"):
        deps.settings  # noqa: B018
    calls = len(aws.calls)
    for _ in range(5):
        with pytest.raises(ConfigError):
            deps.settings  # noqa: B018
    assert len(aws.calls) == calls  # a refusal is not asked again at once
    aws.client("ssm").put_parameter(Name="/textbook-chat/prod/LATER", Value=KEY,
                                    Type="SecureString")
    clock[0] += 61
    assert deps.settings.openai_api_key == KEY
