"""The import graph of functions/, indexer/ and textbook_chat_cli/, read from the source (ast):
no cycles, counting imports made inside functions too, and each room of functions/ imports only
what its __init__ docstring allows."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("functions", "indexer", "textbook_chat_cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports anywhere in its file (`from a import b` counts as a.b
    when b is a module, else as a)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m in known and m != name}


@cache  # read once for every test of this file
def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_graph_is_read_from_the_source():
    graph = import_graph()
    assert "functions.search.ranking" in graph["functions.search.retrieval"]
    assert "functions.api.app" in graph["functions.api.handlers.chat"]
    assert "indexer.job" in graph["textbook_chat_cli.options"]


def test_find_cycle_sees_a_cycle_through_three_modules():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# What each room of functions/ may import besides itself and the top-level modules (its
# __init__ docstring says the same in words).
ROOMS = {
    "functions.services": set(),
    "functions.search": {"functions.services"},
    "functions.answers": {"functions.services", "functions.search"},
    "functions.api": {"functions.services", "functions.search", "functions.answers"},
}
TOP = {"functions.errors", "functions.settings", "functions.deadline", "functions.cpu_turns",
       "functions.tokens"}


def room_of(module: str) -> str | None:
    return next((room for room in ROOMS if module == room or module.startswith(room + ".")), None)


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_each_room_imports_only_what_it_may(room):
    graph = import_graph()
    allowed = ROOMS[room] | {room}
    wrong = sorted(f"{m} imports {dep}" for m, deps in graph.items() if room_of(m) == room
                   for dep in deps if dep.startswith("functions.") and dep not in TOP
                   and room_of(dep) not in allowed)
    assert wrong == []


def test_top_level_modules_import_no_room():
    graph = import_graph()
    wrong = sorted(f"{m} imports {d}" for m in TOP for d in graph[m] if room_of(d))
    assert wrong == []
    assert len([p for p in (ROOT / "functions").glob("*.py") if p.name != "__init__.py"]) <= 6


def test_the_runtime_never_imports_the_indexer_or_the_cli():
    graph = import_graph()
    wrong = sorted(f"{m} imports {d}" for m, deps in graph.items() if m.startswith("functions")
                   for d in deps if not d.startswith("functions"))
    assert wrong == []
    wrong = sorted(f"{m} imports {d}" for m, deps in graph.items() if m.startswith("indexer")
                   for d in deps if d.startswith("textbook_chat_cli"))
    assert wrong == []
