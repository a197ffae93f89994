"""The default (OpenAI) deployment as Lambda runs it: `serverless package` from the lockfiles, the
zip unzipped and invoked in a fresh Python that sees only the zip, its OpenAI key read at init
from an SSM SecureString (moto's server) and used against the fake OpenAI server, which accepts
only that key. Nothing beyond 127.0.0.1 is reached (tests/functions/test_offline_package.CHILD).

The zip is built for this machine (--param=pipArch/pipPython) from the same lock and
serverless.yml as the arm64 one: Python 3.12 is not installed here, so the interpreter is this
one and the native wheels are this platform's, at the locked versions."""

from __future__ import annotations

import json
import platform
import sys
import zipfile
from pathlib import Path

import boto3
import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.functions.events import http_api_v2
from tests.functions.sample_rest import OTHER_MODEL, sample_book_rest
from tests.functions.test_offline_package import ORIGIN, invoke
from tests.functions.test_serverless import serverless_package
from tests.minilm import cached_minilm
from tests.ports import free_port

pytestmark = pytest.mark.slow
moto_server = pytest.importorskip("moto.server")

KEY = "sk-from-ssm-only-0123456789abcdef"


@pytest.fixture(scope="module")
def openai_package(tmp_path_factory) -> Path:
    return serverless_package(tmp_path_factory.mktemp("sls-openai"),
                              f"pipArch={platform.machine()}",
                              "pipPython={}{}".format(*sys.version_info[:2]))


@pytest.fixture(scope="module")
def ssm(openai_package):
    """moto's SSM on 127.0.0.1 holding the key under the name the template gives the function."""
    port = free_port(18740, 18749)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    name = _variables(openai_package)["OPENAI_API_KEY_SSM"]
    boto3.client("ssm", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id="x",
                 aws_secret_access_key="x").put_parameter(Name=name, Value=KEY, Type="SecureString")
    yield endpoint
    server.stop()


def _variables(package: Path, function: str = "Chat") -> dict:
    template = json.loads((package / "cloudformation-template-update-stack.json").read_text())
    resource = template["Resources"][f"{function}LambdaFunction"]
    return dict(resource["Properties"]["Environment"]["Variables"])


def test_the_unzipped_handler_reads_its_key_from_ssm_at_init_and_answers(openai_package, ssm,
                                                                         tmp_path):
    variables = _variables(openai_package)
    assert "OPENAI_API_KEY" not in variables and variables["OPENAI_API_KEY_SSM"]
    folder = tmp_path / "task"
    zipfile.ZipFile(openai_package / "chat.zip").extractall(folder)
    del variables["DYNAMODB_TABLE"]  # limits and records stay in process
    with FakeOpenAI(api_key=KEY, dimension=1536) as fake, sample_book_rest(embedder=cached_minilm()) as qdrant:
        env = {**variables, "QDRANT_API_KEY_SSM": "", "QDRANT_URL": qdrant,
               "QDRANT_COLLECTION": OTHER_MODEL, "OPENAI_BASE_URL": fake.base_url,
               "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_SSM": ssm,
               "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
               "AWS_LAMBDA_FUNCTION_NAME": "textbook-chat-ci-chat", "PATH": "/usr/bin:/bin"}
        question = {"question": "How does a quadrature encoder tell the direction?"}
        out = invoke(folder, env, [["chat", http_api_v2("/health", None, "GET", origin=ORIGIN)],
                                   ["chat", http_api_v2("/chat", question, origin=ORIGIN)]],
                     tmp_path)
        embedded = fake.embedding_requests
    health, chat = out["responses"]
    # configured (a missing or unreadable key would be a config error naming OPENAI_API_KEY_SSM);
    # the stand-in's OpenAI collection is empty, so health says so
    assert health["body"]["error"]["code"] == "index_unavailable", health
    assert chat["status"] == 200, chat  # the empty index: a refusal, after a real embedding call
    assert embedded, "the question was not embedded with the key read from SSM"
    assert not out["site_packages_visible"]
    assert not {"boto3", "botocore", "openai", "qdrant_client"} & set(out["modules"])
    assert KEY not in json.dumps(out)  # never in a response


def test_the_selection_zip_answers_where_ssm_holds_no_qdrant_key(openai_package, ssm, tmp_path):
    """`selection` as deployed: its own zip and environment, SSM holding only the OpenAI key
    (the moto server above has no QDRANT_API_KEY parameter): it reads no Qdrant setting, so it
    answers instead of a 503 `misconfigured`."""
    variables = _variables(openai_package, "Selection")
    assert not [k for k in variables if k.startswith("QDRANT_")], variables
    folder = tmp_path / "task"
    zipfile.ZipFile(openai_package / "selection.zip").extractall(folder)
    del variables["DYNAMODB_TABLE"]
    with FakeOpenAI(api_key=KEY) as fake:
        env = {**variables, "OPENAI_BASE_URL": fake.base_url, "AWS_REGION": "us-east-1",
               "AWS_ENDPOINT_URL_SSM": ssm, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
               "AWS_LAMBDA_FUNCTION_NAME": "textbook-chat-ci-selection", "PATH": "/usr/bin:/bin"}
        body = {"question": "Explain this", "selected_text": "A Gray code changes one bit "
                "between neighbouring positions, so a reading is off by one step at most."}
        out = invoke(folder, env, [["selection", http_api_v2("/selection", body, origin=ORIGIN)]],
                     tmp_path)
        asked = fake.chat_requests
    [answer] = out["responses"]
    assert answer["status"] == 200, answer
    assert asked, "the model was not asked with the key read from SSM"
    assert not {"qdrant_client", "numpy"} & set(out["modules"])
