"""docusaurus.config.* evaluated as Docusaurus loads it (indexer/read_config.cjs with the site's
own @docusaurus/utils, i.e. jiti for .ts), on the real installed site of tests/e2e: every
docusaurus.config of ../shared/corpora, the template-literal form and the sample's own."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from indexer.job import resolve_job
from indexer.model import SiteSettings
from indexer.site_config import CONFIG_NAMES, load_site_config
from tests.ports import free_port
from tests.shared import shared_dir

pytestmark = [pytest.mark.npm, pytest.mark.slow]

CORPORA = shared_dir() / "corpora"
CONFIGS = sorted(p for name in CONFIG_NAMES for p in CORPORA.glob(f"*/{name}"))
TRAILING = {"unset": None, "true": True, "false": False}

TEMPLATE_TS = """
import type {Config} from '@docusaurus/types';
const projectName = process.env.TC_PROJECT ?? 'robots-book';
const config: Config = {
  title: 'Robots',
  url: `https://someone.github.io`,
  baseUrl: `/${projectName}/`,
  trailingSlash: false,
  markdown: {format: 'detect'},
  presets: [['classic', {docs: {routeBasePath: '/', path: `./book`}, blog: false}]],
};
export default config;
"""


def _beside_site(built_site, name: str, text: str):
    """A folder inside the installed site, so Node resolves the site's node_modules from it."""
    folder = built_site.site_dir / "configs-under-test" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "docusaurus.config.ts").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("path", CONFIGS or [None], ids=[p.parent.name for p in CONFIGS] or ["absent"])
def test_every_corpus_config_is_evaluated_to_its_build_settings(built_site, path):
    if path is None:
        pytest.skip(f"shared corpora not found at {CORPORA} (set TEXTBOOK_CHAT_SHARED)")
    request = json.loads((path.parent / "truth.json").read_text(encoding="utf-8"))["request"]
    built = SiteSettings(request["base_url"], request["route_base_path"],
                         TRAILING[request["trailing_slash"]], request["format"])
    config = load_site_config(_beside_site(built_site, path.parent.name, path.read_text("utf-8")))
    assert config.how == "evaluated with @docusaurus/utils"
    assert (config.site, config.docs_path, config.warnings) == (built, "docs", [])


def test_the_template_literal_form_evaluates_and_keeps_every_setting(built_site, monkeypatch):
    folder = _beside_site(built_site, "template", TEMPLATE_TS)
    config = load_site_config(folder)
    assert config.how == "evaluated with @docusaurus/utils"
    assert (config.site, config.docs_path) == (SiteSettings("/robots-book/", "/", False, "detect"), "book")
    # what no pattern can read: the value comes from the environment, as in the real build
    (folder / "docusaurus.config.ts").write_text(TEMPLATE_TS.replace("title: 'Robots'", "title: 'R'"))
    monkeypatch.setenv("TC_PROJECT", "from-env")
    assert load_site_config(folder).site.base_url == "/from-env/"


def test_the_sample_site_config_and_its_manifest_are_found(built_site):
    config = load_site_config(built_site.site_dir)
    assert config.how == "evaluated with @docusaurus/utils"
    assert config.site == SiteSettings("/textbook-chat-sample/", "docs", None, "mdx")
    lines = []
    job = resolve_job(built_site.site_dir / "docs", say=lines.append)  # no --manifest given
    assert job.manifest == built_site.site_dir / ".textbook-chat" / "manifest.json"
    assert job.routes and "found beside the site" in lines[0]


def test_docusaurus_start_writes_the_manifest_the_build_writes(built_site):
    """`npm start` (a real `docusaurus start`) writes .textbook-chat/manifest.json before it
    serves: the build's, plus the drafts the dev server shows."""
    built_text = built_site.manifest.read_text(encoding="utf-8")
    built = json.loads(built_text)
    built_site.manifest.unlink()
    env = {**os.environ, "TEXTBOOK_CHAT_ALLOW_LOCAL_API": "1", "BROWSER": "none"}
    env.pop("NODE_ENV", None)
    proc = subprocess.Popen(["npx", "docusaurus", "start", "--no-open", "--host", "127.0.0.1",
                             "--port", str(free_port(18600, 18699))], cwd=built_site.site_dir,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        for _ in range(1800):
            if built_site.manifest.is_file() or proc.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(0.5)  # written through a temporary file: whole once it exists
        started = json.loads(built_site.manifest.read_text(encoding="utf-8"))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        built_site.manifest.write_text(built_text, encoding="utf-8")  # later tests read the build's
    assert {k: v for k, v in started.items() if k != "docs"} == {
        k: v for k, v in built.items() if k != "docs"}
    drafts = [d for d in started["docs"] if d["frontMatter"].get("draft")]
    assert drafts and all(d not in built["docs"] for d in drafts)
    assert [d for d in started["docs"] if d not in drafts] == built["docs"]
