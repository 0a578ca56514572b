"""Replay speed: ``krpc-lint replay`` in this process and on Spark, side by side with its floor, the same
per-frame work in one plain Python loop.

* ``generate``: ``frames generate`` of ``--frames`` frames (1,000,000) from OLD (Kafka 3.7.0);
* ``loop, 1 core``: ``replay_batch`` over the corpus's Arrow batches in this process, no Spark
  (the first ``--loop-frames`` of them): decoding every frame under both revisions and comparing,
  the work the executors do, with none of the distribution;
* ``replay, in-process``: ``replay(FRAMES, OLD, NEW, OUT)`` without Spark, as a corpus of at most
  ``IN_PROCESS_FRAMES`` runs (forced here whatever the size): ``the run`` is its own frames/s (reading,
  decoding, writing), ``whole`` adds loading the specs: the whole of one ``krpc-lint replay`` command
  but Python's start;
* ``replay``: ``replay(FRAMES, OLD, NEW, OUT)`` on ``--master`` (``local[2]``), OLD vs NEW
  (trunk 2024-10), its own frames/s (reading, decoding, writing; not the session's start). ``cold``
  is the first run of the session: its Python workers start, load both spec revisions and compile
  the plans of every API version they meet; ``warm`` runs again on the same workers (median of
  ``--runs``), the steady-state rate; ``session + cold`` adds starting Spark (the JVM), which is the
  whole of one ``krpc-lint replay`` command.

Goal: replay >= 50,000 frames/s on 2 cores. The ratio to the loop says what Spark adds: at most
the number of cores, less its overhead; the in-process rows say where ``IN_PROCESS_FRAMES`` should be.
``start cost`` (cold minus warm seconds) is what a run pays once, whatever the corpus size.

Usage: python bench/replay.py [--frames N] [--old DIR] [--new DIR] [--master URL] [--loop-frames N] [--runs R]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT.parent / "shared" / "kafka-specs"
GOAL = 50_000


def loop(corpus: Path, old: Path, new: Path, frames: int) -> tuple[int, float]:
    """Frames replayed and seconds taken by the plain loop over the first ``frames`` frames."""
    import pyarrow.parquet as pq

    from linter.compat.sources import read_specs
    from linter.frames.decode import loaded
    from linter.replay.batches import replay_batch

    old_side, new_side = loaded(read_specs(old)), loaded(read_specs(new))
    batches = pq.read_table(corpus).slice(0, frames).to_batches(max_chunksize=10_000)
    replay_batch(old_side, new_side, batches[0], {})  # compile the plans it meets, as a warm worker has
    counts: dict = {}
    start = time.perf_counter()
    for batch in batches:
        replay_batch(old_side, new_side, batch, counts)
    return sum(counts.values()), time.perf_counter() - start


def in_process(corpus: Path, old: Path, new: Path, out: Path, frames: int) -> tuple[Any, float]:
    """The summary of a replay in this process, whatever the corpus size, and the seconds of the whole call."""
    from linter.replay import run

    run.IN_PROCESS_FRAMES = max(run.IN_PROCESS_FRAMES, frames)
    start = time.perf_counter()
    summary = run.replay(corpus, old, new, out)
    return summary, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000, help="corpus size (1,000,000)")
    parser.add_argument("--old", type=Path, default=SPECS / "3.7.0", help="OLD specs (3.7.0 in ../shared)")
    parser.add_argument("--new", type=Path, default=SPECS / "trunk-2024-10", help="NEW specs (trunk-2024-10)")
    parser.add_argument("--master", default="local[2]", help="Spark master (local[2])")
    parser.add_argument("--loop-frames", type=int, default=200_000, help="frames the plain loop replays (200,000)")
    parser.add_argument("--runs", type=int, default=1, help="warm replay runs, median (1)")
    args = parser.parse_args()
    if not args.old.is_dir() or not args.new.is_dir():
        print(f"bench/replay.py: the specs are missing: {args.old}, {args.new} (../shared beside the repo)",
              file=sys.stderr)
        return 2

    from linter.frames.generate import generate
    from linter.replay.run import replay
    from linter.spark.session import session

    work = Path(tempfile.mkdtemp(prefix="krpc-lint-bench-replay-"))
    try:
        corpus = work / "frames.parquet"
        start = time.perf_counter()
        generate(args.old, args.frames, corpus, seed=0)
        generated = time.perf_counter() - start
        size = corpus.stat().st_size
        looped, loop_seconds = loop(corpus, args.old, args.new, min(args.loop_frames, args.frames))
        here, here_whole = in_process(corpus, args.old, args.new, work / "here", args.frames)

        start = time.perf_counter()
        spark = session(args.master)
        session_seconds = time.perf_counter() - start
        cold = replay(corpus, args.old, args.new, work / "out", spark=spark)
        warm = [replay(corpus, args.old, args.new, work / "out", overwrite=True, spark=spark)
                for _ in range(args.runs)]
        warm_seconds = statistics.median(run.seconds for run in warm)
        cores = spark.sparkContext.defaultParallelism
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    loop_rate = looped / loop_seconds
    print(f"replay speed: {args.old.name} -> {args.new.name}, {args.frames:,} generated frames "
          f"({size / 1e6:.0f} MB of Parquet), Python {sys.version.split()[0]}, master {args.master} ({cores} cores)")
    print(f"outcomes: {', '.join(f'{name} {count:,}' for name, count in cold.outcomes.items() if count)}")
    print()
    print(f"{'what':26} {'frames':>10} {'seconds':>8} {'frames/s':>10} {'vs loop':>8}")
    print(f"{'generate':26} {args.frames:10,} {generated:8.2f} {args.frames / generated:10,.0f}")
    rates = {}
    for label, frames, seconds in (("loop, 1 core (the floor)", looped, loop_seconds),
                                   ("replay, in-process run", here.frames, here.seconds),
                                   ("replay, in-process whole", here.frames, here_whole),
                                   ("replay, cold", cold.frames, cold.seconds),
                                   ("replay, warm", cold.frames, warm_seconds),
                                   ("replay, session + cold", cold.frames, session_seconds + cold.seconds)):
        rates[label] = frames / seconds
        print(f"{label:26} {frames:10,} {seconds:8.2f} {rates[label]:10,.0f} {rates[label] / loop_rate:7.2f}x")
    verdicts = ", ".join(f"{label.split(', ')[1]} {rates[label]:,.0f} ({'met' if rates[label] >= GOAL else 'NOT MET'})"
                         for label in ("replay, warm", "replay, cold", "replay, session + cold"))
    print(f"\nstart cost, paid once per run: {cold.seconds - warm_seconds:.1f} s of the job "
          f"(workers, specs, the JVM's first job) + {session_seconds:.1f} s of Spark's session")
    print(f"goal: replay >= {GOAL:,} frames/s on 2 cores: {verdicts}")
    print(f"in-process vs Spark, whole: {here_whole:.1f} s against {session_seconds + cold.seconds:.1f} s")
    if (here.frames, here.outcomes) != (cold.frames, cold.outcomes):
        print(f"in-process and Spark disagree: {here.outcomes} against {cold.outcomes}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
