"""Build the sample textbook with the packed site plugin: a real `npm pack` → `npm ci` → `docusaurus build`;
and a versioned, two-locale site derived from it."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
    # The test sites call a local API on purpose: production builds refuse that otherwise.
    env = {**(os.environ if env is None else env), "TEXTBOOK_CHAT_ALLOW_LOCAL_API": "1"}
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


@contextmanager
def site_dir_lock() -> Iterator[None]:
    """Hold the built sites' folder (work_dir, kept between runs and shared by every checkout on
    the machine) for this test session: a second run waits for the first instead of rebuilding
    the site it is serving (that run then lost build/404.html mid-test)."""
    lock = work_dir().parent / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"\n[e2e] another test run is using {lock.parent}; waiting for it to end "
                  "(or set TEXTBOOK_CHAT_E2E_DIR to a folder of this run's own)", flush=True)
            fcntl.flock(held, fcntl.LOCK_EX)
        yield


def build_sample_site(api_url: str) -> BuiltSite:
    site = work_dir()
    timings: dict[str, float] = {}
    site.mkdir(parents=True, exist_ok=True)
    # Fresh copy of the sample every time; node_modules survives.
    for child in site.iterdir():
        if child.name not in ("node_modules", ".stamps", "build", ".textbook-chat", ".docusaurus",
                              VERSIONED_DIR):
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
        # The README's install lines: pack the plugin into the site's vendor/, install the tarball.
        vendor = site / "vendor"
        shutil.rmtree(vendor, ignore_errors=True)
        vendor.mkdir()
        _run(["npm", "pack", str(PLUGIN), "--pack-destination", "vendor"], site)
        (tarball,) = vendor.glob("docusaurus-plugin-textbook-chat-*.tgz")
        _run(["npm", "install", "--no-save", *npm_flags, f"./vendor/{tarball.name}"], site)
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


def indexer_code_hash() -> str:
    """The Python the plugin's indexer run executes (textbook_chat_cli and what it imports)."""
    digest = hashlib.sha256()
    for package in ("textbook_chat_cli", "indexer", "functions"):
        for path in sorted((REPO / package).rglob("*.py")):
            digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _read(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


# --- a versioned, two-locale site derived from the sample at test time ------------------------
# The sample itself stays unversioned (question sets, the demo and the widget tests use its URLs).
VERSION = "1.0"
LOCALE = "fr"
# A right-to-left locale, declared as Docusaurus's i18n config declares one: its pages are
# built with dir="rtl" and the site's CSS (the widget's too) flipped by rtlcss.
RTL_LOCALE = "ur"
VERSIONED_DIR = "versioned-site"
VERSIONED_TAIL = """

// Added by tests/e2e: an English + French + Urdu site whose docs have a 1.0 version and "next".
module.exports.i18n = {
  defaultLocale: 'en',
  locales: ['en', '%(locale)s', '%(rtl)s'],
  localeConfigs: {%(rtl)s: {label: 'اردو', direction: 'rtl', htmlLang: 'ur'}},
};
module.exports.plugins = [
  ...(module.exports.plugins || []),
  ['docusaurus-plugin-textbook-chat', {
    apiUrl: 'http://127.0.0.1:9/unused',
    localeLabels: {
      %(locale)s: {button: 'Demander au manuel'},
      %(rtl)s: {
        button: 'کتاب سے پوچھیں',
        title: 'اس کتاب سے پوچھیں',
        placeholder: 'اس کتاب کے بارے میں سوال پوچھیں…',
        send: 'پوچھیں',
        close: 'چیٹ بند کریں',
        sources: 'ماخذ',
        untranslatedTitle: 'ابھی ترجمہ نہیں ہوا: یہ حصہ اصل زبان میں ہے۔',
        shortcut: 'شارٹ کٹ: {keys}',
        skipToChat: 'کتاب سے پوچھیں ({keys})',
      },
    },
    // The plugin's own indexer run (a dry run that records what it read): once per build.
    indexer: {run: true, command: %(command)s, args: ['--dry-run', '--json']},
  }],
];
"""
INDEXER_WRAPPER = """#!/bin/sh
# Records each run of the plugin's indexer (with the manifests it saw), then runs it.
cd "$(dirname "$0")"
ls .textbook-chat >> indexer-runs.txt
echo "--" >> indexer-runs.txt
PYTHONPATH=%(repo)s exec %(python)s -m textbook_chat_cli "$@" > indexer-run.json
"""
# Edits made in "next" after `docs:version 1.0`: (file, old text, new text).
NEXT_EDITS = [
    ("08-safety-and-testing.md", "#### Testing the stop chain", "#### Testing the emergency stop chain"),
    ("08-safety-and-testing.md", "Press the stop and check that the wheels stop within a fraction of a second.",
     "Press the stop and check that the wheels stop within half a second, and log the stopping time."),
    ("08-safety-and-testing.md", "## A pre-run checklist",
     "## Incident reports\n\nAfter any unexpected stop, write an incident report: what the robot was "
     "commanded to do, what it did, and which log covers it.\n\n## A pre-run checklist"),
]
NEW_PAGE = ("10-field-trials.md", """---
title: Field Trials
sidebar_position: 10
---

# Field Trials

A field trial runs the robot outside the lab, on the surface and in the weather it was
built for.

## Planning a trial

Write down the route, the stop conditions and who holds the emergency stop before the
robot leaves the lab.
""")
TRANSLATION = ("08-safety-and-testing.md", """---
title: Sécurité et essais
sidebar_position: 8
---

# Sécurité et essais

Un robot est un programme informatique qui peut heurter des objets. Les habitudes de ce
chapitre coûtent peu et évitent la plupart des dégâts.

## Arrêts d'urgence {#emergency-stops}

Tout robot qui peut blesser quelqu'un a besoin d'un arrêt d'urgence qui fonctionne quand
tout le reste a échoué.

#### Tester la chaîne d'arrêt d'urgence

Un arrêt d'urgence jamais testé est un espoir, pas un système de sécurité. Testez-le au
début de chaque séance : soulevez le robot, commandez une vitesse lente, appuyez sur
l'arrêt d'urgence et vérifiez que les roues s'arrêtent en moins d'une demi-seconde.
""")


def derive_versioned(dest: Path) -> None:
    """Copy the sample, cut version 1.0, then change "next" and add the French and Urdu translations."""
    for child in dest.iterdir() if dest.is_dir() else []:
        if child.name not in ("node_modules", ".stamps", "build", ".docusaurus"):
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    dest.mkdir(parents=True, exist_ok=True)
    for path in _files(SAMPLE):
        target = dest / path.relative_to(SAMPLE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    wrapper = dest / "run-indexer.sh"
    wrapper.write_text(INDEXER_WRAPPER % {"repo": REPO, "python": sys.executable})
    wrapper.chmod(0o755)
    with (dest / "docusaurus.config.js").open("a") as config:
        config.write(VERSIONED_TAIL % {"locale": LOCALE, "rtl": RTL_LOCALE,
                                       "command": json.dumps(str(wrapper))})


def _edit_next(dest: Path) -> None:
    docs = dest / "docs"
    for name, old, new in NEXT_EDITS:
        text = (docs / name).read_text()
        assert old in text, f"{name} no longer says {old!r}: update NEXT_EDITS"
        (docs / name).write_text(text.replace(old, new, 1))
    (docs / NEW_PAGE[0]).write_text(NEW_PAGE[1])
    translated = dest / "i18n" / LOCALE / "docusaurus-plugin-content-docs" / "current" / TRANSLATION[0]
    translated.parent.mkdir(parents=True, exist_ok=True)
    translated.write_text(TRANSLATION[1])
    _translate_urdu(dest)


# Urdu (tests/e2e/translations/ur): the home page and the introduction translated with the
# `{#id}`s `docusaurus write-heading-ids` gives; safety-and-testing translated in part, its
# headings without ids (slugged from Urdu), the rest still the English text it was translated
# from, which predates next's "Incident reports"; every other page left untranslated.
URDU = Path(__file__).with_name("translations") / RTL_LOCALE
URDU_KEPT_FROM = "## Watchdogs"


def _translate_urdu(dest: Path) -> None:
    target = dest / "i18n" / RTL_LOCALE / "docusaurus-plugin-content-docs" / "current"
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(URDU.glob("*.md")):
        (target / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    english = (SAMPLE / "docs" / "08-safety-and-testing.md").read_text(encoding="utf-8")
    assert URDU_KEPT_FROM in english, f"08-safety-and-testing.md no longer has {URDU_KEPT_FROM!r}"
    partial = target / "08-safety-and-testing.md"
    partial.write_text(partial.read_text(encoding="utf-8")
                       + english[english.index(URDU_KEPT_FROM):], encoding="utf-8")


def build_versioned_site(sample: BuiltSite) -> BuiltSite:
    """The versioned English + French + Urdu site, built once per change of its inputs. It lives
    inside the sample site's folder so Node finds the same node_modules (and the packed
    plugin) there; a symlinked node_modules makes webpack load React contexts twice."""
    site = sample.site_dir / VERSIONED_DIR
    stamps = sample.site_dir / ".stamps"
    recipe = json.dumps([VERSION, LOCALE, RTL_LOCALE, VERSIONED_TAIL, INDEXER_WRAPPER, NEXT_EDITS,
                         NEW_PAGE, TRANSLATION, URDU_KEPT_FROM, sys.version])
    # The build runs the indexer (INDEXER_WRAPPER): its code is an input, wherever it is checked
    # out (a fresh clone reuses a build made from the same code).
    key = tree_hash(SAMPLE, URDU, extra=recipe + _read(stamps / "build") + _read(stamps / "plugin")
                    + indexer_code_hash())
    own = site / ".stamp"
    if _stamp_ok(own, key) and (site / "build" / RTL_LOCALE / "index.html").is_file():
        return BuiltSite(site, site / "build", site / ".textbook-chat" / "manifest.json", "", {})
    started = time.monotonic()
    derive_versioned(site)
    # webpack keeps its cache in this site's own node_modules/.cache, and trusts the packed
    # plugin by its version (as for the sample above): a changed plugin must not be served stale.
    for leftover in (site / ".docusaurus", site / "build", site / ".textbook-chat",
                     site / "node_modules" / ".cache"):
        shutil.rmtree(leftover, ignore_errors=True)
    _run(["npx", "docusaurus", "docs:version", VERSION], site)
    _edit_next(site)
    _run(["npx", "docusaurus", "build"], site)
    own.write_text(key)
    timings = {"versioned_build_s": time.monotonic() - started}
    return BuiltSite(site, site / "build", site / ".textbook-chat" / "manifest.json", "", timings)
