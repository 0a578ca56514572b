"""The rooms' layers (issue 26): the import-linter contract of pyproject.toml covers every top-level package of
``linter/``, breaks on an upward import, and the packages have no import cycle among them.

``make test`` runs ``lint-imports`` on the tree itself; these tests show the contract can fail and that it
says what docs/architecture.md draws."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import networkx as nx
from conftest import REPO_ROOT
from test_import_graph import import_graph

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _layers() -> list[set[str]]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = config["contracts"]
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


def _top_level() -> set[str]:
    package = REPO_ROOT / "linter"
    found = {path.stem for path in package.glob("*.py") if path.name != "__init__.py"}
    found |= {path.parent.name for path in package.glob("*/__init__.py")}
    return found


def test_the_contract_names_every_package_once() -> None:
    named = [name for layer in _layers() for name in layer]
    assert sorted(named) == sorted(set(named)), "a package in two layers"
    assert set(named) == _top_level()


def test_the_architecture_document_draws_every_layer() -> None:
    text = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = sorted(name for layer in _layers() for name in layer if f"`{name}" not in text)
    assert missing == []


def test_packages_import_one_another_in_one_direction() -> None:
    """No cycle among the packages at run time: function-level imports count, TYPE_CHECKING ones do not."""
    modules = import_graph()
    packages = nx.DiGraph()
    for source, target in modules.edges:
        top_source, top_target = source.split(".")[1], target.split(".")[1] if "." in target else target
        if top_source != top_target:
            packages.add_edge(top_source, top_target, where=f"{source} -> {target}")
    cycles = list(nx.simple_cycles(packages))
    shown = [" -> ".join(cycle) + f" (first: {packages.edges[cycle[0], cycle[1 % len(cycle)]]['where']})"
             for cycle in cycles[:5]]
    assert cycles == [], "\n".join(shown)


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """The check can fail: the vocabulary (the bottom) importing the CLI (the top) is reported, with the line."""
    shutil.copytree(REPO_ROOT / "linter", tmp_path / "linter", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path)
    bottom = tmp_path / "linter" / "vocabulary.py"
    bottom.write_text(bottom.read_text(encoding="utf-8") + "\n\ndef _late() -> None:\n    import linter.cli.main\n",
                      encoding="utf-8")
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, timeout=300, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "linter.vocabulary is not allowed to import linter.cli" in result.stdout
