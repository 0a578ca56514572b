"""Where ``krpc-lint size --frames`` sizes a corpus: in this process when it is small, else on Spark, as
``krpc-lint audit`` decides (``--master`` always runs on Spark). Both run the same ``FrameSizer``. A corpus
none of whose frames could be sized has no figures to give: that is an error, as the first bad frame was."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from linter.codec import Codec
from linter.compat.sources import read_specs
from linter.frames.corpus import count_frames, frames_job, parquet_input
from linter.frames.decode import Decoders
from linter.frames.errors import FramesInputError
from linter.frames.extract import as_corpus
from linter.frames.on_spark import frames_where, spark_frames
from linter.size.frames import FrameSizer, Tally, size_in_process
from linter.size.on_spark import size_on_spark
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
    default ``local[*]``). ``FramesInputError`` when FRAMES has frames and none could be sized, or is a corpus
    ``count_frames`` refuses. Packet captures (FRAMES a capture, or a directory of them) are read as a corpus by
    ``linter.frames.extract.as_corpus`` (sized on Spark above ``IN_PROCESS_FRAMES`` frames), or, with ``master``
    or ``spark`` or above ``CAPTURES_ON_SPARK`` bytes, on Spark a task per file."""
    captures, on_spark = frames_where(frames_path, spark is not None or master is not None, IN_PROCESS_FRAMES)
    decoders = Decoders(codec)  # the header specs are there, before any frame is read or Spark starts
    if captures and on_spark:
        return _size_on_spark(frames_path, captures, specs, what_if, message, version, master, spark, allow_invalid)
    with as_corpus(frames_path, codec, captures) as (corpus, captured):
        if captures:  # extracted here: counted now, as a corpus of rows was
            on_spark = count_frames(corpus) > IN_PROCESS_FRAMES
        if on_spark:
            run = _size_on_spark(frames_path, corpus, specs, what_if, message, version, master, spark, allow_invalid)
        else:
            started = time.monotonic()
            tally = size_in_process(corpus, FrameSizer(decoders, what_if, message, version))
            run = FramesRun(some_sized(frames_path, tally), IN_PROCESS, time.monotonic() - started)
    run.captured = captured
    return run


def _size_on_spark(frames_path: str | Path, corpus: Path | list[str], specs: str | Path, what_if: WhatIf,
                   message: str | None, version: int | None, master: str | None, spark: SparkSession | None,
                   allow_invalid: bool) -> FramesRun:
    """``size_frames`` on Spark of a corpus of rows (FRAMES itself, or the frames extracted from its captures) or
    of the captures themselves, each file extracted by a task of its own (``linter.frames.on_spark``), its frames
    sized as they come, never a corpus written on the driver."""
    revision = read_specs(specs)
    with tempfile.TemporaryDirectory(prefix="krpc-lint-size-") as scratch:
        parquet = parquet_input(corpus, Path(scratch)) if isinstance(corpus, Path) else None  # before Spark starts
        spark = spark or session(master)
        started = time.monotonic()
        with frames_job(spark, frames_path):
            frames, tallies = spark_frames(spark, corpus, parquet, revision, allow_invalid)
            tally = size_on_spark(frames, revision, what_if, message, version, allow_invalid)
    return FramesRun(some_sized(frames_path, tally), spark.sparkContext.master, time.monotonic() - started,
                     tallies.summary() if tallies is not None else None)


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
