"""Captures on Spark (issue 27, point 5): ``size --frames`` and ``replay`` of a directory of captures, in this
process (extracted into a corpus first) and with ``--master local[2]`` (one task per capture file, streaming its
packets), give the same report, the same outcomes and the same summary line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared, require_spark

from linter.frames.on_spark import CAPTURES_ON_SPARK, ByFile, captures_on_spark

CAPTURES = REPO_ROOT / "fixtures" / "captures"


@pytest.fixture
def captures(tmp_path: Path) -> Path:
    """A directory of two captures of different clients (one holding the mock broker's malformed frame)."""
    directory = tmp_path / "captures"
    directory.mkdir()
    for name in ("kafkajs.pcap", "kafka-python.pcap"):
        shutil.copy(CAPTURES / name, directory / name)
    return directory


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "linter.cli.main", *args], capture_output=True, text=True,
                            cwd=REPO_ROOT, check=False)
    assert result.returncode == 0, result.stderr
    return result


def _summary_line(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith("krpc-lint: 2 captures, "))


def test_size_of_captures_on_spark_is_the_size_in_this_process(captures: Path) -> None:
    require_spark()
    specs = str(require_shared("kafka-specs", "4.3"))
    here = _run("size", "--frames", str(captures), "--format", "json", specs)
    there = _run("size", "--frames", str(captures), "--format", "json", "--master", "local[2]", specs)
    report = json.loads(here.stdout)
    assert [(refused["api_key"], refused["api_version"]) for refused in report["refused"]] == [(13, 3)]
    assert report["messages"] and json.loads(there.stdout) == report
    assert "(in-process)" in here.stderr and "(local[2])" in there.stderr
    assert _summary_line(there.stderr) == _summary_line(here.stderr)


def test_replay_of_captures_on_spark_is_the_replay_in_this_process(captures: Path, tmp_path: Path) -> None:
    require_spark()
    import pyarrow.parquet as pq

    old, new = require_shared("kafka-specs", "4.3"), require_shared("kafka-specs", "trunk-2024-10")
    runs = {}
    for name, extra in (("here", ()), ("there", ("--master", "local[2]"))):
        out = tmp_path / name
        result = _run("replay", str(captures), "--specs", str(old), "--against", str(new), "--out", str(out), *extra)
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        runs[name] = (summary["frames"], summary["outcomes"], pq.read_table(out / "counts").to_pylist(),
                      pq.read_table(out / "mismatches").to_pylist(), _summary_line(result.stderr))
        assert summary["master"] == ("in-process" if name == "here" else "local[2]")
    assert runs["here"][1]["both_fail"] == 1 and runs["here"][0] > 200
    assert runs["there"] == runs["here"]


def test_only_large_captures_go_to_spark_unasked(tmp_path: Path) -> None:
    """Without --master, captures are read in this process up to ``CAPTURES_ON_SPARK`` bytes in all (a sparse
    file stands for a large one: only its size is read)."""
    small = str(CAPTURES / "kafkajs.pcap")
    large = tmp_path / "large.pcap"
    with open(large, "wb") as stream:
        stream.truncate(CAPTURES_ON_SPARK)
    assert not captures_on_spark([small])
    assert captures_on_spark([small, str(large)])


def test_a_file_reported_twice_is_counted_once() -> None:
    """A task run again (a retry) reports its file again: the tallies are by file, the later replacing."""
    param = ByFile()
    tallies = param.addInPlace(param.zero({}), {0: (3, [("not TCP", 1)])})
    tallies = param.addInPlace(tallies, {1: (2, [])})
    assert param.addInPlace(tallies, {0: (3, [("not TCP", 1)])}) == {0: (3, [("not TCP", 1)]), 1: (2, [])}
