"""``FrameChecker`` on hostile bytes: real frames (clients captured against a real broker, and the public wire bugs)
mutated at random, and frames built to make the walk work hard. Whatever the bytes, the checker only says what it
found: it raises nothing but ``BadFrame``, names only its own checks, explains every frame that is not what Kafka's
writer writes, and does work linear in the frame's size (counted in the reader's steps, never by the clock)."""

from __future__ import annotations

import json
import struct
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from conftest import REPO_ROOT, require_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.headers import REQUEST_HEADER, RESPONSE_HEADER

from linter.codec import Codec
from linter.codec.wire import uvarint_bytes as uvarint
from linter.frames.corpus import BadFrame
from linter.wirecheck.frame import FrameChecker, FrameKind
from linter.wirecheck.reader import CHECKS, SHOWN, Deviation, KafkaReader

CAPTURES = REPO_ROOT / "fixtures" / "captures"
BUGS = REPO_ROOT / "fixtures" / "wire-bugs"
Frame = tuple[str, int, int, bytes]  # direction, api_key, api_version, whole frame
API_VERSIONS, UNSUPPORTED_VERSION = 18, 35  # Kafka's ApiKeys.API_VERSIONS and Errors.UNSUPPORTED_VERSION


@pytest.fixture(scope="module")
def codec() -> Codec:
    return Codec.load(str(require_shared("kafka-specs", "trunk-2024-10")))


@pytest.fixture(scope="module")
def frames(codec: Codec) -> list[Frame]:
    """One real frame of every (direction, API, version) the captures and the wire-bug corpora hold."""
    from linter.frames.extract import Extraction

    found: dict[tuple[str, int, int], bytes] = {}
    for capture in ("confluent-kafka", "kafka-python", "aiokafka", "kafkajs", "kafka-python-0_10", "librdkafka-0_9"):
        for row in Extraction([str(CAPTURES / f"{capture}.pcap")], codec).rows():
            if row["api_key"] is not None and row["api_version"] is not None and row["problem"] is None:
                found.setdefault((row["direction"], row["api_key"], row["api_version"]), row["bytes"])
    for corpus in sorted(BUGS.glob("*.jsonl")):
        for line in corpus.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found.setdefault((row["direction"], row["api_key"], row["api_version"]), bytes.fromhex(row["hex"]))
    assert len(found) > 60
    return [(*key, data) for key, data in sorted(found.items())]


