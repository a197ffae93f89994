"""`textbook-chat api-url`: after `serverless deploy`, the one URL to give the site, exactly as
it is pasted (the reindex workflow's `api-url:`, or TEXTBOOK_CHAT_API_URL), read from the
stack's `HttpApiUrl` output in the region the stack went to (serverless.yml's rule)."""

from __future__ import annotations

import argparse
import os
import sys

from functions.errors import ConfigError

SERVICE = "textbook-chat"  # serverless.yml `service`: the stack is textbook-chat-<stage>
OUTPUT = "HttpApiUrl"

EXAMPLES = """examples:
  textbook-chat api-url --stage prod                  with AWS_REGION set as for the deploy
  textbook-chat api-url --stage prod --region eu-west-1
"""


def deploy_region(given: str | None, environ=os.environ) -> str:
    """serverless.yml's provider.region: --region, AWS_REGION, AWS_DEFAULT_REGION, us-east-1."""
    return given or environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def api_url(stage: str, region: str, client=None) -> str:
    """The stack's HttpApiUrl, without a trailing slash; ConfigError saying what to do."""
    import boto3  # here: only this command talks to CloudFormation
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    stack = f"{SERVICE}-{stage}"
    redo = f"`npx serverless deploy --stage {stage} --region {region}`"
    try:
        cf = client or boto3.client("cloudformation", region_name=region)
        found = cf.describe_stacks(StackName=stack)["Stacks"]
    except NoCredentialsError:
        raise ConfigError("no AWS credentials: use the same AWS credentials as for the deploy "
                          "(AWS_PROFILE or `aws configure`).") from None
    except ClientError as exc:
        if "does not exist" in str(exc):
            raise ConfigError(f"there is no stack {stack} in {region}: give the --stage and "
                              f"--region of your deploy, or deploy first with {redo}.") from None
        code = exc.response.get("Error", {}).get("Code", "error")
        raise ConfigError(f"cannot read the stack {stack} in {region} ({code}); check the "
                          "AWS credentials are the deploy's.") from None
    except BotoCoreError as exc:
        raise ConfigError(f"cannot reach CloudFormation in {region} ({exc}).") from None
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found[0].get("Outputs") or []}
    if OUTPUT not in outputs:
        raise ConfigError(f"the stack {stack} in {region} has no {OUTPUT} output (its deploy "
                          f"did not finish?): run {redo} again.")
    return outputs[OUTPUT].rstrip("/")


def cmd_api_url(args) -> int:
    region = deploy_region(args.region)
    url = api_url(args.stage, region)
    print(f"textbook-chat: the API of stack {SERVICE}-{args.stage} in {region}. Give your site "
          "this URL, exactly as printed: the reindex workflow's `api-url:` (or "
          "TEXTBOOK_CHAT_API_URL for a build by hand); the widget adds /chat itself.",
          file=sys.stderr)
    print(url)
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("api-url", help="the deployed API's URL, as the site takes it",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stage", default=os.environ.get("TEXTBOOK_CHAT_STAGE", "dev"),
                   help="the --stage of `serverless deploy` (default: %(default)s, as "
                        "serverless.yml's; env TEXTBOOK_CHAT_STAGE)")
    p.add_argument("--region", help="the deploy's region (default: AWS_REGION, else "
                                    "AWS_DEFAULT_REGION, else us-east-1, as serverless.yml's)")
    p.set_defaults(func=cmd_api_url)
