"""``krpc-lint replay``: decode captured frames under two spec revisions and report what changes.

Input (FRAMES): Parquet (a file, or a directory of Parquet files) or JSON Lines (``.jsonl``,
``.json``, ``.ndjson``), one row per frame, with the columns of ``linter.frames.corpus``:

- ``bytes`` (binary; base64 text in JSON Lines) or ``hex`` (text): the whole frame as captured,
  int32 size, header, body. ``bytes`` wins when a row has both.
- ``direction``: ``request`` or ``response``.
- ``api_key``, ``api_version``: for a request, optional (the request header holds them) but, when
  given, they must agree with the header. A response's header holds only the correlation id, so a
  response needs the API key and version *of the request it answers*.
- ``correlation_id``: optional; when given, it must agree with the header.

Every frame is decoded under both revisions (header and body; ``decode_request`` and
``decode_response`` semantics) and gets one outcome: ``same``, ``differs`` (both decode, to
different values), ``old_fails``, ``new_fails`` or ``both_fail``. A frame that cannot be replayed at
all (no bytes, not hex, a size prefix that does not match, an unknown direction, columns that
contradict the header) is ``both_fail`` with the same error on both sides: bad input is a row,
never a failed job. Where the two revisions compile a frame kind to identical plans (equal
``StructPlan.signature`` of header and body: the same names, types, encodings, tags and tagged
defaults), the two decodings would be one computation, so that frame is decoded once.

``path`` is where the two decodings first differ, or where decoding failed, in the codec's terms:
``body.Topics[0].Partitions[2].MaxBytes``, ``header.ClientId`` (as ``krpc-lint codec decode --frame``
names them). Values are compared field by field, by name, exactly as the bytes see them (``True`` is
not ``1``, ``-0.0`` is not ``0.0``). A field only one revision has at that version is not on the
wire (a tagged field at its default) unless the other side has a field only it has: then the two
are a rename and their values are compared (paired in field order).

Output (``--out``, written atomically): ``mismatches/`` (every frame that is not ``same``, schema
``REPLAY_MISMATCHES``; ``frame`` is the row's 0-based position in FRAMES, in Spark's reading
order, which is the file's order for one file; an unreadable Parquet row group is one row there, see
``parquet_input``), ``counts/`` (``REPLAY_COUNTS``) and
``summary.json``.

The per-frame work (``replay_frame``, and ``replay_rows`` over many) is plain Python, usable and tested
without Spark. A corpus of at most ``IN_PROCESS_FRAMES`` frames, without ``--master``, runs it in this process
(``linter.replay.in_process``; PySpark not needed; ``summary.json`` says ``"master": "in-process"``); a larger
one runs it on Spark with ``mapInArrow``: Arrow batches in and out, each Python worker building the two codecs
once (from the spec texts shipped with the job, cached by their digest). Both write the same rows.

The parts: ``linter.frames.decode`` (a revision's frame decoders), ``linter.replay.frame`` (one frame's
outcome), ``linter.replay.batches`` (the per-frame loop and the workers' side), ``linter.replay.in_process``
(the run here), ``linter.frames.corpus`` (reading FRAMES); this module chooses where and writes the counts
and the summary.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.compat.revision import Revision
from linter.compat.sources import read_specs
from linter.frames.corpus import frames_job, parquet_input
from linter.frames.decode import Decoders, loaded
from linter.frames.errors import FramesInputError
from linter.frames.extract import as_corpus
from linter.frames.on_spark import frames_where, spark_frames
from linter.replay.batches import RESULTS, CountKey, replay_batches
from linter.replay.frame import OUTCOMES, SAME
from linter.replay.in_process import replay_here
from linter.spark import schema
from linter.spark.output import atomic_directory, write_parquet
from linter.spark.session import IN_PROCESS, session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class ReplaySummary:
    """What a replay did: frames per outcome, and how fast."""

    out: str
    frames: int
    outcomes: dict[str, int]
    mismatches: int
    seconds: float  # the run: reading, decoding, writing (not Spark's session start or loading specs)
    frames_per_second: float
    master: str
    meta: dict[str, Any] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # spec files --allow-invalid left out, of either revision
    captured: str | None = None  # FRAMES was packet captures: what their extraction read and left out


# At most this many frames, and no --master: replayed in this process. There a corpus runs at ~127,000 frames/s
# on one core, every cost included (the same per-frame code as Spark's workers; mismatches written a batch at
# a time: 430 MB peak for 1,000,000 frames), while a whole Spark command pays 10-12 s before its cores help (the session and the
# first job: workers start and load both revisions) and then replays ~65,000 frames/s a core. Measured on
# 2 cores, Kafka 3.7.0 -> trunk-2024-10, generated corpora (docs/performance.md, replay; bench/replay.py):
# 100,000 frames 1.4 s here against 12.2 s on local[2], 1,000,000 frames 9.1 s against 37.7 s. On 2 cores
# this process wins at any size; at this bound it still wins on up to ~8 cores.
IN_PROCESS_FRAMES = 1_000_000


def replay(frames_path: str | Path, old_specs: str | Path, new_specs: str | Path, out: str | Path, *,
           master: str | None = None, overwrite: bool = False, spark: SparkSession | None = None,
           allow_invalid: bool = False, where: tuple[list[str], bool] | None = None) -> ReplaySummary:
    """Replay FRAMES under OLD and NEW into ``out``: ``mismatches/``, ``counts/``, ``summary.json``.

    In this process when FRAMES holds at most ``IN_PROCESS_FRAMES`` frames and neither ``master`` nor ``spark``
    is given (PySpark not needed), else on Spark: ``spark``, a session to use (and leave running), or one
    started for ``master``. Raises ``SpecError`` or ``ValueError`` for unusable specs (before any Spark
    work), ``OutputExists`` when ``out`` exists and ``overwrite`` is false. ``where``: the caller's
    ``where_to_replay(frames_path, master is not None)``, when it asked already (it reads the first packet of
    every capture, or counts a corpus: a pass over it).
    """
    captures, on_spark = where if where is not None else where_to_replay(frames_path, master is not None or
                                                                        spark is not None)
    here = spark is None and not on_spark
    old, new = read_specs(old_specs), read_specs(new_specs)
    sides = loaded(old, allow_invalid), loaded(new, allow_invalid)  # bad specs fail here, before any Spark work
    skipped = tuple(sorted({Path(name).name for side in sides for name in side.codec.skipped}))
    # packet captures are cut with OLD, the specs they speak: here into a corpus first, on Spark by a task per file
    if captures and not here:
        return _replay(frames_path, captures, old, new, out, spark, master, None, overwrite, allow_invalid,
                       skipped, (old_specs, new_specs))
    with as_corpus(frames_path, sides[0].codec, captures) as (corpus, captured):
        summary = _replay(frames_path, corpus, old, new, out, spark, master, sides if here else None, overwrite,
                          allow_invalid, skipped, (old_specs, new_specs))
    summary.captured = captured
    return summary


def _replay(frames_path: str | Path, corpus: Path | list[str], old: Revision, new: Revision, out: str | Path,
            spark: SparkSession | None, master: str | None, here: tuple[Decoders, Decoders] | None, overwrite: bool,
            allow_invalid: bool, skipped: tuple[str, ...], specs: tuple[str | Path, str | Path]) -> ReplaySummary:
    """``replay`` of a corpus of rows (FRAMES itself, or the frames extracted from its captures) or, on Spark, of
    the captures themselves (their summary line in ``captured``). ``here``: OLD's and NEW's decoders, to replay
    in this process, else ``None``: on Spark, whose workers load the revisions themselves."""
    old_specs, new_specs = specs
    with tempfile.TemporaryDirectory(prefix="krpc-lint-replay-") as scratch, \
            atomic_directory(out, overwrite=overwrite, inputs=[frames_path, old_specs, new_specs]) as work_dir:
        parquet = parquet_input(corpus, Path(scratch)) if isinstance(corpus, Path) else None  # before Spark starts
        tallies = None
        if isinstance(corpus, Path) and here is not None:
            started, where = time.monotonic(), IN_PROCESS
            counts = replay_here(corpus, parquet, *here, work_dir)
        else:
            spark = spark or session(master)
            started, where = time.monotonic(), spark.sparkContext.master
            with frames_job(spark, frames_path):
                frames, tallies = spark_frames(spark, corpus, parquet, old, allow_invalid)
                counts = _run(spark, frames, old, new, allow_invalid, work_dir)
        _write_counts(counts, work_dir)
        summary = _summary(out, counts, time.monotonic() - started, where, skipped)
        summary.captured = tallies.summary() if tallies is not None else None
        summary.meta = {"frames_path": str(frames_path), "old_specs": old.label, "new_specs": new.label,
                        "frames": summary.frames, "outcomes": summary.outcomes, "mismatches": summary.mismatches,
                        "seconds": summary.seconds, "frames_per_second": summary.frames_per_second,
                        "master": summary.master, "skipped_specs": list(skipped)}
        (work_dir / "summary.json").write_text(json.dumps(summary.meta, indent=2) + "\n")
    return summary


def where_to_replay(frames_path: str | Path, asked: bool) -> tuple[list[str], bool]:
    """FRAMES' captures, and whether a replay of it runs on Spark (``frames_where``): when ``asked`` (``--master``,
    a session), above ``IN_PROCESS_FRAMES`` frames, or for captures above ``CAPTURES_ON_SPARK`` bytes. A corpus
    ``count_frames`` refuses (a first JSON line that is no frame record, a damaged footer in a directory) goes to
    Spark too, which replays or refuses it as it always did."""
    try:
        return frames_where(frames_path, asked, IN_PROCESS_FRAMES)
    except FramesInputError:
        return [], True


def _summary(out: str | Path, counts: dict[CountKey, int], seconds: float, master: str,
             skipped: tuple[str, ...]) -> ReplaySummary:
    """The run's figures from its counts, the same wherever it ran."""
    outcomes = dict.fromkeys(OUTCOMES, 0)
    for key, frames in counts.items():
        outcomes[key[-1]] += frames
    total = sum(outcomes.values())
    return ReplaySummary(str(out), total, outcomes, total - outcomes[SAME], round(seconds, 3),
                         round(total / seconds, 1), master, skipped=skipped)


