"""Where ``krpc-lint size --frames`` sizes a corpus: in this process when it is small, else on Spark, as
``krpc-lint audit`` decides (``--master`` always runs on Spark). Both run the same ``FrameSizer``. A corpus
none of whose frames could be sized has no figures to give: that is an error, as the first bad frame was."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from linter.codec import Codec
from linter.compat.sources import read_specs
from linter.frames.corpus import count_frames, frames_job
from linter.frames.decode import Decoders
from linter.frames.errors import FramesInputError
from linter.frames.extract import as_corpus, captures_at
from linter.frames.on_spark import CaptureTallies, capture_frames, captures_on_spark
from linter.size.frames import FrameSizer, Tally, size_in_process
from linter.size.on_spark import RESULTS, merged, size_batches, size_on_spark
from linter.size.whatif import WhatIf
from linter.spark.session import IN_PROCESS, session
from linter.vocabulary import plural

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# At most this many frames, and no --master: sized in this process. There a corpus runs at 15,000 (all
# distinct) to 85,000 (traffic's repeats) frames/s on one core, while Spark pays ~8 s to start and ~12 s for
# its first job before its cores help (docs/performance.md, size): on 2 cores in-process wins up to ~400,000
# distinct frames.
IN_PROCESS_FRAMES = 250_000


@dataclass
class FramesRun:
    """A sized corpus and where it ran."""

    tally: Tally
    master: str
    seconds: float
    captured: str | None = None  # FRAMES was packet captures: what their extraction read and left out


def size_frames(frames_path: str | Path, codec: Codec, specs: str | Path, what_if: WhatIf, *,
                message: str | None = None, version: int | None = None, master: str | None = None,
                spark: SparkSession | None = None, allow_invalid: bool = False) -> FramesRun:
    """Size FRAMES with the specs (``codec`` loaded from ``specs``): in this process when it holds at most
    ``IN_PROCESS_FRAMES`` frames and neither ``master`` nor ``spark`` is given, else on Spark (``master``,
    default ``local[*]``). ``FramesInputError`` when FRAMES has frames and none could be sized. Packet captures
    (FRAMES a capture, or a directory of them) are read as a corpus by ``linter.frames.extract.as_corpus``, or,
    with ``master`` or ``spark`` or above ``CAPTURES_ON_SPARK`` bytes, on Spark a task per file."""
    captures = captures_at(frames_path)
    if captures and (spark is not None or master is not None or captures_on_spark(captures)):
        return _size_captures(frames_path, captures, codec, specs, what_if, message, version, master, spark,
                              allow_invalid)
    with as_corpus(frames_path, codec, captures) as (corpus, captured):
        run = _size_corpus(frames_path, corpus, codec, specs, what_if, message, version, master, spark,
                           allow_invalid)
    run.captured = captured
    return run


def _size_corpus(frames_path: str | Path, corpus: Path, codec: Codec, specs: str | Path, what_if: WhatIf,
                 message: str | None, version: int | None, master: str | None, spark: SparkSession | None,
                 allow_invalid: bool) -> FramesRun:
    """``size_frames`` of a corpus of rows (``corpus``: FRAMES itself, or the frames extracted from it)."""
    frames = count_frames(corpus)
    started = time.monotonic()
    if spark is None and master is None and frames <= IN_PROCESS_FRAMES:
        tally = size_in_process(corpus, FrameSizer(Decoders(codec), what_if, message, version))
        return FramesRun(some_sized(frames_path, tally), IN_PROCESS, time.monotonic() - started)
    Decoders(codec)  # the header specs are there, before Spark starts
    spark = spark or session(master)
    started = time.monotonic()
    tally = size_on_spark(spark, corpus, read_specs(specs), what_if, message, version, allow_invalid)
    return FramesRun(some_sized(frames_path, tally), spark.sparkContext.master, time.monotonic() - started)


def _size_captures(frames_path: str | Path, captures: list[str], codec: Codec, specs: str | Path, what_if: WhatIf,
                   message: str | None, version: int | None, master: str | None, spark: SparkSession | None,
                   allow_invalid: bool) -> FramesRun:
    """``size_frames`` of packet captures on Spark: each file extracted by a task of its own
    (``linter.frames.on_spark``), its frames sized as they come, never a corpus written on the driver."""
    Decoders(codec)  # the header specs are there, before Spark starts
    spark = spark or session(master)
    started = time.monotonic()
    revision = read_specs(specs)
    sizing = ((what_if.kip636, what_if.tags, what_if.flexible), message, version, allow_invalid)
    tallies = CaptureTallies(spark, len(captures))
    with frames_job(spark, frames_path):
        rows = capture_frames(spark, captures, revision, allow_invalid, tallies=tallies).mapInArrow(
            size_batches(revision, sizing), RESULTS).collect()
    tally = merged([row.asDict() for row in rows])
    run = FramesRun(some_sized(frames_path, tally), spark.sparkContext.master, time.monotonic() - started)
    run.captured = tallies.summary()
    return run


def some_sized(frames_path: str | Path, tally: Tally) -> Tally:
    """``tally``, unless FRAMES has frames and every one was refused: then one line naming the first.

    >>> from linter.size.frames import NOT_A_FRAME
    >>> tally = Tally(frames=2)
    >>> tally.refuse(NOT_A_FRAME, 0, "no frame: bytes and hex are both null", 2)
    >>> some_sized("f.jsonl", tally)
    Traceback (most recent call last):
    ...
    linter.frames.errors.FramesInputError: f.jsonl: no frame could be sized (2 frames, none decodable; first: \
frame 0: no frame: bytes and hex are both null)
    """
    if not tally.frames or tally.refused_frames < tally.frames:
        return tally
    first = min(tally.refused.values(), key=lambda refused: refused.first_frame)
    raise FramesInputError(f"{frames_path}: no frame could be sized ({plural(tally.frames, 'frame')}, none "
                           f"decodable; first: frame {first.first_frame}: {first.first_error})")


__all__ = ["IN_PROCESS", "IN_PROCESS_FRAMES", "FramesRun", "size_frames", "some_sized"]
