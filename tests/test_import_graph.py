"""Arrows only downward (issue 16): no import cycle among ``linter/`` modules, function-level imports
included. The graph is built from the source with ``ast``, as Python would run it: imports under
``if TYPE_CHECKING:`` never run and are left out, and ``from package import submodule`` is an arrow to the
submodule, not back to the package."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
from conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "linter"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_submodule(name: str, modules: dict[str, Path]) -> bool:
    """A module of the tree, or a compiled one (``linter.codec._speedups``)."""
    if name in modules:
        return True
    directory = REPO_ROOT.joinpath(*name.split(".")[:-1])
    return any(directory.glob(f"{name.rsplit('.', 1)[-1]}.*.so"))


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of import nodes inside ``if TYPE_CHECKING:`` blocks."""
    hidden = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            hidden.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return hidden


def _targets(node: ast.AST, package: str, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*parts, base] if base else parts)
    submodules = [f"{base}.{alias.name}" for alias in node.names if _is_submodule(f"{base}.{alias.name}", modules)]
    targets = [name for name in submodules if name in modules]
    if len(submodules) < len(node.names) and base in modules:
        targets.append(base)  # some names are the module's own attributes
    return targets


def import_graph() -> nx.DiGraph:
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        hidden = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in hidden:
                continue
            for target in _targets(node, package, modules):
                if target != name:
                    graph.add_edge(name, target, line=node.lineno)
    return graph


def test_no_module_of_linter_imports_itself_back() -> None:
    graph = import_graph()
    cycles = list(nx.simple_cycles(graph))
    shown = ["  " + " -> ".join(f"{a} (line {graph.edges[a, b]['line']})"
                               for a, b in zip(cycle, [*cycle[1:], cycle[0]])) for cycle in cycles[:10]]
    assert not cycles, f"{len(cycles)} import cycle(s), function-level imports included:\n" + "\n".join(shown)


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    """The check can fail: an import inside a function is an arrow (the CLI's commands import the engine
    lazily), one under TYPE_CHECKING is not, and the known layers point the right way."""
    graph = import_graph()
    assert graph.has_edge("linter.cli.main", "linter.engine.runner")  # imported inside lint_command
    assert graph.has_edge("linter.engine.runner", "linter.engine.rules")
    assert not graph.has_edge("linter.engine.cache", "linter.engine.rules")  # only under TYPE_CHECKING
    assert len(graph) > 60
