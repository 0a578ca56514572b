"""``frames check`` on Spark reports what a run in this process reports: the same findings, counts, summary and rows
that are no frame, on two real captures, a JSON Lines corpus (public wire bugs, with rows that are no frame) and a
Parquet corpus ``frames extract`` wrote from a third capture. Spark needs PySpark and Java 17+: without them the
tests skip here and fail in CI (``conftest.require_spark``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import REPO_ROOT, require_shared

from linter.cli.main import cli

CAPTURES = REPO_ROOT / "fixtures" / "captures"
BUGS = REPO_ROOT / "fixtures" / "wire-bugs"
TWO_CAPTURES = [CAPTURES / "confluent-kafka.pcap", CAPTURES / "kafkajs.pcap"]


@pytest.fixture(scope="module")
def trunk() -> Path:
    return require_shared("kafka-specs", "trunk-2024-10")


@pytest.fixture(scope="module")
def inputs(trunk: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two captures, a JSON Lines corpus and a Parquet corpus (extracted from a third capture)."""
    folder = tmp_path_factory.mktemp("spark-inputs")
    lines = []
    for name in ("franz-go-961.jsonl", "sarama-3638.jsonl", "redpanda-5451.jsonl", "sarama-2107.jsonl"):
        lines += (BUGS / name).read_text(encoding="utf-8").splitlines()
    lines.insert(3, '{"direction": "request", "hex": "00')  # a corrupt line
    lines.insert(5, json.dumps({"direction": "response", "correlation_id": 9, "hex": "0000000400000009"}))  # no API
    corpus = folder / "bugs.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parquet = folder / "kafka-python.parquet"
    extracted = CliRunner().invoke(cli, ["frames", "extract", str(CAPTURES / "kafka-python.pcap"), "--specs",
                                         str(trunk), "-o", str(parquet)])
    assert extracted.exit_code == 0, extracted.stderr
    return [*TWO_CAPTURES, corpus, parquet]


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """A report with its findings in a fixed order (Spark merges tasks in file order, which should hold too)."""
    return {**report, "findings": sorted(report["findings"], key=lambda f: json.dumps(f, sort_keys=True))}


def both(spark: Any, inputs: list[Path], specs: Path, baseline: frozenset[tuple[Any, ...]] = frozenset()
         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report documents of the library run here and on Spark."""
    from linter.compat.sources import read_revision
    from linter.engine.config import Config
    from linter.frames.decode import loaded
    from linter.frames.inputs import sorted_inputs
    from linter.frames.traffic import KAFKA_PORTS
    from linter.wirecheck.findings import selection
    from linter.wirecheck.report import document
    from linter.wirecheck.run import Run, check_on_spark

    revision = read_revision(str(specs))
    rules = selection(Config(profile="strict"))
    files = sorted_inputs(map(str, inputs))
    assert len(files.captures) == 2 and len(files.corpora) == 2, files
    run = Run(loaded(revision, False).codec, rules, baseline, KAFKA_PORTS)
    here = run.read(files)
    there, line = check_on_spark(spark, files, revision, rules, baseline, KAFKA_PORTS)
    assert line == run.capture_line()
    assert here.unexplained == there.unexplained == 0
    assert here.kinds == there.kinds
    names = list(map(str, inputs))
    return document(here, revision.label, names, run.capture_line()), document(there, revision.label, names, line)


def test_spark_reports_what_this_process_reports(spark: Any, inputs: list[Path], trunk: Path) -> None:
    here, there = both(spark, inputs, trunk)
    assert here["frames"] > 300 and here["findings"], "inputs with findings of every kind of input"
    assert {f["input"] for f in here["findings"]} == {str(path) for path in inputs}
    assert here["not_frames"]["count"] == 2
    for key in ("frames", "clean", "counts", "baselined", "not_shown", "summary", "not_frames", "captures"):
        assert there[key] == here[key], key
    assert comparable(there) == comparable(here)
    assert there["findings"] == here["findings"]  # and in the same order: tasks are merged in file order


def test_spark_applies_the_baseline_as_this_process_does(spark: Any, inputs: list[Path], trunk: Path) -> None:
    from linter.wirecheck.findings import REQUEST

    # Accept every kind of finding of the requests, none of the responses'.
    full, _ = both(spark, inputs, trunk)
    accepted = frozenset(
        (f["rule"], f["direction"], f["api_key"], f["api_version"],
         f["field"].replace("[0]", "[]"), f["software_name"] if f["direction"] == REQUEST else None)
        for f in full["findings"] if f["direction"] == REQUEST)
    assert accepted
    here, there = both(spark, inputs, trunk, accepted)
    assert here["baselined"] > 0 and here["findings"]
    assert comparable(there) == comparable(here)


def test_the_command_with_a_master_reports_what_it_reports_without(spark: Any, inputs: list[Path],
                                                                   trunk: Path) -> None:
    args = ["frames", "check", *map(str, inputs), "--specs", str(trunk), "--format", "json"]
    local = CliRunner().invoke(cli, args)
    on_spark = CliRunner().invoke(cli, [*args, "--master", "local[2]"])  # the fixture's session, got again
    for result in (local, on_spark):
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert "Traceback" not in result.stderr
        assert result.exit_code == 1, result.stderr
    assert comparable(json.loads(on_spark.stdout)) == comparable(json.loads(local.stdout))
    assert on_spark.stderr == local.stderr  # the captures' line
