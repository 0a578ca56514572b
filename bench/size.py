"""Size speed: ``krpc-lint size --frames --kip636`` on a generated corpus, in this process and on Spark,
side by side with its floor, decoding the same frames.

* ``generate``: ``frames generate`` of ``--frames`` frames (1,000,000) from ``--specs`` (trunk 2024-10), seed 0;
* ``decode loop, 1 core`` (the floor): every frame split and decoded by replay's decoders
  (``linter.frames.decode.Decoders``) in one plain Python loop over the corpus's Arrow batches: what sizing a
  frame costs at least, before any attribution or what-if encoding;
* ``size, in-process``: ``size_frames`` in this process (one core): decoding, attributing every byte to
  its field path (re-encoding the body) and encoding it again with the KIP-636 spec;
* ``size, Spark``: the same on ``--master`` (``local[2]``), forced with a session; its seconds are the job
  (reading, sizing, collecting), ``+ session`` adds starting Spark, the whole of one command's extra cost.

The two runs must give the same totals (checked: the script fails otherwise). ``vs floor`` is frames/s
over the decode loop's.

Usage: python bench/size.py [--frames N] [--specs DIR] [--master URL] [--skip-in-process]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from timing import median_seconds

SPECS = ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10"


def decode_loop(corpus: Path, codec: object) -> tuple[int, float]:
    """Frames decoded and seconds taken by the floor: split and decode every frame, nothing else."""
    import pyarrow.parquet as pq

    from linter.frames.corpus import batch_columns, split_frame
    from linter.frames.decode import Api, Decoders

    decoders = Decoders(codec)  # type: ignore[arg-type]
    batches = pq.read_table(corpus).to_batches(max_chunksize=16384)

    def run() -> None:
        for batch in batches:
            for key, version, direction, correlation_id, data, hex_text, _ in zip(*batch_columns(batch)):
                payload, key, version, _ = split_frame(direction, key, version, correlation_id, data, hex_text)
                api = decoders.api(direction, key, version)
                assert type(api) is Api
                api.decode(payload)

    seconds = median_seconds(run, 1)  # cold, compiling the plans it meets, as the size runs do
    return sum(batch.num_rows for batch in batches), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000, help="corpus size (1,000,000)")
    parser.add_argument("--specs", type=Path, default=SPECS, help="specs (trunk-2024-10 in ../shared)")
    parser.add_argument("--master", default="local[2]", help="Spark master (local[2])")
    parser.add_argument("--skip-in-process", action="store_true", help="only the floor and Spark")
    args = parser.parse_args()
    if not args.specs.is_dir():
        print(f"bench/size.py: the specs are missing: {args.specs} (../shared beside the repo)", file=sys.stderr)
        return 2

    from linter.codec import Codec
    from linter.frames.decode import Decoders
    from linter.frames.generate import generate
    from linter.size.frames import FrameSizer, size_in_process
    from linter.size.run import size_frames
    from linter.size.whatif import WhatIf
    from linter.spark.session import session

    work = Path(tempfile.mkdtemp(prefix="krpc-lint-bench-size-"))
    try:
        corpus = work / "frames.parquet"
        start = time.perf_counter()
        generate(args.specs, args.frames, corpus, seed=0)
        generated = time.perf_counter() - start
        codec = Codec.load(args.specs)
        floor_frames, floor_seconds = decode_loop(corpus, codec)
        rows = [("generate", args.frames, generated), ("decode loop, 1 core (floor)", floor_frames, floor_seconds)]
        local = None
        if not args.skip_in_process:
            start = time.perf_counter()  # forced here: size_frames would take Spark for a corpus this large
            local = size_in_process(corpus, FrameSizer(Decoders(codec), WhatIf(kip636=True)))
            rows.append(("size, in-process (1 core)", local.frames, time.perf_counter() - start))
        start = time.perf_counter()
        spark = session(args.master)
        session_seconds = time.perf_counter() - start
        run = size_frames(corpus, codec, args.specs, WhatIf(kip636=True), spark=spark)
        cores = spark.sparkContext.defaultParallelism
        spark.stop()
        rows += [(f"size, Spark {args.master}", run.tally.frames, run.seconds),
                 ("size, Spark + session", run.tally.frames, run.seconds + session_seconds)]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    tally = run.tally
    total, after = sum(s.bytes for s in tally.sizes.values()), sum(tally.what_if.values())
    print(f"size speed: {args.specs.name}, {args.frames:,} generated frames, --kip636, Python "
          f"{sys.version.split()[0]}, master {args.master} ({cores} cores)")
    print(f"corpus: {len(tally.sizes):,} message versions, {total:,} body bytes; KIP-636 what-if {after:,} bytes "
          f"({total - after:,} saved)")
    if local is not None:
        same = local.what_if == tally.what_if and {k: (s.count, s.bytes, s.fields) for k, s in
                                                   local.sizes.items()} == \
            {k: (s.count, s.bytes, s.fields) for k, s in tally.sizes.items()}
        print(f"in-process and Spark totals: {'identical' if same else 'DIFFERENT'}")
        if not same:
            return 1
    print()
    floor_rate = floor_frames / floor_seconds
    print(f"{'what':30} {'frames':>10} {'seconds':>8} {'frames/s':>10} {'vs floor':>8}")
    for label, frames, seconds in rows:
        rate = frames / seconds
        ratio = "" if label == "generate" else f"{rate / floor_rate:7.2f}x"
        print(f"{label:30} {frames:10,} {seconds:8.2f} {rate:10,.0f} {ratio:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
