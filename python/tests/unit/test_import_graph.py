"""The package's layers read in one direction (docs/architecture.md): no module of
python/qrepl imports, directly or through others, a module that imports it back. Imports
inside functions count too: a lazy import hides a cycle, it does not remove it."""

from __future__ import annotations

import ast
from pathlib import Path

import qrepl

PACKAGE = Path(qrepl.__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    """The qrepl modules one file imports (relative or absolute, at any depth of the file)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.level == 0 and (node.module or "").split(".")[0] == "qrepl"):
                module = (node.module or "").removeprefix("qrepl").lstrip(".")
                if module:
                    found.add(module.split(".")[0])
                else:  # `from . import x` / `from qrepl import x`
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "qrepl" and len(parts) > 1:
                    found.add(parts[1])
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return {name: imported_modules(path) & modules.keys() - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import(tmp_path):
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from qrepl.c import y\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    graph = {p.stem: imported_modules(p) for p in tmp_path.glob("*.py")}
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


def test_the_pure_core_needs_no_spark():
    """model and reference are the executable specification: plain Python only."""
    graph = import_graph()
    for core in ("model", "reference"):
        reachable, todo = set(), [core]
        while todo:
            for nxt in graph[todo.pop()] - reachable:
                reachable.add(nxt)
                todo.append(nxt)
        assert reachable <= {"model", "reference"}, f"{core} reaches {sorted(reachable)}"
        tree = ast.parse((PACKAGE / f"{core}.py").read_text())
        roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
        roots |= {node.module.split(".")[0] for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module}
        assert not roots & {"pyspark", "py4j", "dbt"}, f"{core} imports {sorted(roots & {'pyspark', 'py4j', 'dbt'})}"
