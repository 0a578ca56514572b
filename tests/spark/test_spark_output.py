"""Atomic output directories: all or nothing, and an existing output only replaced when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from linter.audit.run import reads_history
from linter.spark.output import (
    MARKER,
    OutputExists,
    OutputOverInput,
    atomic_directory,
)


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_a_finished_run_appears_whole(tmp_path: Path) -> None:
    out = tmp_path / "audit"
    with atomic_directory(out) as work:
        (work / "report.html").write_text("done")
        assert not out.exists()
    assert (out / "report.html").read_text() == "done"
    assert _leftovers(tmp_path) == []


def test_an_existing_output_is_refused_then_replaced_with_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "audit"
    with atomic_directory(out) as work:
        (work / "old.txt").write_text("old")
    with pytest.raises(OutputExists, match="already exists: pass --overwrite"):
        with atomic_directory(out):
            pass
    with atomic_directory(out, overwrite=True) as work:
        (work / "new.txt").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "new.txt"]
    assert _leftovers(tmp_path) == []


def test_overwrite_replaces_only_what_krpc_lint_wrote(tmp_path: Path) -> None:
    """Issue 14: `audit repo --out repo --overwrite` deleted the audited repository."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "Spec.json").write_text("{}")
    with pytest.raises(OutputOverInput, match="it is an input"):
        with atomic_directory(repo, overwrite=True, inputs=[repo], reads=reads_history):
            pass
    with pytest.raises(OutputOverInput, match="it contains an input"):
        with atomic_directory(tmp_path, overwrite=True, inputs=[repo], reads=reads_history):
            pass
    with pytest.raises(OutputOverInput, match="where the run reads it"):
        with atomic_directory(repo / ".git" / "x", overwrite=True, inputs=[repo], reads=reads_history):
            pass
    with atomic_directory(repo / "audit", inputs=[repo], reads=reads_history) as work:  # the working tree: not read
        (work / "a.txt").write_text("a")
    assert (repo / "audit" / "a.txt").is_file()
    with pytest.raises(OutputOverInput, match="where the run reads it"):  # without `reads`, anywhere inside is refused
        with atomic_directory(repo / "audit", overwrite=True, inputs=[repo]):
            pass
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep")
    with pytest.raises(OutputExists, match="a directory krpc-lint did not write"):
        with atomic_directory(mine, overwrite=True):
            pass
    assert (repo / "Spec.json").read_text() == "{}" and (mine / "todo.txt").read_text() == "keep"


@pytest.mark.parametrize("interruption", [RuntimeError("job failed"), KeyboardInterrupt()])
def test_an_interrupted_run_leaves_the_old_output_and_no_partial_one(tmp_path: Path, interruption) -> None:
    out = tmp_path / "audit"
    out.mkdir()
    (out / MARKER).write_text("")
    (out / "old.txt").write_text("old")
    with pytest.raises(type(interruption)):
        with atomic_directory(out, overwrite=True) as work:
            (work / "half.parquet").write_text("half")
            raise interruption
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "old.txt"]
    assert _leftovers(tmp_path) == []
