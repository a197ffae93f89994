"""Read baseUrl, trailingSlash, markdown.format and the docs routeBasePath/path of a site the
way Docusaurus does: its docusaurus.config.* evaluated by the site's own Node toolchain
(indexer/read_config.cjs: @docusaurus/utils' loader, else the site's jiti, else Node).

Only when that cannot run (no Node, the site's modules not installed, the config throws) is
the file read by pattern, a tolerant token scan for literal `key: value`s; then every setting
it could not read keeps the Docusaurus default and a warning names it and the flag that sets it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from indexer.model import SiteSettings

CONFIG_NAMES = ("docusaurus.config.ts", "docusaurus.config.js", "docusaurus.config.mjs",
                "docusaurus.config.mts", "docusaurus.config.cjs", "docusaurus.config.cts")
READER = Path(__file__).with_name("read_config.cjs")
NODE_SECONDS = 60
# The setting, and how the author sets it instead when it cannot be read.
FLAGS = {"baseUrl": "--base-url", "trailingSlash": "--trailing-slash",
         "routeBasePath": "--route-base-path", "markdown.format": "--markdown-format",
         "docs.path": "the DOCS_DIR argument"}

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")
  | (?P<word>[A-Za-z_$][\w$]*)
  | (?P<number>\d[\w.]*)
  | (?P<other>\S)
""", re.X | re.S)
_SUBSTITUTION = re.compile(r"\$\{\s*([A-Za-z_$][\w$]*)\s*\}")
_LITERALS = {"true": True, "false": False, "undefined": None, "null": None}
_UNSET = object()


@dataclass
class SiteConfig:
    site: SiteSettings
    docs_path: str = "docs"
    site_url: str | None = None  # `url`: the site's address (MCP's tools give absolute URLs)
    warnings: list[str] = field(default_factory=list)
    how: str = "every setting read from the file"  # or "evaluated with <loader>"


def find_config(site_dir: Path) -> Path | None:
    return next((site_dir / n for n in CONFIG_NAMES if (site_dir / n).is_file()), None)


def read_site_config(site_dir: Path) -> SiteSettings:
    """SiteSettings of the site in site_dir; warnings go to stderr."""
    config = load_site_config(site_dir)
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return config.site


def load_site_config(site_dir: Path, evaluate: bool = True) -> SiteConfig:
    path = find_config(Path(site_dir))
    if path is None:
        return SiteConfig(SiteSettings(), warnings=[f"no docusaurus.config.js|ts in {site_dir}; "
                                                    "using Docusaurus defaults"], how="defaults")
    reason = "not tried"
    if evaluate:
        evaluated, reason = evaluate_config(path)
        if evaluated is not None:
            return settings_of(evaluated, path.name)
    config = parse_site_config(path.read_text(encoding="utf-8", errors="replace"), path.name)
    if not config.warnings and not reason.startswith("Node "):  # Node absent, or the site's
        config.how = "every setting read from the file"  # packages: every setting the index
        return config  # needs was a plain value, nothing missing, nothing to do
    if not config.warnings:  # Node ran it and it failed: a Docusaurus build would fail too
        config.how = "read from the file (see the warning above)"
        config.warnings.append(f"{path.name} did not run: {reason}")
        return config
    # Only now does it matter that Node did not run it (and what would let it).
    config.how = "read from the file, some settings missing (see the warnings above)"
    config.warnings.insert(0, f"{path.name} computes some settings with code, which is read only "
                              f"by running it with the site's packages; it was not run: {reason}")
    return config


# -- evaluated by Node ---------------------------------------------------------------------

_evaluated: dict[tuple, tuple[dict | None, str]] = {}


def evaluate_config(path: Path) -> tuple[dict | None, str]:
    """The config's settings as read_config.cjs prints them, or None and why it could not run.
    Cached per file version: `serve --watch` asks again on every change."""
    try:
        st = path.stat()
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror}"
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _evaluated:
        _evaluated[key] = _run_node(path)
    return _evaluated[key]


