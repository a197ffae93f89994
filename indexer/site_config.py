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
    title: str | None = None  # the site's `title`: the book, as every command names it
    warnings: list[str] = field(default_factory=list)
    how: str = "every setting read from the file"  # or "evaluated with <loader>"
    docs_instances: list = field(default_factory=list)  # every docs plugin instance found


def find_config(site_dir: Path) -> Path | None:
    return next((site_dir / n for n in CONFIG_NAMES if (site_dir / n).is_file()), None)


def read_site_config(site_dir: Path) -> SiteSettings:
    """SiteSettings of the site in site_dir; warnings go to stderr."""
    config = load_site_config(site_dir)
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return config.site


def load_site_config(site_dir: Path, evaluate: bool = True,
                     docs_dir: str | None = None) -> SiteConfig:
    """The site's settings; docs_dir (the indexed folder, relative to site_dir) picks the docs
    plugin instance whose `path` it is, else the default instance's settings are used."""
    path = find_config(Path(site_dir))
    if path is None:
        return SiteConfig(SiteSettings(), warnings=[f"no docusaurus.config.js|ts in {site_dir}; "
                                                    "using Docusaurus defaults"], how="defaults")
    reason = "not tried"
    if evaluate:
        evaluated, reason = evaluate_config(path)
        if evaluated is not None:
            return settings_of(evaluated, path.name, docs_dir)
    config = parse_site_config(path.read_text(encoding="utf-8", errors="replace"), path.name,
                               docs_dir)
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
    node = os.environ.get("TEXTBOOK_CHAT_NODE") or shutil.which("node")
    if not node or node == "off":
        return None, "Node.js is not installed"
    if not _site_modules(path.resolve().parent):  # not cached: `npm ci` may come next
        return None, ("the site's packages are not installed (`npm ci` in the site's folder "
                      "installs them)")
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _evaluated:
        _evaluated[key] = _run_node(node, path)
    return _evaluated[key]


def _run_node(node: str, path: Path) -> tuple[dict | None, str]:
    site = path.resolve().parent
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


def _site_modules(site: Path) -> bool:
    """Whether Node would load the config with the site's own packages: its node_modules, or a
    workspace's above it that holds Docusaurus. Another project's node_modules in a folder
    above (textbook-chat's own deploy tooling, after `npm ci` in the clone) is not the site's."""
    if (site / "node_modules").is_dir():
        return True
    return any((d / "node_modules" / "@docusaurus" / "core").is_dir() for d in site.parents)


def settings_of(evaluated: dict, name: str, docs_dir: str | None = None) -> SiteConfig:
    """SiteConfig from read_config.cjs's output, normalised as Docusaurus validates it."""
    config = SiteConfig(SiteSettings(), how=f"evaluated with {evaluated.get('loader', 'node')}")
    config.site_url = site_address(evaluated.get("url"))
    config.title = evaluated["title"] if isinstance(evaluated.get("title"), str) else None
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
    config.docs_instances = [DocsInstance(d.get("id"), d.get("path"), d.get("routeBasePath"))
                             for d in evaluated.get("docsInstances") or []]
    docs = choose_docs(config.docs_instances, docs_dir)
    if docs is None:
        config.warnings.append(f"{name}: no docs plugin is enabled (classic preset `docs`, or "
                               "@docusaurus/plugin-content-docs); using the default docs settings")
    else:
        if isinstance(docs.route_base_path, str):
            site["route_base_path"] = docs.route_base_path
        if isinstance(docs.path, str):
            config.docs_path = _folder(docs.path)
    config.site = replace(config.site, **site)
    return config


def site_address(url: object) -> str | None:
    """The config's `url` (`https://you.github.io`, no path: Docusaurus puts the baseUrl after
    it), or None when it is not a plain http(s) address."""
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return url.rstrip("/")
    return None


# -- the docs instance ----------------------------------------------------------------------

CLASSIC = re.compile(r"(^|[/\\@])(preset-classic|classic)(/index\.js)?$")
DOCS_PLUGIN = re.compile(r"(^|[/\\@])((docusaurus-)?plugin-content-docs|content-docs)(/(lib/)?index\.js)?$")


@dataclass
class DocsInstance:
    """One docs plugin instance's options, as far as they could be read: its `id`, `path`,
    `routeBasePath` (a string, None when not set, _UNSET when set by code), and whether its
    options are a literal object at all."""

    id: object = None
    path: object = None
    route_base_path: object = None
    readable: bool = True

    @property
    def default(self) -> bool:
        return self.id in (None, "default")


