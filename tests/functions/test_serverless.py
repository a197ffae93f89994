"""serverless.yml: parsed and checked; where Node runs, packaged offline and its CloudFormation linted."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_ACTIONS = {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"}
LEFT_OUT = ["indexer", "textbook_chat_cli", "site-plugin", "tests", "samples", "benchmarks", ".venv"]
ROUTES = {"POST /chat": "chat", "POST /sources": "chat", "POST /feedback": "chat", "GET /health": "chat",
          "POST /mcp": "chat", "GET /mcp": "chat", "DELETE /mcp": "chat", "POST /selection": "selection"}


class _Loader(yaml.SafeLoader):
    """Keeps `${...}` strings as they are and any `!Tag value` as {"!Tag": value}."""


def _tagged(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {"!" + suffix: value}


_Loader.add_multi_constructor("!", _tagged)


@pytest.fixture(scope="module")
def config() -> dict:
    return yaml.load((ROOT / "serverless.yml").read_text(), Loader=_Loader)


def test_service_runtime_and_limits(config):
    p = config["provider"]
    # osls 4.x, the maintained fork of Serverless v3 (v3 and its aws-sdk v2 are out of
    # maintenance): test_deploy_tooling_is_pinned_by_the_root_lockfile
    assert config["service"] == "textbook-chat" and str(config["frameworkVersion"]) == "4"
    assert (p["name"], p["runtime"], p["architecture"]) == ("aws", "python3.12", "arm64")
    assert p["timeout"] < 29 and p["memorySize"] == 1024


def test_routes_go_to_the_right_function(config):
    routes = {e["httpApi"]: name for name, fn in config["functions"].items()
              for e in fn.get("events", [])}
    assert routes == ROUTES
    for name in ("chat", "selection"):
        handler = config["functions"][name]["handler"]
        assert handler == f"functions/api/handlers/{name}.handler"
        module = ROOT / (handler.rsplit(".", 1)[0] + ".py")
        assert module.exists(), f"{handler} names a missing module"
        assert re.search(r"^handler = Mangum\(", module.read_text(), re.M)
        assert config["functions"][name]["snapStart"] == "${strToBool(${param:snapStart, 'false'})}"


def test_the_stream_function_is_chat_behind_a_streaming_function_url(config):
    """`stream` runs `chat`'s app with the same role and index settings; the exec wrapper (a
    file in the zip, executable) replaces the managed runtime so the function URL streams."""
    stream, chat = config["functions"]["stream"], config["functions"]["chat"]
    assert stream["handler"] == chat["handler"] and stream["role"] == "ChatRole"
    assert stream["url"] == {"invokeMode": "RESPONSE_STREAM"}  # public, as the HTTP API
    assert "events" not in stream and "snapStart" not in stream
    env = _env(config, "stream")
    assert {k: v for k, v in env.items() if k != "AWS_LAMBDA_EXEC_WRAPPER"} == _env(config, "chat")
    wrapper = env["AWS_LAMBDA_EXEC_WRAPPER"]
    assert wrapper.startswith("/var/task/")
    local = ROOT / wrapper.removeprefix("/var/task/")
    assert local.is_file() and os.access(local, os.X_OK)
    assert "functions.api.lambda_stream" in local.read_text()


def _env(config, function: str) -> dict:
    """A function's environment as Serverless merges it: the provider's, then its own."""
    return {**config["provider"]["environment"],
            **config["functions"][function].get("environment", {})}


def test_settings_come_from_ssm_and_cors_from_the_site_origins(config):
    env = _env(config, "chat")
    for name in ("QDRANT_URL", "ALLOWED_ORIGINS"):  # not secrets: resolved at deploy
        assert f":/textbook-chat/${{sls:stage}}/{name}" in env[name], name
        assert re.match(r"\$\{param:\w+, ssm(\(raw\))?:", env[name]), name
    for name in ("OPENAI_API_KEY", "QDRANT_API_KEY"):  # secrets: only their names, read at init
        assert name not in env, f"{name} would be stored in plain text in the function"
        default = env[f"{name}_SSM"]
        if name == "OPENAI_API_KEY":  # its name depends on the answer mode; offline: none
            modes = config["custom"]["answers"]
            assert "self:custom.answers." in default and modes["offline"]["openaiApiKeyParameter"] == ""
            default = f"'{modes['openai']['openaiApiKeyParameter']}'"
        assert f"'/textbook-chat/${{sls:stage}}/{name}'" in default, name
        assert "ssm:" not in env[f"{name}_SSM"]
    assert "ssm:" not in json.dumps(config.get("params", {}))
    assert env["DYNAMODB_TABLE"] == {"Ref": "TextbookChatTable"}
    cors = config["provider"]["httpApi"]["cors"]
    assert "ssm:/textbook-chat/${sls:stage}/ALLOWED_ORIGINS" in cors["allowedOrigins"]
    assert "*" not in str(cors)


def test_table_has_ttl_and_string_keys(config):
    table = config["resources"]["Resources"]["TextbookChatTable"]["Properties"]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    keys = {k["AttributeName"]: k["KeyType"] for k in table["KeySchema"]}
    assert keys == {"pk": "HASH", "sk": "RANGE"}
    assert all(a["AttributeType"] == "S" for a in table["AttributeDefinitions"])


def test_iam_is_least_privilege(config):
    """Each function its own role, allowed only what it calls: its log group, the table's
    items, and the keys it reads; `selection`, which never searches, no Qdrant key."""
    assert "iam" not in config["provider"]  # no role shared by both functions
    resources = config["resources"]["Resources"]
    keys = {"chat": {"OPENAI_API_KEY", "QDRANT_API_KEY"}, "selection": {"OPENAI_API_KEY"}}
    conditions = config["resources"]["Conditions"]
    assert conditions["OpenAiAnswers"] == {"Fn::Equals": [{"Ref": "AnswersMode"}, "openai"]}
    assert config["resources"]["Parameters"]["AnswersMode"]["Default"] == "${self:custom.answersMode}"

    def if_openai(item, key: str | None = None):
        """An item kept only in the openai mode (offline: AWS::NoValue), unwrapped."""
        if "Fn::If" not in item:
            return item, False
        condition, kept, dropped = item["Fn::If"]
        assert (condition, dropped) == ("OpenAiAnswers", {"Ref": "AWS::NoValue"}), item
        assert key is None or key in json.dumps(kept)
        return kept, True

    for name, role_name in (("chat", "ChatRole"), ("selection", "SelectionRole")):
        assert config["functions"][name]["role"] == role_name
        role = resources[role_name]
        assert role["Type"] == "AWS::IAM::Role"
        [principal] = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert principal["Principal"] == {"Service": ["lambda.amazonaws.com"]}
        [policy] = role["Properties"]["Policies"]
        logs, table, secrets = policy["PolicyDocument"]["Statement"]
        secrets, openai_only = if_openai(secrets, "OPENAI_API_KEY")  # selection's whole statement
        assert openai_only == (name == "selection")
        assert all(s["Effect"] == "Allow" for s in (logs, table, secrets))
        assert logs["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
        groups = [r["Fn::Join"][1][-1] for r in logs["Resource"]]
        runs_as = [name, "stream"] if name == "chat" else [name]  # `stream` is `chat`'s twin
        assert groups == [f":log-group:/aws/lambda/textbook-chat-${{sls:stage}}-{f}:*"
                          for f in runs_as]
        assert set(table["Action"]) <= ALLOWED_ACTIONS, table
        assert table["Resource"] == [{"Fn::GetAtt": ["TextbookChatTable", "Arn"]}]
        assert "*" not in json.dumps(table)
        # the stage's own parameters this function reads, read only (one call at init)
        assert secrets["Action"] == ["ssm:GetParameters"]
        resources_ = [if_openai(r) for r in secrets["Resource"]]
        arns = [r["Fn::Join"][1] for r, _ in resources_]
        assert {a[-1].rsplit("/", 1)[1] for a in arns} == keys[name]
        # offline, no role reads the OpenAI key: it is kept only where answers are OpenAI's
        assert all(cut or openai_only for (r, cut) in resources_
                   if "OPENAI_API_KEY" in json.dumps(r))
        for arn in arns:
            assert arn[-1].startswith(":parameter/textbook-chat/${sls:stage}/")
            assert {"Ref": "AWS::AccountId"} in arn and {"Ref": "AWS::Region"} in arn
    selection = _env(config, "selection")
    assert not [k for k in selection if k.startswith(("QDRANT_", "EMBEDDING_"))], selection


def test_api_gateway_throttles_every_route(config):
    stage = config["resources"]["extensions"]["HttpApiStage"]["Properties"]
    settings = stage["DefaultRouteSettings"]
    assert "ThrottlingBurstLimit" in settings and "ThrottlingRateLimit" in settings


def test_per_client_limits_do_not_lean_on_the_shared_throttle(config):
    """Per-IP limits live in the functions; the stage throttle, shared by all clients, is a
    site-wide ceiling far above one client's allowance (the figures docs/http-api.md documents)."""
    env = _env(config, "chat")
    per_minute = int(env["RATE_LIMIT_PER_MINUTE"].rsplit("'", 2)[-2])
    assert (per_minute, int(env["RATE_LIMIT_PER_DAY"].rsplit("'", 2)[-2])) == (10, 200)
    stage = config["resources"]["extensions"]["HttpApiStage"]["Properties"]["DefaultRouteSettings"]
    rate = int(str(stage["ThrottlingRateLimit"]).rsplit(",", 1)[-1].strip(" }"))
    burst = int(str(stage["ThrottlingBurstLimit"]).rsplit(",", 1)[-1].strip(" }"))
    assert (rate, burst) == (50, 100)
    assert rate * 60 >= 300 * per_minute  # 300 readers at their per-minute limit fit under it
    readme = (ROOT / "docs" / "http-api.md").read_text()
    assert "50 requests/s, burst 100" in readme and "RATE_LIMIT_PER_MINUTE` (10)" in readme