def _run_node(path: Path) -> tuple[dict | None, str]:
    node = os.environ.get("TEXTBOOK_CHAT_NODE") or shutil.which("node")
    if not node or node == "off":
        return None, "Node.js is not installed"
    site = path.resolve().parent
    if not any((d / "node_modules").is_dir() for d in (site, *site.parents)):
        return None, ("the site's packages are not installed (`npm ci` in the site's folder "
                      "installs them)")
    try:
        done = subprocess.run([node, str(READER), str(site), str(path.resolve())], cwd=site,
                              capture_output=True, text=True, timeout=NODE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"Node could not run it ({exc})"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return None, f"Node could not load it: {why[:300]}"
    try:
        return json.loads(done.stdout.strip().splitlines()[-1]), ""
    except (ValueError, IndexError):
        return None, "Node printed no settings"


def settings_of(evaluated: dict, name: str) -> SiteConfig:
    """SiteConfig from read_config.cjs's output, normalised as Docusaurus validates it."""
    config = SiteConfig(SiteSettings(), how=f"evaluated with {evaluated.get('loader', 'node')}")
    config.site_url = site_address(evaluated.get("url"))
    site: dict = {}
    base = evaluated.get("baseUrl")
    if isinstance(base, str) and base:
        base = base if base.startswith("/") else "/" + base
        site["base_url"] = base if base.endswith("/") else base + "/"
    if isinstance(evaluated.get("trailingSlash"), bool):
        site["trailing_slash"] = evaluated["trailingSlash"]
    fmt = evaluated.get("markdownFormat")
    if fmt in ("mdx", "detect"):
        site["markdown_format"] = fmt
    elif fmt is not None:
        config.warnings.append(f"{name}: markdown.format {fmt!r} is not mdx or detect; using mdx")
    docs = evaluated.get("docs")
    if docs is None:
        config.warnings.append(f"{name}: no docs plugin is enabled (classic preset `docs`, or "
                               "@docusaurus/plugin-content-docs); using the default docs settings")
    else:
        if isinstance(docs.get("routeBasePath"), str):
            site["route_base_path"] = docs["routeBasePath"]
        if isinstance(docs.get("path"), str):
            config.docs_path = docs["path"].removeprefix("./").rstrip("/") or "docs"
    config.site = replace(config.site, **site)
    return config


def site_address(url: object) -> str | None:
    """The config's `url` (`https://you.github.io`, no path: Docusaurus puts the baseUrl after
    it), or None when it is not a plain http(s) address."""
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return url.rstrip("/")
    return None


# -- read by pattern (the last resort) -------------------------------------------------------

def parse_site_config(text: str, name: str = "docusaurus.config.ts") -> SiteConfig:
    values = _scan(text)
    config = SiteConfig(SiteSettings())
    config.site_url = site_address(next((v for path, v in values if path == ("url",)), None))
    site: dict = {}  # the SiteSettings fields the config sets

    def pick(key: str, parents: tuple[str, ...] = (), avoid: tuple[str, ...] = (),
             label: str | None = None):
        for path, value in values:
            if path[-1] != key or any(p in path for p in avoid):
                continue
            if all(p in path[:-1] for p in parents):
                if value is _UNSET:
                    label = label or key
                    config.warnings.append(
                        f"{name}: could not read `{label}` (not a plain value); using the "
                        f"Docusaurus default: pass {FLAGS[label]} if the site sets another")
                    return _UNSET
                return value
        return _UNSET

    base = pick("baseUrl", avoid=("blog", "pages", "themeConfig"))
    if isinstance(base, str):
        site["base_url"] = base if base.endswith("/") else base + "/"
    trailing = pick("trailingSlash", avoid=("themeConfig",))
    if trailing is None or isinstance(trailing, bool):
        site["trailing_slash"] = trailing
    fmt = pick("format", parents=("markdown",), label="markdown.format")
    if fmt in ("mdx", "detect"):
        site["markdown_format"] = fmt
    elif fmt is not _UNSET:
        config.warnings.append(f"{name}: markdown.format {fmt!r} is not mdx or detect; using mdx")
    skip = ("blog", "pages", "theme", "themeConfig", "sitemap", "gtag")
    route = pick("routeBasePath", avoid=skip)
    if isinstance(route, str):
        site["route_base_path"] = route
    docs_path = pick("path", parents=("docs",), avoid=skip, label="docs.path")
    if docs_path is _UNSET:
        docs_path = pick("path", parents=("plugins",), avoid=skip, label="docs.path")
    if isinstance(docs_path, str):
        config.docs_path = docs_path.removeprefix("./").rstrip("/") or "docs"
    config.site = replace(config.site, **site)
    return config


def _tokens(text: str) -> list[tuple[str, str]]:
    """JS tokens (no whitespace or comments); a template literal, `${...}` and all, is one."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "`":
            end = _template_end(text, i)
            out.append(("template", text[i:end]))
            i = end
            continue
        m = _TOKEN.match(text, i)
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group()))
        i = m.end()
    return out


def _template_end(text: str, i: int) -> int:
    """Index after the template literal opening at text[i] (its `${}` may nest templates)."""
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == "`":
            return i + 1
        elif text.startswith("${", i):
            i = _expression_end(text, i + 2)
        else:
            i += 1
    return i


def _expression_end(text: str, i: int) -> int:
    depth = 1
    while i < len(text):
        ch = text[i]
        if ch == "`":
            i = _template_end(text, i)
            continue
        if ch in "'\"":
            m = _TOKEN.match(text, i)
            i = m.end()
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        i += 1
        if depth == 0:
            return i
    return i


def _scan(text: str) -> list[tuple[tuple[str, ...], object]]:
    """Every `key: value` in object literals, with the chain of enclosing keys."""
    tokens = _tokens(text)
    consts: dict[str, object] = {}
    found: list[tuple[tuple[str, ...], object]] = []
    stack: list[str] = []
    pending = ""
    for i, (kind, value) in enumerate(tokens):
        nxt = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        if value in ("{", "["):
            stack.append(pending)
            pending = ""
        elif value in ("}", "]"):
            if stack:
                stack.pop()
        elif kind in ("word", "string") and nxt == ":" and stack:
            pending = _unquote(value) if kind == "string" else value
            found.append(((*stack, pending), _value(tokens, i + 2, consts)))
        elif kind == "word" and value in ("const", "let", "var") and i + 2 < len(tokens):
            if tokens[i + 2][1] == "=":
                consts[tokens[i + 1][1]] = _value(tokens, i + 3, consts)
        elif kind == "string" and stack:
            pending = _unquote(value)  # ['@docusaurus/plugin-content-docs', {...}] names the object
    return [(tuple(p for p in path if p), v) for path, v in found]


def _value(tokens, i: int, consts: dict) -> object:
    """A literal value ending at `,` `}` `;` or a newline-free end; anything else is _UNSET."""
    if i >= len(tokens):
        return _UNSET
    kind, value = tokens[i]
    end = tokens[i + 1][1] if i + 1 < len(tokens) else ","
    if end not in (",", "}", ";", "]") and end not in ("as", "satisfies"):
        return _UNSET
    if kind == "string":
        return _unquote(value)
    if kind == "template":
        return _template(value, consts)
    if kind == "word" and value in _LITERALS:
        return _LITERALS[value]
    if kind == "word" and value in consts:
        return consts[value]
    return _UNSET


def _template(token: str, consts: dict) -> object:
    """`/${projectName}/` with projectName a string constant of the file; else _UNSET."""
    body = token[1:-1]
    names = _SUBSTITUTION.findall(body)
    if "${" in _SUBSTITUTION.sub("", body) or not all(isinstance(consts.get(n), str) for n in names):
        return _UNSET
    return re.sub(r"\\(.)", r"\1", _SUBSTITUTION.sub(lambda m: consts[m.group(1)], body))


def _unquote(token: str) -> str:
    body = token[1:-1]
    return re.sub(r"\\(.)", r"\1", body)