def choose_docs(instances: list[DocsInstance], docs_dir: str | None) -> DocsInstance | None:
    """The instance the indexed folder belongs to: the one whose `path` is docs_dir (relative
    to the site), else the default instance (no `id`), as Docusaurus names it; None if none."""
    if docs_dir is not None:
        wanted = _folder(docs_dir)
        for instance in instances:
            if isinstance(instance.path, str) and _folder(instance.path) == wanted:
                return instance
    return next((i for i in instances if i.default), None)


def _folder(path: str) -> str:
    return path.replace("\\", "/").removeprefix("./").rstrip("/") or "docs"


# -- read by pattern (the last resort) -------------------------------------------------------

def parse_site_config(text: str, name: str = "docusaurus.config.ts",
                      docs_dir: str | None = None) -> SiteConfig:
    """The settings the index needs, read from the file's literal values. The docs settings
    are the docs instance's own (a blog's, a changelog plugin's or a second docs instance's
    `routeBasePath` never count); a setting it cannot read for certain keeps the Docusaurus
    default and a warning names the flag that sets it. docs_dir (relative to the site) picks
    the instance whose `path` it is."""
    scan = _scan(text)
    values = scan.values
    config = SiteConfig(SiteSettings())
    config.site_url = site_address(next((v for path, v in values if path == ("url",)), None))
    title = next((v for path, v in values if path == ("title",)), None)
    config.title = title if isinstance(title, str) else None
    site: dict = {}  # the SiteSettings fields the config sets

    def unread(label: str, why: str = "not a plain value") -> None:
        config.warnings.append(
            f"{name}: could not read `{label}` ({why}); using the Docusaurus default: "
            f"pass {FLAGS[label]} if the site sets another")

    def pick(key: str, parents: tuple[str, ...] = (), avoid: tuple[str, ...] = (),
             label: str | None = None):
        for path, value in values:
            if path[-1] != key or any(p in path for p in avoid):
                continue
            if all(p in path[:-1] for p in parents):
                if value is _UNSET:
                    unread(label or key)
                return value
        return _UNSET

    base = pick("baseUrl", avoid=("blog", "pages", "themeConfig"))
    if isinstance(base, str):
        site["base_url"] = base if base.endswith("/") else base + "/"
    elif base is _UNSET and not config.warnings and scan.spread:
        unread("baseUrl", "not in the file: it comes from code")  # Docusaurus requires one
    trailing = pick("trailingSlash", avoid=("themeConfig",))
    if trailing is None or isinstance(trailing, bool):
        site["trailing_slash"] = trailing
    fmt = pick("format", parents=("markdown",), label="markdown.format")
    if fmt in ("mdx", "detect"):
        site["markdown_format"] = fmt
    elif fmt is not _UNSET:
        config.warnings.append(f"{name}: markdown.format {fmt!r} is not mdx or detect; using mdx")
    config.docs_instances = scan.docs
    docs = choose_docs(scan.docs, docs_dir)
    others = [i for i in scan.docs if i is not docs]
    if docs is None and (scan.docs_unknown or scan.spread
                         or any(not i.readable or i.id is _UNSET for i in others)):
        unread("routeBasePath", "the docs plugin's options are computed")
        unread("docs.path", "the docs plugin's options are computed")
    elif docs is None and others:
        unread("routeBasePath", f"no docs plugin instance has the path {docs_dir or 'docs'}")
    elif docs is not None and not docs.readable:
        unread("routeBasePath", "the docs plugin's options are not an object in the file")
        unread("docs.path", "the docs plugin's options are not an object in the file")
    elif docs is not None:
        if docs.route_base_path is _UNSET:
            unread("routeBasePath")
        elif isinstance(docs.route_base_path, str):
            site["route_base_path"] = docs.route_base_path
        if docs.path is _UNSET:
            unread("docs.path")
        elif isinstance(docs.path, str):
            config.docs_path = _folder(docs.path)
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


@dataclass
class _Scan:
    values: list  # [(chain of enclosing keys, value)] of every `key: value`, in file order
    docs: list  # DocsInstance of every docs plugin instance, in the order Docusaurus loads them
    docs_unknown: bool = False  # `presets`/`plugins` (or a preset's options) computed by code
    spread: bool = False  # the config object itself is (partly) computed: `{...shared, ...}`


