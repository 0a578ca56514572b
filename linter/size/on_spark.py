"""``krpc-lint size --frames`` on Spark: the corpus's frames sized by ``FrameSizer`` in ``mapInArrow``
batches, each partition's ``Tally`` sent back as a few rows and merged on the driver.

FRAMES is read as ``krpc-lint replay`` reads it (``linter.frames.on_spark.spark_frames``: a corpus through
``linter.frames.corpus``, damaged Parquet row groups checked first, columns cast; captures a task per file); the
spec texts travel with the job (a ``linter.compat.revision.Revision``) and each Python
worker loads them once (``linter.frames.decode.loaded``). A partition sizes every frame it holds and sends
back its refused ones per kind with the first's partition-local number; the driver makes that number
FRAMES-wide (the rows of the partitions before it), so the refusals are those of a run in this process. A
worker keeps its ``FrameSizer`` (what-if codecs, repeated frames) from one partition of a run to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from linter.frames.corpus import batch_columns
from linter.frames.decode import loaded
from linter.size.frames import FrameSizer, Tally
from linter.size.measure import Sizes
from linter.size.whatif import WhatIf
from linter.spark.schema import arrow_batch

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from linter.compat.revision import Revision

# A partition's rows: one per (message, version, path) ("field"), one per (message, version) ("message":
# frames, bytes, what-if bytes), one with its frame count ("frames") and one per kind of refused frames
# ("refused": direction, api_key, version, count, and the first's partition-local frame number and error).
RESULTS = ("part INT, kind STRING, name STRING, version INT, path STRING, count BIGINT, bytes BIGINT, "
           "what_if BIGINT, error STRING, direction STRING, api_key INT, frame BIGINT")
Edits = tuple[bool, tuple[str, ...], bool]  # WhatIf's kip636, tags, flexible: what a task rebuilds it from
Sizing = tuple[Edits, str | None, int | None, bool]  # the edits, --message, --version, --allow-invalid


def size_batches(specs: Revision, sizing: Sizing) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function: a partition's frames in (``INPUT_COLUMNS``), its tally out (``RESULTS``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        sizer = _sizer(specs, sizing)
        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        tally = Tally()
        for batch in batches:
            for row in zip(*batch_columns(batch)):
                sizer.add(tally, row)
        yield tally_batch(tally, part)

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


def tally_batch(tally: Tally, part: int) -> pa.RecordBatch:
    """A partition's tally as ``RESULTS`` rows."""
    none = (None, None, None)  # direction, api_key, frame: a refusal's
    out: list[tuple[Any, ...]] = [(part, "frames", None, None, None, tally.frames, None, None, None, *none)]
    out += [(part, "refused", None, api_version, None, refused.frames, None, None, refused.first_error, direction,
             api_key, refused.first_frame) for (direction, api_key, api_version), refused in tally.refused.items()]
    for (name, version), sizes in tally.sizes.items():
        out.append((part, "message", name, version, None, sizes.count, sizes.bytes,
                    tally.what_if.get((name, version)), None, *none))
        out += [(part, "field", name, version, path, None, size, None, None, *none)
                for path, size in sizes.fields.items()]
    return arrow_batch(out, RESULTS)


def size_on_spark(frames: DataFrame, specs: Revision, what_if: WhatIf, message: str | None = None,
                  version: int | None = None, allow_invalid: bool = False) -> Tally:
    """Size every frame of ``frames`` (``spark_frames``': FRAMES read, or its captures extracted) with the specs
    (``allow_invalid``: as ``Codec.load``'s); the frames that cannot be sized are counted per kind, numbered in
    FRAMES' order, as in this process."""
    sizing = ((what_if.kip636, what_if.tags, what_if.flexible), message, version, allow_invalid)
    return merged([row.asDict() for row in frames.mapInArrow(size_batches(specs, sizing), RESULTS).collect()])


def merged(rows: list[dict[str, Any]]) -> Tally:
    """The partitions' rows as one tally, each refusal's first frame numbered in FRAMES (after the rows of
    the partitions before its own)."""
    counts = {row["part"]: row["count"] for row in rows if row["kind"] == "frames"}
    offsets = list(accumulate((counts.get(part, 0) for part in range(max(counts, default=-1) + 1)), initial=0))
    tally = Tally(frames=sum(counts.values()))
    for row in rows:
        key = (row["name"], row["version"])
        if row["kind"] == "refused":
            tally.refuse((row["direction"], row["api_key"], row["version"]), offsets[row["part"]] + row["frame"],
                         row["error"], row["count"])
        elif row["kind"] == "message":
            part = Tally(sizes={key: Sizes(*key, count=row["count"], bytes=row["bytes"])},
                         what_if={key: row["what_if"]} if row["what_if"] is not None else {})
            tally.merge(part)
        elif row["kind"] == "field":
            sizes = tally.sizes.setdefault(key, Sizes(*key))
            sizes.fields[row["path"]] = sizes.fields.get(row["path"], 0) + row["bytes"]
    return tally


__all__ = ["RESULTS", "merged", "size_batches", "size_on_spark", "tally_batch"]
