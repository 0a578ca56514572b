"""Pipeline speed: ``krpc-lint audit`` of a history and ``krpc-lint replay`` of generated frames,
on ``local[2]``.

Audit: a real history when given (``--repo``, e.g. a clone of apache/kafka), else a synthetic one
built from ../shared/kafka-specs: Kafka 2.8.0, then every spec file that differs in 3.7.0 committed
one by one (tag 3.7.0), then every file that differs in trunk-2024-10 one by one. Printed side by
side with its peer, the same work units run in-process on one core without Spark
(``audit.run_in_process``): the ratio says what Spark's parallelism and start cost.

Replay: ``--frames N`` generated frames (default 1,000,000) from 3.7.0, replayed against
trunk-2024-10; see bench/replay.py for its floor.

``--kafka-scale`` adds a generated history of Kafka trunk's size (17,000 commits, 260 small specs,
~1,100 revision pairs, release branches): the scale of the goal, with toy specs.

Usage: python bench/pipeline.py [--repo PATH] [--kafka-scale] [--frames N] [--skip-replay]
       python bench/pipeline.py --kafka-history   # the bundle, every branch, against a Spark floor
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


def _toy_spec(name: str, version: int) -> bytes:
    fields = ",\n".join(f'    {{ "name": "F{j}", "type": "int32", "versions": "{j}+" }}' for j in range(version + 5))
    return (f'{{\n  "apiKey": {sum(map(ord, name)) % 1000},\n  "type": "request",\n  "name": "{name}",\n'
            f'  "validVersions": "0-{version}",\n  "fields": [\n{fields}\n  ]\n}}\n').encode()


class _FastImport:
    """A git fast-import stream: the cheap way to a history with Kafka's number of commits."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.mark = 0
        self.time = 1_500_000_000

    def blob(self, data: bytes) -> int:
        self.mark += 1
        self.parts.append(b"blob\nmark :%d\ndata %d\n%s\n" % (self.mark, len(data), data))
        return self.mark

    def commit(self, branch: str, files: dict[str, bytes], parent: int | None) -> int:
        ops = [b"M 100644 :%d %s\n" % (self.blob(data), path.encode()) for path, data in files.items()]
        self.mark, self.time = self.mark + 1, self.time + 3600
        head = b"commit refs/heads/%s\nmark :%d\ncommitter b <b@b> %d +0000\ndata 1\nc\n" % (
            branch.encode(), self.mark, self.time)
        self.parts.append(head + (b"from :%d\n" % parent if parent else b"") + b"".join(ops) + b"\n")
        return self.mark


def kafka_scale_history(work: Path, commits: int = 17_000) -> Path:
    """Kafka trunk's shape: 17,000 commits, ~6.5% touching one of 260 small specs, a release
    branch with a tag every 1,500 commits (never merged back, as Kafka's are)."""
    import random

    rng, stream = random.Random(1), _FastImport()
    versions = {f"clients/src/main/resources/common/message/Api{i}Request.json": 0 for i in range(200)}
    versions |= {f"metadata/src/main/resources/common/metadata/Rec{i}Record.json": 0 for i in range(60)}
    head = stream.commit("trunk", {p: _toy_spec(Path(p).stem, 0) for p in versions}, None)
    for n in range(commits):
        files = {f"core/src/Main{n % 500}.java": f"class X{n} {{}}\n".encode()}
        if rng.random() < 0.065:
            path = rng.choice(sorted(versions))
            versions[path] += 1
            files[path] = _toy_spec(Path(path).stem, versions[path])
        head = stream.commit("trunk", files, head)
        if n % 1500 == 1499:
            tag = f"3.{n // 1500}.0"
            release = stream.commit(f"release-{tag}", {"gradle.properties": f"version={tag}\n".encode()}, head)
            stream.parts.append(b"tag %s\nfrom :%d\ntagger b <b@b> %d +0000\ndata 1\nr\n" % (
                tag.encode(), release, stream.time + 86400))
    repo = work / "kafka-scale"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True, env={**os.environ, **GIT_ENV})
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(stream.parts), check=True)
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "trunk"], check=True)
    return repo


