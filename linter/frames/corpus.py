"""A frames corpus (FRAMES): its format and its one reader, in this process or into Spark.

A corpus holds one row per captured frame (``INPUT_COLUMNS``; ``linter.frames.generate`` writes them):

==================  ===========  ===========================================================
column              type         meaning
==================  ===========  ===========================================================
``api_key``         int32        the request's API key (for a response: of the request it answers)
``api_version``     int32        the request's API version (likewise)
``direction``       string       ``request`` or ``response``
``correlation_id``  int32        the header's correlation id
``bytes``           binary       the whole frame: int32 size, header, body (Parquet; base64 in JSON Lines)
``hex``             string       the same as hex text (JSON Lines, which has no binary type)
==================  ===========  ===========================================================

It is Parquet (a file, or a directory of Parquet files) or JSON Lines (``JSON_SUFFIXES``). ``split_frame``
cuts a row into its frame's payload, checked against the header. ``count_frames`` and ``read_rows`` read
FRAMES in this process (``krpc-lint size --frames`` on a small corpus); ``read_frames`` reads it into Spark
with each input column cast to its type, and ``parquet_input`` reads damaged Parquet files here first, so
that a bad file or row group becomes a ``both_fail`` row instead of a failed Spark job.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.errors import KrpcLintError
from linter.frames.errors import FramesInputError
from linter.model.wire import WIRE
from linter.parse.bounded_json import load_json
from linter.parse.discovery import files_below
from linter.parse.files import InputError
from linter.spark import schema

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

REQUEST, RESPONSE = "request", "response"
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")  # a corpus with one of these is JSON Lines, else Parquet
CORRELATION_OFFSET = {REQUEST: 8, RESPONSE: 4}  # where the correlation id sits in a whole frame
REQUEST_START = struct.Struct(">ihhi")  # size, apiKey, apiVersion, correlationId
RESPONSE_START = struct.Struct(">ii")  # size, correlationId
INPUT_COLUMNS = ("api_key", "api_version", "direction", "correlation_id", "bytes", "hex", "corrupt")
JSON_INPUT = ("api_key INT, api_version INT, direction STRING, correlation_id INT, bytes BINARY, hex STRING, "
              "corrupt STRING")
WRITTEN = "api_key INT, api_version INT, direction STRING, correlation_id INT, bytes BINARY"  # frames generate's Parquet
INPUT_TYPES = dict(schema.fields(JSON_INPUT))  # each input column's Spark type: what it is cast to
PARQUET_MAGIC = b"PAR1"
READ_BATCH = 16384  # frames per Parquet batch read in this process
SPLIT_CONF, SPLITS_PER_CORE = "spark.sql.files.minPartitionNum", 4  # enough splits to keep every core busy


# --- one row: its frame ---------------------------------------------------------------------------


class BadFrame(KrpcLintError, ValueError):
    """A row that is not a frame at all, whatever the specs (replay: a ``both_fail`` row; size: refused)."""


def not_a_corpus(frames_path: str | Path) -> FramesInputError:
    """The one refusal of a FRAMES that is none of the forms a corpus takes."""
    return FramesInputError(f"{frames_path}: FRAMES must be a packet capture (pcap or pcapng, gzipped or not, or a "
                            "directory of them), Parquet (.parquet, or a directory of Parquet files) or JSON Lines "
                            f"({', '.join(JSON_SUFFIXES)})")


def frame_of(data: Any, hex_text: Any) -> bytes:
    """A row's whole frame, from its ``bytes`` or else its ``hex`` column; ``BadFrame`` when it has none."""
    if data is None:
        if hex_text is None:
            raise BadFrame("no frame: bytes and hex are both null")
        try:
            return bytes.fromhex(hex_text)
        except (TypeError, ValueError) as exc:
            raise BadFrame(f"hex is not hexadecimal text: {exc}") from None
    if type(data) is not bytes:
        if not isinstance(data, (bytearray, memoryview)):
            raise BadFrame(f"bytes must be binary, got {type(data).__name__}")
        return bytes(data)
    return data


