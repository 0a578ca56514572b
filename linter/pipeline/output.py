"""Atomic outputs (directories and files): a run writes into a temporary sibling, renamed into
place at the end.

An interrupted or failed run leaves the previous output (or nothing) — never half a dataset;
an existing output is replaced only when asked (``--overwrite``).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class OutputExists(FileExistsError):
    """The output is there and ``--overwrite`` was not given."""


def _partial(out: str | os.PathLike[str], overwrite: bool) -> tuple[Path, Path]:
    """(target, a temporary sibling name for it), after refusing an existing target without ``overwrite``."""
    target = Path(out).absolute()
    if target.exists() and not overwrite:
        raise OutputExists(f"{out} already exists: pass --overwrite to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target, target.parent / f".{target.name}.partial-{uuid.uuid4().hex[:8]}"


@contextmanager
def atomic_file(out: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``out``; once written it replaces ``out`` in one rename."""
    target, partial = _partial(out, overwrite)
    try:
        yield partial
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def atomic_directory(out: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a fresh temporary directory beside ``out``; on success it becomes ``out``."""
    target, temporary = _partial(out, overwrite)
    temporary.mkdir()
    try:
        yield temporary
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    _replace(temporary, target)


def _replace(source: Path, target: Path) -> None:
    """Move ``source`` to ``target``; an old ``target`` is moved aside first and removed after."""
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(target, old)
    os.rename(source, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()


def write_parquet(rows: list[dict], ddl: str, directory: Path) -> None:
    """``rows`` as a one-file Parquet dataset ``directory/part-00000.parquet`` with the DDL's columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from linter.pipeline.schema import arrow_schema

    directory.mkdir(parents=True)
    table = pa.Table.from_pylist(rows, schema=arrow_schema(ddl))
    pq.write_table(table, directory / "part-00000.parquet")