def test_package_leaves_out_what_lambda_does_not_run(config):
    patterns = config["package"]["patterns"]
    for folder in LEFT_OUT:
        assert f"!{folder}/**" in patterns, folder
    assert "!**/node_modules/**" in patterns
    reqs = (ROOT / "requirements-lambda.txt").read_text().lower()
    names = {re.split(r"[<>=\[ ]", line)[0] for line in reqs.splitlines()
             if line.strip() and not line.startswith("#")}
    assert names == {"httpx", "starlette", "mangum", "tiktoken"}
    assert config["custom"]["pythonRequirements"]["fileName"] == (
        "${self:custom.answers.${self:custom.answersMode}.requirements, ''}")
    assert config["custom"]["answers"]["openai"]["requirements"] == "requirements-lambda.lock"


def test_the_answers_mode_is_read_once_and_checked_by_name(config):
    """Every use of the mode goes through custom.answersMode (falling back to '' for an
    unknown one), which scripts/serverless-params.js checks: listed first, before any work."""
    assert config["custom"]["answersMode"] == "${param:answers, 'openai'}"
    text = (ROOT / "serverless.yml").read_text()
    assert text.count("${param:answers") == 1
    assert text.count("self:custom.answers.${self:custom.answersMode}.") == 4
    assert config["plugins"][0] == "./scripts/serverless-params.js"


