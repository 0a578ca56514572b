"""Readiness speed: ``krpc-lint readiness`` over 1,000,000 frames, in this process and on Spark ``local[2]``, side by
side with its floor, a process that reads the same corpus and decodes only each request's header (API key,
version, client id) with the same struct layout, counting calls per client.

    python bench/readiness.py [--frames 1000000] [--runs 3] [--no-spark]

The corpus is the real traffic of ``fixtures/captures`` (four clients against librdkafka's mock cluster),
extracted once and its rows written again and again into 4 Parquet files (a directory: one Spark task per file).
Every side is a whole process (start-up included). Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from timing import side_by_side

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CAPTURES = [str(ROOT / "fixtures" / "captures" / f"{name}.pcap")
            for name in ("confluent-kafka", "kafka-python", "aiokafka", "kafkajs")]
SPECS = ROOT.parent / "shared" / "kafka-specs" / "4.3"
FILES = 4

FLOOR = """
import sys, struct, collections, pyarrow.parquet as pq, pathlib
start = struct.Struct(">ihhih")
calls = collections.Counter()
for file in sorted(pathlib.Path(sys.argv[1]).glob("*.parquet")):
    for batch in pq.ParquetFile(file).iter_batches(columns=["direction", "bytes"]):
        for direction, frame in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
            if direction == "request":
                _, key, version, _, length = start.unpack_from(frame)
                client = frame[14:14 + length].decode("utf-8", "replace") if length >= 0 else None
                calls[(client, key, version)] += 1
print(sum(calls.values()), "requests,", len({c for c, _, _ in calls}), "clients")
"""


def make_corpus(directory: Path, frames: int) -> int:
    """``frames`` rows of the fixtures' traffic in ``FILES`` Parquet files (the corpus format ``frames generate``
    writes); the number of rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from linter.codec import Codec
    from linter.frames.corpus import WRITTEN
    from linter.frames.extract import Extraction
    from linter.spark.schema import arrow_batch, columns

    names = columns(WRITTEN)
    rows = [tuple(row[name] for name in names) for row in Extraction(CAPTURES, Codec.load(str(SPECS)), None).rows()]
    directory.mkdir()
    per_file = frames // FILES
    for number in range(FILES):
        chosen = [rows[i % len(rows)] for i in range(number * per_file, (number + 1) * per_file)]
        pq.write_table(pa.Table.from_batches([arrow_batch(chosen, WRITTEN)]), directory / f"part-{number}.parquet")
    return per_file * FILES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true")
    options = parser.parse_args()
    ours = [sys.executable, "-m", "linter.cli.main", "readiness"]
    with tempfile.TemporaryDirectory(prefix="krpc-lint-bench-readiness-") as scratch:
        corpus = Path(scratch) / "corpus"
        frames = make_corpus(corpus, options.frames)
        sides = {"floor: request headers only": [sys.executable, "-c", FLOOR, str(corpus)],
                 "readiness, in this process": [*ours, str(corpus), "--target", str(SPECS)]}
        if not options.no_spark:
            sides["readiness, Spark local[2]"] = [*ours, str(corpus), "--target", str(SPECS), "--master", "local[2]"]
        print(f"corpus: {frames:,} frames in {FILES} Parquet files")
        side_by_side(sides, options.runs, frames)
    return 0


if __name__ == "__main__":
    sys.exit(main())
