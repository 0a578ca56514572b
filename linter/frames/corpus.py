"""Reading FRAMES for ``krpc-lint replay``: JSON Lines or Parquet into Spark, with each input column
cast to its type, and damaged Parquet files read here first, so that a bad file or row group becomes
a ``both_fail`` row instead of a failed Spark job."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.frames.errors import PipelineInputError
from linter.frames.generate import JSON_SUFFIXES
from linter.model.wire import WIRE
from linter.parse.discovery import files_below
from linter.parse.files import InputError
from linter.spark import schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

INPUT_COLUMNS = ("api_key", "api_version", "direction", "correlation_id", "bytes", "hex", "corrupt")
JSON_INPUT = ("api_key INT, api_version INT, direction STRING, correlation_id INT, bytes BINARY, hex STRING, "
              "corrupt STRING")
INPUT_TYPES = dict(schema.fields(JSON_INPUT))  # each input column's Spark type: what it is cast to
SPLIT_CONF, SPLITS_PER_CORE = "spark.sql.files.minPartitionNum", 4  # enough splits to keep every core busy


@contextmanager
def frames_job(spark: SparkSession, frames_path: str | Path) -> Iterator[None]:
    """Spark work over a frames corpus (replay, size): the input split for every core while it runs (the
    session's setting restored after), and an error of Spark's own turned into one line naming FRAMES."""
    split = spark.conf.get(SPLIT_CONF, None)
    spark.conf.set(SPLIT_CONF, str(SPLITS_PER_CORE * spark.sparkContext.defaultParallelism))
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in ("pyspark", "py4j"):
            raise
        raise PipelineInputError(f"{frames_path}: Spark could not read the frames: {spark_reason(exc)}") from None
    finally:
        spark.conf.unset(SPLIT_CONF) if split is None else spark.conf.set(SPLIT_CONF, split)


def read_frames(spark: SparkSession, frames_path: str | Path, parquet: list[str] | None = None) -> DataFrame:
    """FRAMES as a DataFrame of ``INPUT_COLUMNS`` (columns it lacks are null; types are cast, a value
    that does not fit is null, after ``parquet_input`` refused a Parquet column of the wrong kind;
    ``corrupt`` holds a JSON line that does not parse, or says which Parquet row group could not be
    read). ``parquet``: the files to read in place of FRAMES (``parquet_input``)."""
    from pyspark.sql import functions as F

    path = Path(frames_path)
    if not path.exists():
        raise FileNotFoundError(f"{frames_path}: no such file or directory")
    if path.is_file() and path.suffix.lower() in JSON_SUFFIXES:
        return (spark.read.schema(JSON_INPUT).option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", "corrupt").json(str(path)))
    if path.is_file() and path.suffix.lower() != ".parquet":
        raise PipelineInputError(f"{frames_path}: FRAMES must be Parquet (.parquet, or a directory of Parquet files) "
                         f"or JSON Lines ({', '.join(JSON_SUFFIXES)})")
    if parquet is None:
        known = _parquet_schema(path)
        frames = (spark.read.schema(known) if known else spark.read).parquet(str(path))
    else:  # repaired copies beside the readable files: their schemas merged (a repair adds ``corrupt``)
        frames = spark.read.option("mergeSchema", "true").parquet(*parquet)
    present = set(frames.columns)
    if not present & {"bytes", "hex"}:
        raise PipelineInputError(f"{frames_path}: FRAMES needs a bytes or a hex column; it has {', '.join(frames.columns)}")
    return frames.select(*[F.expr(f"try_cast(`{name}` AS {INPUT_TYPES[name]})").alias(name) if name in present
                           else F.lit(None).cast(INPUT_TYPES[name]).alias(name) for name in INPUT_COLUMNS])


# The Arrow types of a Parquet input column that spare Spark a schema job, and the Kafka type whose
# values they hold (its Spark SQL type is in linter.model.wire).
_ARROW_KAFKA = {"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "string": "string",
                "large_string": "string", "binary": "bytes", "large_binary": "bytes"}


def parquet_input(frames_path: str | Path, scratch: Path) -> list[str] | None:
    """Read each Parquet file of FRAMES here, row group by row group (the input columns only, as Spark
    would), before Spark does: a file whose footer or pages cannot be read would fail a Spark task with a
    Java stack trace and end the job. ``None`` when everything reads (Spark reads FRAMES as given);
    otherwise the files Spark reads instead: the readable ones as they are, and for each damaged one a copy
    in ``scratch`` with its readable row groups and, in place of each unreadable row group (or file), one
    row whose ``corrupt`` column names it and says why. That row is replayed as a ``both_fail`` frame; the
    job and the other frames go on. A single FRAMES file whose footer cannot be read has nothing to
    replay: ``ValueError``, one line."""
    path = Path(frames_path)
    if not path.exists() or (path.is_file() and path.suffix.lower() != ".parquet"):
        return None  # JSON Lines, or what read_frames refuses
    files = _spark_files(path) if path.is_dir() else [path]
    readable: list[str] = []
    repaired = False
    for number, file in enumerate(files):
        damage = _damage(file)
        if damage is None:
            readable.append(str(file))
            continue
        if isinstance(damage, str) and not path.is_dir():
            raise PipelineInputError(f"{file}: not a readable Parquet file ({damage})")
        copy = scratch / f"repaired-{number}.parquet"
        _repair(file, damage, copy)
        readable.append(str(copy))
        repaired = True
    return readable if repaired else None


def _spark_files(directory: Path) -> list[Path]:
    """The files Spark reads of a directory: every regular file below it, none under a name starting
    with ``_`` or ``.`` (``_SUCCESS``, ``.crc``), as Spark's file index leaves those out."""
    try:
        return sorted(Path(folder, name) for folder, regular, others in files_below(str(directory), enter=_shown)
                      for name in [*filter(_shown, regular), *(n for n in others if _shown(n)
                                                               and os.path.isfile(Path(folder, n)))])
    except InputError as exc:  # a directory chain deeper than the walker goes
        raise PipelineInputError(f"FRAMES {exc}") from None


def _shown(name: str) -> bool:
    """A name Spark's file index lists (``_SUCCESS``, ``.crc`` files and such directories are left out)."""
    return not name.startswith(("_", "."))


spark_files = _spark_files  # for krpc-lint size, which reads a directory of Parquet as Spark would


def _damage(file: Path) -> dict[int, str] | str | None:
    """``None`` when ``file`` reads; the reason when its footer does not; else {row group: reason}."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(file)
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors vary: any failure means unreadable
        return _first_line(str(exc)) or type(exc).__name__
    _check_types(file, parquet.schema_arrow)
    columns = [name for name in parquet.schema_arrow.names if name in INPUT_COLUMNS]
    damaged: dict[int, str] = {}
    for group in range(parquet.num_row_groups):
        try:
            parquet.read_row_group(group, columns=columns)
        except Exception as exc:  # noqa: BLE001 - as above
            damaged[group] = _first_line(str(exc)) or type(exc).__name__
    return damaged or None


_KINDS = {"INT": "integer", "STRING": "string", "BINARY": "binary"}  # ... and what a Parquet column must hold


def _check_types(file: Path, arrow_schema: Any) -> None:
    """``ValueError`` (one line, before Spark) for an input column whose type cannot hold what it must: any
    integer width is read as INT, but a ``bytes`` column of numbers or a ``direction`` of integers is a
    mistake in how FRAMES was written, not a few odd frames."""
    import pyarrow as pa

    tests = {"integer": pa.types.is_integer, "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
             "binary": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t)
             or pa.types.is_fixed_size_binary(t)}
    for column in arrow_schema:
        if column.name not in INPUT_TYPES:
            continue
        kind = _KINDS[INPUT_TYPES[column.name]]
        type_ = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if not (pa.types.is_null(type_) or tests[kind](type_)):
            raise PipelineInputError(f"{file}: column {column.name} is {type_}; replay reads {kind} values there "
                             "(docs/pipeline.md, replay)")


def _repair(file: Path, damage: dict[int, str] | str, copy: Path) -> None:
    """Write ``copy``: ``file``'s readable row groups, one ``corrupt`` row per unreadable one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(damage, str):
        table = pa.table({"corrupt": [f"{file.name}: not a readable Parquet file ({damage})"]})
        pq.write_table(table, copy)
        return
    parquet = pq.ParquetFile(file)
    columns = [name for name in parquet.schema_arrow.names if name in INPUT_COLUMNS and name != "corrupt"]
    fields = [parquet.schema_arrow.field(name) for name in columns]
    out_schema = pa.schema([*fields, pa.field("corrupt", pa.string())])
    first = 0
    with pq.ParquetWriter(copy, out_schema) as writer:
        for group in range(parquet.num_row_groups):
            rows = parquet.metadata.row_group(group).num_rows
            if group in damage:
                reason = (f"{file.name}: row group {group} of {parquet.num_row_groups} (rows {first}-"
                          f"{first + rows - 1}) cannot be read: {damage[group]}")
                table = pa.table([pa.nulls(1, field.type) for field in fields] + [pa.array([reason])],
                                 schema=out_schema)
            else:
                table = parquet.read_row_group(group, columns=columns)
                table = table.append_column("corrupt", pa.nulls(table.num_rows, pa.string()))
            writer.write_table(table)
            first += rows


def spark_reason(exc: Exception) -> str:
    """What Spark says went wrong, in one line: the error's first line and that of its deepest Java cause
    (``FAILED_TO_UNCOMPRESS``, a missing footer), without any stack trace."""
    lines = [_first_line(getattr(exc, "desc", None) or str(exc))]
    error = getattr(exc, "java_exception", None)
    causes: list[str] = []
    while error is not None and len(causes) < 50:
        causes.append(_first_line(str(error.toString())))
        error = error.getCause()
    if causes:
        lines = [causes[0]] if "Job aborted" not in causes[0] or len(causes) < 2 else [causes[1]]
        if causes[-1] not in lines:
            lines.append(f"cause: {causes[-1]}")
    return "; ".join(line[:300] for line in lines if line) or type(exc).__name__


def _first_line(text: str) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def _parquet_schema(path: Path) -> str | None:
    """The DDL of a Parquet file's input columns, read from its footer here, which spares Spark a job
    that would read it; ``None`` (Spark infers it, and reports what is wrong) for a directory, an
    unreadable file or a type outside the plain ones."""
    if not path.is_file():
        return None
    import pyarrow.parquet as pq

    try:
        columns = [(column.name, str(column.type)) for column in pq.read_schema(path)]
    except Exception:  # noqa: BLE001 - not Parquet: Spark says so, as for any input
        return None
    wanted = [(name, _spark_type(kind)) for name, kind in columns if name in INPUT_COLUMNS]
    if not {"bytes", "hex"} & {name for name, _ in wanted} or any(kind is None for _, kind in wanted):
        return None
    return ", ".join(f"`{name}` {kind}" for name, kind in wanted)


def _spark_type(arrow_type: str) -> str | None:
    """The Spark SQL type of a Parquet column of this Arrow type, ``None`` outside the plain ones."""
    kafka = _ARROW_KAFKA.get(arrow_type)
    return WIRE[kafka].spark if kafka is not None else None


__all__ = ["INPUT_COLUMNS", "INPUT_TYPES", "JSON_INPUT", "parquet_input", "read_frames", "spark_files", "spark_reason"]
