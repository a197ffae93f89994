"""README.md and the docs/ pages it links, against the code they document: docs/http-api.md's
request fields of /chat, /selection and /feedback are the ones functions/api/validation.py
accepts, its examples are accepted, and every response field, refusal code and error code it
lists is the code's own; docs/cli.md's command table names real flags; README.md stays a front
page (at most 16 KB, a table of contents) and every relative link of it and of docs/ resolves."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from functions.answers.citations import citation
from functions.answers.types import Answer
from functions.api import validation
from functions.api.http_errors import SERVICE_MESSAGES, ApiError
from functions.search.types import SearchHit

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FUNCTIONS = ROOT / "functions"
REQUESTS = {"/chat": validation.chat_request, "/selection": validation.selection_request,
            "/feedback": validation.feedback_request}


@pytest.fixture(scope="module")
def section() -> str:
    text = (DOCS / "http-api.md").read_text(encoding="utf-8")
    start = text.index("## What to send and what comes back")
    return text[start:text.index("\n## ", start + 3)]


def _table_after(text: str, marker: str) -> dict[str, str]:
    """The first Markdown table after `marker`: {first cell's `name`: the whole row}."""
    rest = text[text.index(marker):]
    rows, started = {}, False
    for line in rest.splitlines()[1:]:
        if line.startswith("|"):
            started = True
            cell = line.split("|")[1].strip()
            if cell.startswith("`"):
                rows[cell.strip("`")] = line
        elif started:
            break
    return rows


def _allowed(parse) -> set[str]:
    """The field set the API accepts, as its 422 names it."""
    with pytest.raises(ApiError) as err:
        parse({"no_such_field": 1})
    assert err.value.code == "unknown_field"
    return set(err.value.message.split("Allowed: ", 1)[1].rstrip(".").split(", "))


@pytest.mark.parametrize("route", sorted(REQUESTS))
def test_documented_request_fields_are_the_accepted_ones(section, route):
    documented = _table_after(section, f"**`POST {route}`**")
    accepted = _allowed(REQUESTS[route])
    assert set(documented) == accepted, f"README's POST {route} table: fix it or the code"
    model = {validation.ChatRequest: "/chat", validation.SelectionRequest: "/selection",
             validation.FeedbackRequest: "/feedback"}
    [request_type] = [t for t, r in model.items() if r == route]
    assert {f.name for f in fields(request_type)} == accepted


def test_documented_limits_and_filters_are_the_code_s(section):
    chat = _table_after(section, "**`POST /chat`**")
    assert f"at most {validation.MAX_QUESTION_CHARS:,} characters" in chat["question"]
    assert f"at most {validation.MAX_HISTORY_MESSAGES} messages" in chat["history"]
    assert f"{validation.MAX_HISTORY_CHARS:,} characters" in chat["history"]
    assert set(re.findall(r"`(\w+)`", chat["filters"].split("|")[2])) == validation.FILTER_KEYS
    assert all(f'"{m}"' in chat["mode"] for m in validation.RETRIEVAL_MODES)
    feedback = _table_after(section, "**`POST /feedback`**")
    assert f"at most {validation.MAX_COMMENT_CHARS:,} characters" in feedback["comment"]


def test_the_curl_examples_are_accepted(section):
    examples = re.findall(r"curl -s http://127\.0\.0\.1:8787(/\w+) .*?\\\n\s+-d '(\{.*?\})'",
                          section, re.S)
    assert {route for route, _ in examples} == set(REQUESTS) | {"/sources"}
    # /sources takes /chat's body, and `search` (the widget's box searching as the reader types)
    checks = {**REQUESTS, "/sources": lambda body: (validation.search_flag(body),
                                                    validation.chat_request(body))}
    for route, body in examples:
        checks[route](json.loads(body))  # raises ApiError if the README shows a bad body


def test_documented_response_fields_are_the_answer_s(section):
    documented = _table_after(section, "| response field |")
    assert set(documented) == {f.name for f in fields(Answer)} | {"request_id"}
    hit = SearchHit(1, 0.5, 0.5, {"untranslated": True})
    described = documented["citations"]
    for key in citation(1, hit):
        assert f"`{key}`" in described or f'`"{key}"' in described, f"README lacks `{key}`"


def test_every_refusal_and_error_code_is_listed(section):
    source = "\n".join(p.read_text() for p in FUNCTIONS.rglob("*.py"))
    refusals = set(re.findall(r'\{"code": "(\w+)"', source))
    errors = set(re.findall(r'ApiError\(\s*\d{3},\s*"(\w+)"', source))
    errors |= set(re.findall(r'LimitReached\(\s*"(\w+)"', source))
    errors |= {"not_found", "method_not_allowed"}  # app._http_error's table
    errors |= {f"{service}_unavailable" for service in SERVICE_MESSAGES}  # one per service
    assert {"not_covered", "not_mentioned"} <= refusals and {"rate_limited", "invalid_json"} <= errors
    refusal_row = _table_after(section, "| response field |")["refusal"]
    assert {c for c in refusals if f"`{c}`" not in refusal_row} == set()
    table = section[section.index("| status | `code` |"):]
    assert {c for c in errors if f"`{c}`" not in table} == set()


def test_every_setting_the_site_plugin_reads_is_in_the_docs():
    """An author reads the docs, not options.js: each TEXTBOOK_CHAT_* the plugin reads is in
    README.md or a docs/ page."""
    plugin = "\n".join(p.read_text() for p in (ROOT / "site-plugin" / "src").rglob("*.js")
                       if not p.name.endswith(".test.js"))
    names = set(re.findall(r"\bTEXTBOOK_CHAT_[A-Z_]+", plugin))
    readme = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *DOCS.glob("*.md")])
    assert "TEXTBOOK_CHAT_API_URL" in names
    assert {n for n in names if n not in readme} == set()