def _run(spark: SparkSession, frames: DataFrame, old: Revision, new: Revision, allow_invalid: bool,
         work_dir: Path) -> dict[CountKey, int]:
    """The job: replay every frame once (the small results kept), number the mismatches and write
    ``mismatches/``; returns the counts. Two Spark jobs, no shuffle: the replay (collecting each
    partition's count rows, a few per frame kind), then writing the mismatches from the cache.
    The counts are summed here, on the driver."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    results = frames.mapInArrow(replay_batches(old, new, allow_invalid), RESULTS).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        keys = schema.columns(schema.REPLAY_COUNTS)[:-1]
        sizes: dict[int, int] = {}
        counts: dict[CountKey, int] = {}
        for row in results.where(F.col("row").isNull()).select("part", *keys, "frames").collect():
            sizes[row["part"]] = sizes.get(row["part"], 0) + row["frames"]
            key = tuple(row[name] for name in keys)
            counts[key] = counts.get(key, 0) + row["frames"]
        offsets = list(accumulate((sizes.get(part, 0) for part in range(max(sizes, default=0))), initial=0))
        first = F.element_at(F.array(*[F.lit(offset) for offset in offsets]).cast("array<bigint>"), F.col("part") + 1)
        mismatches = results.where(F.col("row").isNotNull()).select(
            (first + F.col("row")).alias("frame"), *schema.columns(schema.REPLAY_MISMATCHES)[1:])
        mismatches.write.parquet(str(work_dir / "mismatches"))
    finally:
        results.unpersist()
    return counts


def _write_counts(counts: dict[CountKey, int], work_dir: Path) -> None:
    """``counts/``, written here after either run, its rows in one order (by key, nulls last)."""
    ordered = sorted(counts.items(), key=lambda item: [(value is None, value) for value in item[0]])
    keys = schema.columns(schema.REPLAY_COUNTS)[:-1]
    write_parquet([dict(zip(keys, key), frames=frames) for key, frames in ordered], schema.REPLAY_COUNTS,
                  work_dir / "counts")


__all__ = ["IN_PROCESS", "IN_PROCESS_FRAMES", "ReplaySummary", "replay", "where_to_replay"]
