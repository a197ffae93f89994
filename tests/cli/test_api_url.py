"""`textbook-chat api-url`: the URL to give the site, read from the deployed stack's HttpApiUrl
output (moto's CloudFormation), in the region serverless.yml deploys to."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from textbook_chat_cli.deployed import deploy_region
from textbook_chat_cli.main import main

URL = "https://abc123.execute-api.eu-west-1.amazonaws.com"


def _stack(region: str, stage: str, outputs: dict) -> None:
    template = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
                "Outputs": {k: {"Value": v} for k, v in outputs.items()}}
    boto3.client("cloudformation", region_name=region).create_stack(
        StackName=f"textbook-chat-{stage}", TemplateBody=json.dumps(template))


@pytest.fixture
def aws(monkeypatch):
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_prints_the_url_alone_on_stdout_from_the_deploy_region(aws, capsys, monkeypatch):
    _stack("eu-west-1", "prod", {"HttpApiUrl": URL + "/", "TableName": "t"})
    _stack("us-east-1", "prod", {"HttpApiUrl": "https://wrong.execute-api.us-east-1.amazonaws.com"})
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    assert main(["api-url", "--stage", "prod"]) == 0
    out = capsys.readouterr()
    assert out.out == URL + "\n"  # exactly what is pasted: no slash, no /chat
    assert "textbook-chat-prod in eu-west-1" in out.err and "`api-url:`" in out.err
    monkeypatch.delenv("AWS_REGION")
    assert main(["api-url", "--stage", "prod", "--region", "eu-west-1"]) == 0
    assert capsys.readouterr().out == URL + "\n"


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_a_missing_stack_names_stage_region_and_the_deploy(aws, capsys):
    _stack("eu-west-1", "prod", {"HttpApiUrl": URL})
    assert main(["api-url", "--stage", "prod"]) == 2  # no region given: us-east-1, as serverless
    err = capsys.readouterr().err
    assert err == ("textbook-chat: there is no stack textbook-chat-prod in us-east-1: give the "
                   "--stage and --region of your deploy, or deploy first with `npx serverless "
                   "deploy --stage prod --region us-east-1`.\n")
    _stack("eu-west-1", "half", {"TableName": "t"})
    assert main(["api-url", "--stage", "half", "--region", "eu-west-1"]) == 2
    assert "has no HttpApiUrl output" in capsys.readouterr().err


def test_the_region_rule_is_serverless_yml_s():
    assert deploy_region(None, {}) == "us-east-1"
    assert deploy_region(None, {"AWS_DEFAULT_REGION": "ap-south-1"}) == "ap-south-1"
    assert deploy_region(None, {"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "x"}) == "eu-west-1"
    assert deploy_region("eu-central-1", {"AWS_REGION": "eu-west-1"}) == "eu-central-1"
