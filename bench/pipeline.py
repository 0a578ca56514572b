"""Pipeline speed: ``krpc-lint audit`` of a history and ``krpc-lint replay`` of generated frames,
on ``local[2]``.

Audit: a real history when given (``--repo``, e.g. a clone of apache/kafka), else a synthetic one
built from ../shared/kafka-specs: Kafka 2.8.0, then every spec file that differs in 3.7.0 committed
one by one (tag 3.7.0), then every file that differs in trunk-2024-10 one by one. Printed side by
side with its peer, the same work units run in-process on one core without Spark
(``audit.run_in_process``): the ratio says what Spark's parallelism and start cost.

Replay: ``--frames N`` generated frames (default 1,000,000) from 3.7.0, replayed against
trunk-2024-10; see bench/replay.py for its floor.

Usage: python bench/pipeline.py [--repo PATH] [--frames N] [--skip-replay]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT.parent / "shared" / "kafka-specs"
CLI = [sys.executable, "-m", "linter.cli.main"]
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench",
           "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def _spec_files(tree: Path) -> dict[str, Path]:
    return {p.relative_to(tree).as_posix(): p for p in tree.rglob("*.json")}


def _commit_each_difference(repo: Path, tree: Path) -> int:
    """Make the repo's specs equal ``tree``'s, one commit per file that differs; returns the commits."""
    target, current = _spec_files(tree), _spec_files(repo)
    commits = 0
    for rel in sorted(set(target) | set(current)):
        if rel in target and rel in current and filecmp.cmp(target[rel], current[rel], shallow=False):
            continue
        destination = repo / rel
        if rel in target:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(target[rel], destination)
        else:
            destination.unlink()
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"update {rel}")
        commits += 1
    return commits


def synthetic_history(work: Path) -> Path:
    """2.8.0, then 3.7.0 and trunk-2024-10 file by file: a history with many revision pairs."""
    repo = work / "kafka-history"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "trunk")
    shutil.copytree(SPECS / "2.8.0", repo, dirs_exist_ok=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Kafka 2.8.0")
    _git(repo, "tag", "2.8.0")
    _commit_each_difference(repo, SPECS / "3.7.0")
    _git(repo, "tag", "3.7.0")
    _commit_each_difference(repo, SPECS / "trunk-2024-10")
    return repo


def bench_audit(repo: Path, work: Path) -> None:
    from linter.pipeline.audit import run_in_process, units
    from linter.pipeline.history import extract

    started = time.perf_counter()
    history = extract(str(repo))
    work_units = units(history)
    extracted = time.perf_counter() - started
    started = time.perf_counter()
    run_in_process(work_units)
    in_process = time.perf_counter() - started

    out = work / "audit"
    started = time.perf_counter()
    result = subprocess.run([*CLI, "audit", str(repo), "--out", str(out), "--master", "local[2]"],
                            capture_output=True, text=True)
    cold = time.perf_counter() - started
    if result.returncode:
        sys.exit(f"audit failed:\n{result.stdout}{result.stderr}")
    revisions, pairs = len(history.revisions), len(work_units.pairs)
    print(f"audit of {repo}: {revisions} spec revisions, {len(work_units.blobs)} distinct blobs, {pairs} pairs")
    print(f"  history extraction (git)                 {extracted:7.2f} s")
    print(f"  in-process, 1 core, no Spark (peer)      {in_process:7.2f} s   "
          f"{revisions / in_process:7.1f} revisions/s  {pairs / in_process:6.1f} pairs/s")
    print(f"  krpc-lint audit --master local[2], cold  {cold:7.2f} s   "
          f"{revisions / cold:7.1f} revisions/s  {pairs / cold:6.1f} pairs/s   ({in_process / cold:.2f}x the peer)")
    print(f"  {result.stdout.strip().splitlines()[0]}")


def bench_replay(frames: int, work: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from replay import run as run_replay

    run_replay(frames, SPECS / "3.7.0", SPECS / "trunk-2024-10", work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="a git repository with spec history (default: synthetic)")
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--skip-replay", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="krpc-bench-") as temp:
        work = Path(temp)
        repo = args.repo or synthetic_history(work)
        bench_audit(repo, work)
        if not args.skip_replay:
            bench_replay(args.frames, work)


if __name__ == "__main__":
    main()
