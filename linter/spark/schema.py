"""The tables the pipeline writes, as Spark DDL: one place that says what every column means.

DDL strings, not ``StructType``s, so this module imports nothing from PySpark. Each Parquet
dataset under ``--out`` has exactly these columns, in this order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

# One row per (commit, spec file) the history touches: the spec revisions of every lineage.
#   commit/parent: full ids (parent: the commit's first parent, null for a root commit)
#   time: commit time (UTC); status: A added, M modified, R renamed (old_path set), D deleted
#   path: the file's path at this commit; blob: its git blob id (null when deleted)
#   lineage: the path the file had when it was first seen (renames keep the lineage)
#   release: the first release tag that contains the commit (null: not released yet)
REVISIONS = (
    "commit STRING, parent STRING, time TIMESTAMP, status STRING, path STRING, old_path STRING, "
    "blob STRING, lineage STRING, release STRING"
)

# One row per lint finding of each distinct blob (linted once, whatever number of paths and
# commits share it); a blob that could not be processed is one row with ``error`` set.
FINDINGS = (
    "blob STRING, path STRING, rule STRING, name STRING, severity STRING, category STRING, "
    "line INT, col INT, message STRING, error STRING"
)

# One row per compat change between consecutive revisions of a lineage (old -> new commit).
#   released: whether some release of the repository (any tag, on any branch, also one tagged after the
#   change on a branch cut before it) shipped the changed versions with the old revision's wire layout,
#   as ``krpc-lint compat --released auto`` decides it; ``released_in`` is the highest release, in
#   version order, tagged strictly before the new commit's time (informational)
#   witness_*: the codec's proof of a wire break (version, which revision wrote, bytes as hex, and
#   witness_reading: what the other revision does with those bytes, as ``krpc-lint compat`` words it:
#   "the new revision fails: ..." or "the new revision reads it differently: ...")
#   error: set (and the rule columns null) when the pair could not be compared
CHANGES = (
    "lineage STRING, old_commit STRING, new_commit STRING, time TIMESTAMP, release STRING, "
    "old_path STRING, new_path STRING, old_blob STRING, new_blob STRING, released_in STRING, "
    "rule STRING, name STRING, category STRING, severity STRING, message_name STRING, "
    "versions ARRAY<INT>, released BOOLEAN, line INT, col INT, message STRING, "
    "witness_version INT, witness_writer STRING, witness_hex STRING, witness_reading STRING, error STRING"
)

# krpc-lint replay: one row per captured frame that fails or decodes differently.
#   outcome: differs | old_fails | new_fails | both_fail
#   path: the first field path whose decoded value differs (or where decoding failed)
REPLAY_MISMATCHES = (
    "frame BIGINT, api_key INT, api_name STRING, api_version INT, direction STRING, "
    "correlation_id INT, outcome STRING, path STRING, old_error STRING, new_error STRING, hex STRING"
)

# krpc-lint replay: frames per (api, version, direction, outcome), outcome ``same`` included.
REPLAY_COUNTS = "api_key INT, api_name STRING, api_version INT, direction STRING, outcome STRING, frames BIGINT"


def fields(ddl: str) -> list[tuple[str, str]]:
    """(name, type) of each column of a DDL string, in order (commas inside ``ARRAY<...>`` kept)."""
    parsed, depth, start = [], 0, 0
    for index, char in enumerate(ddl + ","):
        depth += (char == "<") - (char == ">")
        if char == "," and depth == 0:
            name, kind = ddl[start:index].split(None, 1)
            parsed.append((name, kind.strip()))
            start = index + 1
    return parsed


def columns(ddl: str) -> list[str]:
    """The column names of a DDL string, in order."""
    return [name for name, _ in fields(ddl)]


_ARROW_TYPES = {"STRING": "string", "INT": "int32", "BIGINT": "int64", "BOOLEAN": "bool_", "DOUBLE": "float64",
                "BINARY": "binary"}


@cache
def arrow_schema(ddl: str) -> pa.Schema:
    """The pyarrow schema of a DDL string, so the driver writes datasets Spark reads back alike, and a
    ``mapInArrow`` function returns the batches its DDL says (pyarrow is imported only when one is built;
    a schema is built once per DDL)."""
    import pyarrow

    return pyarrow.schema([pyarrow.field(name, _arrow_type(pyarrow, kind)) for name, kind in fields(ddl)])


def arrow_batch(rows: list[tuple[Any, ...]], ddl: str) -> pa.RecordBatch:
    """Rows (a tuple of the DDL's columns each) as an Arrow batch of its schema.

    >>> arrow_batch([(1, "a"), (None, "b")], "n BIGINT, s STRING").to_pydict()
    {'n': [1, None], 's': ['a', 'b']}
    """
    import pyarrow

    schema = arrow_schema(ddl)
    columns: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [()] * len(schema)
    return pyarrow.RecordBatch.from_arrays([pyarrow.array(column, field.type) for column, field in zip(columns, schema)],
                                           schema=schema)


def arrow_batches(rows: Iterable[Mapping[str, Any]], ddl: str, size: int) -> Iterator[pa.RecordBatch]:
    """Rows (mappings of column names; a missing column is null) as Arrow batches of the DDL's schema, ``size``
    rows each (the last shorter): a stream of rows written or handed to Spark with bounded memory.

    >>> [batch.num_rows for batch in arrow_batches([{"n": 1}, {"n": 2}, {}], "n BIGINT, s STRING", 2)]
    [2, 1]
    """
    names = columns(ddl)
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(tuple(row.get(name) for name in names))
        if len(batch) >= size:
            yield arrow_batch(batch, ddl)
            batch = []
    if batch:
        yield arrow_batch(batch, ddl)


def _arrow_type(arrow: ModuleType, kind: str) -> pa.DataType:
    if kind.startswith("ARRAY<"):
        return arrow.list_(_arrow_type(arrow, kind[len("ARRAY<"):-1]))
    if kind == "TIMESTAMP":
        return arrow.timestamp("us", tz="UTC")
    return getattr(arrow, _ARROW_TYPES[kind])()