def test_a_link_that_asks_is_capped_as_the_api_caps_a_question():
    """site-plugin/src/client/asklink.mjs drops a linked question the API would refuse (and one
    it would take must not be dropped); the plugin README says how long that is."""
    source = (ROOT / "site-plugin" / "src" / "client" / "asklink.mjs").read_text(encoding="utf-8")
    (cap,) = re.findall(r"export const MAX_QUESTION_CHARS = (\d+);", source)
    assert int(cap) == validation.MAX_QUESTION_CHARS, "asklink.mjs MAX_QUESTION_CHARS: make it the API's"
    plugin_readme = (ROOT / "site-plugin" / "README.md").read_text(encoding="utf-8")
    assert f"({validation.MAX_QUESTION_CHARS:,} characters)" in plugin_readme


def test_every_flag_in_the_command_table_is_the_command_s():
    """The rows of docs/cli.md's `textbook-chat` table name flags the command really takes."""
    from textbook_chat_cli.main import build_parser

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    table = text[text.index("## Commands"):]
    subparsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    checked = 0
    for line in table.splitlines():
        if not line.startswith("| `textbook-chat "):
            if checked and not line.startswith("|"):
                break
            continue
        command = line.split("textbook-chat ", 1)[1].split()[0].strip("`")
        parser = subparsers[command]
        if command == "release":  # its steps are subcommands with their own flags
            continue
        options = {s for a in parser._actions for s in a.option_strings}
        shown = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z](?![\w*-])", line))
        assert shown <= options, f"{command}: {shown - options} not in `textbook-chat {command} --help`"
        checked += 1
    assert checked >= 8


def test_the_release_the_docs_name_is_the_version_and_the_changelog_s():
    """README and docs/deploying.md pin one commit; it is the CHANGELOG's latest release, whose
    version the package, the plugin and MCP say; no doc pins a tag (a tag made in a working copy
    does not travel with `main`: `git checkout v0.2.0` failed in a clone)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    deploying = (DOCS / "deploying.md").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    plugin = json.loads((ROOT / "site-plugin" / "package.json").read_text())["version"]
    locked = json.loads((ROOT / "site-plugin" / "package-lock.json").read_text())["packages"][""]
    mcp = re.search(r'^SERVER_VERSION = "([^"]+)"', (ROOT / "functions/api/mcp.py").read_text(), re.M)[1]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] \(commit `([0-9a-f]{40})`\) — \d{4}-\d\d-\d\d$",
                          changelog, re.M)
    assert releases and releases[0][0] == version == plugin == locked["version"] == mcp
    assert changelog.index("## [Unreleased]") < changelog.index(f"## [{version}]")
    commit = releases[0][1]
    for text in (readme, deploying):
        assert f"git checkout {commit}" in text and "fork" in text and "mirror" in text
        assert not re.search(r"git (-C \S+ )?checkout v\d", text)  # a tag a clone does not have
        assert {c for c in re.findall(r"\b[0-9a-f]{12,40}\b", text) if not commit.startswith(c)} == set()
    assert "](CHANGELOG.md)" in readme and "](../CHANGELOG.md)" in deploying


def test_the_pinned_commits_exist_in_a_clone_without_tags(tmp_path):
    """Each release's commit, checked out in a fresh `git clone --no-tags` (a fork has no tags
    either), says its release's version: "Your pinned copy" can be followed to the letter."""
    import subprocess

    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] \(commit `([0-9a-f]{40})`\)", changelog, re.M)
    assert len(releases) >= 2
    clone = tmp_path / "textbook-chat"
    git = ["git", "-c", "advice.detachedHead=false"]
    subprocess.run([*git, "clone", "-q", "--no-tags", str(ROOT), str(clone)], check=True, timeout=300)
    assert subprocess.run(["git", "tag"], cwd=clone, capture_output=True, text=True).stdout == ""
    for version, commit in releases:
        done = subprocess.run([*git, "checkout", "-q", commit], cwd=clone, capture_output=True, text=True)
        assert done.returncode == 0, f"{version}: {done.stderr}"
        said = re.search(r'^version = "([^"]+)"', (clone / "pyproject.toml").read_text(), re.M)[1]
        assert said == version, f"commit {commit} says {said}, not {version}"


