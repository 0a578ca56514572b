"""``frames check`` speed: every frame of a corpus checked, side by side with its floor, decoding alone (the same
corpus reader and the same frame decoders, C accelerator included, as ``replay`` and ``size --frames`` use), in
this process and on Spark ``local[2]``.

    python bench/wirecheck.py [--frames 200000] [--runs 3] [--no-spark]

The corpus is the real traffic of ``fixtures/captures`` (four clients against librdkafka's mock cluster: 6% of its
frames deviate, and are walked byte by byte), its rows written again and again into 4 Parquet files. Every side is
a whole process (start-up included). Figures: docs/performance.md, "Frames check".
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from readiness import FILES, SPECS, make_corpus
from timing import side_by_side

FLOOR = """
import sys
from linter.codec import Codec
from linter.frames.corpus import read_rows, split_frame
from linter.frames.decode import decoders
frame_decoders = decoders(Codec.load(sys.argv[2]))
decoded = failed = 0
for _, (key, version, direction, correlation, data, text, _) in read_rows(sys.argv[1]):
    try:
        payload, key, version, _ = split_frame(direction, key, version, correlation, data, text)
        api = frame_decoders.api(direction, key, version)
        api.decode(payload)
        decoded += 1
    except Exception:
        failed += 1
print(decoded, "frames decoded,", failed, "not")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="krpc-lint-bench-wirecheck-") as scratch:
        corpus = Path(scratch) / "corpus"
        frames = make_corpus(corpus, options.frames)
        check = [sys.executable, "-m", "linter.cli.main", "frames", "check", str(corpus), "--specs", str(SPECS),
                 "--format", "json", "-o", str(Path(scratch) / "report.json")]
        sides = {"floor: decode alone": [sys.executable, "-c", FLOOR, str(corpus), str(SPECS)],
                 "frames check, in this process": check}
        if not options.no_spark:
            sides["frames check, Spark local[2]"] = [*check, "--master", "local[2]"]
        print(f"corpus: {frames:,} frames in {FILES} Parquet files")
        side_by_side(sides, options.runs, frames)
    return 0


if __name__ == "__main__":
    sys.exit(main())
