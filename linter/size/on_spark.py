"""``krpc-lint size --frames`` on Spark: the corpus's frames sized by ``FrameSizer`` in ``mapInArrow``
batches, each partition's ``Tally`` sent back as a few rows and merged on the driver.

FRAMES is read as ``krpc-lint replay`` reads it (``linter.frames.corpus``: damaged Parquet row groups checked
first, columns cast); the spec texts travel with the job (a ``linter.compat.revision.Revision``) and each Python
worker loads them once (``linter.frames.decode.loaded``). A partition stops sizing at its first refused frame but still counts its rows,
so the driver can name that frame by its number in FRAMES, as a run in this process does. A worker keeps its
``FrameSizer`` (what-if codecs, repeated frames) from one partition of a run to the next.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.frames.corpus import (
    batch_columns,
    frames_job,
    parquet_input,
    read_frames,
    refused,
)
from linter.frames.decode import loaded
from linter.size.frames import FrameRefused, FrameSizer, Tally
from linter.size.measure import Sizes
from linter.size.whatif import WhatIf
from linter.spark.schema import arrow_batch

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from linter.compat.revision import Revision

# A partition's rows: one per (message, version, path) ("field"), one per (message, version) ("message":
# frames, bytes, what-if bytes), one with its frame count ("frames") and at most one "error".
RESULTS = ("part INT, kind STRING, name STRING, version INT, path STRING, count BIGINT, bytes BIGINT, "
           "what_if BIGINT, error STRING")
Edits = tuple[bool, tuple[str, ...], bool]  # WhatIf's kip636, tags, flexible: what a task rebuilds it from
Sizing = tuple[Edits, str | None, int | None, bool]  # the edits, --message, --version, --allow-invalid


def size_batches(specs: Revision, sizing: Sizing) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function: a partition's frames in (``INPUT_COLUMNS``), its tally out (``RESULTS``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        sizer = _sizer(specs, sizing)
        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        tally, rows, error = Tally(), 0, None
        for batch in batches:
            for row in zip(*batch_columns(batch)):
                if error is None:
                    try:
                        sizer.add(tally, row)
                    except FrameRefused as exc:
                        error = (rows, str(exc))
                rows += 1
        yield tally_batch(tally, part, rows, error)

    return run


_SIZERS: dict[tuple[str, Sizing], FrameSizer] = {}  # per Python worker


def _sizer(specs: Revision, sizing: Sizing) -> FrameSizer:
    """The worker's sizer of a run, built once: its what-if codecs and its repeated frames serve every
    partition the worker is given."""
    key = (specs.digest, sizing)
    found = _SIZERS.get(key)
    if found is None:
        _SIZERS.clear()  # another run's: let it go
        edits, message, version, allow_invalid = sizing
        found = _SIZERS[key] = FrameSizer(loaded(specs, allow_invalid, freeze=True), WhatIf(*edits), message, version)
    return found


def tally_batch(tally: Tally, part: int, rows: int, error: tuple[int, str] | None) -> pa.RecordBatch:
    """A partition's tally as ``RESULTS`` rows."""
    out: list[tuple[Any, ...]] = [(part, "frames", None, None, None, rows, None, None, None)]
    if error is not None:
        out.append((part, "error", None, None, None, error[0], None, None, error[1]))
    for (name, version), sizes in tally.sizes.items():
        out.append((part, "message", name, version, None, sizes.count, sizes.bytes,
                    tally.what_if.get((name, version)), None))
        out += [(part, "field", name, version, path, None, size, None, None) for path, size in sizes.fields.items()]
    return arrow_batch(out, RESULTS)


def size_on_spark(spark: SparkSession, frames_path: str | Path, specs: Revision, what_if: WhatIf,
                  message: str | None = None, version: int | None = None, allow_invalid: bool = False) -> Tally:
    """Size every frame of FRAMES on ``spark`` with the specs (``allow_invalid``: as ``Codec.load``'s); the first
    frame (in FRAMES' order) that cannot be sized is ``FramesInputError``, as in this process."""
    sizing = ((what_if.kip636, what_if.tags, what_if.flexible), message, version, allow_invalid)
    with tempfile.TemporaryDirectory(prefix="krpc-lint-size-") as scratch:
        parquet = parquet_input(frames_path, Path(scratch))
        with frames_job(spark, frames_path):
            rows = read_frames(spark, frames_path, parquet).mapInArrow(
                size_batches(specs, sizing), RESULTS).collect()
    return _merged(frames_path, [row.asDict() for row in rows])


def _merged(frames_path: str | Path, rows: list[dict[str, Any]]) -> Tally:
    """The partitions' rows as one tally; the first error (by frame number) raised."""
    counts = {row["part"]: row["count"] for row in rows if row["kind"] == "frames"}
    offsets = list(accumulate((counts.get(part, 0) for part in range(max(counts, default=-1) + 1)), initial=0))
    errors = sorted((offsets[row["part"]] + row["count"], row["error"]) for row in rows if row["kind"] == "error")
    if errors:
        raise refused(frames_path, *errors[0])
    tally = Tally(frames=sum(counts.values()))
    for row in rows:
        key = (row["name"], row["version"])
        if row["kind"] == "message":
            part = Tally(sizes={key: Sizes(*key, count=row["count"], bytes=row["bytes"])},
                         what_if={key: row["what_if"]} if row["what_if"] is not None else {})
            tally.merge(part)
        elif row["kind"] == "field":
            sizes = tally.sizes.setdefault(key, Sizes(*key))
            sizes.fields[row["path"]] = sizes.fields.get(row["path"], 0) + row["bytes"]
    return tally


__all__ = ["RESULTS", "size_batches", "size_on_spark", "tally_batch"]