def split_frame(direction: Any, api_key: Any, api_version: Any, correlation_id: Any, data: Any,
                hex_text: Any) -> tuple[bytes, int, int, int]:
    """(payload after the size, API key, API version, correlation id) of a row, the columns checked
    against the header; ``BadFrame`` when the row is not a frame at all.

    >>> split_frame("response", 3, 12, None, bytes.fromhex("0000000600000007beef"), None)
    (b'\\x00\\x00\\x00\\x07\\xbe\\xef', 3, 12, 7)
    """
    data = frame_of(data, hex_text)
    if direction == REQUEST:
        if len(data) < REQUEST_START.size:
            raise BadFrame(f"a request frame needs 12 bytes at least (size, apiKey, apiVersion, correlationId), "
                           f"got {len(data)}")
        size, key, version, wire_id = REQUEST_START.unpack_from(data)
        if api_key is not None and api_key != key:
            raise BadFrame(f"the api_key column ({api_key}) does not match the header's requestApiKey ({key})")
        if api_version is not None and api_version != version:
            raise BadFrame(f"the api_version column ({api_version}) does not match the header's "
                           f"requestApiVersion ({version})")
        api_key, api_version = key, version
    elif direction == RESPONSE:
        if type(api_key) is not int or type(api_version) is not int:
            raise BadFrame("a response frame needs api_key and api_version: those of the request it answers")
        if len(data) < RESPONSE_START.size:
            raise BadFrame(f"a response frame needs 8 bytes at least (size, correlationId), got {len(data)}")
        size, wire_id = RESPONSE_START.unpack_from(data)
    else:
        raise BadFrame(f"direction must be {REQUEST!r} or {RESPONSE!r}, got {direction!r}")
    if size != len(data) - 4:
        raise BadFrame(f"frame size {size} does not match the {len(data) - 4} bytes that follow")
    if correlation_id is not None and correlation_id != wire_id:
        raise BadFrame(f"the correlation_id column ({correlation_id}) does not match the header's ({wire_id})")
    return data[4:], api_key, api_version, wire_id


def batch_columns(batch: pa.RecordBatch, extra: tuple[str, ...] = ()) -> list[list[Any]]:
    """An Arrow batch's ``INPUT_COLUMNS`` (then ``extra``) as Python lists (all ``None`` for a column it lacks)."""
    return [batch.column(name).to_pylist() if name in batch.schema.names else [None] * batch.num_rows
            for name in (*INPUT_COLUMNS, *extra)]


# --- FRAMES in this process ---------------------------------------------------------------------


def count_frames(frames_path: str | Path) -> int:
    """How many frames FRAMES holds (rows: Parquet footers; non-blank lines of JSON Lines), after checking
    that it looks like a corpus at all: ``FramesInputError`` naming the file and the byte otherwise."""
    return _frames_in(Path(frames_path), count=True)


def check_corpus(frames_path: str | Path) -> None:
    """``FramesInputError`` (naming the file and the byte) unless FRAMES looks like a corpus: ``count_frames``'s
    checks, reading no more of a JSON Lines file than its first record."""
    _frames_in(Path(frames_path), count=False)


def _frames_in(path: Path, count: bool) -> int:
    if path.is_dir():
        files = spark_files(path)
        if not files:
            raise FramesInputError(f"{path}: a directory of FRAMES needs Parquet files; it has none")
        return sum(_parquet_rows(file) for file in files)
    _regular(path)
    if path.suffix.lower() in JSON_SUFFIXES:
        return _json_lines(path, count)
    if path.suffix.lower() == ".parquet":
        return _parquet_rows(path)
    raise not_a_corpus(path)


