"""``krpc-lint readiness`` as operators run it (issue 28): real clients captured against a real broker, judged
against Kafka 4.3's specs and a git ref of a Kafka checkout. The expected verdicts come from the spec files and
from tshark's reading of the captures (an independent dissector), never from krpc-lint."""

from __future__ import annotations

import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, require_shared, run_cli
from support import tshark

CAPTURES = REPO_ROOT / "fixtures" / "captures"
MODERN = [CAPTURES / f"{name}.pcap" for name in ("confluent-kafka", "kafka-python", "aiokafka", "kafkajs")]
MESSAGES = ("clients", "src", "main", "resources", "common", "message")


def lowest_versions(texts: dict[str, str]) -> dict[int, int]:
    """Each request API's lowest version, read from spec texts with the JSON module (comments stripped)."""
    lowest = {}
    for text in texts.values():
        spec = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE))
        if spec.get("type") == "request" and spec.get("validVersions", "none") != "none":
            lowest[int(spec["apiKey"])] = int(str(spec["validVersions"]).split("-")[0].rstrip("+"))
    return lowest


def spec_texts(directory: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in directory.glob("*Request.json")}


def below_range(capture: Path, lowest: dict[int, int]) -> dict[str, set[tuple[int, int]]]:
    """Per client id, the (api_key, version) requests tshark read that are below the target's lowest version of
    their API (APIs the target lacks are ``absent``, not here)."""
    found: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for pdu in tshark.committed(capture)["pdus"]:
        if pdu["kind"] == "request":
            key, version = pdu["api_key"], pdu["api_version"]
            if key in lowest and version < lowest[key]:
                found[pdu["client_id"]].add((key, version))
    return found


