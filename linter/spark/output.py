"""Atomic outputs (directories and files): a run writes into a temporary sibling, renamed into
place at the end.

An interrupted or failed run leaves the previous output (or nothing) — never half a dataset;
an existing output is replaced only when asked (``--overwrite``).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from linter.errors import WRITE_ERRNOS, KrpcLintError, cannot_write
from linter.parse.files import OutputOverInput, refuse_overlap

__all__ = ["MARKER", "OutputExists", "OutputOverInput", "atomic_directory", "atomic_file", "write_parquet"]


Reads = Callable[[Path, Path], bool]  # (target, input directory) -> does the run read there; see refuse_overlap
MARKER = ".krpc-lint-output"  # in every output directory: --overwrite replaces only what krpc-lint wrote


class OutputExists(KrpcLintError, FileExistsError):
    """The output is there and ``--overwrite`` was not given (or it is not krpc-lint's to replace)."""


def _partial(out: str | os.PathLike[str], overwrite: bool, inputs: Iterable[str | os.PathLike[str] | None] = (),
             reads: Reads | None = None) -> tuple[Path, Path]:
    """(target, a temporary sibling name for it), after refusing a target over an input, an existing target
    without ``overwrite``, and an existing directory that krpc-lint did not write (it has no MARKER)."""
    refuse_overlap(out, inputs, reads=reads)
    target = Path(out).absolute()
    if target.exists() and not (target.is_file() or target.is_dir()):
        raise OutputExists(f"{out} is not a regular file or directory: choose a path for the output")
    if target.exists() and not overwrite:
        raise OutputExists(f"{out} already exists: pass --overwrite to replace it")
    if target.is_dir() and any(target.iterdir()) and not (target / MARKER).is_file():
        raise OutputExists(f"{out} is a directory krpc-lint did not write: --overwrite replaces only an earlier "
                           "output; remove it yourself or choose another path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(str(out), exc) from None
    return target, target.parent / f".{target.name}.partial-{uuid.uuid4().hex[:8]}"


@contextmanager
def atomic_file(out: str | os.PathLike[str], *, overwrite: bool = False,
                inputs: Iterable[str | os.PathLike[str] | None] = (), reads: Reads | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``out``; once written it replaces ``out`` in one rename."""
    target, partial = _partial(out, overwrite, inputs, reads)
    with _written(out):
        partial.touch()  # a directory that refuses files is said now, before any work
    try:
        with _written(out, WRITE_ERRNOS):
            yield partial
        with _written(out):
            os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def atomic_directory(out: str | os.PathLike[str], *, overwrite: bool = False,
                     inputs: Iterable[str | os.PathLike[str] | None] = (), reads: Reads | None = None
                     ) -> Iterator[Path]:
    """Yield a fresh temporary directory beside ``out`` (marked as krpc-lint's); on success it becomes ``out``."""
    target, temporary = _partial(out, overwrite, inputs, reads)
    try:
        with _written(out):  # a directory that refuses files is said now, before any work
            temporary.mkdir()
            (temporary / MARKER).write_text("written by krpc-lint; --overwrite may replace this directory\n")
        with _written(out, WRITE_ERRNOS):
            yield temporary
        with _written(out):
            _replace(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


@contextmanager
def _written(out: str | os.PathLike[str], errnos: frozenset[int] | None = None) -> Iterator[None]:
    """An ``OSError`` inside (only those with ``errnos``, when given: the work itself also reads) as the one
    ``OUT: cannot write: REASON`` error."""
    try:
        yield
    except OSError as exc:
        if errnos is not None and exc.errno not in errnos:
            raise
        raise cannot_write(str(out), exc) from None


def _replace(source: Path, target: Path) -> None:
    """Move ``source`` to ``target``; an old ``target`` is moved aside first and removed after."""
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(target, old)
    os.rename(source, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()


def write_parquet(rows: list[dict[str, Any]], ddl: str, directory: Path) -> None:
    """``rows`` as a one-file Parquet dataset ``directory/part-00000.parquet`` with the DDL's columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from linter.spark.schema import arrow_schema

    directory.mkdir(parents=True)
    table = pa.Table.from_pylist(rows, schema=arrow_schema(ddl))
    pq.write_table(table, directory / "part-00000.parquet")