def _regular(path: Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise FramesInputError(f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise FramesInputError(f"{path}: not a regular file")


def _parquet_rows(file: Path) -> int:
    """The rows of a Parquet file, from its footer; its magic bytes checked first (``byte 0`` or the last 4)."""
    _regular(file)
    size = file.stat().st_size
    with open(file, "rb") as stream:
        head = stream.read(4)
        stream.seek(max(0, size - 4))
        tail = stream.read(4)
    for offset, magic in ((0, head), (max(0, size - 4), tail)):
        if magic != PARQUET_MAGIC:
            raise FramesInputError(f"{file}: byte {offset}: not a Parquet file (no {PARQUET_MAGIC.decode()} "
                                     "magic there)")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise FramesInputError("reading Parquet needs pyarrow: pip install 'krpc-lint[spark]'") from None
    try:
        parquet = pq.ParquetFile(file)
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors vary: any failure means unreadable
        raise FramesInputError(f"{file}: byte {size - 8}: not a readable Parquet footer ({_reason(exc)})") from None
    if not {"bytes", "hex"} & set(parquet.schema_arrow.names):
        raise FramesInputError(f"{file}: FRAMES needs a bytes or a hex column; it has "
                                 f"{', '.join(parquet.schema_arrow.names)}")
    rows: int = parquet.metadata.num_rows
    return rows


def _json_lines(file: Path, count: bool = True) -> int:
    """The non-blank lines of a JSON Lines file, the first checked to be a frame record (``count``: else only it)."""
    frames, checked = 0, False
    for offset, number, line in _lines(file):
        if not checked:
            _json_row(file, offset, number, line, strict=True)
            checked = True
            if not count:
                return 1
        frames += 1
    return frames


def _lines(file: Path) -> Iterator[tuple[int, int, bytes]]:
    """(byte offset, line number, line) of every non-blank line."""
    offset = 0
    with open(file, "rb") as stream:
        for number, line in enumerate(stream, 1):
            if line.strip():
                yield offset, number, line
            offset += len(line)


def _json_row(file: Path, offset: int, number: int, line: bytes, strict: bool = False,
              extra: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """A JSON line as a row of ``INPUT_COLUMNS`` (base64 ``bytes`` decoded, as Spark reads them); one that is
    not a JSON object has ``corrupt`` set, or, ``strict``, is ``FramesInputError`` at its byte. An object without
    bytes or hex is a row of nulls, as Spark reads it (replay says ``no frame`` for it); only ``strict`` (the
    check of a corpus's first line) refuses it, since a file of such rows is no frames corpus."""
    try:
        record = load_json(line.decode(json.detect_encoding(line), "surrogatepass"))  # as json.loads(bytes)
        if not isinstance(record, dict) or (strict and not {"bytes", "hex"} & record.keys()):
            raise ValueError("a frame record is a JSON object with bytes or hex")
        data = record.get("bytes")
        if data is not None:
            data = base64.b64decode(data, validate=True) if isinstance(data, str) else data
        return (record.get("api_key"), record.get("api_version"), record.get("direction"),
                record.get("correlation_id"), data, record.get("hex"), None, *map(record.get, extra))
    except (ValueError, binascii.Error) as exc:
        if strict:
            raise FramesInputError(f"{file}: byte {offset} (line {number}): not a frame record: {exc}") from None
        return (None,) * 6 + (f"line {number} at byte {offset}: {exc}",) + (None,) * len(extra)


def read_rows(frames_path: str | Path, spark_corrupt: bool = False,
              extra: tuple[str, ...] = ()) -> Iterator[tuple[int | None, tuple[Any, ...]]]:
    """Every row of FRAMES in Spark's order, with its byte offset when it has one (JSON Lines): ``INPUT_COLUMNS``,
    then the ``extra`` columns asked for (``None`` where FRAMES has none: a corpus ``frames extract`` wrote has the
    capture's). A JSON line that is not a frame record says where and why in ``corrupt``, or, ``spark_corrupt``,
    holds its own text there, as Spark's JSON reader keeps it: without its line end."""
    path = Path(frames_path)
    corrupt = len(INPUT_COLUMNS) - 1
    if path.is_file() and path.suffix.lower() in JSON_SUFFIXES:
        for offset, number, line in _lines(path):
            row = _json_row(path, offset, number, line, extra=extra)
            if spark_corrupt and row[corrupt] is not None:
                row = (*row[:corrupt], line.rstrip(b"\r\n").decode("utf-8", "replace"), *row[corrupt + 1:])
            yield offset, row
        return
    import pyarrow.parquet as pq

    wanted = {*INPUT_COLUMNS, *extra}
    for file in spark_files(path) if path.is_dir() else [path]:
        parquet = pq.ParquetFile(file)
        columns = [name for name in parquet.schema_arrow.names if name in wanted]
        try:
            for batch in parquet.iter_batches(batch_size=READ_BATCH, columns=columns):
                for row in zip(*batch_columns(batch, extra)):
                    yield None, row
        except OSError as exc:
            raise FramesInputError(f"{file}: cannot be read: {_reason(exc)}") from None


def refused(frames_path: str | Path, frame: int, reason: str, offset: int | None = None) -> FramesInputError:
    """The one-line error of a frame of FRAMES that cannot be used (``frame`` counts from 0, as replay's rows)."""
    where = f" (byte {offset} of the file)" if offset is not None else ""
    return FramesInputError(f"{frames_path}: frame {frame}{where}: {reason}")


def _reason(exc: BaseException) -> str:
    """An error's first line, or its type's name when it says nothing."""
    return _first_line(str(exc)) or type(exc).__name__


# --- FRAMES into Spark ---------------------------------------------------------------------------


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
        raise FramesInputError(f"{frames_path}: Spark could not read the frames: {spark_reason(exc)}") from None
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
        raise not_a_corpus(frames_path)
    if parquet is None:
        known = _parquet_schema(path)
        frames = (spark.read.schema(known) if known else spark.read).parquet(str(path))
    else:  # repaired copies beside the readable files: their schemas merged (a repair adds ``corrupt``)
        frames = spark.read.option("mergeSchema", "true").parquet(*parquet)
    present = set(frames.columns)
    if not present & {"bytes", "hex"}:
        raise FramesInputError(f"{frames_path}: FRAMES needs a bytes or a hex column; it has {', '.join(frames.columns)}")
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
    files = spark_files(path) if path.is_dir() else [path]
    readable: list[str] = []
    repaired = False
    for number, file in enumerate(files):
        damage = _damage(file)
        if damage is None:
            readable.append(str(file))
            continue
        if isinstance(damage, str) and not path.is_dir():
            raise FramesInputError(f"{file}: not a readable Parquet file ({damage})")
        copy = scratch / f"repaired-{number}.parquet"
        _repair(file, damage, copy)
        readable.append(str(copy))
        repaired = True
    return readable if repaired else None


def spark_files(directory: Path) -> list[Path]:
    """The files Spark reads of a directory: every regular file below it, none under a name starting
    with ``_`` or ``.`` (``_SUCCESS``, ``.crc``), as Spark's file index leaves those out."""
    try:
        return sorted(Path(folder, name) for folder, regular, others in files_below(str(directory), enter=_shown)
                      for name in [*filter(_shown, regular), *(n for n in others if _shown(n)
                                                               and os.path.isfile(Path(folder, n)))])
    except InputError as exc:  # a directory chain deeper than the walker goes
        raise FramesInputError(f"FRAMES {exc}") from None


def _shown(name: str) -> bool:
    """A name Spark's file index lists (``_SUCCESS``, ``.crc`` files and such directories are left out)."""
    return not name.startswith(("_", "."))


def _damage(file: Path) -> dict[int, str] | str | None:
    """``None`` when ``file`` reads; the reason when its footer does not; else {row group: reason}."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(file)
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors vary: any failure means unreadable
        return _reason(exc)
    _check_types(file, parquet.schema_arrow)
    columns = [name for name in parquet.schema_arrow.names if name in INPUT_COLUMNS]
    damaged: dict[int, str] = {}
    for group in range(parquet.num_row_groups):
        try:
            parquet.read_row_group(group, columns=columns)
        except Exception as exc:  # noqa: BLE001 - as above
            damaged[group] = _reason(exc)
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
            raise FramesInputError(f"{file}: column {column.name} is {type_}; replay reads {kind} values there "
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


__all__ = [
    "CORRELATION_OFFSET",
    "INPUT_COLUMNS",
    "INPUT_TYPES",
    "JSON_INPUT",
    "JSON_SUFFIXES",
    "REQUEST",
    "REQUEST_START",
    "RESPONSE",
    "RESPONSE_START",
    "BadFrame",
    "batch_columns",
    "check_corpus",
    "count_frames",
    "frame_of",
    "frames_job",
    "parquet_input",
    "read_frames",
    "read_rows",
    "refused",
    "spark_files",
    "spark_reason",
    "split_frame",
]
