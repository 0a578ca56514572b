"""Lint speed on Kafka's trunk specs, side by side with the floor of merely parsing them.

Floor: read every file and ``json.loads`` it after blanking comments (json.loads cannot
read comments; the blanking is the same fast routine the linter uses). Prints medians of
several runs and the ratios the goals are stated in:

* in-process ``linter.lint`` of the directory  vs  the in-process floor   (goal <= 10x)
* a cold ``krpc-lint lint DIR`` process          vs  a cold python process doing the floor
  (goal <= 0.5 s), once with ``--no-cache`` and once with the result cache of a previous run

Usage: python bench/lint.py [SPEC_DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import median_seconds

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10"

FLOOR_SNIPPET = """
import json, sys, pathlib
from linter.parse.scanner import strip_comments
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.json")):
    json.loads(strip_comments(path.read_text(encoding="utf-8")))
"""


def floor(files: list[Path]) -> None:
    from linter.parse.scanner import strip_comments

    for path in files:
        json.loads(strip_comments(path.read_text(encoding="utf-8")))



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec_dir", nargs="?", default=str(DEFAULT_DIR))
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    spec_dir = Path(args.spec_dir)
    if not spec_dir.is_dir():
        print(f"spec directory not found: {spec_dir}", file=sys.stderr)
        return 2
    files = sorted(spec_dir.rglob("*.json"))

    from linter import lint

    lint([spec_dir])  # warm: rule pack cache, compiled validators, imports
    in_floor = median_seconds(lambda: floor(files), args.runs)
    in_lint = median_seconds(lambda: lint([spec_dir]), args.runs)

    exe = Path(sys.executable).with_name("krpc-lint")
    with tempfile.TemporaryDirectory() as cache:
        cli = [str(exe), "lint", str(spec_dir), "--format", "json", "--output", "/dev/null", "--cache-dir", cache]
        floor_proc = [sys.executable, "-c", FLOOR_SNIPPET, str(spec_dir)]
        subprocess.run(cli, capture_output=True, check=False)  # fills the rule-pack and result caches
        cold_floor = median_seconds(lambda: subprocess.run(floor_proc, check=True, capture_output=True), args.runs)
        cold_cli = median_seconds(lambda: subprocess.run([*cli, "--no-cache"], capture_output=True, check=False), args.runs)
        cached_cli = median_seconds(lambda: subprocess.run(cli, capture_output=True, check=False), args.runs)

        floor_rss, cli_rss = peak_rss_kib(floor_proc), peak_rss_kib([*cli, "--no-cache"])

    rows = [
        ("in-process (library lint())", in_floor, in_lint, "<= 10x"),
        ("cold CLI process, --no-cache", cold_floor, cold_cli, "<= 500 ms"),
        ("cold CLI process, unchanged files", cold_floor, cached_cli, "<= 500 ms"),
    ]
    print(f"krpc-lint lint of {len(files)} spec files in {spec_dir} (median of {args.runs} runs)")
    print(f"{'measure':36} {'floor (json.loads)':>19} {'krpc-lint':>12} {'ratio':>7}  goal")
    for name, floor_s, ours, goal in rows:
        print(f"{name:36} {floor_s * 1000:16.1f} ms {ours * 1000:9.1f} ms {ours / floor_s:6.1f}x  {goal}")
    print(f"{'peak memory (RSS), cold CLI':36} {floor_rss / 1024:16.1f} MB {cli_rss / 1024:9.1f} MB "
          f"{cli_rss / floor_rss:6.1f}x")
    return 0


def peak_rss_kib(command: list[str]) -> int:
    """Peak resident memory of one run of ``command``, measured in a wrapper of its own."""
    wrapper = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", wrapper, *command], check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


if __name__ == "__main__":
    sys.exit(main())
