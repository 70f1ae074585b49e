"""The package's layers read in one direction (docs/architecture.md): each layer is a folder of
python/qrepl, core < storage < services < tools < cli, and a module imports only from its own
layer or a lower one. No module imports, directly or through others, a module that imports it
back. Imports inside functions count too: a lazy import hides a cycle, it does not remove it."""

from __future__ import annotations

import ast
from pathlib import Path

import qrepl

PACKAGE = Path(qrepl.__file__).resolve().parent
LAYERS = ("core", "storage", "services", "tools", "cli")


def module_name(path: Path, root: Path) -> str:
    """'services.capture' for root/services/capture.py, 'cli' for root/cli/__init__.py."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path) -> set[str]:
    """The package modules (dotted, relative to the package) one file imports, relative or
    absolute, at any depth of the file. `from .x import y` counts x, and x.y if y is a module."""
    here = module_name(path, root).split(".")
    package = here if path.stem == "__init__" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                if node.level - 1 > len(package):
                    continue
            elif (node.module or "").split(".")[0] == "qrepl":
                base = []
            else:
                continue
            module = (node.module or "").removeprefix("qrepl").lstrip(".") if not node.level else node.module or ""
            target = [*base, *module.split(".")] if module else base
            if target:
                found.add(".".join(target))
            found.update(".".join([*target, alias.name]) for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "qrepl" and len(parts) > 1:
                    found.add(".".join(parts[1:]))
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    modules = {module_name(p, root): p for p in root.rglob("*.py")}
    modules.pop("", None)  # qrepl/__init__.py
    return {name: imported_modules(path, root) & modules.keys() - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes to a higher layer, as 'a -> b'; a module outside the layers is one too."""

    def rank(module: str) -> int:
        layer = module.split(".")[0]
        return LAYERS.index(layer) if layer in LAYERS else -1

    wrong = [f"{m} (outside the layers {', '.join(LAYERS)})" for m in sorted(graph) if rank(m) < 0]
    wrong += [f"{m} -> {n}" for m in sorted(graph) for n in sorted(graph[m]) if rank(n) > rank(m) >= 0]
    return wrong


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_import_goes_to_its_own_layer_or_a_lower_one():
    graph = import_graph()
    assert {m.split(".")[0] for m in graph} == set(LAYERS)
    assert upward_imports(graph) == []


def test_the_cli_and_the_demo_reach_storage_only_through_services():
    """They name a publication by its schema and call a service; they never open its tables."""
    graph = import_graph()
    for module in [m for m in graph if m.split(".")[0] == "cli"] + ["tools.demo"]:
        assert not {n for n in graph[module] if n.split(".")[0] == "storage"}, module


def test_the_layer_check_finds_an_import_up_a_layer(tmp_path):
    for folder in ("storage", "services"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "services" / "svc.py").write_text("from ..storage import wh\n")
    (tmp_path / "storage" / "wh.py").write_text("def f():\n    from qrepl.services.svc import g\n")
    graph = import_graph(tmp_path)
    assert graph["storage.wh"] == {"services.svc"}
    assert upward_imports(graph) == ["storage.wh -> services.svc"]


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import(tmp_path):
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from qrepl.c import y\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    graph = import_graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


def test_the_pure_core_needs_no_spark():
    """core/ (model, reference) is the executable specification: plain Python only."""
    core = [p for p in (PACKAGE / "core").glob("*.py")]
    assert {p.stem for p in core} >= {"model", "reference"}
    for path in core:
        tree = ast.parse(path.read_text())
        roots = {
            alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        roots |= {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
        }
        assert not roots & {"pyspark", "py4j", "dbt"}, (
            f"{path.name} imports {sorted(roots & {'pyspark', 'py4j', 'dbt'})}"
        )


LONG_FILE_LINES = 400
LONG_FILE_REASON = "# over 400 lines: "


def long_files_without_a_reason(root: Path = PACKAGE) -> list[str]:
    """Every .py file under root longer than LONG_FILE_LINES whose first line is not
    `# over 400 lines: <reason>` (README.md, Contributing), as 'path (N lines)'."""
    missing = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text().splitlines()
        if len(lines) <= LONG_FILE_LINES:
            continue
        first = lines[0] if lines else ""
        if not (first.startswith(LONG_FILE_REASON) and first.removeprefix(LONG_FILE_REASON).strip()):
            missing.append(f"{path.relative_to(root)} ({len(lines)} lines)")
    return missing


def test_a_file_over_400_lines_says_why_on_its_first_line():
    """One concern per file: a longer file splits by concern or gives its reason at its top."""
    assert long_files_without_a_reason() == [], (
        f"split these by concern, or make their first line '{LONG_FILE_REASON}<reason>'"
    )