def _lock() -> dict[str, str]:
    """requirements-lambda.lock as {name: version}; every entry pinned with hashes."""
    text = (ROOT / "requirements-lambda.lock").read_text()
    entries = [e for e in re.split(r"\n(?=[A-Za-z])", text) if e.strip() and not e.startswith("#")]
    pins = {}
    for entry in entries:
        m = re.match(r"([A-Za-z0-9_.-]+)==([^ ;\\]+)", entry)
        assert m, f"requirements-lambda.lock: not pinned with ==: {entry[:80]}"
        assert "--hash=sha256:" in entry, f"requirements-lambda.lock: no hash for {m[1]}"
        pins[m[1].lower().replace("_", "-")] = m[2]
    return pins


def test_lambda_lock_pins_every_requirement_for_arm64_python312():
    pins = _lock()
    listed = {re.split(r"[<>=\[ ]", line)[0].lower() for line in
              (ROOT / "requirements-lambda.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    assert listed <= set(pins), listed - set(pins)
    head = (ROOT / "requirements-lambda.lock").read_text()[:800]
    assert "--python-platform aarch64-manylinux_2_28" in head and "--python-version 3.12" in head
    # tiktoken >= 0.12 has arm64 wheels only for manylinux_2_28: without that tag pip falls
    # back to an older release on arm64 (the lock would then not install).
    args = " ".join(yaml.load((ROOT / "serverless.yml").read_text(),
                              Loader=_Loader)["custom"]["pythonRequirements"]["pipCmdExtraArgs"])
    assert "--platform manylinux_2_28_${param:pipArch, 'aarch64'}" in args
    assert "--no-compile" in args and "--python-version ${param:pipPython, '312'}" in args


def test_deploy_tooling_is_pinned_by_the_root_lockfile(config):
    pkg = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    deps = pkg["devDependencies"]
    assert deps == {"osls": "4.3.1", "serverless-python-requirements": "6.1.2"}
    for name, version in deps.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    for plugin in config["plugins"]:
        assert plugin in deps or (ROOT / plugin).is_file(), plugin
    assert "node_modules/serverless" not in lock["packages"]  # one deploy CLI: osls's `serverless`


# --- the Serverless Framework itself, offline ------------------------------------------------
def _copy_service(dest: Path) -> None:
    skip = shutil.ignore_patterns(".git", ".venv", "node_modules", ".serverless", "__pycache__",
                                  ".textbook-chat", ".ruff_cache", ".pytest_cache", ".hypothesis",
                                  "build", ".docusaurus", "artifacts")
    shutil.copytree(ROOT, dest, ignore=skip, symlinks=True)


@pytest.fixture(scope="module")
def packaged(tmp_path_factory) -> Path:
    return serverless_package(tmp_path_factory.mktemp("sls"), region="eu-west-1")


def _npm_ci(basetemp: Path) -> Path:
    """node_modules as `npm ci` installs it from the root lockfile, once per test run and lockfile
    (test_serverless, test_openai_package and test_offline_package package three stacks; npm ci
    costs about 20 s of CPU each): a folder under the run's tmp dir (shared by its xdist
    workers, one at a time), hard-linked into each service by the caller."""
    if not shutil.which("npm"):
        pytest.skip("npm is not installed: cannot run the Serverless Framework here")
    run_root = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    lock = b"".join((ROOT / name).read_bytes() for name in ("package.json", "package-lock.json"))
    shared = run_root / f"npm-ci-{hashlib.sha256(lock).hexdigest()[:16]}"
    shared.mkdir(parents=True, exist_ok=True)
    with (shared / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (shared / ".done").is_file():
            for name in ("package.json", "package-lock.json"):
                shutil.copy(ROOT / name, shared / name)
            shutil.rmtree(shared / "node_modules", ignore_errors=True)
            done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                                  cwd=shared, capture_output=True, text=True, timeout=600)
            if done.returncode != 0 and "ENOTFOUND" in done.stderr + done.stdout:
                pytest.skip(f"npm cannot reach its registry: {done.stderr[-300:]}")
            assert done.returncode == 0, done.stderr[-3000:]
            (shared / ".done").write_text("")
    return shared / "node_modules"


def serverless_package(folder: Path, *params: str, region: str = "us-east-1") -> Path:
    """What an author runs: `npm ci` (the root lockfile) then `serverless package --stage ci`
    with these extra `--param=...` and AWS_REGION=region; returns the .serverless folder.
    folder: a tmp_path_factory folder (its parent is the run's tmp dir, where npm ci runs)."""
    service = folder / "service"
    _copy_service(service)
    subprocess.run(["cp", "-al", str(_npm_ci(folder.parent)), str(service / "node_modules")],
                   check=True)
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKIAOFFLINE", AWS_SECRET_ACCESS_KEY="offline",
               AWS_REGION=region, SLS_TELEMETRY_DISABLED="1", SLS_NOTIFICATIONS_MODE="off")
    for name in ("AWS_PROFILE", "AWS_DEFAULT_REGION"):
        env.pop(name, None)
    done = subprocess.run([str(service / "node_modules/.bin/serverless"), "package", "--stage",
                           "ci", f"--param=pythonBin={sys.executable}",
                           *(f"--param={p}" for p in params)], cwd=service, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # No "Invalid configuration" warning (osls knows python3.12; v3 needed a local plugin for it).
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    return service / ".serverless"


@pytest.mark.slow
def test_a_misspelt_answers_param_is_named_with_its_values(packaged):
    service = packaged.parent  # npm ci already ran there
    env = dict(os.environ, SLS_TELEMETRY_DISABLED="1", SLS_NOTIFICATIONS_MODE="off",
               AWS_ACCESS_KEY_ID="AKIAOFFLINE", AWS_SECRET_ACCESS_KEY="offline")
    done = subprocess.run([str(service / "node_modules/.bin/serverless"), "print", "--stage", "ci",
                           "--param=answers=ofline"], cwd=service, env=env,
                          capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert ('--param="answers=ofline" is not an answer mode: use --param="answers=openai" or '
            '--param="answers=offline"') in out
    assert "Value not found" not in out


def printed(service: Path, path: str, *args: str, **env: str) -> str:
    """`serverless print --stage ci --path PATH` in a packaged service, with only these AWS_* set."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE")}
    done = subprocess.run([str(service / "node_modules/.bin/serverless"), "print", "--stage",
                           "ci", "--path", path, *args], cwd=service,
                          env={**base, "SLS_TELEMETRY_DISABLED": "1", "AWS_ACCESS_KEY_ID": "x",
                               "AWS_SECRET_ACCESS_KEY": "x", "SLS_NOTIFICATIONS_MODE": "off",
                               **env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_access_log_and_budget_alarm_on_by_default_each_switchable(packaged):
    template = json.loads((packaged / "cloudformation-template-update-stack.json").read_text())
    res = template["Resources"]
    log = res["HttpApiStage"]["Properties"]["AccessLogSettings"]
    assert log["DestinationArn"] == {"Fn::GetAtt": ["HttpApiLogGroup", "Arn"]}
    fields = json.loads(log["Format"])  # one JSON line per request: no reader IP, no body
    assert fields["requestId"] == "$context.requestId" and fields["route"] == "$context.routeKey"
    assert "sourceIp" not in log["Format"] and "userAgent" not in log["Format"]
    assert res["HttpApiLogGroup"]["Properties"]["RetentionInDays"] == 14
    assert printed(packaged.parent, "provider.logs", "--param=accessLog=off") == "httpApi: false"
    budget = res["TextbookChatBudget"]
    assert budget["Condition"] == "BudgetAlarmOn"
    assert template["Conditions"]["BudgetAlarmOn"] == {"Fn::Not": [{"Fn::Or": [
        {"Fn::Equals": [{"Ref": "BudgetEmail"}, ""]}, {"Fn::Equals": [{"Ref": "BudgetEmail"}, "off"]}]}]}
    assert template["Parameters"]["BudgetEmail"]["Default"] == "ci@example.org"  # the stage's
    assert budget["Properties"]["Budget"]["BudgetLimit"] == {"Amount": 10, "Unit": "USD"}
    subscribers = [s for n in budget["Properties"]["NotificationsWithSubscribers"]
                   for s in n["Subscribers"]]
    assert subscribers and all(s["Address"] == {"Ref": "BudgetEmail"} for s in subscribers)
    assert printed(packaged.parent, "resources.Parameters.BudgetEmail.Default",
                   "--param=budgetEmail=me@example.org") == "me@example.org"
    assert printed(packaged.parent, "resources.Parameters.AnswersMode.Default",
                   "--param=answers=offline") == "offline"  # the roles' cut (test_iam_...)
    assert template["Parameters"]["AnswersMode"]["Default"] == "openai"


@pytest.mark.skipif(not shutil.which("node"), reason="node is not installed")
def test_a_deploy_without_the_budget_e_mail_stops_and_says_how_to_give_it(config):
    """The e-mail comes from --param, else the stage's SSM setting (asked for once), else ''. A
    deploy with '' stops before anything is deployed (scripts/serverless-params.js, driven
    through its before:deploy hook), naming the put-parameter that gives it; an address or
    `off` goes through."""
    default = config["resources"]["Parameters"]["BudgetEmail"]["Default"]
    assert default == "${param:budgetEmail, ssm:/textbook-chat/${sls:stage}/BUDGET_EMAIL, ''}"
    script = """
const Params = require(process.argv[1]);
class ServerlessError extends Error {}
const run = async (email) => {
  const serverless = {classes: {Error: ServerlessError}, service: {custom: {answers: {openai: {}},
    answersMode: 'openai'}, provider: {stage: 'prod'},
    resources: {Parameters: {BudgetEmail: {Default: email}}}}};
  const plugin = new Params(serverless, {stage: 'prod'});
  await plugin.hooks.initialize();
  try { await plugin.hooks['before:deploy:deploy'](); return 'deployed'; }
  catch (error) { return error.message; }
};
Promise.all(['', 'me@example.org', 'off'].map(run)).then((r) => console.log(JSON.stringify(r)));
"""
    done = subprocess.run(["node", "-e", script, str(ROOT / "scripts" / "serverless-params.js")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    missing, given, off = json.loads(done.stdout)
    assert missing.startswith('The budget alarm needs your e-mail, once: aws ssm put-parameter '
                              '--region "$AWS_REGION" --name /textbook-chat/prod/BUDGET_EMAIL '
                              "--type String --value you@example.org (every later deploy reads it)")
    assert '--param="budgetEmail=off" deploys without an alarm' in missing
    assert (given, off) == ("deployed", "deployed")


@pytest.mark.slow
def test_the_stack_goes_to_the_authors_region(packaged):
    """AWS_REGION (as the AWS CLI that wrote the SSM settings reads it) is the stack's region;
    --region wins; with neither, us-east-1."""
    state = json.loads((packaged / "serverless-state.json").read_text())
    assert state["service"]["provider"]["region"] == "eu-west-1"  # the fixture's AWS_REGION

    def printed_region(*args: str, **env: str) -> str:
        return printed(packaged.parent, "provider.region", *args, **env)

    assert printed_region(AWS_DEFAULT_REGION="ap-south-1") == "ap-south-1"
    assert printed_region("--region", "eu-central-1", AWS_REGION="eu-west-1") == "eu-central-1"
    assert printed_region() == "us-east-1"


@pytest.mark.slow
def test_package_builds_the_stack(packaged):
    template = json.loads((packaged / "cloudformation-template-update-stack.json").read_text())
    res = template["Resources"]
    by_type: dict[str, list[str]] = {}
    for name, r in res.items():
        by_type.setdefault(r["Type"], []).append(name)
    assert sorted(by_type["AWS::Lambda::Function"]) == ["ChatLambdaFunction",
                                                        "SelectionLambdaFunction",
                                                        "StreamLambdaFunction"]
    assert len(by_type["AWS::ApiGatewayV2::Route"]) == len(ROUTES)
    for fn in ("ChatLambdaFunction", "SelectionLambdaFunction"):
        props = res[fn]["Properties"]
        assert props["Runtime"] == "python3.12" and props["Architectures"] == ["arm64"]
        assert "SnapStart" not in props  # off by default (measured; docs/deploying.md)
        variables = props["Environment"]["Variables"]
        assert "OPENAI_API_KEY" not in variables and "QDRANT_API_KEY" not in variables
        assert variables["OPENAI_API_KEY_SSM"] == "/textbook-chat/ci/OPENAI_API_KEY"
        assert variables["CHAT_PROVIDER"] == "openai"  # the default mode
        assert props["Role"] == {"Fn::GetAtt": [fn.replace("LambdaFunction", "Role"), "Arn"]}
    chat = res["ChatLambdaFunction"]["Properties"]["Environment"]["Variables"]
    assert chat["EMBEDDING_PROVIDER"] == "openai"
    assert chat["QDRANT_API_KEY_SSM"] == "/textbook-chat/ci/QDRANT_API_KEY"
    selection = res["SelectionLambdaFunction"]["Properties"]["Environment"]["Variables"]
    assert not [k for k in selection if k.startswith(("QDRANT_", "EMBEDDING_"))]
    # `stream`: chat's settings and role, its own runtime, a public function URL that streams
    stream = res["StreamLambdaFunction"]["Properties"]
    assert stream["Role"] == {"Fn::GetAtt": ["ChatRole", "Arn"]} and "SnapStart" not in stream
    assert stream["Environment"]["Variables"] == {
        **chat, "AWS_LAMBDA_EXEC_WRAPPER": "/var/task/functions/api/handlers/stream-runtime"}
    url = res["StreamLambdaFunctionUrl"]["Properties"]
    assert (url["AuthType"], url["InvokeMode"]) == ("NONE", "RESPONSE_STREAM")
    assert "Cors" not in url  # the app answers CORS, with the site check (docs/http-api.md)
    allowed = sorted(r["Properties"]["Action"] for r in res.values()
                     if r["Type"] == "AWS::Lambda::Permission"
                     and "Stream" in json.dumps(r["Properties"]["FunctionName"]))
    assert allowed == ["lambda:InvokeFunction", "lambda:InvokeFunctionUrl"]  # both, since 2025-10
    assert "StreamLambdaFunctionUrl" in template["Outputs"]  # the widget's streamUrl
    target = res["HttpApiIntegrationChat"]["Properties"]["IntegrationUri"]
    assert "snapstart" not in json.dumps(target)  # the API calls the function itself
    # no published versions piling up (each would be kept forever): only SnapStart needs one
    assert "AWS::Lambda::Version" not in by_type
    assert printed(packaged.parent, "provider.versionFunctions") == "false"
    assert printed(packaged.parent, "provider.versionFunctions", "--param=snapStart=true") == "true"
    stage = res["HttpApiStage"]["Properties"]["DefaultRouteSettings"]
    assert stage["ThrottlingRateLimit"] > 0 and stage["ThrottlingBurstLimit"] > 0
    assert res["HttpApi"]["Properties"]["CorsConfiguration"]["AllowOrigins"] == [
        "https://example.github.io"]
    table = res["TextbookChatTable"]["Properties"]
    assert table["TimeToLiveSpecification"]["AttributeName"] == "expires_at"
    assert sorted(by_type["AWS::IAM::Role"]) == ["ChatRole", "SelectionRole"]  # none shared
    for role, keys in (("ChatRole", 2), ("SelectionRole", 1)):
        policy = json.dumps(res[role]["Properties"]["Policies"])
        assert '"dynamodb:*"' not in policy and '"ssm:*"' not in policy and "/*" not in policy
        assert policy.count(":parameter/textbook-chat/ci/") == keys
    assert "QDRANT_API_KEY" not in json.dumps(res["SelectionRole"])
    assert "HttpApiUrl" in template["Outputs"]  # what `textbook-chat api-url` prints
    state = (packaged / "serverless-state.json").read_text()  # what goes to the bucket
    assert "ci-placeholder" not in state and "sk-" not in state


@pytest.mark.slow
@pytest.mark.parametrize("function", ["chat", "selection", "stream"])
def test_package_zip_holds_only_the_runtime(packaged, function):
    archive = zipfile.ZipFile(packaged / f"{function}.zip")
    names = archive.namelist()  # one zip per function
    wrapper = archive.getinfo("functions/api/handlers/stream-runtime")
    assert (wrapper.external_attr >> 16) & 0o111  # Lambda runs it: executable in the zip
    tops = {n.split("/", 1)[0] for n in names}
    assert {"functions", "httpx", "starlette", "mangum", "tiktoken"} <= tops
    assert "functions/api/handlers/chat.py" in names and "functions/data/cl100k_base.tiktoken" in names
    assert not tops & {*LEFT_OUT, "node_modules", "qdrant_client", "openai", "fastapi", "boto3"}
    cli = re.compile(r"^functions/(.*[/_])?cli[_./]")  # the CLI is textbook_chat_cli's
    assert not [n for n in names if cli.match(n)]
    assert any(n.startswith("tiktoken/_tiktoken.cpython-312-aarch64") for n in names)
    assert not [n for n in names if n.endswith(".pyc")]  # Lambda compiles its own
    versions = {m[1].lower().replace("_", "-"): m[2] for n in names
                if (m := re.match(r"([^/]+)-([^-/]+)\.dist-info/METADATA$", n))}
    assert versions == _lock()  # exactly the locked versions, nothing else


@pytest.mark.slow
def test_generated_cloudformation_lints_clean(packaged):
    assert_lints_clean(packaged)


def assert_lints_clean(packaged: Path) -> None:
    """cfn-lint on the generated template: nothing but W3005 (Serverless's explicit DependsOn)."""
    pytest.importorskip("cfnlint", reason="cfn-lint is a test dependency")
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    done = subprocess.run([str(cfn_lint if cfn_lint.exists() else "cfn-lint"), "--format", "parseable",
                           str(packaged / "cloudformation-template-update-stack.json")],
                          capture_output=True, text=True, timeout=300)
    rules = set(re.findall(r":([EWI]\d{4}):", done.stdout))
    assert rules <= {"W3005"}, done.stdout


def test_the_deploy_commands_write_and_deploy_to_one_region():
    """Every `aws ssm put-parameter` and `serverless deploy` docs/deploying.md and serverless.yml
    show names the same region, so the functions find their settings where they run."""
    for path in (ROOT / "docs" / "deploying.md", ROOT / "serverless.yml"):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines()
                 if re.search(r"^\s*(#\s*)?(offline, no key: |npm ci && )?"
                              r"(aws ssm put-parameter|npx serverless deploy) ", line)]
        assert len(lines) >= 5, path
        for line in lines:
            assert '--region "$AWS_REGION"' in line, f"{path.name}: {line.strip()}"
        assert re.search(r"^#?\s*export AWS_REGION=", path.read_text(encoding="utf-8"), re.M)


@pytest.mark.skipif(not shutil.which("node"), reason="node is not installed")
def test_old_snapstart_versions_are_pruned_after_a_deploy(config):
    """scripts/serverless-prune.js, driven through its after:deploy hook with a recording AWS
    provider: with SnapStart it deletes every version but the alias's and the newest (paging
    through the listings); without SnapStart (no versions published) it asks nothing."""
    assert "./scripts/serverless-prune.js" in config["plugins"]
    assert config["custom"]["prune"]["keep"] == 1
    script = """
const Prune = require(process.argv[1]);
const calls = [];
const versions = {chat: [['$LATEST', '1', '2', '3'], ['4', '5']], selection: [['$LATEST', '1', '2']]};
const provider = {request: async (service, method, params) => {
  calls.push([method, params.FunctionName, params.Qualifier || params.Marker || '']);
  const fn = params.FunctionName.split('-').pop();
  if (method === 'listVersionsByFunction') {
    const page = params.Marker ? 1 : 0;
    return {Versions: versions[fn][page].map((v) => ({Version: v})),
            NextMarker: page === 0 && versions[fn].length > 1 ? 'next' : undefined};
  }
  if (method === 'listAliases') return {Aliases: fn === 'chat' ? [{Name: 'snapstart', FunctionVersion: '3'}] : []};
  return {};
}};
const run = async (versionFunctions) => {
  const service = {provider: {versionFunctions}, custom: {prune: {keep: 1}},
    getAllFunctions: () => ['chat', 'selection'],
    getFunction: (n) => ({name: `textbook-chat-prod-${n}`})};
  const plugin = new Prune({service, getProvider: () => provider}, {}, {log: {notice: () => {}}});
  await plugin.hooks['after:deploy:deploy']();
};
run(false).then(() => { calls.push(['-- snapStart on']); return run(true); })
  .then(() => console.log(JSON.stringify(calls)));
"""
    done = subprocess.run(["node", "-e", script, str(ROOT / "scripts" / "serverless-prune.js")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout)
    assert calls[0] == ["-- snapStart on"]  # off: not one request
    deleted = [(fn.rsplit("-", 1)[1], q) for method, fn, q in calls[1:] if method == "deleteFunction"]
    assert deleted == [("chat", "4"), ("chat", "2"), ("chat", "1"), ("selection", "1")]
    assert ["listVersionsByFunction", "textbook-chat-prod-chat", "next"] in calls  # the 2nd page
