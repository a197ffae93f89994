"""Read baseUrl, trailingSlash, markdown.format and the docs routeBasePath/path from a
docusaurus.config.js|ts without running Node: a tolerant token scan for literal `key: value`s.

Anything that is not a literal (an env variable, a function call) keeps the Docusaurus default
and adds a warning naming the key, so the author can pass the matching CLI flag instead.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from indexer.model import SiteSettings

CONFIG_NAMES = ("docusaurus.config.ts", "docusaurus.config.js", "docusaurus.config.mjs",
                "docusaurus.config.mts", "docusaurus.config.cjs", "docusaurus.config.cts")

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\$])*`)
  | (?P<word>[A-Za-z_$][\w$]*)
  | (?P<number>\d[\w.]*)
  | (?P<other>\S)
""", re.X | re.S)
_LITERALS = {"true": True, "false": False, "undefined": None, "null": None}
_UNSET = object()


@dataclass
class SiteConfig:
    site: SiteSettings
    docs_path: str = "docs"
    warnings: list[str] = field(default_factory=list)


def find_config(site_dir: Path) -> Path | None:
    return next((site_dir / n for n in CONFIG_NAMES if (site_dir / n).is_file()), None)


def read_site_config(site_dir: Path) -> SiteSettings:
    """SiteSettings of the site in site_dir; warnings go to stderr."""
    config = load_site_config(site_dir)
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return config.site


def load_site_config(site_dir: Path) -> SiteConfig:
    path = find_config(Path(site_dir))
    if path is None:
        return SiteConfig(SiteSettings(), warnings=[f"no docusaurus.config.js|ts in {site_dir}; "
                                                    "using Docusaurus defaults"])
    return parse_site_config(path.read_text(encoding="utf-8", errors="replace"), path.name)


def parse_site_config(text: str, name: str = "docusaurus.config.ts") -> SiteConfig:
    values = _scan(text)
    config = SiteConfig(SiteSettings())
    site: dict = {}  # the SiteSettings fields the config sets

    def pick(key: str, parents: tuple[str, ...] = (), avoid: tuple[str, ...] = ()):
        for path, value in values:
            if path[-1] != key or any(p in path for p in avoid):
                continue
            if all(p in path[:-1] for p in parents):
                if value is _UNSET:
                    config.warnings.append(f"{name}: `{key}` is not a plain value; using the "
                                           "default (pass the matching command-line flag)")
                    return _UNSET
                return value
        return _UNSET

    base = pick("baseUrl", avoid=("blog", "pages", "themeConfig"))
    if isinstance(base, str):
        site["base_url"] = base if base.endswith("/") else base + "/"
    trailing = pick("trailingSlash", avoid=("themeConfig",))
    if trailing is None or isinstance(trailing, bool):
        site["trailing_slash"] = trailing
    fmt = pick("format", parents=("markdown",))
    if fmt in ("mdx", "detect"):
        site["markdown_format"] = fmt
    elif fmt is not _UNSET:
        config.warnings.append(f"{name}: markdown.format {fmt!r} is not mdx or detect; using mdx")
    skip = ("blog", "pages", "theme", "themeConfig", "sitemap", "gtag")
    route = pick("routeBasePath", avoid=skip)
    if isinstance(route, str):
        site["route_base_path"] = route
    docs_path = pick("path", parents=("docs",), avoid=skip)
    if docs_path is _UNSET:
        docs_path = pick("path", parents=("plugins",), avoid=skip)
    if isinstance(docs_path, str):
        config.docs_path = docs_path.removeprefix("./").rstrip("/") or "docs"
    config.site = replace(config.site, **site)
    return config


def _scan(text: str) -> list[tuple[tuple[str, ...], object]]:
    """Every `key: value` in object literals, with the chain of enclosing keys."""
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(text) if m.lastgroup != "space"]
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
    if kind == "word" and value in _LITERALS:
        return _LITERALS[value]
    if kind == "word" and value in consts:
        return consts[value]
    return _UNSET


def _unquote(token: str) -> str:
    body = token[1:-1]
    return re.sub(r"\\(.)", r"\1", body)
