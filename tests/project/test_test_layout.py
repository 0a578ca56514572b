"""The tests' own shape (issue 26): a folder per package of ``linter/`` (so a feature's tests are found by its
name), helpers in ``tests/support/``, and no wall-clock figure in any assertion (on two shared cores they fail
under load; linear-time tests compare CPU time at two sizes, absolute figures live in ``bench/``)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO_ROOT

TESTS = REPO_ROOT / "tests"
# Folders of tests about the whole tree rather than one package, and why each stands apart.
CROSS_CUTTING = {
    "project": "the tree's shape: API, layers, import graph, docs, errors, linear patterns",
    "robustness": "hostile input through every command: bounds of time, memory, output and recursion",
    "support": "helpers, no tests",
}
# Clocks a test may read only to stop waiting (a hang guard, a server's start-up), never to judge speed.
WALL_CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}
WAITING_ONLY = {"tests/robustness/test_hostile.py", "tests/support/spark_cluster.py"}


def test_every_test_folder_is_a_package_or_says_why_not() -> None:
    packages = {path.parent.name for path in (REPO_ROOT / "linter").glob("*/__init__.py")}
    folders = {path.name for path in TESTS.iterdir() if path.is_dir() and not path.name.startswith((".", "__"))}
    assert folders - packages - CROSS_CUTTING.keys() == set()
    assert sorted(path.name for path in TESTS.glob("*.py")) == ["conftest.py"], "tests belong in a folder"


def test_test_file_names_are_unique() -> None:
    """pytest imports each test file by its base name (no ``__init__.py``): two alike would collide."""
    names = [path.name for path in TESTS.rglob("test_*.py")]
    assert len(names) == len(set(names))


def _clock_reads(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in WALL_CLOCKS
            and isinstance(node.value, ast.Name) and node.value.id == "time"]


def test_no_test_reads_a_wall_clock_to_judge_speed() -> None:
    found = {str(path.relative_to(REPO_ROOT)): lines for path in sorted(TESTS.rglob("*.py"))
             if (lines := _clock_reads(path)) and str(path.relative_to(REPO_ROOT)) not in WAITING_ONLY}
    assert found == {}, "use time.process_time (CPU time) ratios at two sizes, or count operations"


def test_the_clock_check_finds_a_wall_clock(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text("import time\n\ndef test_x():\n    start = time.perf_counter()\n    assert time.time() - start < 2\n",
                      encoding="utf-8")
    assert _clock_reads(sample) == [4, 5]
