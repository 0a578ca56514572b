"""A small replay in this process, without Spark: every frame of FRAMES, read with the one corpus reader
(``linter.frames.corpus.read_rows``), through the per-frame code Spark's batches run (``replay_rows``), so
both find the same rows, numbered as Spark numbers them: a frame's 0-based position in FRAMES."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from linter.frames.corpus import READ_BATCH, read_rows
from linter.frames.decode import Decoders
from linter.replay.batches import CountKey, replay_rows
from linter.spark import schema


def replay_here(frames_path: str | Path, parquet: list[str] | None, old: Decoders, new: Decoders,
                work_dir: Path) -> dict[CountKey, int]:
    """Replay every frame here and write ``mismatches/`` (as Spark's job would, numbered in FRAMES' order);
    ``parquet``: the files to read in place of FRAMES (``parquet_input``'s repaired copies). Returns the counts
    (the caller writes ``counts/``, as it does after a Spark job). The mismatch rows are written a batch at a
    time, so memory holds one batch of them, not every frame of a corpus that fails throughout."""
    import pyarrow.parquet as pq

    counts: dict[CountKey, int] = {}
    (work_dir / "mismatches").mkdir()
    rows, first = _rows(frames_path, parquet), 0
    with pq.ParquetWriter(work_dir / "mismatches" / "part-00000.parquet",
                          schema.arrow_schema(schema.REPLAY_MISMATCHES)) as writer:
        while chunk := list(islice(rows, READ_BATCH)):
            # RESULTS rows: part, row (the frame's number here), frames, then the REPLAY_MISMATCHES columns
            found = [(result[1], *result[3:]) for result in replay_rows(old, new, chunk, counts, 0, first)]
            if found or not first:  # an empty corpus, or none that mismatch: the file still has the schema
                writer.write_batch(schema.arrow_batch(found, schema.REPLAY_MISMATCHES))
            first += len(chunk)
    return counts


def _rows(frames_path: str | Path, parquet: list[str] | None) -> Iterator[tuple[Any, ...]]:
    """FRAMES' rows in Spark's order (the repaired files in its place when there are some), a JSON line that is
    not a frame record holding its own text in ``corrupt``, as Spark's reader keeps it."""
    for file in parquet if parquet is not None else [frames_path]:
        for _, row in read_rows(file, spark_corrupt=True):
            yield row


__all__ = ["replay_here"]
