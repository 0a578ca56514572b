"""Seeded faults, one per wire rule, on real frames (issue 29's acceptance point).

Each case takes a frame that a real client or broker sent (``fixtures/captures``, read by the frames reader) and
that is clean under trunk-2024-10's specs, finds its fields with the codec's plans (``support.frame_faults.Layout``)
and changes the few bytes that make one fault, the size prefix written again unless the fault is the size prefix.
The clean original must give no finding and be canonical; the faulty frame must give exactly one finding, of that
rule, at the severity the built-in rule has (``selection(Config(profile="strict"))``), at the field and byte where
the fault is, through ``krpc-lint frames check --format json``, with its exit code. Where a fault is a detail of
an otherwise valid change (a tagged field added), the same change without the fault (a "control") must be clean, so
the finding is the fault's and not the surgery's.

The last test runs every fixture capture: nothing unexplained, nothing unreadable, no finding outside the rules.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace as evolve
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import REPO_ROOT, require_shared
from support.frame_faults import Layout, replace, resized

from linter.cli.main import cli
from linter.codec import Codec
from linter.codec.wire import INT16, uvarint_bytes
from linter.engine.config import Config
from linter.frames.extract import Extraction
from linter.frames.inputs import Inputs
from linter.frames.streams import ACKS_ZERO_PROBLEM, UNMATCHED
from linter.wirecheck.findings import selection
from linter.wirecheck.frame import FrameChecker, FrameKind
from linter.wirecheck.reader import CHECKS
from linter.wirecheck.run import Run

CAPTURES = REPO_ROOT / "fixtures" / "captures"
ALL_CAPTURES = ("confluent-kafka", "kafka-python", "aiokafka", "kafkajs", "kafka-python-0_10", "librdkafka-0_9")
SPECS = ("kafka-specs", "trunk-2024-10")
REQUEST, RESPONSE = "request", "response"

# The 20 wire rules: id -> (the deviation it names, its name, its built-in severity); docs/rules.md "Frames".
RULES = {
    "KL2001": ("trailing-bytes", "error"), "KL2002": ("length-beyond-frame", "error"),
    "KL2003": ("varint-too-long", "error"), "KL2004": ("tagged-size-mismatch", "error"),
    "KL2005": ("header-version-mismatch", "error"), "KL2006": ("unmatched-response", "error"),
    "KL2007": ("frame-size-mismatch", "error"), "KL2008": ("null-not-nullable", "error"),
    "KL2009": ("invalid-utf8", "error"), "KL2010": ("string-too-long", "error"),
    "KL2011": ("tag-not-in-version", "error"), "KL2021": ("tagged-field-default", "warning"),
    "KL2022": ("tags-not-ascending", "warning"), "KL2023": ("tag-repeated", "warning"),
    "KL2024": ("varint-not-minimal", "warning"), "KL2025": ("bool-not-canonical", "warning"),
    "KL2026": ("null-marker-not-canonical", "warning"), "KL2027": ("api-versions-v0-layout", "warning"),
    "KL2041": ("unknown-api", "info"),
    "KL2042": ("unknown-version", "info"),
}

# API keys (Kafka's protocol): the frames the cases start from.
PRODUCE, FETCH, METADATA, OFFSET_COMMIT, HEARTBEAT, API_VERSIONS = 0, 1, 3, 8, 12, 18


@dataclass(frozen=True)
class Row:
    """One frame as a corpus row holds it (a response names its request's API and version)."""

    direction: str
    api_key: int | None
    api_version: int | None
    correlation_id: int | None
    frame: bytes
    problem: str | None = None

    def json(self) -> dict[str, Any]:
        row = {"direction": self.direction, "api_key": self.api_key, "api_version": self.api_version,
               "correlation_id": self.correlation_id, "hex": self.frame.hex()}
        return row if self.problem is None else {**row, "problem": self.problem}

    def with_frame(self, frame: bytes) -> Row:
        """The row of another frame with this one's place (a request's key and version are read from its bytes)."""
        if self.direction == REQUEST:
            key, version = INT16.unpack_from(frame, 4)[0], INT16.unpack_from(frame, 6)[0]
            return evolve(self, frame=frame, api_key=key, api_version=version)
        return evolve(self, frame=frame)


@dataclass(frozen=True)
class Case:
    """A real clean frame, the same frame with one fault, where the finding must point, and controls: the same
    surgery without the fault, which must be clean too."""

    original: Row
    faulty: Row
    field: str
    offset: int
    controls: tuple[Row, ...] = ()


class Frames:
    """The rows of the fixture captures (read once), by kind."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec

    @cache  # noqa: B019 - one Frames per module run
    def rows(self, capture: str) -> list[dict[str, Any]]:
        return list(Extraction([str(CAPTURES / f"{capture}.pcap")], self.codec).rows())

    def pick(self, capture: str, direction: str, api_key: int, api_version: int,
             accept: Callable[[Layout], bool] = lambda _: True, problem: bool = False) -> tuple[Row, Layout]:
        """The first frame of that kind (with a capture problem, or without) that ``accept`` takes."""
        for row in self.rows(capture):
            if (row["direction"], row["api_key"], row["api_version"]) != (direction, api_key, api_version):
                continue
            if (row["problem"] is not None) != problem:
                continue
            layout = Layout(self.codec, direction, row["bytes"], api_key, api_version)
            if accept(layout):
                return Row(direction, api_key, api_version, row["correlation_id"], row["bytes"], row["problem"]), layout
        raise AssertionError(f"{capture} holds no {direction} {api_key} v{api_version} as wanted")


CASES: dict[str, Callable[[Frames], Case]] = {}


def case(case_id: str) -> Callable[[Callable[[Frames], Case]], Callable[[Frames], Case]]:
    def register(build: Callable[[Frames], Case]) -> Callable[[Frames], Case]:
        CASES[case_id] = build
        return build

    return register


def api_versions_v3(frames: Frames) -> tuple[Row, Layout]:
    """confluent-kafka's ApiVersions v3 request: flexible, compact strings ClientSoftwareName/Version."""
    return frames.pick("confluent-kafka", REQUEST, API_VERSIONS, 3)


def fetch_v16(frames: Frames) -> tuple[Row, Layout]:
    """confluent-kafka's Fetch v16 request with a partition: flexible, tagged sections at every level."""
    return frames.pick("confluent-kafka", REQUEST, FETCH, 16,
                       lambda layout: "body.Topics[0].Partitions[0].Partition" in layout.fields)


# --- errors ------------------------------------------------------------------------------------------------


@case("KL2001")
def trailing_bytes(frames: Frames) -> Case:
    row, _ = api_versions_v3(frames)
    end = len(row.frame)
    return Case(row, row.with_frame(replace(row.frame, end, end, b"\x00\x00\x00")), "", end)


@case("KL2002")
def count_raised(frames: Frames) -> Case:
    """kafka-python's Produce v7 request: its TopicData count (int32) one more than the topics it holds."""
    row, layout = frames.pick("kafka-python", REQUEST, PRODUCE, 7)
    span = layout.fields["body.TopicData"]
    count = int.from_bytes(row.frame[span.start:span.body], "big", signed=True)
    faulty = replace(row.frame, span.start, span.body, (count + 1).to_bytes(4, "big", signed=True))
    return Case(row, row.with_frame(faulty), f"body.TopicData[{count}].Name", len(faulty))


@case("KL2003")
def varint_too_long(frames: Frames) -> Case:
    """The compact length of ClientSoftwareName written in 6 bytes: Kafka's readUnsignedVarint stops at 5."""
    row, layout = api_versions_v3(frames)
    span = layout.fields["body.ClientSoftwareName"]
    length = row.frame[span.start]
    assert length < 0x80
    faulty = replace(row.frame, span.start, span.body, bytes([length | 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]))
    return Case(row, row.with_frame(faulty), "body.ClientSoftwareName", span.start)


@case("KL2004")
def tagged_size_changed(frames: Frames) -> Case:
    """Fetch v16's ClusterId (tag 0) added to the body's tagged section, its size one less than its value takes."""
    row, layout = fetch_v16(frames)
    start = layout.sections["body"].start
    good = layout.tagged_entry("body", 0, "mock-cluster")
    short = layout.tagged_entry("body", 0, "mock-cluster", size=len(good) - 3)  # tag, size: one byte each
    control = layout.with_section("body", [good])
    return Case(row, row.with_frame(layout.with_section("body", [short])), "body.ClusterId", start + 1,
                (row.with_frame(control),))


@case("KL2005")
def header_tag_byte_dropped(frames: Frames) -> Case:
    """ApiVersions v3 takes request header v2; the header's tagged-field byte left out makes it a v1 header."""
    row, layout = api_versions_v3(frames)
    assert layout.header_version == 2
    section = layout.sections["header"]
    assert (section.start, section.end) == (section.start, section.start + 1)
    return Case(row, row.with_frame(replace(row.frame, section.start, section.end, b"")), "header", 4)


@case("KL2006")
def acks_zero_answered(frames: Frames) -> Case:
    """A real Produce v10 response to a request sent with acks=0 (the mock broker answers it; Kafka sends none)."""
    answered, _ = frames.pick("confluent-kafka", RESPONSE, PRODUCE, 10, problem=True)
    assert answered.problem == ACKS_ZERO_PROBLEM
    return Case(evolve(answered, problem=None), answered, "header.CorrelationId", 4)


@case("KL2006-unmatched")
def unmatched_response(frames: Frames) -> Case:
    """A real Heartbeat response as the capture reader writes a response no request on its connection asked for."""
    row, _ = frames.pick("confluent-kafka", RESPONSE, HEARTBEAT, 3)
    assert row.correlation_id is not None
    faulty = evolve(row, api_key=None, api_version=None, problem=UNMATCHED.format(row.correlation_id))
    return Case(row, faulty, "header.CorrelationId", 4)


@case("KL2007")
def size_prefix(frames: Frames) -> Case:
    row, _ = api_versions_v3(frames)
    return Case(row, row.with_frame(resized(row.frame, len(row.frame) - 4 + 1)), "", 0)


@case("KL2008")
def null_not_nullable(frames: Frames) -> Case:
    """ApiVersions v3's ClientSoftwareName (not nullable) written as a null compact string (length 0)."""
    row, layout = api_versions_v3(frames)
    span = layout.fields["body.ClientSoftwareName"]
    return Case(row, row.with_frame(replace(row.frame, span.start, span.end, b"\x00")), "body.ClientSoftwareName",
                span.start)


@case("KL2009")
def invalid_utf8(frames: Frames) -> Case:
    """The topic name of confluent-kafka's OffsetCommit v9 request with its first byte 0xff."""
    row, layout = frames.pick("confluent-kafka", REQUEST, OFFSET_COMMIT, 9)
    span = layout.fields["body.Topics[0].Name"]
    assert span.end > span.body
    return Case(row, row.with_frame(replace(row.frame, span.body, span.body + 1, b"\xff")), "body.Topics[0].Name",
                span.body)


@case("KL2010")
def string_too_long(frames: Frames) -> Case:
    """ApiVersions v3's ClientSoftwareName with a compact length of 32,768 bytes (Kafka reads at most 32,767)."""
    row, layout = api_versions_v3(frames)
    span = layout.fields["body.ClientSoftwareName"]
    faulty = replace(row.frame, span.start, span.body, uvarint_bytes(32768 + 1))
    return Case(row, row.with_frame(faulty), "body.ClientSoftwareName", span.start)


@case("KL2011")
def tag_of_a_later_version(frames: Frames) -> Case:
    """Fetch's partition ReplicaDirectoryId is tag 0 in versions 17+ only (trunk-2024-10's FetchRequest.json): in a
    Fetch v16 request's first partition it is refused; the same bytes as version 17 are what Kafka writes."""
    row, layout = fetch_v16(frames)
    path = "body.Topics[0].Partitions[0]"
    later = frames.codec.plan("FetchRequest", 17)
    partition = field_plan(field_plan(later, "Topics").nested, "Partitions").nested
    assert partition is not None and 0 not in layout.plans[path].tagged_by_number
    out = bytearray()
    partition.tagged_by_number[0].encode(uuid.UUID(int=0x29), out)
    entry = uvarint_bytes(0) + uvarint_bytes(len(out)) + bytes(out)
    faulty = layout.with_section(path, [entry])
    control = replace(faulty, 6, 8, INT16.pack(17))
    return Case(row, row.with_frame(faulty), path, layout.sections[path].start + 1, (row.with_frame(control),))


# --- warnings ----------------------------------------------------------------------------------------------


@case("KL2021")
def tagged_default(frames: Frames) -> Case:
    """Fetch v16's ClusterId (tag 0, default null) written, holding null."""
    row, layout = fetch_v16(frames)
    faulty = layout.with_section("body", [layout.tagged_entry("body", 0, None)])
    return Case(row, row.with_frame(faulty), "body.ClusterId", layout.sections["body"].start + 1)


@case("KL2022")
def tags_descending(frames: Frames) -> Case:
    """Fetch v16's ReplicaState (tag 1) written before ClusterId (tag 0)."""
    row, layout = fetch_v16(frames)
    state = layout.tagged_entry("body", 1, {"replicaId": 5, "replicaEpoch": 7})
    cluster = layout.tagged_entry("body", 0, "mock-cluster")
    second = layout.sections["body"].start + 1 + len(state)
    return Case(row, row.with_frame(layout.with_section("body", [state, cluster])), "body", second,
                (row.with_frame(layout.with_section("body", [cluster, state])),))


@case("KL2023")
def tag_twice(frames: Frames) -> Case:
    """Fetch v16's ClusterId (tag 0) written twice."""
    row, layout = fetch_v16(frames)
    cluster = layout.tagged_entry("body", 0, "mock-cluster")
    second = layout.sections["body"].start + 1 + len(cluster)
    return Case(row, row.with_frame(layout.with_section("body", [cluster, cluster])), "body", second,
                (row.with_frame(layout.with_section("body", [cluster])),))


@case("KL2024")
def varint_not_minimal(frames: Frames) -> Case:
    """ApiVersions v3's ClientSoftwareName compact length in two bytes (a redundant 0x00 continuation)."""
    row, layout = api_versions_v3(frames)
    span = layout.fields["body.ClientSoftwareName"]
    length = row.frame[span.start]
    faulty = replace(row.frame, span.start, span.body, bytes([length | 0x80, 0x00]))
    return Case(row, row.with_frame(faulty), "body.ClientSoftwareName", span.start)


@case("KL2025")
def bool_two(frames: Frames) -> Case:
    """kafka-python's Metadata v8 request with AllowAutoTopicCreation written as 0x02."""
    row, layout = frames.pick("kafka-python", REQUEST, METADATA, 8)
    span = layout.fields["body.AllowAutoTopicCreation"]
    return Case(row, row.with_frame(replace(row.frame, span.start, span.end, b"\x02")),
                "body.AllowAutoTopicCreation", span.start)


@case("KL2026")
def null_client_id_minus_two(frames: Frames) -> Case:
    """kafka-python's ApiVersions v2 request (header v1) with a null ClientId written as length -2."""
    row, layout = frames.pick("kafka-python", REQUEST, API_VERSIONS, 2)
    span = layout.fields["header.ClientId"]
    return Case(row, row.with_frame(replace(row.frame, span.start, span.end, INT16.pack(-2))), "header.ClientId",
                span.start)


@case("KL2027")
def api_versions_answered_in_v0_layout(frames: Frames) -> Case:
    """The mock broker's real ApiVersions v0 response (error 0) given as the answer to a v3 request: version 0's
    layout without UNSUPPORTED_VERSION, which Kafka's client reads by its fallback but Kafka's broker never writes.
    The control, the same bytes with error 35, is KIP-511's fallback itself: clean."""
    row, _ = frames.pick("confluent-kafka", RESPONSE, API_VERSIONS, 0)
    assert row.frame[8:10] == b"\x00\x00", "an ApiVersions v0 response without error"
    as_v3 = evolve(row, api_version=3)
    fallback = replace(row.frame, 8, 10, INT16.pack(35))  # not canonical at v3, but KIP-511's own answer
    assert FrameChecker(frames.codec).check(RESPONSE, API_VERSIONS, 3, fallback) == []
    return Case(row, as_v3, "body.ErrorCode", 8)


# --- info ----------------------------------------------------------------------------------------------------


@case("KL2041")
def unknown_api(frames: Frames) -> Case:
    """A real Heartbeat v3 request with API key 1000, which no spec of trunk-2024-10 has."""
    row, _ = frames.pick("confluent-kafka", REQUEST, HEARTBEAT, 3)
    with pytest.raises(KeyError):
        frames.codec.request_for(1000)
    return Case(row, row.with_frame(replace(row.frame, 4, 6, INT16.pack(1000))), "header.RequestApiKey", 4)


@case("KL2042")
def unknown_version(frames: Frames) -> Case:
    """A real Fetch v16 request claiming the version after trunk-2024-10's last Fetch version."""
    row, _ = fetch_v16(frames)
    versions = frames.codec.request_for(FETCH).versions
    assert versions is not None
    faulty = replace(row.frame, 6, 8, INT16.pack(versions.highest + 1))
    return Case(row, row.with_frame(faulty), "header.RequestApiVersion", 6)


def field_plan(plan: Any, name: str) -> Any:
    return next(field for field in plan.fields if field.name == name)


# --- the tests -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def specs() -> Path:
    return require_shared(*SPECS)


@pytest.fixture(scope="module")
def frames(specs: Path) -> Frames:
    return Frames(Codec.load(specs))


@pytest.fixture(scope="module")
def strict() -> dict[str, str]:
    """Each wire rule's severity as the built-in rule pack has it."""
    return {ref.id: ref.severity for ref in selection(Config(profile="strict")).values()}


def test_every_rule_has_a_seeded_fault(strict: dict[str, str]) -> None:
    assert sorted(strict) == sorted(RULES)
    refs = {ref.id: (check, ref.severity) for check, ref in selection(Config(profile="strict")).items()}
    assert refs == RULES
    assert sorted(RULES[rule][0] for rule in RULES) == sorted(CHECKS)
    assert {case_id[:6] for case_id in CASES} == set(RULES)


def assert_clean(checker: FrameChecker, row: Row, what: str) -> None:
    assert checker.check(row.direction, row.api_key, row.api_version, row.frame, row.problem) == [], what
    assert row.api_key is not None and row.api_version is not None
    kind = checker.kind(row.direction, row.api_key, row.api_version)
    assert isinstance(kind, FrameKind), what
    assert kind.canonical(row.frame[4:]), f"{what} is not what Kafka's writer writes"


def frames_check(corpus: Path, specs: Path) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["frames", "check", str(corpus), "--specs", str(specs), "--format", "json"],
                                catch_exceptions=False)
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"exit {result.exit_code}, no JSON report: {result.stdout[:500]!r} {result.stderr[:500]!r}")


