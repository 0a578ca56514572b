"""Compat speed: Kafka 3.7.0 -> trunk (whole directories, with witnesses and cross-checks).

Side by side with two peers that do less, so the figures read as ratios:

* ``json floor``: read both directories and ``json.loads`` every file (comments blanked);
* ``lint both``: ``linter.lint`` of both directories, the cost of merely validating them;
* ``compat``: ``linter.compare`` in-process, and a cold ``krpc-lint compat OLD NEW`` process
  (goal: <= 2 s), with the default cross-check and with ``--cross-check 0 --no-witness``;
* ``--suggest``: NEW with a released wire break planted in every request (its last top-level field
  removed), compared without witnesses, and compared then given ``compat --suggest``'s edits (each
  verified by compat's own comparison), so the last row over the one before is what suggesting costs.

Usage: python bench/compat.py [OLD_DIR NEW_DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import median_seconds

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT.parent / "shared" / "kafka-specs"
CLI = [sys.executable, "-m", "linter.cli.main"]



def json_floor(*dirs: Path) -> None:
    from linter.parse.scanner import strip_comments

    for directory in dirs:
        for path in sorted(directory.rglob("*.json")):
            json.loads(strip_comments(path.read_text(encoding="utf-8")))


def lint_both(*dirs: Path) -> None:
    from linter import Config, lint

    for directory in dirs:
        lint([directory], Config(profile="kafka"))


def compat(old: Path, new: Path, **options) -> int:
    from linter.compat.api import compare

    return len(compare(str(old), str(new), **options).findings)


def planted(new: Path, into: Path) -> tuple[Path, int]:
    """A copy of NEW whose requests each lose their last top-level field: a released wire break in each."""
    from linter.parse.scanner import strip_comments

    copy = into / new.name
    shutil.copytree(new, copy)
    count = 0
    for path in sorted(copy.rglob("*Request.json")):
        spec = json.loads(strip_comments(path.read_text(encoding="utf-8")) or "{}")
        if len(spec.get("fields") or ()) > 1 and str(spec["fields"][-1].get("versions", "")).startswith("0"):
            spec["fields"].pop()
            path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
            count += 1
    return copy, count


def suggested(old: Path, new: Path) -> int:
    from linter.compat.api import compare_result
    from linter.compat.suggest import suggest

    return len(suggest(compare_result(str(old), str(new), witnesses=False, cross_check=0)))


def compared(old: Path, new: Path) -> int:
    from linter.compat.api import compare_result

    return len(compare_result(str(old), str(new), witnesses=False, cross_check=0).pairs)


def cold(args: list[str]) -> None:
    subprocess.run([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", default=[str(SPECS / "3.7.0"), str(SPECS / "trunk-2024-10")])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    old, new = (Path(d) for d in args.dirs)
    if not old.is_dir() or not new.is_dir():
        print(f"spec directories not found: {old} {new}", file=sys.stderr)
        return 2
    runs = args.runs
    compat(old, new)  # warm caches (rule pack, imports) as a second run of a user would find them
    rows = [
        ("json floor (both dirs)", median_seconds(lambda: json_floor(old, new), runs)),
        ("lint both dirs (kafka profile)", median_seconds(lambda: lint_both(old, new), runs)),
        ("compat, no witness/cross-check", median_seconds(lambda: compat(old, new, witnesses=False, cross_check=0),
                                                           runs)),
        ("compat (default: witnesses, 4 values)", median_seconds(lambda: compat(old, new), runs)),
        ("compat, cross-check 32 values", median_seconds(lambda: compat(old, new, cross_check=32), runs)),
        ("cold CLI: krpc-lint compat OLD NEW", median_seconds(lambda: cold(["compat", str(old), str(new)]), runs)),
    ]
    with tempfile.TemporaryDirectory(prefix="krpc-lint-bench-suggest-") as scratch:
        broken, count = planted(new, Path(scratch))
        made = suggested(old, broken)
        rows += [(f"{count} planted breaks: compare, no witness", median_seconds(lambda: compared(old, broken), runs)),
                 (f"  + suggest ({made} edits, verified)", median_seconds(lambda: suggested(old, broken), runs))]
    floor = rows[0][1]
    print(f"compat {old.name} -> {new.name}, median of {runs} runs")
    print(f"{'':40} {'seconds':>8} {'x floor':>8} {'x lint':>8}")
    for label, seconds in rows:
        print(f"{label:40} {seconds:8.3f} {seconds / floor:8.1f} {seconds / rows[1][1]:8.2f}")
    print(f"goal: cold CLI <= 2 s -> {'met' if rows[5][1] <= 2.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
