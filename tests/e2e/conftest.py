"""Fixtures for the e2e tests: the built sample site, its static server, the API proxy, the real API, Chromium."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e import servers
from tests.e2e.site_build import (
    BASE_URL,
    REPO,
    build_sample_site,
    build_versioned_site,
    site_dir_lock,
)

CHROMIUM = os.environ.get("TEXTBOOK_CHAT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = REPO / "artifacts" / "e2e"
# Baked into the build as the widget's apiUrl; a stable port lets later runs reuse the build.
PREFERRED_API_PORT = int(os.environ.get("TEXTBOOK_CHAT_E2E_API_PORT", "48787"))


def _free(port: int) -> bool:
    with socket.socket() as s:
        # As the proxy binds it (http.server reuses addresses): a port the last run left in
        # TIME_WAIT is free, and the build that has it baked in is reused instead of redone.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def cli_command() -> list[str] | None:
    """How to run the project's CLI here (None only if the package is broken)."""
    if importlib.util.find_spec("textbook_chat_cli") is not None:
        return [sys.executable, "-m", "textbook_chat_cli"]
    found = shutil.which("textbook-chat")
    return [found] if found else None


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def api_proxy():
    port = PREFERRED_API_PORT if _free(PREFERRED_API_PORT) else 0
    with servers.running(servers.api_proxy(port)) as proxy:
        yield proxy


@pytest.fixture(scope="session")
def built_site(api_proxy):
    if not shutil.which("npm") or not shutil.which("node"):
        pytest.skip("node/npm are not installed")
    with site_dir_lock():
        started = time.monotonic()
        site = build_sample_site(servers.origin(api_proxy))
        site.timings["site_fixture_s"] = time.monotonic() - started
        print(f"\n[e2e] sample site ready: {site.timings}")
        yield site


@pytest.fixture(scope="session")
def site_server(built_site):
    with servers.running(servers.static_site(built_site.build_dir, BASE_URL)) as server:
        yield servers.origin(server) + BASE_URL


@pytest.fixture(scope="session")
def real_api(built_site, site_server, api_proxy):
    """`textbook-chat index` on the sample, then `textbook-chat serve` behind the proxy."""
    cli = cli_command()
    if cli is None:
        pytest.fail("the textbook-chat CLI (textbook_chat_cli) is not importable")
    data = Path(tempfile.mkdtemp(prefix="tc-e2e-api-"))
    env = {**os.environ, "QDRANT_PATH": str(data / "qdrant"), "OPENAI_API_KEY": "", "PYTHONPATH": str(REPO)}
    env.pop("QDRANT_URL", None)
    site = built_site.site_dir
    index = subprocess.run(
        [*cli, "index", str(site / "docs"), "--site-dir", str(site), "--manifest", str(built_site.manifest)],
        cwd=data, env=env, capture_output=True, text=True, timeout=600,
    )
    assert index.returncode == 0, f"textbook-chat index failed:\n{index.stdout}\n{index.stderr}"
    site_origin = site_server.split(BASE_URL)[0]
    try:
        # cwd=data: the test questions go to a readers' log there, not in the checkout
        with servers.textbook_chat_serve(cli, env, data, data / "serve.log",
                                         extra=("--cors-origin", site_origin)) as url:
            api_proxy.target = url
            yield url
    finally:
        api_proxy.target = None
        shutil.rmtree(data, ignore_errors=True)


# How long the fake chat model takes to rewrite a follow-up (longer than serve lets a rewrite
# take: the heuristic query is used). Its answers come at once: the test holds the page's
# request instead (ModelApi.write).
MODEL_SECONDS = 6.0


@dataclass
class ModelApi:
    """`serve` with a chat model, and the page's POST /chat held in the browser until the test
    says (`write()`): what the widget shows while the answer is written is checked first however
    slow the machine is (an order, not a race against the model's time or serve's deadline,
    which starts only when the request reaches it)."""

    url: str
    page: object
    held: list = field(default_factory=list)

    def write(self) -> None:
        """Send the question the page asked (and is waiting on) to the model."""
        deadline = time.monotonic() + 60
        while not self.held:
            assert time.monotonic() < deadline, "the page asked no question"
            self.page.wait_for_timeout(50)
        self.held.pop(0).continue_()


@pytest.fixture(scope="session")
def model_fake():
    """The fake OpenAI server model_server's chat model is (its answers stream when asked:
    `hold_streams()`, `stream_pause`)."""
    from tests.fakes.openai_server import FakeOpenAI, passage_responder

    def slow_model(body: dict) -> str:
        if "<context>" not in str(body.get("messages", [{}])[-1].get("content", "")):
            time.sleep(MODEL_SECONDS)  # a follow-up's rewrite
        return passage_responder(body)

    with FakeOpenAI(responder=slow_model) as fake:
        yield fake


