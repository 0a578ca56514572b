"""Arrows only downward (issue 16): no import cycle among ``linter/`` modules, function-level imports
included. The graph is built from the source with ``ast``, as Python would run it: imports under
``if TYPE_CHECKING:`` never run and are left out, and ``from package import submodule`` is an arrow to the
submodule, not back to the package."""

from __future__ import annotations

import ast
from collections.abc import Iterator
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


def _imports(cli: bool = True) -> Iterator[tuple[str, ast.AST, list[str], bool]]:
    """(module, import node, the linter modules it imports, whether it is inside a function) for every
    import that runs (not under TYPE_CHECKING); ``cli=False`` leaves out linter/cli/."""
    modules = _modules()
    for name, path in modules.items():
        if not cli and name.startswith("linter.cli."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        hidden = _type_checking_only(tree)
        inside = {id(node) for function in ast.walk(tree)
                  if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) for node in ast.walk(function)}
        for node in ast.walk(tree):
            if id(node) not in hidden and isinstance(node, ast.Import | ast.ImportFrom):
                targets = [target for target in _targets(node, package, modules) if target != name]
                yield name, node, targets, id(node) in inside


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(_modules())
    for name, node, targets, _ in _imports():
        for target in targets:
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


# Function-level imports of linter modules outside linter/cli/ (whose commands each import what they run, so
# `--help` and a lint start fast), and why each waits for its function instead of standing at the top.
LAZY_IMPORTS = {
    ("linter.codec.codec", "linter.engine.config"): "only Codec.load and from_files lint specs; bytes never load rules",
    ("linter.codec.codec", "linter.engine.runner"): "only Codec.load and from_files lint specs; bytes never load rules",
    ("linter.compat.api", "linter.compat.changelog"): "the library's changelog() only; compare() users skip it",
    ("linter.compat.api", "linter.compat.matrix"): "the library's matrix() only; compare() users skip it",
    ("linter.compat.api", "linter.compat.suggest"): "the library's suggest() only; compare() users skip it",
    ("linter.compat.sources", "linter.engine.runner"): "only --changed-since and read_specs ask; changelog and matrix"
                                                       " skip rules",
    ("linter.compat.sources", "linter.engine.config"): "only read_specs (replay, size --frames) asks, as Codec.load",
    ("linter.compat.sources", "linter.codec.errors"): "only read_specs raises SpecError; the package runs "
                                                      "linter/codec/__init__ (Codec), which --changed-since never uses",
    ("linter.engine.config", "linter.parse.yamlfile"): "YAML configs only: ruamel costs a cold start",
    ("linter.engine.config", "linter.engine.declarative"): "its schema compiler, for a schema edited since the "
                                                           "validator was generated; declarative imports the context",
    ("linter.engine.config", "linter.engine._config_validator"): "generated; loaded when a config is first checked",
    ("linter.engine.config", "linter.engine.patterns"): "RE2 loads only for a config value a pattern judges (or to "
                                                        "generate the validator)",
    ("linter.engine.rules", "linter.parse.yamlfile"): "rule YAML is read only when the pack cache is stale",
    ("linter.engine.declarative", "linter.engine.patterns"): "RE2 loads only when a schema is compiled (cache miss)",
    ("linter.model.schema", "linter.model._spec_validator"): "generated; loaded when a structure is first checked",
    ("linter.audit.run", "linter.compat.compare"): "runs on Spark executors: each task imports what it runs",
    ("linter.audit.run", "linter.compat.report"): "runs on Spark executors: each task imports what it runs",
    ("linter.audit.run", "linter.compat.revision"): "runs on Spark executors: each task imports what it runs",
    ("linter.audit.run", "linter.engine.config"): "runs on Spark executors: each task imports what it runs",
    ("linter.audit.run", "linter.engine.context"): "runs on Spark executors: each task imports what it runs",
    ("linter.audit.run", "linter.engine.runner"): "runs on Spark executors: each task imports what it runs",
    ("linter.audit.run", "linter.parse.document"): "runs on Spark executors: each task imports what it runs",
    ("linter.audit.run", "linter.audit.report_html"): "the report is written once, on the driver, at the end",
    ("linter.audit.run", "linter.spark.session"): "PySpark is optional: small audits run without it",
    ("linter.audit.run", "linter.report.formats"): "runs on Spark executors: each task imports what it runs",
    ("linter.frames.generate", "linter.codec"): "the codec compiles plans; `frames --help` must not pay for it",
    ("linter.size.report", "linter.size.run"): "--frames only: the corpus readers, compat.sources and Spark cost "
                                                "every `krpc-lint size` ~30 ms",
    ("linter.size.report", "linter.size.html"): "--format html only: the page's charts and parts",
    ("linter.wirecheck.findings", "linter.engine.runner"): "selection() only: Spark tasks unpickle collectors without "
                                                            "loading the rule engine",
    ("linter.readiness.formats", "linter.readiness.text"): "the --format asked for only: the CLI imports FORMATS",
    ("linter.readiness.formats", "linter.readiness.markdown"): "the --format asked for only: the CLI imports FORMATS",
    ("linter.readiness.formats", "linter.readiness.html"): "the --format asked for only: the CLI imports FORMATS",
    ("linter.spark.output", "linter.spark.schema"): "pyarrow is optional: the schema module imports it",
    ("linter.frames.extract", "linter.frames.tcp"): "only when a capture is read: corpora of rows never need it",
    ("linter.frames.extract", "linter.frames.streams"): "only when a capture is read: corpora of rows never need it",
    ("linter.frames.extract", "linter.spark.schema"): "pyarrow is optional: imported when Parquet is written",
}


def _lazy_imports() -> set[tuple[str, str]]:
    """(module, imported linter module) for every import inside a function, outside linter/cli/."""
    return {(name, target) for name, _, targets, lazy in _imports(cli=False) if lazy for target in targets}


def test_lazy_imports_are_the_listed_ones() -> None:
    """A lazy import hides an arrow from a reader of the module's top: each one is listed with its reason, and
    one that is no longer there leaves the list."""
    found = _lazy_imports()
    unlisted = sorted(found - LAZY_IMPORTS.keys())
    assert unlisted == [], "lazy imports not listed in LAZY_IMPORTS (add why, or import at the top)"
    assert sorted(LAZY_IMPORTS.keys() - found) == [], "listed lazy imports that are gone"
