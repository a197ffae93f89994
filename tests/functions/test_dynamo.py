"""The httpx DynamoDB client: SigV4 equal to botocore's, credential sources, retries, errors."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from functions.errors import ConfigError
from functions.services.dynamo import Credentials, CredentialSource, DynamoClient, DynamoError, sign
from tests.ports import POLL_SECONDS


@pytest.mark.parametrize("token", [None, "session-token-xyz"])
@pytest.mark.parametrize("url", ["https://dynamodb.eu-west-1.amazonaws.com/",
                                 "http://127.0.0.1:4566/"])
def test_signature_matches_botocore(url, token):
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials as BotoCredentials

    body = json.dumps({"TableName": "t", "Key": {"pk": {"S": "é"}}}).encode()
    headers = {"Content-Type": "application/x-amz-json-1.0",
               "X-Amz-Target": "DynamoDB_20120810.UpdateItem"}
    req = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    SigV4Auth(BotoCredentials("AKIDEXAMPLE", "secret/key+", token), "dynamodb", "eu-west-1").add_auth(req)
    ours = sign("POST", url, headers, body, Credentials("AKIDEXAMPLE", "secret/key+", token),
                "eu-west-1", "dynamodb", req.headers["X-Amz-Date"])
    assert ours["authorization"] == req.headers["Authorization"]


class _Scripted(BaseHTTPRequestHandler):
    """Answers with the next scripted (status, json) and records what it got."""

    script: list[tuple[int, dict]] = []
    seen: list[dict] = []

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        type(self).seen.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        status, data = type(self).script.pop(0)
        out = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    _Scripted.script, _Scripted.seen = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", _Scripted
    server.shutdown()
    thread.join(5)


ENV = {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "eu-west-1"}


def test_throttling_is_retried_then_succeeds(scripted):
    url, srv = scripted
    srv.script = [(400, {"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException"}),
                  (500, {}), (200, {"Attributes": {}})]
    assert DynamoClient("eu-west-1", url, ENV).call("UpdateItem", {"TableName": "t"}) == {
        "Attributes": {}}
    assert len(srv.seen) == 3
    assert srv.seen[0]["headers"]["x-amz-target"] == "DynamoDB_20120810.UpdateItem"


def test_client_errors_are_not_retried(scripted):
    url, srv = scripted
    srv.script = [(400, {"__type": "x#AccessDeniedException", "message": "not allowed"})]
    with pytest.raises(DynamoError, match="IAM role") as err:
        DynamoClient("eu-west-1", url, ENV).call("PutItem", {"TableName": "t"})
    assert err.value.code == "AccessDeniedException" and len(srv.seen) == 1


def test_container_credentials_as_lambda_snapstart_gives_them(scripted):
    url, srv = scripted
    srv.script = [(200, {"AccessKeyId": "ASIA1", "SecretAccessKey": "sk", "Token": "tok",
                         "Expiration": "2999-01-01T00:00:00Z"})]
    env = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": url + "/creds",
           "AWS_CONTAINER_AUTHORIZATION_TOKEN": "auth-123"}
    import httpx

    source = CredentialSource(env, httpx.Client())
    creds = source.get()
    assert (creds.access_key, creds.secret_key, creds.token) == ("ASIA1", "sk", "tok")
    assert source.get() is creds  # cached until close to expiry
    assert srv.seen[0]["headers"]["authorization"] == "auth-123"


def test_environment_credentials_come_first():
    import httpx

    env = dict(ENV, AWS_SESSION_TOKEN="t", AWS_CONTAINER_CREDENTIALS_FULL_URI="http://127.0.0.1:9")
    assert CredentialSource(env, httpx.Client()).get() == Credentials("AKID", "s", "t")


def test_no_region_is_a_clear_error():
    with pytest.raises(ConfigError, match="AWS_REGION"):  # the reader is told: misconfigured
        DynamoClient.from_env({"AWS_ACCESS_KEY_ID": "a"})