@pytest.fixture(scope="session")
def model_server(built_site, site_server, model_fake):
    """`textbook-chat serve --watch` on the sample with a chat model (the fake OpenAI server)
    and local embeddings; started once (it indexes the sample as it starts) for every test that
    asks model_api, and warmed by one question."""
    import httpx

    data = Path(tempfile.mkdtemp(prefix="tc-e2e-model-"))
    fake = model_fake
    env = {**os.environ, "QDRANT_PATH": str(data / "qdrant"), "PYTHONPATH": str(REPO),
           "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": fake.base_url,
           "CHAT_PROVIDER": "openai", "EMBEDDING_PROVIDER": "local", "OMP_NUM_THREADS": "1"}
    env.pop("QDRANT_URL", None)
    watch = ("--watch", str(built_site.site_dir / "docs"), "--cors-origin", site_server.split(BASE_URL)[0])
    try:
        # any free port: a fixed range is shared with other checkouts' runs on the machine
        with servers.textbook_chat_serve(cli_command(), env, data, data / "serve.log", 0,
                                         watch) as url:
            httpx.post(f"{url}/sources", json={"question": "What is PID control?"}, timeout=300)
            yield url
    finally:
        if (data / "serve.log").exists():  # each request's route and ms, for the timings
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shutil.copy(data / "serve.log", ARTIFACTS / "model-serve.log")
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def model_api(model_server, api_proxy, page):
    """model_server behind the proxy for one test, the page's POST /chat held (ModelApi)."""
    previous = api_proxy.target
    api = ModelApi(model_server, page)
    page.route("**/chat", lambda route: api.held.append(route))
    api_proxy.target = model_server
    try:
        yield api
    finally:
        api_proxy.target = previous


# The versioned (1.0 + next), three-locale (en, fr, ur) site: built, indexed once and served once
# for every test file that asks it (test_versions, test_translated_widget).
@pytest.fixture(scope="package")
def versioned(built_site):
    started = time.monotonic()
    site = build_versioned_site(built_site)
    print(f"\n[e2e] versioned site ready in {time.monotonic() - started:.1f} s {site.timings}")
    return site


def run_cli(cli, env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([*cli, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


def site_args(site) -> list[str]:
    return [str(site.site_dir / "docs"), "--site-dir", str(site.site_dir), "--manifest", str(site.manifest)]


@pytest.fixture(scope="package")
def cli_env():
    cli = cli_command()
    data = Path(tempfile.mkdtemp(prefix="tc-e2e-versions-"))
    env = {**os.environ, "QDRANT_PATH": str(data / "qdrant"), "OPENAI_API_KEY": "",
           "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    env.pop("QDRANT_URL", None)
    yield cli, env, data
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="package")
def indexed(versioned, cli_env):
    cli, env, _ = cli_env
    first = run_cli(cli, env, "index", *site_args(versioned), "--json")
    assert first.returncode == 0, f"index failed:\n{first.stdout}\n{first.stderr}"
    return json.loads(first.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="package")
def api(indexed, cli_env):
    """`textbook-chat serve` over a copy of the versioned site's index (offline answers, real
    MiniLM): serve holds the index it opens, and test_versions runs `index` on it again."""
    cli, env, data = cli_env
    served = data / "served"
    shutil.copytree(data / "qdrant", served)
    port = int(os.environ.get("TEXTBOOK_CHAT_E2E_VERSIONS_PORT", "0"))
    with servers.textbook_chat_serve(cli, {**env, "QDRANT_PATH": str(served)}, REPO,
                                     data / "serve.log", port) as url:
        yield url


@pytest.fixture(scope="package")
def browser():
    # Package scope: Playwright's sync API keeps an asyncio loop running in this thread while it
    # lives, and the Mangum handler tests elsewhere need a thread with no running loop.
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


@pytest.fixture
def stub(api_proxy):
    """Put a stub API behind the proxy for one test: `stub(answer, status=200, headers=None, delay=0)`."""
    started = []

    def use(answer: dict, status: int = 200, headers: dict | None = None, delay: float = 0.0):
        server = servers.stub_api(answer, status, headers, delay)
        servers._serve(server)
        started.append(server)
        api_proxy.target = servers.origin(server)
        api_proxy.requests.clear()
        return server

    previous = api_proxy.target
    yield use
    api_proxy.target = previous
    for server in started:
        server.shutdown()
        server.server_close()