@pytest.mark.parametrize("case_id", list(CASES))
def test_seeded_fault(case_id: str, frames: Frames, specs: Path, strict: dict[str, str], tmp_path: Path,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    rule = case_id[:6]
    check_name, _ = RULES[rule]
    severity = strict[rule]
    seeded = CASES[case_id](frames)
    checker = FrameChecker(frames.codec)
    assert_clean(checker, seeded.original, "the real frame")
    for control in seeded.controls:
        assert_clean(checker, control, "the control (the surgery without the fault)")
    assert seeded.faulty != seeded.original  # bytes, problem or what the row says it answers

    faulty = seeded.faulty
    deviations = checker.check(faulty.direction, faulty.api_key, faulty.api_version, faulty.frame, faulty.problem)
    assert [(d.check, d.path, d.offset) for d in deviations] == [(check_name, seeded.field, seeded.offset)], deviations
    assert checker.unexplained == 0

    corpus = tmp_path / "seeded.jsonl"
    corpus.write_text("".join(json.dumps(row.json()) + "\n" for row in (seeded.original, faulty)), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no config file of the checkout's
    exit_code, report = frames_check(corpus, specs)
    found = [(f["rule"], f["severity"], f["frame"], f["field"], f["offset"]) for f in report["findings"]]
    assert found == [(rule, severity, 1, seeded.field, seeded.offset)], report["findings"]
    assert report["frames"] == 2 and report["clean"] == 1 and report["not_frames"]["count"] == 0
    assert exit_code == (1 if severity == "error" else 0)


def test_a_real_frame_of_a_version_the_specs_lack(frames: Frames) -> None:
    """confluent-kafka's Metadata v13 requests (Kafka added v13 after trunk-2024-10): KL2042 only, info."""
    checker = FrameChecker(frames.codec)
    requests = [row for row in frames.rows("confluent-kafka")
                if (row["direction"], row["api_key"], row["api_version"]) == (REQUEST, METADATA, 13)]
    assert requests
    for row in requests:
        found = checker.check(REQUEST, METADATA, 13, row["bytes"])
        assert [(d.check, d.path, d.offset) for d in found] == [("unknown-version", "header.RequestApiVersion", 6)]


@pytest.mark.parametrize("capture", ALL_CAPTURES)
def test_every_fixture_capture_is_explained(capture: str, frames: Frames, strict: dict[str, str]) -> None:
    rules = selection(Config(profile="strict"))
    collector = Run(frames.codec, rules).read(Inputs(captures=[str(CAPTURES / f"{capture}.pcap")]))
    assert collector.frames == len(frames.rows(capture)) > 0
    assert collector.unexplained == 0
    assert collector.unreadable_count == 0, collector.unreadable
    assert {finding.rule.id for finding in collector.findings} <= set(strict)
    assert len(collector.findings) == collector.reported
    answered = sum(row["problem"] == ACKS_ZERO_PROBLEM for row in frames.rows(capture))
    assert sum(finding.rule.id == "KL2006" for finding in collector.findings) == answered
