"""Secrets read at init from SSM Parameter Store (moto's server over real HTTP, SigV4 signed)."""

from __future__ import annotations

import json

import boto3
import pytest

from functions.api.deps import Deps
from functions.errors import ConfigError
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
    with pytest.raises(ConfigError) as e:
        with_ssm(env, attempts=2, timeout=0.5)
    assert "could not be reached" in str(e.value) and "127.0.0.1" not in str(e.value)


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