def readiness(*args: str, cwd: Path = REPO_ROOT) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    result = run_cli("readiness", *args, "--format", "json", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return result, json.loads(result.stdout)


def removed_by_client(document: dict[str, Any]) -> dict[str, set[tuple[int, int]]]:
    found: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for client in document["clients"]:
        for call in client["calls"]:
            if call["verdict"] == "removed":
                found[client["client_id"]].add((call["api_key"], call["version"]))
    return found


@pytest.fixture(scope="module")
def specs_43() -> Path:
    return require_shared("kafka-specs", "4.3", *MESSAGES)


@pytest.fixture(scope="module")
def old_captures(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The old clients' captures, made once for this module (live where tcpdump can capture)."""
    from support.old_clients import old_client_captures

    return old_client_captures(tmp_path_factory.mktemp("old-clients"))


def test_old_clients_break_on_exactly_the_calls_below_the_targets_ranges(specs_43: Path,
                                                                         old_captures: list[Path]) -> None:
    lowest = lowest_versions(spec_texts(specs_43))
    for capture in old_captures:
        expected = {client: calls for client, calls in below_range(capture, lowest).items() if calls}
        assert expected, f"{capture.name}: no request below 4.3's ranges: not an old client"
        result, document = readiness(str(capture), "--target", str(specs_43.parents[5]))
        assert removed_by_client(document) == expected, capture.name
        breaking = {client["client_id"] for client in document["clients"] if client["verdict"] == "breaks"}
        assert breaking == set(expected) and result.returncode == 1


def test_modern_clients_are_ready(specs_43: Path) -> None:
    result, document = readiness(*map(str, MODERN), "--target", str(specs_43.parents[5]))
    lowest = lowest_versions(spec_texts(specs_43))
    assert not any(below_range(capture, lowest) for capture in MODERN)  # the spec files say so, not krpc-lint
    assert result.returncode == 0
    assert {client["verdict"] for client in document["clients"]} == {"ready"}
    assert {client["client_id"] for client in document["clients"]} == {
        pdu["client_id"] for capture in MODERN for pdu in tshark.committed(capture)["pdus"] if pdu["kind"] == "request"}
    rdkafka = next(client for client in document["clients"] if client["client_id"] == "rdkafka")
    assert rdkafka["software_name"] == "confluent-kafka-python" and rdkafka["negotiates"] is True
    absent = {call["api_key"] for client in document["clients"] for call in client["calls"] if call["verdict"] == "absent"}
    assert absent == {71}  # librdkafka's GetTelemetrySubscriptions, which kafka-python's 4.3 selection lacks


def test_the_json_contract(specs_43: Path) -> None:
    _, document = readiness(str(MODERN[0]), "--target", str(specs_43.parents[5]))
    assert document["schema"] == "krpc-lint/readiness/1"
    assert set(document) == {"schema", "tool", "target", "inputs", "summary", "clients"}
    client = document["clients"][0]
    assert {"client_id", "software_name", "software_version", "addresses", "verdict", "baselined", "requests",
            "reasons", "negotiates", "calls"} == set(client)
    assert {"api_key", "api", "version", "requests", "verdict", "target_versions", "note"} == set(client["calls"][0])
    assert document["summary"]["clients"] == len(document["clients"])
    assert document["inputs"]["files"] == 1 and document["inputs"]["frames"] > document["inputs"]["requests"] > 0


def test_a_git_ref_of_a_kafka_checkout_is_a_target(tmp_path: Path) -> None:
    bundle = require_shared("kafka-history", "kafka-json.bundle")
    kafka = tmp_path / "kafka"
    subprocess.run(["git", "clone", "-q", str(bundle), str(kafka)], check=True, capture_output=True)
    ref = "3.8.0:" + "/".join(MESSAGES)
    names = subprocess.run(["git", "ls-tree", "--name-only", ref + "/"], cwd=kafka,
                           capture_output=True, text=True, check=True).stdout.split()
    texts = {name: subprocess.run(["git", "show", f"{ref}/{name}"], cwd=kafka, capture_output=True, text=True,
                                  check=True).stdout for name in names if name.endswith("Request.json")}
    lowest = lowest_versions(texts)
    capture = MODERN[1]
    _, document = readiness(str(capture), "--target", ref, cwd=kafka)
    assert document["target"]["name"] == ref
    expected = {client: calls for client, calls in below_range(capture, lowest).items() if calls}
    assert removed_by_client(document) == expected
    produce = next(call for client in document["clients"] for call in client["calls"] if call["api_key"] == 0)
    produce_spec = json.loads(re.sub(r"^\s*//.*$", "", texts["ProduceRequest.json"], flags=re.MULTILINE))
    assert produce["target_versions"] == produce_spec["validVersions"]


def test_formats_and_output_file(specs_43: Path, tmp_path: Path) -> None:
    target = str(specs_43.parents[5])
    for fmt, starts in (("markdown", "#"), ("html", "<!DOCTYPE html>"), ("text", "target ")):
        out = tmp_path / f"report.{fmt}"
        result = run_cli("readiness", str(MODERN[2]), "--target", target, "--format", fmt, "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert out.read_text(encoding="utf-8").lstrip().startswith(starts), fmt


def test_baseline_accepts_known_clients_and_fails_on_new_ones(specs_43: Path, old_captures: list[Path],
                                                               tmp_path: Path) -> None:
    target, baseline, old = str(specs_43.parents[5]), tmp_path / "baseline.json", old_captures
    result = run_cli("readiness", str(old[0]), "--target", target, "--write-baseline", str(baseline))
    assert result.returncode == 0 and json.loads(baseline.read_text())["clients"], result.stderr
    assert run_cli("readiness", str(old[0]), "--target", target, "--baseline", str(baseline)).returncode == 0
    if len(old) > 1:
        result = run_cli("readiness", *map(str, old), "--target", target, "--baseline", str(baseline))
        assert result.returncode == 1 and "BREAKS " in result.stdout and "(baselined)" in result.stdout


@pytest.mark.parametrize(("args", "said"), [
    ((), "give the release to move to"),
    (("--target", "fixtures/valid", "--kafka-version", "4.0.0"), "give the release to move to"),
])
def test_usage_errors(args: tuple[str, ...], said: str) -> None:
    result = run_cli("readiness", str(MODERN[0]), *args)
    assert result.returncode == 2 and said in result.stderr and "Traceback" not in result.stderr


def test_an_output_over_an_input_is_refused(tmp_path: Path, specs_43: Path) -> None:
    capture = tmp_path / "c.pcap"
    capture.write_bytes(MODERN[0].read_bytes())
    result = run_cli("readiness", str(capture), "--target", str(specs_43.parents[5]), "-o", str(capture))
    assert result.returncode == 2 and capture.read_bytes() == MODERN[0].read_bytes()


def test_spark_gives_the_totals_of_a_run_in_this_process(spark: Any, specs_43: Path) -> None:
    from linter.compat.sources import read_revision
    from linter.frames.decode import loaded
    from linter.readiness.run import read_here, read_on_spark, sorted_inputs
    from linter.readiness.target import spec_target
    from linter.readiness.verdict import report

    target, revision = spec_target(str(specs_43.parents[5]))
    inputs = sorted_inputs([*map(str, MODERN), str(REPO_ROOT / "fixtures" / "request-logs")])
    here = read_here(inputs, loaded(read_revision(str(specs_43.parents[5])), allow_invalid=True).codec,
                     frozenset({9092}))
    there = read_on_spark(spark, inputs, revision, frozenset({9092}))
    assert report(target, there) == report(target, here)
    assert here.log_lines > 0 and here.frames > 0