def _anchors(path: Path) -> set[str]:
    """The heading ids GitHub gives a Markdown page (lowercase, punctuation dropped, spaces as -)."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower().replace("`", "")).replace(" ", "-")
            for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


PAGES = ["README.md", "CHANGELOG.md", "site-plugin/README.md",
         *sorted(str(p.relative_to(ROOT)) for p in DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_resolve(page):
    """Every relative link, and every #anchor into a Markdown page, lands on something."""
    path = ROOT / page
    text = re.sub(r"```.*?```|`[^`\n]*`", "", path.read_text(encoding="utf-8"), flags=re.S)
    links = re.findall(r"\]\((?!https?://|mailto:)([^)\s]+)\)", text)
    assert page != "README.md" or len(links) >= 8
    missing = []
    for link in links:
        target, _, anchor = link.partition("#")
        file = (path.parent / target) if target else path
        if not file.exists():
            missing.append(link)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            missing.append(link)
    assert not missing, f"{page}: {missing}"


def test_the_docs_pages_are_all_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in DOCS.glob("*.md")}
    assert {"deploying.md", "http-api.md", "cli.md", "answers.md", "development.md"} <= pages
    assert {p for p in pages if f"](docs/{p})" not in readme} == set()


def test_the_readme_is_a_front_page():
    """At most 16 KB, with a table of contents that links every section, and the parts an
    author looks for first: the two commands and the local path with `serve --watch`."""
    raw = (ROOT / "README.md").read_bytes()
    assert len(raw) <= 16_000, f"README.md is {len(raw):,} bytes; move detail to a docs/ page"
    text = raw.decode("utf-8")
    sections = re.findall(r"^## (.+)$", text, re.M)
    assert sections[0] == "Contents"
    contents = text[text.index("## Contents"):text.index("\n## ", text.index("## Contents") + 3)]
    linked = set(re.findall(r"\]\(#([\w-]+)\)", contents))
    assert linked == _anchors(ROOT / "README.md") - {"textbook-chat", "contents"}
    assert "scripts/demo.sh" in text and "scripts/test.sh" in text
    local = text[text.index("## Your own book, locally"):]
    assert "textbook-chat serve --watch docs" in local and "textbook-chat ask" in local


def test_the_plugin_readme_describes_the_workflow_that_exists():
    """site-plugin/README.md's workflow section names only inputs reindex.yml takes, every
    required one, and its jobs; nothing it does not do (pip caching, an input `textbook-chat`)."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "reindex.yml").read_text())
    inputs = workflow[True]["workflow_call"]["inputs"]  # YAML 1.1 reads `on:` as True
    text = (ROOT / "site-plugin" / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Reindexing on every push"):text.index("## Development")]
    named = set(re.findall(r"`([a-z]+(?:-[a-z]+)+|collection|answers)`", section))
    assert named <= set(inputs), named - set(inputs)
    assert {name for name, spec in inputs.items() if spec.get("required")} <= named
    for job in workflow["jobs"]:
        assert f"**{job}**" in section, job
    for command in ("release stage", "release switch", "textbook-chat check", "api-url"):
        assert command in section, command
    assert "pip" not in section.replace("pinned", "")  # the workflow keeps no pip cache
