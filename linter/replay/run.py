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

The per-frame work (``replay_frame``) is plain Python, usable and tested without Spark. The
Spark job runs it with ``mapInArrow``: Arrow batches in and out, each Python worker building the
two codecs once (from the spec texts shipped with the job, cached by their digest).

The parts: ``linter.frames.decode`` (a revision's frame decoders), ``linter.replay.frame`` (one frame's
outcome), ``linter.replay.batches`` (the workers' side), ``linter.frames.corpus`` (reading FRAMES); this module
runs the job.
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
from linter.frames.corpus import frames_job, parquet_input, read_frames
from linter.frames.decode import loaded
from linter.replay.batches import RESULTS, CountKey, replay_batches
from linter.replay.frame import OUTCOMES, SAME
from linter.spark import schema
from linter.spark.output import atomic_directory

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class ReplaySummary:
    """What a replay did: frames per outcome, and how fast."""

    out: str
    frames: int
    outcomes: dict[str, int]
    mismatches: int
    seconds: float  # the Spark job: reading, decoding, writing (not the session's start or loading specs)
    frames_per_second: float
    master: str
    meta: dict[str, Any] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # spec files --allow-invalid left out, of either revision


# Spark reads a file in about as many splits as there are cores; more (and so smaller) splits keep
# every core busy to the end, as frames of different APIs take very different times to decode.


def replay(frames_path: str | Path, old_specs: str | Path, new_specs: str | Path, out: str | Path, *,
           master: str | None = None, overwrite: bool = False, spark: SparkSession | None = None,
           allow_invalid: bool = False) -> ReplaySummary:
    """Replay FRAMES under OLD and NEW into ``out``: ``mismatches/``, ``counts/``, ``summary.json``.

    ``spark``: a session to use (and leave running); otherwise one is started for ``master``.
    Raises ``SpecError`` or ``ValueError`` for unusable specs (before any Spark work),
    ``OutputExists`` when ``out`` exists and ``overwrite`` is false.
    """
    from linter.spark.session import require_pyspark, session

    if spark is None:
        require_pyspark()
    old, new = read_specs(old_specs), read_specs(new_specs)
    skipped = tuple(sorted({Path(name).name for specs in (old, new)
                            for name in loaded(specs, allow_invalid).codec.skipped}))
    # (bad specs fail in loaded, before any Spark work)
    with tempfile.TemporaryDirectory(prefix="krpc-lint-replay-") as scratch, \
            atomic_directory(out, overwrite=overwrite, inputs=[frames_path, old_specs, new_specs]) as work_dir:
        parquet = parquet_input(frames_path, Path(scratch))  # damaged Parquet: before Spark starts
        spark = spark or session(master)
        started = time.monotonic()
        with frames_job(spark, frames_path):
            counts = _run(spark, read_frames(spark, frames_path, parquet), old, new, allow_invalid, work_dir)
        outcomes = dict.fromkeys(OUTCOMES, 0)
        for key, frames in counts.items():
            outcomes[key[-1]] += frames
        seconds = time.monotonic() - started
        total = sum(outcomes.values())
        summary = ReplaySummary(str(out), total, outcomes, total - outcomes[SAME], round(seconds, 3),
                                round(total / seconds, 1), spark.sparkContext.master, skipped=skipped)
        summary.meta = {"frames_path": str(frames_path), "old_specs": old.label, "new_specs": new.label,
                        "frames": total, "outcomes": outcomes, "mismatches": summary.mismatches,
                        "seconds": summary.seconds, "frames_per_second": summary.frames_per_second,
                        "master": summary.master, "skipped_specs": list(skipped)}
        (work_dir / "summary.json").write_text(json.dumps(summary.meta, indent=2) + "\n")
    return summary


def _run(spark: SparkSession, frames: DataFrame, old: Revision, new: Revision, allow_invalid: bool,
         work_dir: Path) -> dict[CountKey, int]:
    """The job: replay every frame once (the small results kept), number the mismatches and write
    both tables; returns the counts. Two Spark jobs, no shuffle: the replay (collecting each
    partition's count rows, a few per frame kind), then writing the mismatches from the cache.
    The counts are summed and written here, on the driver."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from linter.spark.output import write_parquet

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
    ordered = sorted(counts.items(), key=lambda item: [(value is None, value) for value in item[0]])
    write_parquet([dict(zip(keys, key), frames=frames) for key, frames in ordered], schema.REPLAY_COUNTS,
                  work_dir / "counts")
    return counts


__all__ = ["ReplaySummary", "replay"]
