"""``krpc-lint frames check`` as a user runs it: its three formats, exit codes, rule selection, baselines, output
files, and what it does with hostile inputs (never a traceback), on real traffic: the captures of
``fixtures/captures`` (real clients against librdkafka's mock broker), the public wire bugs of ``fixtures/wire-bugs``
(their manifest says what each holds), and Kafka's own specs from ``../shared``."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from conftest import REPO_ROOT, require_shared

from linter.cli.main import cli

CAPTURES = REPO_ROOT / "fixtures" / "captures"
BUGS = REPO_ROOT / "fixtures" / "wire-bugs"
MANIFEST: dict[str, dict[str, Any]] = {entry["file"]: entry
                                       for entry in json.loads((BUGS / "manifest.json").read_text(encoding="utf-8"))}
REPORT_KEYS = {"schema", "specs", "inputs", "captures", "frames", "clean", "counts", "baselined", "not_shown",
               "unexplained", "unlisted", "findings", "summary", "not_frames"}
FINDING_KEYS = {"rule", "name", "severity", "category", "input", "frame", "input_byte", "connection", "ts",
                "direction", "api_key", "api", "api_version", "correlation_id", "client_id", "software_name",
                "software_version", "sender", "offset", "field", "message", "found", "expected", "display_filter"}
SUMMARY = re.compile(r"^(\d[\d,]*) frames? checked: (\d[\d,]*) clean; (\d[\d,]*) errors?, (\d[\d,]*) warnings?, "
                     r"(\d[\d,]*) infos?( \(.*\))?$")


def wire_rules() -> dict[str, dict[str, Any]]:
    """The wire rules as the rule files declare them (``check: {wire: NAME}``), by id."""
    found = {}
    for path in sorted((REPO_ROOT / "rules").glob("KL*.yaml")):
        rule = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(rule.get("check"), dict) and "wire" in rule["check"]:
            found[rule["id"]] = rule
    return found


WIRE_RULES = wire_rules()


@pytest.fixture(scope="module")
def trunk() -> Path:
    return require_shared("kafka-specs", "trunk-2024-10")


@pytest.fixture(scope="module")
def specs_43() -> Path:
    return require_shared("kafka-specs", "4.3")


def run(*args: str | Path) -> Result:
    """``krpc-lint frames check ARGS`` in this process; never a traceback, whatever the exit code."""
    result = CliRunner().invoke(cli, ["frames", "check", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}\n{result.stderr}")
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    return result


def report(*args: str | Path, codes: tuple[int, ...] = (0, 1)) -> tuple[Result, dict[str, Any]]:
    result = run(*args, "--format", "json")
    assert result.exit_code in codes, (result.exit_code, result.stderr)
    return result, json.loads(result.stdout)


def usage_error(result: Result) -> str:
    """The one line a usage error says (exit 2, stdout empty)."""
    assert result.exit_code == 2, (result.exit_code, result.stdout[-500:], result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    return lines[0]


def shape(finding: dict[str, Any]) -> tuple[Any, ...]:
    """What a finding says, wherever its frame was read from."""
    return (finding["rule"], finding["frame"], finding["offset"], finding["field"], finding["connection"],
            finding["sender"], finding["found"], finding["expected"])


# --- formats --------------------------------------------------------------------------------------------


def test_json_report(trunk: Path) -> None:
    capture = CAPTURES / "kafkajs.pcap"
    result, document = report(capture, "--specs", trunk)
    assert document["schema"] == "krpc-lint/frames-check/1"
    assert set(document) == REPORT_KEYS
    assert document["inputs"] == [str(capture)]
    assert document["captures"] and "1 capture" in document["captures"]
    findings = document["findings"]
    assert findings and all(set(finding) == FINDING_KEYS for finding in findings)
    # Severity counts add up: every finding is kept at this size, and the summary groups them all.
    assert Counter(finding["severity"] for finding in findings) == {k: v for k, v in document["counts"].items() if v}
    assert document["not_shown"] == 0 and document["baselined"] == 0 and document["unexplained"] == 0
    assert sum(row["frames"] for row in document["summary"]) == document["frames"]
    assert sum(row["clean"] for row in document["summary"]) == document["clean"]
    assert sum(sum(row["findings"].values()) for row in document["summary"]) == len(findings)
    for finding in findings:
        assert finding["rule"] in WIRE_RULES
        assert (finding["name"], finding["severity"]) == (WIRE_RULES[finding["rule"]]["name"],
                                                          WIRE_RULES[finding["rule"]]["severity"])
        assert finding["input"] == str(capture) and finding["connection"]
        assert re.fullmatch(r"(?:[0-9a-f]{2})*", finding["found"])
    # kafkajs sent Produce with acks=0, and the mock broker answered them: each answer is a KL2006 error.
    unmatched = [f for f in findings if f["rule"] == "KL2006"]
    assert unmatched and all(f["direction"] == "response" and f["api_key"] == 0 for f in unmatched)
    assert result.exit_code == 1


def test_sarif_report(trunk: Path, sarif_validator: Any) -> None:
    capture = CAPTURES / "confluent-kafka.pcap"
    result = run(capture, "--specs", trunk, "--format", "sarif")
    assert result.exit_code == 1, result.stderr
    log = json.loads(result.stdout)
    sarif_validator.validate(log)
    assert log["version"] == "2.1.0"
    driver = log["runs"][0]["tool"]["driver"]
    described = {rule["id"] for rule in driver["rules"]}
    # the default profile (recommended) holds every wire rule
    assert set(WIRE_RULES) <= described, sorted(set(WIRE_RULES) - described)
    results = log["runs"][0]["results"]
    assert results
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for item in results:
        assert item["ruleId"] in WIRE_RULES
        assert item["level"] == levels[WIRE_RULES[item["ruleId"]]["severity"]]
        if "ruleIndex" in item:
            assert driver["rules"][item["ruleIndex"]]["id"] == item["ruleId"]
        location = item["locations"][0]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == capture.as_uri()
        logical = location["logicalLocations"][0]["fullyQualifiedName"]
        assert logical.startswith(f"frame {item['properties']['frame']}")
        assert isinstance(item["properties"]["frame"], int)
    assert Counter(item["level"] for item in results)["error"] >= 1


def test_sarif_of_a_corpus_points_at_the_row(trunk: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "bugs.jsonl"
    shutil.copy(BUGS / "franz-go-961.jsonl", corpus)
    log = json.loads(run(corpus, "--specs", trunk, "--format", "sarif").stdout)
    results = log["runs"][0]["results"]
    assert {item["ruleId"] for item in results} == {"KL2011", "KL2021"}
    lines = corpus.read_bytes().splitlines(keepends=True)
    starts = [sum(map(len, lines[:n])) for n in range(len(lines))]
    for item in results:
        physical = item["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == corpus.as_uri()
        assert physical["region"]["byteOffset"] == starts[item["properties"]["frame"]]


def test_text_report(trunk: Path) -> None:
    corpus = BUGS / "franz-go-961.jsonl"
    result = run(corpus, "--specs", trunk)
    assert result.exit_code == 1
    out = result.stdout
    lines = out.splitlines()
    for want in MANIFEST["franz-go-961.jsonl"]["expect"]:
        head = [line for line in lines if line.startswith(f"{corpus}: frame {want['frame']}: byte ")]
        assert any(f"{want['rule']} [" in line and f" {want['severity']}: " in line for line in head), out
    assert re.search(r"^    sent: +[0-9a-f ]+$", out, re.MULTILINE)
    assert re.search(r"^    Kafka writes: +([0-9a-f ]+|\(nothing\))$", out, re.MULTILINE)  # KL2021: what to leave out
    assert re.search(r"^sender +frames.* +checked +clean +findings$", out, re.MULTILINE), out
    assert re.search(r"^\S.* +request Fetch v16 +1 +0 +KL2011 x1$", out, re.MULTILINE), out
    assert re.search(r"^\S.* +request Fetch v17 +1 +0 +KL2021 x1$", out, re.MULTILINE), out
    match = SUMMARY.match(lines[-1])
    assert match, lines[-1]
    assert match.group(1, 2, 3, 4, 5) == ("2", "0", "1", "1", "0")


def test_text_report_of_a_capture_says_where(trunk: Path) -> None:
    result = run(CAPTURES / "aiokafka.pcap", "--specs", trunk)
    out = result.stdout
    assert re.search(r": frame \d+: byte 4 at header\.CorrelationId: KL2006 \[unmatched-response\] error: ", out)
    assert re.search(r"^    wireshark: +tcp\.port == \d+ && kafka\.correlation_id == \d+$", out, re.MULTILINE)
    assert "73 frames checked: 72 clean; 1 error, 0 warnings, 0 infos" == out.splitlines()[-1]
    assert "1 capture, 73 frames" in result.stderr


# --- exit codes and rule selection ----------------------------------------------------------------------


def test_clean_traffic_exits_0(trunk: Path) -> None:
    result, document = report(BUGS / "sarama-2107.jsonl", "--specs", trunk)  # a decoder bug: the bytes are valid
    assert result.exit_code == 0
    assert document["findings"] == [] and document["clean"] == document["frames"] == 2


def test_an_error_exits_1(trunk: Path) -> None:
    result, document = report(BUGS / "librdkafka-4207.jsonl", "--specs", trunk)
    assert result.exit_code == 1 and document["counts"]["error"] == 2


@pytest.mark.parametrize(("args", "code"), [((), 0), (("--fail-on", "error"), 0), (("--fail-on", "warning"), 1),
                                            (("--fail-on", "info"), 1)])
def test_a_warning_fails_only_from_fail_on_warning(trunk: Path, args: tuple[str, ...], code: int) -> None:
    result, document = report(BUGS / "aiokafka-1139.jsonl", "--specs", trunk, *args)
    assert document["counts"] == {"error": 0, "warning": 1, "info": 0}
    assert result.exit_code == code


def test_ignore_an_info_rule(specs_43: Path) -> None:
    capture = CAPTURES / "confluent-kafka.pcap"  # GetTelemetrySubscriptions (71): not in kafka-python's specs
    _, full = report(capture, "--specs", specs_43)
    unknown = [f for f in full["findings"] if f["rule"] == "KL2041"]
    assert unknown and all(f["api_key"] == 71 for f in unknown)
    _, less = report(capture, "--specs", specs_43, "--ignore", "KL2041")
    assert not any(f["rule"] == "KL2041" for f in less["findings"])
    assert less["counts"]["info"] == full["counts"]["info"] - len(unknown)
    assert [f for f in full["findings"] if f["rule"] != "KL2041"] == less["findings"]
    _, by_name = report(capture, "--specs", specs_43, "--ignore", "unknown-api")
    assert by_name["findings"] == less["findings"]


def test_ignore_a_category_and_select(trunk: Path) -> None:
    corpus = BUGS / "franz-go-961.jsonl"
    _, full = report(corpus, "--specs", trunk)
    assert full["counts"]["warning"] == 1
    result, less = report(corpus, "--specs", trunk, "--ignore", "frames-not-canonical")
    assert less["counts"]["warning"] == 0 and {f["rule"] for f in less["findings"]} == {"KL2011"}
    assert less["clean"] == 1  # frame 1 held only the warning
    result, only = report(corpus, "--specs", trunk, "--fail-on", "warning", "--ignore", "frames-refused")
    assert {f["rule"] for f in only["findings"]} == {"KL2021"} and result.exit_code == 1


@pytest.mark.parametrize("option", ["--ignore", "--select"])
def test_an_unknown_selector_is_a_usage_error(trunk: Path, option: str) -> None:
    line = usage_error(run(BUGS / "franz-go-961.jsonl", "--specs", trunk, option, "KL9999"))
    assert "KL9999" in line


# --- baselines --------------------------------------------------------------------------------------------


def test_baseline_round_trip(specs_43: Path, tmp_path: Path) -> None:
    capture, baseline = CAPTURES / "confluent-kafka.pcap", tmp_path / "baseline.json"
    written = run(capture, "--specs", specs_43, "--write-baseline", baseline)
    assert written.exit_code == 0, written.stderr
    assert written.stdout == ""
    recorded = json.loads(baseline.read_text(encoding="utf-8"))
    assert recorded["schema"] == "krpc-lint/frames-check-baseline/1"
    assert recorded["findings"] and f"{len(recorded['findings'])} kinds of finding" in written.stderr
    _, full = report(capture, "--specs", specs_43)
    result, quiet = report(capture, "--specs", specs_43, "--baseline", baseline)
    assert result.exit_code == 0
    assert quiet["findings"] == [] and quiet["counts"] == {"error": 0, "warning": 0, "info": 0}
    assert quiet["baselined"] == len(full["findings"]) > 0
    assert quiet["clean"] == quiet["frames"] == full["frames"]
    # The baseline is of kinds of finding: new traffic with another kind still fails.
    result, other = report(capture, BUGS / "librdkafka-4207.jsonl", "--specs", specs_43, "--baseline", baseline)
    assert result.exit_code == 1 and {f["rule"] for f in other["findings"]} == {"KL2001"}
    assert {f["input"] for f in other["findings"]} == {str(BUGS / "librdkafka-4207.jsonl")}


@pytest.mark.parametrize("text", [
    "not json at all",
    json.dumps({"schema": "krpc-lint/readiness-baseline/1", "findings": []}),
    json.dumps({"schema": "krpc-lint/frames-check-baseline/1", "findings": [{"rule": 2001}]}),
    json.dumps({"schema": "krpc-lint/frames-check-baseline/1", "findings": ["KL2001"]}),
    json.dumps({"schema": "krpc-lint/frames-check-baseline/1", "findings": {"rule": "KL2001"}}),
    json.dumps([1, 2, 3]),
    "\udcff",
])
def test_a_malformed_baseline_is_one_line_naming_it(trunk: Path, tmp_path: Path, text: str) -> None:
    baseline = tmp_path / "broken-baseline.json"
    baseline.write_bytes(text.encode("utf-8", "surrogateescape"))
    line = usage_error(run(BUGS / "franz-go-961.jsonl", "--specs", trunk, "--baseline", baseline))
    assert "broken-baseline.json" in line


# --- output files and inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_output_file(trunk: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"report.{fmt}"
    result = run(BUGS / "franz-go-961.jsonl", "--specs", trunk, "--format", fmt, "-o", out)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines()[-1] == (
        f"2 frames checked: 0 clean; 1 error, 1 warning, 0 infos; wrote {out}")
    text = out.read_text(encoding="utf-8")
    if fmt == "text":
        assert text.splitlines()[-1] == "2 frames checked: 0 clean; 1 error, 1 warning, 0 infos"
    else:
        assert json.loads(text)["schema" if fmt == "json" else "version"] in ("krpc-lint/frames-check/1", "2.1.0")


@pytest.fixture()
def specs_copy(trunk: Path, tmp_path: Path) -> Path:
    """Kafka's message specs copied, so a command that wrongly writes into them harms nothing shared."""
    found = next(trunk.rglob("RequestHeader.json")).parent
    copy = tmp_path.joinpath("kafka", "clients", "src", "main", "resources", "common", "message")
    shutil.copytree(found, copy)
    return copy


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_writing_over_an_input_is_refused(specs_copy: Path, tmp_path: Path, option: str) -> None:
    capture = tmp_path / "c.pcap"
    shutil.copy(CAPTURES / "aiokafka.pcap", capture)
    original = capture.read_bytes()
    usage_error(run(capture, "--specs", specs_copy, option, capture))
    assert capture.read_bytes() == original
    spec = specs_copy / "FetchRequest.json"
    text = spec.read_bytes()
    usage_error(run(capture, "--specs", specs_copy, option, spec))
    assert spec.read_bytes() == text
    new = specs_copy / "Report.json"  # a file the spec walk would read, were it there (Kafka's message dir)
    usage_error(run(capture, "--specs", specs_copy, option, new))
    assert not new.exists()