def _scan(text: str) -> _Scan:
    """Every `key: value` in object literals, with the chain of enclosing keys; each object
    and array item, so the docs plugin instances are told apart from other plugins'."""
    tokens = _tokens(text)
    consts: dict[str, object] = {}
    found: list[tuple[tuple[str, ...], object]] = []
    objects: list[dict] = []  # {path, keys, spread}
    items: list[tuple[tuple[str, ...], str, str]] = []  # (array's path, string, what follows)
    stack: list[tuple[str, str, int | None]] = []  # (bracket, name, object index)
    pending = ""

    def path() -> tuple[str, ...]:
        return tuple(name for _, name, _ in stack if name)

    for i, (kind, value) in enumerate(tokens):
        nxt = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        in_object = bool(stack) and stack[-1][0] == "{"
        if value == "{":
            objects.append({"path": (*path(), pending) if pending else path(), "keys": {},
                            "spread": False})
            stack.append(("{", pending, len(objects) - 1))
            pending = ""
        elif value == "[":
            stack.append(("[", pending, None))
            pending = ""
        elif value in ("}", "]", ";", "="):  # an object, array or statement ends: no name pends
            if stack and value in ("}", "]"):
                stack.pop()
            pending = ""
        elif value == "." and nxt == "." and tokens[i - 1][1] != "." and stack:
            if in_object:
                objects[stack[-1][2]]["spread"] = True
            else:
                items.append((path(), "...", ""))
        elif kind in ("word", "string") and nxt == ":" and in_object:
            pending = _unquote(value) if kind == "string" else value
            got = _value(tokens, i + 2, consts)
            found.append(((*path(), pending), got))
            objects[stack[-1][2]]["keys"].setdefault(pending, got)
        elif (kind == "word" and in_object and nxt in (",", "}")
              and tokens[i - 1][1] in ("{", ",")):  # shorthand `{baseUrl, ...}`
            got = consts.get(value, _UNSET)
            found.append(((*path(), value), got))
            objects[stack[-1][2]]["keys"].setdefault(value, got)
        elif kind == "word" and value in ("const", "let", "var") and i + 2 < len(tokens):
            if tokens[i + 2][1] == "=":
                consts[tokens[i + 1][1]] = _value(tokens, i + 3, consts)
        elif kind == "string" and stack:
            pending = _unquote(value)  # ['@docusaurus/plugin-content-docs', {...}] names the object
            if not in_object:  # an array's item: `presets: ['classic']` or a [name, options] pair
                j = i + 2
                while j < len(tokens) and tokens[j][1] == "(":  # `'classic', ({...})`
                    j += 1
                after = tokens[j][1] if nxt == "," and j < len(tokens) else ""
                pair = stack[-1][1] == ""  # the pair's own array has no key
                items.append((path(), pending, "none" if not pair or after in ("", "]") else
                              "object" if after == "{" else "code"))
    scan = _Scan([(tuple(p for p in path if p), v) for path, v in found], [])
    _find_docs(scan, objects, items)
    return scan


def _find_docs(scan: _Scan, objects: list[dict], items: list) -> None:
    """The docs plugin instances: the classic preset's `docs`, then each plugin-content-docs."""
    by_path = {}
    for obj in objects:
        by_path.setdefault(tuple(p for p in obj["path"] if p), obj)
    config = next((o for o in objects if {"baseUrl", "presets", "title", "url"} & set(o["keys"])),
                  None)
    scan.spread = config is not None and config["spread"]
    if config is not None:
        scan.docs_unknown = any(config["keys"].get(k, "[") is _UNSET for k in ("presets", "plugins"))
    for kind in ("presets", "plugins"):
        for where, name, after in items:
            if not where or where[-1] != kind:
                continue
            if name == "...":
                scan.docs_unknown = True
                continue
            if kind == "presets" and CLASSIC.search(name):
                options = by_path.get((*where, name)) if after == "object" else None
                if after == "code" or options is not None and options["spread"] and \
                        "docs" not in options["keys"]:
                    scan.docs.append(DocsInstance(readable=False))
                    continue
                docs = (options or {"keys": {}})["keys"].get("docs")
                if docs is False:
                    continue
                if docs is _UNSET and (*where, name, "docs") not in by_path:
                    scan.docs.append(DocsInstance(readable=False))
                    continue
                scan.docs.append(_instance(by_path.get((*where, name, "docs"))))
            elif kind == "plugins" and DOCS_PLUGIN.search(name):
                if after == "code":
                    scan.docs.append(DocsInstance(id=_UNSET, readable=False))
                else:
                    scan.docs.append(_instance(by_path.get((*where, name)) if after == "object" else None))


def _instance(options: dict | None) -> DocsInstance:
    if options is None:
        return DocsInstance()
    keys = options["keys"]
    if options["spread"]:  # `{...shared, path: 'x'}`: what is not in the file may be in `shared`
        return DocsInstance(keys.get("id", _UNSET), keys.get("path", _UNSET),
                            keys.get("routeBasePath", _UNSET))
    return DocsInstance(keys.get("id"), keys.get("path"), keys.get("routeBasePath"))


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
