"""Build the sample textbook with the packed site plugin: a real `npm pack` → `npm ci` → `docusaurus build`."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "textbook"
PLUGIN = REPO / "site-plugin"
BASE_URL = "/textbook-chat-sample/"
SKIP_PARTS = {"node_modules", "build", ".docusaurus", ".textbook-chat", ".cache"}

CONFIG_TAIL = """

// Added by tests/e2e: the packed docusaurus-plugin-textbook-chat.
module.exports.plugins = [
  ...(module.exports.plugins || []),
  ['docusaurus-plugin-textbook-chat', {apiUrl: process.env.TEXTBOOK_CHAT_E2E_API_URL}],
];
"""


@dataclass
class BuiltSite:
    site_dir: Path
    build_dir: Path
    manifest: Path
    api_url: str
    timings: dict[str, float] = field(default_factory=dict)


def _files(root: Path):
    for path in sorted(root.rglob("*")):
        if path.is_file() and not SKIP_PARTS.intersection(path.relative_to(root).parts):
            yield path


def tree_hash(*roots: Path, extra: str = "") -> str:
    digest = hashlib.sha256(extra.encode())
    for root in roots:
        for path in _files(root):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _run(cmd: list[str], cwd: Path, env: dict | None = None, timeout: int = 900) -> None:
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-40:])
        raise RuntimeError(f"`{' '.join(cmd)}` failed in {cwd} (exit {result.returncode}):\n{tail}")


def _stamp_ok(stamp: Path, value: str) -> bool:
    return stamp.is_file() and stamp.read_text() == value


def work_dir() -> Path:
    """Kept between runs (node_modules and the build are reused when their inputs did not change)."""
    root = os.environ.get("TEXTBOOK_CHAT_E2E_DIR") or os.path.join(tempfile.gettempdir(), "textbook-chat-e2e")
    return Path(root) / "site"


def build_sample_site(api_url: str) -> BuiltSite:
    site = work_dir()
    timings: dict[str, float] = {}
    site.mkdir(parents=True, exist_ok=True)
    # Fresh copy of the sample every time; node_modules survives.
    for child in site.iterdir():
        if child.name not in ("node_modules", ".stamps", "build", ".textbook-chat", ".docusaurus"):
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for path in _files(SAMPLE):
        dest = site / path.relative_to(SAMPLE)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    with (site / "docusaurus.config.js").open("a") as config:
        config.write(CONFIG_TAIL)
    stamps = site / ".stamps"
    stamps.mkdir(exist_ok=True)
    npm_flags = ["--no-audit", "--no-fund", "--prefer-offline"]

    deps = tree_hash(extra=(SAMPLE / "package.json").read_text() + _read(SAMPLE / "package-lock.json"))
    if not _stamp_ok(stamps / "deps", deps):
        started = time.monotonic()
        lock = (SAMPLE / "package-lock.json").is_file()
        _run(["npm", "ci" if lock else "install", *npm_flags], site)
        timings["npm_ci_s"] = time.monotonic() - started
        (stamps / "plugin").unlink(missing_ok=True)
        (stamps / "deps").write_text(deps)

    plugin = tree_hash(PLUGIN / "src", extra=(PLUGIN / "package.json").read_text())
    if not _stamp_ok(stamps / "plugin", plugin):
        started = time.monotonic()
        pack_dir = site / ".pack"
        shutil.rmtree(pack_dir, ignore_errors=True)
        pack_dir.mkdir()
        _run(["npm", "pack", "--pack-destination", str(pack_dir)], PLUGIN)
        (tarball,) = pack_dir.glob("*.tgz")
        _run(["npm", "install", "--no-save", *npm_flags, str(tarball)], site)
        timings["plugin_install_s"] = time.monotonic() - started
        (stamps / "plugin").write_text(plugin)
        (stamps / "build").unlink(missing_ok=True)

    build = tree_hash(SAMPLE, extra=plugin + deps + api_url)
    if not _stamp_ok(stamps / "build", build) or not (site / "build" / "index.html").is_file():
        started = time.monotonic()
        # webpack's persistent cache trusts node_modules by package version, and the packed
        # plugin keeps its version while its code changes: start from a clean cache.
        shutil.rmtree(site / "node_modules" / ".cache", ignore_errors=True)
        shutil.rmtree(site / ".docusaurus", ignore_errors=True)
        env = {**os.environ, "TEXTBOOK_CHAT_E2E_API_URL": api_url}
        _run(["npx", "docusaurus", "build"], site, env=env)
        timings["docusaurus_build_s"] = time.monotonic() - started
        (stamps / "build").write_text(build)
    return BuiltSite(site, site / "build", site / ".textbook-chat" / "manifest.json", api_url, timings)


def _read(path: Path) -> str:
    return path.read_text() if path.is_file() else ""