def test_the_baseline_is_an_input_too(trunk: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    assert run(BUGS / "franz-go-961.jsonl", "--specs", trunk, "--write-baseline", baseline).exit_code == 0
    text = baseline.read_bytes()
    usage_error(run(BUGS / "franz-go-961.jsonl", "--specs", trunk, "--baseline", baseline, "-o", baseline))
    assert baseline.read_bytes() == text


def test_specs_without_headers_are_one_line(specs_copy: Path, tmp_path: Path) -> None:
    headerless = tmp_path / "headerless"
    headerless.mkdir()
    for name in ("FetchRequest.json", "FetchResponse.json"):
        shutil.copy(specs_copy / name, headerless / name)
    line = usage_error(run(BUGS / "franz-go-961.jsonl", "--specs", headerless))
    assert "RequestHeader" in line


def test_specs_that_are_not_specs_are_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    usage_error(run(BUGS / "franz-go-961.jsonl", "--specs", empty))
    usage_error(run(BUGS / "franz-go-961.jsonl", "--specs", tmp_path / "missing"))


@pytest.mark.parametrize(("name", "data"), [
    ("notes.txt", b"hello\n"),
    ("frames.csv", b"direction,hex\nrequest,00000000\n"),
    ("tiny", b"x"),
    ("broken.parquet", b"PAR1 but no footer at all"),
    ("garbage.bin", bytes(range(256)) * 4),
])
def test_an_input_that_is_no_capture_nor_corpus(trunk: Path, tmp_path: Path, name: str, data: bytes) -> None:
    """Exit 2 and one line naming the file (it was "internal error: ArrowInvalid" without it)."""
    bad = tmp_path / name
    bad.write_bytes(data)
    line = usage_error(run(bad, "--specs", trunk))
    assert name in line and "internal error" not in line, line


# --- hostile corpora --------------------------------------------------------------------------------------


def test_rows_that_are_no_frame_are_counted_and_the_rest_checked(trunk: Path, tmp_path: Path) -> None:
    good = (BUGS / "franz-go-961.jsonl").read_text(encoding="utf-8").splitlines()
    clean = (BUGS / "sarama-2107.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = tmp_path / "hostile.jsonl"
    corpus.write_text("\n".join([
        good[0],                                                                   # 0: KL2011
        '{"api_key": 1, "api_version": 16, "direction": "request", "correl',      # 1: corrupt JSON
        json.dumps({"api_key": 1, "api_version": 16, "direction": "request", "correlation_id": 5}),  # 2: no bytes
        json.dumps({"direction": "response", "correlation_id": 5, "hex": "0000000700000005000000"}),  # 3: no api_key
        "[1, 2, 3]",                                                               # 4: not an object
        json.dumps({"direction": "sideways", "api_key": 18, "api_version": 3, "hex": "00000000"}),     # 5
        *clean,                                                                    # 6, 7: clean
        good[1],                                                                   # 8: KL2021
    ]) + "\n", encoding="utf-8")
    result, document = report(corpus, "--specs", trunk)
    assert result.exit_code == 1
    assert document["not_frames"]["count"] == 5
    reasons = {row["frame"]: row["reason"] for row in document["not_frames"]["first"]}
    assert set(reasons) == {1, 2, 3, 4, 5}
    assert "line 2" in reasons[1]
    assert "bytes" in reasons[2] and "hex" in reasons[2]
    assert "api_key" in reasons[3]
    assert "sideways" in reasons[5]
    assert all(row["input"] == str(corpus) for row in document["not_frames"]["first"])
    rows = {(f["frame"], f["rule"]) for f in document["findings"]}
    assert {(0, "KL2011"), (8, "KL2021")} <= rows
    checked = document["frames"]
    assert checked + document["not_frames"]["count"] == 9
    assert document["clean"] == 2
    text = run(corpus, "--specs", trunk).stdout
    assert f"{corpus}: frame 1: not checked: " in text
    assert text.splitlines()[-1].endswith("(5 rows not checked)")


def test_a_corpus_of_garbage_lines_goes_on(trunk: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "garbage.jsonl"
    frames = (BUGS / "librdkafka-4207.jsonl").read_bytes().splitlines(keepends=True)
    corpus.write_bytes(frames[0] + b"\xff\xfe\x00garbage\n{\n}\n" + b"\x00" * 100 + b"\n" + frames[1])
    _, document = report(corpus, "--specs", trunk)
    assert document["frames"] == 2 and document["counts"]["error"] == 2
    assert document["not_frames"]["count"] == 4
    assert {f["frame"] for f in document["findings"]} == {0, 5}


# --- a corpus extracted from a capture says what the capture says ----------------------------------------


@pytest.mark.parametrize("capture", ["confluent-kafka.pcap", "kafkajs.pcap", "kafka-python-0_10.pcap"])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_an_extracted_corpus_gives_the_captures_findings(specs_43: Path, tmp_path: Path, capture: str,
                                                         suffix: str) -> None:
    source = CAPTURES / capture
    corpus = tmp_path / f"frames{suffix}"
    extracted = CliRunner().invoke(cli, ["frames", "extract", str(source), "--specs", str(specs_43), "-o",
                                         str(corpus)])
    assert extracted.exit_code == 0, extracted.stderr
    _, direct = report(source, "--specs", specs_43)
    _, again = report(corpus, "--specs", specs_43)
    assert direct["findings"], "the capture has findings to compare"
    assert [shape(f) for f in again["findings"]] == [shape(f) for f in direct["findings"]]
    for key in ("frames", "clean", "counts", "summary"):
        assert again[key] == direct[key], key
    assert again["captures"] is None and direct["captures"]


# --- found in review: a directory's corpora, a baseline refreshed, profiles, Kafka's int arithmetic ---------


def frame_hex(payload_hex: str) -> str:
    payload = bytes.fromhex(payload_hex)
    return (len(payload).to_bytes(4, "big") + payload).hex()


METADATA_V12 = "0003000c00000007ffff00"  # request header v2: Metadata v12, correlation 7, null client id, no tags


def corpus_of(tmp_path: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def findings_of(document: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(finding["frame"], finding["rule"], finding["field"]) for finding in document["findings"]]


def test_a_directory_gives_its_json_lines_corpora_and_says_what_it_skipped(trunk: Path, tmp_path: Path) -> None:
    folder = tmp_path / "traffic"
    shutil.copytree(BUGS, folder)
    (folder / "notes.txt").write_text("not a frame\n", encoding="utf-8")
    result, document = report(folder, "--specs", trunk)
    assert document["frames"] == sum(len(path.read_text().splitlines()) for path in BUGS.glob("*.jsonl"))
    assert "skipped 3 files that are neither captures nor frames corpora" in result.stderr  # + README.md
    assert "manifest.json" in result.stderr and "notes.txt" in result.stderr


def test_a_baseline_written_with_a_baseline_keeps_its_kinds(trunk: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    bug = BUGS / "librdkafka-4207.jsonl"
    assert run(bug, "--specs", trunk, "--write-baseline", first).exit_code == 0
    assert run(bug, "--specs", trunk, "--baseline", first, "--write-baseline", second).exit_code == 0
    assert json.loads(second.read_text())["findings"] == json.loads(first.read_text())["findings"] != []


def test_the_kafka_profile_keeps_what_kafka_refuses(trunk: Path) -> None:
    _, everything = report(BUGS / "aiokafka-1139.jsonl", "--specs", trunk)
    _, kafka = report(BUGS / "aiokafka-1139.jsonl", "--specs", trunk, "--profile", "kafka")
    assert everything["counts"]["warning"] > 0 and kafka["counts"] == {"error": 0, "warning": 0, "info": 0}


def test_varints_are_java_ints_as_in_kafkas_readers(trunk: Path, tmp_path: Path) -> None:
    """``ff ff ff ff 0f`` is -1 to Kafka: a tagged-field count of no fields, a nullable length of null."""
    rows = [{"direction": "request", "hex": frame_hex(METADATA_V12 + "01" + "00" + "00" + "ffffffff0f")},
            {"direction": "request", "hex": frame_hex(METADATA_V12 + "ffffffff0f" + "00" + "00" + "00")}]
    _, document = report(corpus_of(tmp_path, "java.jsonl", rows), "--specs", trunk)
    assert findings_of(document) == [(0, "KL2003", "body"), (1, "KL2026", "body.Topics")]


def test_a_header_written_in_version_1_is_named_so(trunk: Path, tmp_path: Path) -> None:
    """kafka-protocol-rs#4: header v2 written without its tagged section (v1), with an empty client id."""
    rows = [{"direction": "request", "hex": frame_hex("0003000c000000070000" + "01" + "00" + "00" + "00")}]
    _, document = report(corpus_of(tmp_path, "v1.jsonl", rows), "--specs", trunk)
    assert findings_of(document) == [(0, "KL2005", "header")]
    assert "written in version 1" in document["findings"][0]["message"]


def test_a_problem_on_a_request_row_is_no_unmatched_response(trunk: Path, tmp_path: Path) -> None:
    rows = [{"direction": "request", "hex": frame_hex(METADATA_V12 + "01000000"),
             "problem": "no request with correlation id 7 on this connection"}]
    _, document = report(corpus_of(tmp_path, "request.jsonl", rows), "--specs", trunk)
    assert document["findings"] == [] and document["clean"] == 1


def test_a_frame_past_100_deviations_lists_100_and_counts_the_rest(trunk: Path, tmp_path: Path) -> None:
    """DescribeGroups v5 (flexible) with 150 group ids whose lengths are padded varints (``82 00`` for 2)."""
    groups = "".join("8200" + "61" for _ in range(150))
    body = "9701" + groups + "00" + "00"  # compact array of 150, the include flag, the tagged section
    rows = [{"direction": "request", "hex": frame_hex("000f000500000007ffff00" + body)}]
    _, document = report(corpus_of(tmp_path, "many.jsonl", rows), "--specs", trunk)
    assert document["counts"]["warning"] == 100 and document["unlisted"] == 50
    assert "50 more deviations past the first 100 of a frame" in run(tmp_path / "many.jsonl", "--specs",
                                                                     trunk).stdout