def bench_audit(repo: Path, work: Path) -> None:
    from linter.audit.history import extract
    from linter.audit.run import run_in_process, units

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
                            capture_output=True, check=False, text=True)
    cold = time.perf_counter() - started
    if result.returncode:
        sys.exit(f"audit failed:\n{result.stdout}{result.stderr}")
    revisions, pairs = len(work_units.revisions), len(work_units.pairs)
    print(f"audit of {repo}: {revisions} spec revisions, {len(work_units.blobs)} distinct blobs, {pairs} pairs")
    print(f"  history extraction (git)                 {extracted:7.2f} s")
    print(f"  in-process, 1 core, no Spark (peer)      {in_process:7.2f} s   "
          f"{revisions / in_process:7.1f} revisions/s  {pairs / in_process:6.1f} pairs/s")
    print(f"  krpc-lint audit --master local[2], cold  {cold:7.2f} s   "
          f"{revisions / cold:7.1f} revisions/s  {pairs / cold:6.1f} pairs/s   ({in_process / cold:.2f}x the peer)")
    print(f"  {result.stdout.strip().splitlines()[0]}")


SPARK_FLOOR = """
from linter.spark.session import session
spark = session("local[2]")
spark.sparkContext.parallelize([1], 1).map(lambda x: x + 1).collect()
spark.stop()
"""


def bench_kafka_history(work: Path, runs: int = 3) -> None:
    """The audit of Kafka's real history (the bundle, every branch) side by side with Spark's own floor in
    the same run: a cold local[2] session running one trivial Python job."""
    bundle = ROOT.parent / "shared" / "kafka-history" / "kafka-json.bundle"
    if not bundle.is_file():
        sys.exit(f"the bundle is missing: {bundle}")
    repo = work / "kafka"
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    floors, audits, line = [], [], ""
    for run in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", SPARK_FLOOR], check=True, capture_output=True)
        floors.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = subprocess.run([*CLI, "audit", str(repo), "--all-branches", "--out", str(work / f"audit{run}"),
                                 "--master", "local[2]"], capture_output=True, check=False, text=True)
        audits.append(time.perf_counter() - started)
        if result.returncode:
            sys.exit(f"audit failed:\n{result.stdout}{result.stderr}")
        line = result.stdout.strip().splitlines()[0]
    print(f"audit of Kafka's history (the bundle, --all-branches, local[2], cold), {runs} runs alternating:")
    print(f"  {line}")
    for floor, audit in zip(floors, audits):
        print(f"  Spark floor (session + one trivial job) {floor:6.2f} s   audit {audit:6.2f} s   "
              f"{audit / floor:.2f}x the floor")


def bench_replay(frames: int) -> None:
    """bench/replay.py: generate, the plain loop (its peer), then replay on local[2]."""
    subprocess.run([sys.executable, str(Path(__file__).with_name("replay.py")), "--frames", str(frames)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="a git repository with spec history (default: synthetic)")
    parser.add_argument("--kafka-scale", action="store_true",
                        help="also audit a generated history of Kafka's size (17,000 commits, ~1,100 pairs)")
    parser.add_argument("--kafka-history", action="store_true",
                        help="only the audit of Kafka's real history (../shared's bundle) against Spark's floor")
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--skip-replay", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="krpc-bench-") as temp:
        work = Path(temp)
        if args.kafka_history:
            bench_kafka_history(work)
            return
        repo = args.repo or synthetic_history(work)
        bench_audit(repo, work)
        if args.kafka_scale:
            bench_audit(kafka_scale_history(work), work / "scale")
        if not args.skip_replay:
            bench_replay(args.frames)


if __name__ == "__main__":
    main()
