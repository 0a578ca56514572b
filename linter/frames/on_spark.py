"""Packet captures read on Spark: one task per capture file, each streaming its packets into frame rows.

A capture cannot be split (its records are found by reading it from its first byte, gzip or not), so the unit of
work is a file: the driver lists the captures (``linter.frames.extract.capture_files``, which reads the first
packet of each) and makes one partition per file; each task opens its file from its path (local mode, or a file
system every executor shares), builds the codec from the spec texts shipped with the job
(``linter.frames.decode.loaded``) and runs ``Extraction([file])``, handing Spark Arrow batches as it goes, so a
task's memory is bounded by the connections open at once, not by the file's size. What a task could not use (its
``Tally``) comes back by an accumulator, keyed by file, so the driver says one summary line for the run:

    driver: capture_files ─▶ one partition per file ─▶ task: Extraction([file]) ─▶ Arrow batches ─▶ size / replay

Unlike a run in this process, which reads rotated files as one stream, a task sees its file only: the frames of a
connection that spans two files are cut at the file boundary (docs/traffic.md).

Replay and size --frames decide where they read FRAMES with ``frames_where`` (once a run), and read it on Spark,
a corpus or captures, with ``spark_frames``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from linter.frames.corpus import JSON_INPUT, count_frames, read_frames
from linter.frames.decode import loaded
from linter.frames.extract import SEEN, Extraction, captures_at, summary_line
from linter.frames.traffic import KAFKA_PORTS, Tally
from linter.spark.schema import arrow_batches

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark import Accumulator
    from pyspark.sql import DataFrame, SparkSession

    from linter.compat.revision import Revision

# The rows of capture_frames: a corpus's input columns (``hex`` and ``corrupt`` null), then the extraction's own.
CAPTURED = f"{JSON_INPUT}, {SEEN}"
BATCH = 4096  # rows per Arrow batch a task hands Spark
# Above this many bytes of captures (on disk), size --frames and replay read them on Spark without --master. A
# capture extracts at ~15 MB/s on one core (docs/performance.md, Captures): 1 GB is ~70 s in this process, where
# Spark's ~20 s of start-up and first job are paid back on 2 cores or more.
CAPTURES_ON_SPARK = 1 << 30

FileTally = tuple[int, list[tuple[str, int]]]  # a file's frames, and its tally's (reason, count) in order met


def captures_on_spark(captures: Iterable[str]) -> bool:
    """Whether captures are large enough together (``CAPTURES_ON_SPARK``) to be read on Spark unasked."""
    return sum(os.path.getsize(capture) for capture in captures) > CAPTURES_ON_SPARK


def frames_where(frames_path: str | Path, asked: bool, in_process_frames: int) -> tuple[list[str], bool]:
    """Where a run reads FRAMES (replay, size --frames), decided once: its captures (``captures_at``; none for a
    corpus of rows) and whether it runs on Spark: when ``asked`` (``--master``, a session), for captures above
    ``CAPTURES_ON_SPARK`` bytes, for a corpus of more than ``in_process_frames`` frames (``count_frames``, whose
    ``FramesInputError`` a corpus it refuses raises). Captures read here are counted once extracted, if at all."""
    captures = captures_at(frames_path)
    if asked or captures:
        return captures, asked or captures_on_spark(captures)
    return captures, count_frames(frames_path) > in_process_frames


class ByFile:
    """An accumulator's ``AccumulatorParam`` (duck-typed, so PySpark is imported only where it runs): files'
    tallies by file number, a file's later report replacing its earlier one."""

    def zero(self, value: dict[int, FileTally]) -> dict[int, FileTally]:
        return {}

    def addInPlace(self, value1: dict[int, FileTally], value2: dict[int, FileTally]) -> dict[int, FileTally]:
        value1.update(value2)
        return value1


class CaptureTallies:
    """What the tasks of one ``capture_frames`` DataFrame could not use, gathered on the driver once an action
    ran it. Keyed by file, so a task run twice (a retry, a stage computed again) is counted once."""

    def __init__(self, spark: SparkSession, captures: int) -> None:
        self.captures = captures
        self.accumulator: Accumulator[dict[int, FileTally]] = spark.sparkContext.accumulator({}, ByFile())

    def summary(self) -> str:
        """The run's summary line, as a run in this process words it (the files' tallies summed in file order)."""
        tally, frames = Tally(), 0
        for file_frames, reasons in (found for _, found in sorted(self.accumulator.value.items())):
            frames += file_frames
            for reason, count in reasons:
                tally[reason] += count
        return summary_line(self.captures, frames, tally)


def capture_frames(spark: SparkSession, captures: list[str], specs: Revision, allow_invalid: bool = False,
                   ports: frozenset[int] | None = KAFKA_PORTS, tallies: CaptureTallies | None = None) -> DataFrame:
    """The frames of ``captures`` (``capture_files``' order) as a DataFrame of ``CAPTURED``, cut with ``specs``
    (``allow_invalid``: as ``Codec.load``'s), one partition per file in that order; ``tallies`` hears what each
    file's task could not use."""
    paths = spark.sparkContext.parallelize(list(enumerate(captures)), max(1, len(captures)))
    files = spark.createDataFrame(paths, "file INT, path STRING")
    accumulator = tallies.accumulator if tallies is not None else None
    return files.mapInArrow(extract_batches(specs, allow_invalid, ports, accumulator), CAPTURED)


def spark_frames(spark: SparkSession, corpus: Path | list[str], parquet: list[str] | None, specs: Revision,
                 allow_invalid: bool) -> tuple[DataFrame, CaptureTallies | None]:
    """The frames a Spark run reads: a corpus (``parquet``: ``parquet_input``'s files) or ``captures_at``'s
    captures, extracted a task per file, cut with ``specs``, with what they could not use once the job ran."""
    if isinstance(corpus, Path):
        return read_frames(spark, corpus, parquet), None
    tallies = CaptureTallies(spark, len(corpus))
    return capture_frames(spark, corpus, specs, allow_invalid, tallies=tallies), tallies


def extract_batches(specs: Revision, allow_invalid: bool, ports: frozenset[int] | None,
                    accumulator: Accumulator[dict[int, FileTally]] | None
                    ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function: (file number, path) rows in, each file's frames out, a batch at a time."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        codec = loaded(specs, allow_invalid, freeze=True).codec
        for batch in batches:
            for number, path in zip(batch.column("file").to_pylist(), batch.column("path").to_pylist()):
                extraction = Extraction([path], codec, ports)
                yield from arrow_batches(extraction.rows(), CAPTURED, BATCH)
                if accumulator is not None:
                    accumulator.add({number: (extraction.frames, list(extraction.tally.items()))})

    return run


__all__ = ["BATCH", "CAPTURED", "CAPTURES_ON_SPARK", "CaptureTallies", "capture_frames", "captures_on_spark",
           "extract_batches", "frames_where", "spark_frames"]