# --- mutations of real frames --------------------------------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn, frames: list[Frame]) -> tuple[Frame, str]:
    """A real frame, mutated: bytes flipped, inserted, deleted, the end cut or extended, and then its size prefix
    made right again (mostly: the walk reads the message), left as it was, or set at random."""
    direction, api_key, api_version, data = draw(st.sampled_from(frames))
    payload = bytearray(data[4:])
    done = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("flip", "insert", "delete", "truncate", "extend", "set")))
        at = draw(st.integers(0, len(payload)))
        if kind == "flip" and at < len(payload):
            payload[at] ^= draw(st.integers(1, 255))
        elif kind == "set" and at < len(payload):
            payload[at] = draw(st.sampled_from((0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF)))
        elif kind == "insert":
            payload[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del payload[at:at + draw(st.integers(1, 8))]
        elif kind == "truncate":
            del payload[at:]
        elif kind == "extend":
            payload += draw(st.binary(min_size=1, max_size=16))
        done.append(f"{kind}@{at}")
    prefix = draw(st.sampled_from(("right", "right", "right", "original", "random")))
    size = {"right": len(payload), "original": len(data) - 4}.get(prefix)
    if size is None:
        size = draw(st.integers(-(1 << 31), (1 << 31) - 1))
    return (direction, api_key, api_version, struct.pack(">i", size) + bytes(payload)), f"{done} size {prefix}"


def reencodes(codec: Codec, kind: FrameKind, payload: bytes) -> bool:
    """Whether the payload is header then body, each as the codec's encoder writes its own decoding."""
    try:
        header, pos = kind.header.decode(payload, 0)
        body, end = kind.body.decode(payload, pos)
    except Exception:  # noqa: BLE001 - the strict decoder declines: not canonical
        return False
    if end != len(payload):
        return False
    head_name, version = kind.header.name, kind.header.version
    return codec.encode(head_name, version, header) + codec.encode(kind.name, kind.api_version, body) == payload


def kip_511_fallback(codec: Codec, frame: Frame) -> bool:
    """An ApiVersions response in version 0's layout (header v0, body v0) whose error is UNSUPPORTED_VERSION."""
    direction, api_key, _, data = frame
    if direction != "response" or api_key != API_VERSIONS:
        return False
    try:
        body = codec.decode("ApiVersionsResponse", 0, data[8:])
    except Exception:  # noqa: BLE001 - not that layout
        return False
    return body.get("error_code", body.get("errorCode")) == UNSUPPORTED_VERSION


def test_the_real_frames_are_clean(codec: Codec, frames: list[Frame]) -> None:
    """The starting point: the real frames the mutations start from; most are canonical."""
    checker = FrameChecker(codec)
    clean = [frame for frame in frames if not checker.check(*frame)]
    assert len(clean) > len(frames) // 2
    assert checker.unexplained == 0


@settings(max_examples=1500, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_frames(codec: Codec, frames: list[Frame], data: st.DataObject) -> None:
    frame, how = data.draw(mutated(frames))
    checker = FrameChecker(codec)
    try:
        deviations = checker.check(*frame)
    except BadFrame:
        return
    assert isinstance(deviations, list), how
    for deviation in deviations:
        assert isinstance(deviation, Deviation), (how, deviation)
        assert deviation.check in CHECKS, (how, deviation)
        assert 0 <= deviation.offset <= len(frame[3]), (how, deviation)
        assert len(deviation.found) <= SHOWN and isinstance(deviation.message, str) and deviation.message
    kind = checker.kind(*own_kind(frame))
    assert checker.unexplained == 0, f"{how}: a frame not canonical, yet no deviation: {frame[3].hex()}"
    if not deviations:
        assert isinstance(kind, FrameKind), how
        assert struct.unpack_from(">i", frame[3])[0] == len(frame[3]) - 4, how
        assert reencodes(codec, kind, frame[3][4:]) or kip_511_fallback(codec, frame), (
            f"{how}: no deviation, yet not what Kafka writes: {frame[3].hex()}")


def own_kind(frame: Frame) -> tuple[str, int, int]:
    """A request names its API and version at bytes 4-7 (what the checker reads); a response is its row's."""
    direction, api_key, api_version, data = frame
    if direction == "request" and len(data) >= 8:
        api_key, api_version = struct.unpack_from(">hh", data, 4)
    return direction, api_key, api_version


def with_unknown_tag(data: bytes) -> bytes:
    """A request with header v2 given one unknown tagged field (tag 5, no bytes) in its header's tagged section."""
    client_id = struct.unpack_from(">h", data, 12)[0]
    at = 14 + max(client_id, 0)
    assert data[at] == 0, "an empty tagged section"
    payload = data[4:at] + bytes((1, 5, 0)) + data[at + 1:]
    return struct.pack(">i", len(payload)) + payload


def test_an_unknown_tag_is_canonical(codec: Codec, frames: list[Frame]) -> None:
    checker = FrameChecker(codec)
    tried = 0
    for direction, api_key, api_version, data in frames:
        kind = checker.kind(direction, api_key, api_version)
        if direction != "request" or not isinstance(kind, FrameKind) or kind.header_version != 2:
            continue
        if checker.check(direction, api_key, api_version, data):
            continue
        tagged = with_unknown_tag(data)
        assert reencodes(codec, kind, tagged[4:]), "the codec keeps unknown tags: the frame is canonical"
        assert checker.check(direction, api_key, api_version, tagged) == []  # holds: unknown tags are not flagged
        tried += 1
    assert tried >= 5
    assert checker.unexplained == 0


def test_the_mutations_reach_the_walk(codec: Codec, frames: list[Frame]) -> None:
    """The property's mutations make more than size mismatches: the walk's checks are reached (counted over a
    run of the same strategy of its own, so the test stands alone)."""
    seen: Counter[str] = Counter()

    @settings(max_examples=300, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def count(data: st.DataObject) -> None:
        frame, _ = data.draw(mutated(frames))
        try:
            seen.update(deviation.check for deviation in FrameChecker(codec).check(*frame))
        except BadFrame:
            pass

    count()
    assert seen["frame-size-mismatch"] > 0
    walked = set(seen) - {"frame-size-mismatch", "unknown-api", "unknown-version"}
    assert len(walked) >= 3, seen


# --- hostile frames: the walk's work grows with the frame, no faster -------------------------------------


def _levels(depth: int) -> list[dict[str, Any]]:
    return ([{"name": f"L{depth}", "type": f"Level{depth}", "versions": "0+", "fields": _levels(depth - 1)}]
            if depth else [])


DEPTH = 12
HOSTILE_REQUEST = {
    "apiKey": 1000, "type": "request", "name": "HostileRequest", "validVersions": "0-1", "flexibleVersions": "1+",
    "fields": [{"name": "Items", "type": "[]Empty", "versions": "0+", "fields": []},
               {"name": "Deep", "type": f"[]Level{DEPTH}", "versions": "0+", "fields": _levels(DEPTH - 1)},
               {"name": "Flag", "type": "bool", "versions": "0+"},
               {"name": "Names", "type": "[]string", "versions": "0+"}]}
HOSTILE_RESPONSE = {"apiKey": 1000, "type": "response", "name": "HostileResponse", "validVersions": "0-1",
                    "flexibleVersions": "1+", "fields": []}


@pytest.fixture(scope="module")
def hostile_codec(tmp_path_factory: pytest.TempPathFactory) -> Codec:
    folder = tmp_path_factory.mktemp("hostile-specs")
    for spec in (REQUEST_HEADER, RESPONSE_HEADER, HOSTILE_REQUEST, HOSTILE_RESPONSE):
        (folder / f"{spec['name']}.json").write_text(json.dumps(spec), encoding="utf-8")
    return Codec.load(str(folder))


@pytest.fixture()
def steps(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls of the reader's steps, counted while a test runs."""
    counted: Counter[str] = Counter()

    def counting(name: str) -> None:
        original = getattr(KafkaReader, name)

        def step(self: KafkaReader, *args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return original(self, *args, **kwargs)

        monkeypatch.setattr(KafkaReader, name, step)

    for name in ("uvarint", "need", "struct", "field", "leaf", "note"):
        counting(name)
    return counted


def framed(body: bytes, version: int) -> bytes:
    """A HostileRequest frame: header v1 (v0 of the message) or v2 with an empty tagged section (v1)."""
    header = struct.pack(">hhih", 1000, version, 7, 1) + b"c" + (b"\x00" if version else b"")
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def empty_structs(n: int) -> bytes:
    """v0: n empty structs in Items, none elsewhere, then n bytes the message does not hold (trailing)."""
    return framed(struct.pack(">i", n) + struct.pack(">i", 0) + b"\x00" + struct.pack(">i", 0) + b"\xff" * n, 0)


def nested_structs(n: int) -> bytes:
    """v0: n elements of Deep, each DEPTH empty structs nested, taking no byte; then n bytes (trailing)."""
    return framed(struct.pack(">i", 0) + struct.pack(">i", n) + b"\x00" + struct.pack(">i", 0) + b"\xff" * n, 0)


def many_tags(n: int) -> bytes:
    """v1: the body's tagged section holds n copies of unknown tag 100, each of 0 bytes (repeated: warnings)."""
    body = uvarint(1) + uvarint(1) + b"\x02" + uvarint(1) + uvarint(n) + (uvarint(100) + uvarint(0)) * n
    return framed(body, 1)


def many_tags_descending(n: int) -> bytes:
    """v1: n distinct unknown tags written high to low (not ascending), each of 1 byte."""
    tags = b"".join(uvarint(tag) + uvarint(1) + b"\x00" for tag in range(n + 10, 10, -1))
    return framed(uvarint(1) + uvarint(1) + b"\x00" + uvarint(1) + uvarint(n) + tags, 1)


def many_bad_strings(n: int) -> bytes:
    """v1: n strings, each 2 bytes of invalid UTF-8 behind a non-minimal length varint."""
    names = (b"\x83\x00" + b"\xc3\x28") * n
    return framed(uvarint(1) + uvarint(1) + b"\x00" + uvarint(n + 1) + names + uvarint(0), 1)


def walked(checker: FrameChecker, frame: bytes, steps: Counter[str]) -> tuple[int, list[Deviation]]:
    steps.clear()
    deviations = checker.check("request", None, None, frame)
    return sum(steps.values()), deviations


@pytest.mark.parametrize(("build", "size", "expect"), [
    (empty_structs, 20_000, "trailing-bytes"),
    (nested_structs, 1_500, "trailing-bytes"),
    (nested_structs, 100_000, "length-beyond-frame"),  # the values' budget ends the walk
    (many_tags, 10_000, "tag-repeated"),
    (many_tags_descending, 5_000, "tags-not-ascending"),
    (many_bad_strings, 5_000, "invalid-utf8"),
])
def test_work_is_linear_in_the_frames_size(hostile_codec: Codec, steps: Counter[str],
                                           build: Callable[[int], bytes], size: int, expect: str) -> None:
    checker = FrameChecker(hostile_codec)
    small, large = build(size), build(2 * size)
    assert 1.9 < len(large) / len(small) < 2.1
    work_small, found_small = walked(checker, small, steps)
    work_large, found_large = walked(checker, large, steps)
    assert expect in {deviation.check for deviation in found_small}, found_small[:3]
    assert expect in {deviation.check for deviation in found_large}, found_large[:3]
    assert checker.unexplained == 0
    assert work_small > size / 10, "the walk ran over the frame"
    assert work_large / work_small < 2.5, (work_small, work_large)
    # and at most a few steps a byte, whatever the frame holds
    assert work_large < 64 * len(large), (work_large, len(large))


def test_the_step_counter_sees_quadratic_work(hostile_codec: Codec, steps: Counter[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The measure can fail: a reader whose every struct cost one step per struct read before it is caught."""
    original = KafkaReader.struct
    calls = [0]

    def quadratic(self: KafkaReader, plan: Any, pos: int) -> Any:
        calls[0] += 1
        for _ in range(calls[0]):  # n structs: n * (n + 1) / 2 steps
            self.need(pos, 0, "again")
        return original(self, plan, pos)

    monkeypatch.setattr(KafkaReader, "struct", quadratic)
    checker = FrameChecker(hostile_codec)
    work_small, _ = walked(checker, empty_structs(300), steps)
    calls[0] = 0
    work_large, _ = walked(checker, empty_structs(600), steps)
    assert work_large / work_small > 2.5


def test_a_real_frame_with_a_huge_count(codec: Codec, frames: list[Frame], steps: Counter[str]) -> None:
    """A real Metadata request (v4-v8: header v1, a nullable int32 topic count first) whose count claims more
    elements than bytes follow: refused at the count, without a step per claimed element."""
    direction, api_key, api_version, data = next(frame for frame in frames
                                                 if frame[:2] == ("request", 3) and 4 <= frame[2] <= 8)
    checker = FrameChecker(codec)
    header_end = 4 + 8 + 2 + struct.unpack_from(">h", data, 12)[0]  # size; key, version, id; client id
    for count in (1001, 1 << 20, (1 << 31) - 1):
        hostile = data[:header_end] + struct.pack(">i", count) + b"\x00" * 1000
        hostile = struct.pack(">i", len(hostile) - 4) + hostile[4:]
        steps.clear()
        deviations = checker.check(direction, api_key, api_version, hostile)
        assert [deviation.check for deviation in deviations] == ["length-beyond-frame"], deviations
        assert deviations[0].path == "body.Topics" and deviations[0].offset == header_end
        assert sum(steps.values()) < 100, steps
