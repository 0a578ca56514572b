"""Atomic output directories: all or nothing, and an existing output only replaced when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from linter.pipeline.output import OutputExists, atomic_directory


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
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(OutputExists, match="already exists: pass --overwrite"):
        with atomic_directory(out):
            pass
    with atomic_directory(out, overwrite=True) as work:
        (work / "new.txt").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("interruption", [RuntimeError("job failed"), KeyboardInterrupt()])
def test_an_interrupted_run_leaves_the_old_output_and_no_partial_one(tmp_path: Path, interruption) -> None:
    out = tmp_path / "audit"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(type(interruption)):
        with atomic_directory(out, overwrite=True) as work:
            (work / "half.parquet").write_text("half")
            raise interruption
    assert sorted(p.name for p in out.iterdir()) == ["old.txt"]
    assert _leftovers(tmp_path) == []
