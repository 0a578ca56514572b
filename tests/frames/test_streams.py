"""Kafka frames from reassembled TCP streams (issue 27, ``linter.frames.streams``): segments made by hand from
frames the codec encodes (Kafka 4.3's client specs), cut, matched and counted."""

from __future__ import annotations

import random
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from conftest import require_shared

from linter.codec import Codec
from linter.frames import streams as streams_mod
from linter.frames.extract import EXTRACTED
from linter.frames.kafka_facts import MAX_FRAME
from linter.frames.streams import KafkaStreams
from linter.frames.traffic import Flow, Segment, Tally
from linter.spark.schema import columns

CLIENT, OTHER, BROKER = ("10.0.0.1", 40000), ("10.0.0.3", 41000), ("10.0.0.2", 9092)
UP, DOWN = Flow(CLIENT, BROKER), Flow(BROKER, CLIENT)
UP2, DOWN2 = Flow(OTHER, BROKER), Flow(BROKER, OTHER)
METADATA, API_VERSIONS, PRODUCE, SASL_HANDSHAKE = 3, 18, 0, 17


@pytest.fixture(scope="module")
def codec() -> Codec:
    return Codec.load(require_shared("kafka-specs", "4.3"))


def request(codec: Codec, api_key: int, version: int, correlation: int, client_id: str | None = "app",
            **fields: Any) -> bytes:
    name = codec.request_for(api_key).name
    assert name is not None
    body = {**codec.default(name, version), **fields}
    return codec.encode_request(version, {"correlationId": correlation, "clientId": client_id}, body, name=name)


def response(codec: Codec, api_key: int, version: int, correlation: int, **fields: Any) -> bytes:
    name = codec.response_for(api_key).name
    assert name is not None
    return codec.encode_response(api_key, version, {"correlationId": correlation},
                                 {**codec.default(name, version), **fields})


def run(codec: Codec, segments: list[Segment], ports: frozenset[int] | None = frozenset({9092})
        ) -> tuple[list[dict[str, Any]], Tally]:
    tally = Tally()
    streams = KafkaStreams(codec, tally, ports)
    rows = [row for segment in segments for row in streams.feed(segment)]
    rows += list(streams.finish())
    return rows, tally


def seen(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(row["direction"], row["api_key"], row["api_version"], row["correlation_id"]) for row in rows]


def test_requests_and_responses_are_matched_across_interleaved_connections(codec: Codec) -> None:
    hello = request(codec, API_VERSIONS, 3, 1, clientSoftwareName="librdkafka", clientSoftwareVersion="2.5.0")
    metadata, other = request(codec, METADATA, 12, 2), request(codec, METADATA, 9, 2, client_id="other")
    answers = [response(codec, API_VERSIONS, 3, 1), response(codec, METADATA, 12, 2), response(codec, METADATA, 9, 2)]
    rows, tally = run(codec, [
        Segment(UP, 1.0, hello, opened=True), Segment(UP2, 1.1, other, opened=True), Segment(UP, 1.2, metadata),
        Segment(DOWN2, 1.3, answers[2]), Segment(DOWN, 1.4, answers[0] + answers[1])])
    assert seen(rows) == [("request", 18, 3, 1), ("request", 3, 9, 2), ("request", 3, 12, 2),
                          ("response", 3, 9, 2), ("response", 18, 3, 1), ("response", 3, 12, 2)]
    assert [row["bytes"] for row in rows] == [hello, other, metadata, answers[2], answers[0], answers[1]]
    assert [row["client_id"] for row in rows] == ["app", "other", "app", "other", "app", "app"]
    assert rows[0]["connection"] == "10.0.0.1:40000 > 10.0.0.2:9092" and rows[3]["connection"].startswith("10.0.0.3")
    assert {row["software_name"] for row in rows if row["connection"] == rows[0]["connection"]} == {"librdkafka"}
    assert {row["software_version"] for row in rows if row["client_id"] == "other"} == {None}
    assert [row["ts"] for row in rows] == [1.0, 1.1, 1.2, 1.3, 1.4, 1.4]
    assert all(set(row) == set(columns(EXTRACTED)) and row["problem"] is None for row in rows) and not tally.line()


def test_a_frame_split_into_many_segments_and_many_frames_in_one_give_the_same_rows(codec: Codec) -> None:
    frames = [request(codec, METADATA, version, number) for number, version in enumerate((0, 4, 9, 12, 13))]
    stream = b"".join(frames)
    bytewise = [Segment(UP, float(at), stream[at:at + 1], opened=at == 0) for at in range(len(stream))]
    at_once, _ = run(codec, [Segment(UP, 0.0, stream, opened=True)])
    one_by_one, tally = run(codec, bytewise)
    assert [row["bytes"] for row in at_once] == [row["bytes"] for row in one_by_one] == frames
    assert tally[streams_mod.UNANSWERED] == 5  # counted at the end: no response was captured


def test_a_gap_inside_a_frame_loses_that_frame_and_the_next_provable_one_comes_back(codec: Codec) -> None:
    frames = [request(codec, METADATA, 12, number) for number in range(4)]
    second = frames[1]
    rows, tally = run(codec, [Segment(UP, 1.0, frames[0] + second[:10], opened=True),
                              Segment(UP, 2.0, second[15:] + frames[2] + frames[3], gap=5)])
    assert [row["correlation_id"] for row in rows] == [0, 2, 3]
    assert tally[streams_mod.CUT] == 1
    assert tally[streams_mod.SKIPPED] == len(second) - 5  # the 5 lost were the reassembler's to count


def test_a_gap_at_a_frame_boundary_resumes_at_the_next_frame(codec: Codec) -> None:
    frames = [request(codec, METADATA, 12, number) for number in range(3)]
    rows, tally = run(codec, [Segment(UP, 1.0, frames[0], opened=True), Segment(UP, 2.0, frames[1] + frames[2], gap=80)])
    assert [row["correlation_id"] for row in rows] == [0, 1, 2] and tally[streams_mod.SKIPPED] == 0


def test_a_connection_picked_up_mid_stream_syncs_on_provable_boundaries_in_both_directions(codec: Codec) -> None:
    frames = [request(codec, METADATA, 12, number) for number in range(3)]
    answers = [response(codec, METADATA, 12, number) for number in range(3)]
    rows, tally = run(codec, [Segment(UP, 1.0, frames[0][7:] + frames[1] + frames[2], gap=-1),
                              Segment(DOWN, 2.0, answers[0][3:] + answers[1] + answers[2], gap=-1)])
    assert seen(rows) == [("request", 3, 12, 1), ("request", 3, 12, 2), ("response", 3, 12, 1),
                          ("response", 3, 12, 2)]
    assert tally[streams_mod.SKIPPED] == len(frames[0]) - 7 + len(answers[0]) - 3


def test_the_end_counts_an_unfinished_frame_and_bytes_held_without_a_boundary(codec: Codec) -> None:
    frame = request(codec, METADATA, 12, 1)
    _, tally = run(codec, [Segment(UP, 1.0, frame[:-1], opened=True), Segment(UP2, 1.0, b"\x00" * 10, gap=-1)])
    assert tally == Tally({streams_mod.UNFINISHED: 1, streams_mod.SKIPPED: 10})


@pytest.mark.parametrize("ports", [frozenset({9092}), None])
def test_a_2gb_size_field_is_refused_at_once_never_buffered(codec: Codec, ports: frozenset[int] | None) -> None:
    first, last = request(codec, METADATA, 12, 1), request(codec, METADATA, 12, 2)
    junk = (0x7FFF_FFFF).to_bytes(4, "big") + bytes(1 << 18)
    tracemalloc.start()
    try:
        rows, tally = run(codec, [Segment(UP, 1.0, first, opened=True), Segment(UP, 2.0, junk), Segment(UP, 3.0, last)],
                          ports)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [row["correlation_id"] for row in rows] == [1, 2]
    assert tally[streams_mod.REFUSED] == 1 and tally[streams_mod.SKIPPED] == len(junk)
    assert peak < 8 * len(junk)  # the segment and a copy or two of it at most, never the 2 GB claimed
    assert 0x7FFF_FFFF > MAX_FRAME


def test_non_kafka_flows_are_counted_never_framed(codec: Codec) -> None:
    http = b"GET / HTTP/1.1\r\nHost: example.org\r\n\r\n"
    web = Flow(CLIENT, ("10.0.0.2", 80))
    rows, tally = run(codec, [Segment(web, 1.0, http, opened=True), Segment(web.reverse(), 1.1, b"HTTP/1.1 200 OK")])
    assert rows == [] and tally[streams_mod.NON_KAFKA] == 2
    rows, tally = run(codec, [Segment(web, 1.0, http, opened=True), Segment(Flow(OTHER, BROKER), 1.0, http)], None)
    assert rows == [] and tally[streams_mod.NON_KAFKA] == 2


def test_without_ports_a_flow_of_requests_is_kafka_on_any_port_and_ipv6_is_bracketed(codec: Codec) -> None:
    up = Flow(("fd00::1", 50000), ("fd00::2", 19092))
    rows, _ = run(codec, [Segment(up, 1.0, request(codec, METADATA, 12, 4)),
                          Segment(up.reverse(), 1.1, response(codec, METADATA, 12, 4))], None)
    assert seen(rows) == [("request", 3, 12, 4), ("response", 3, 12, 4)]
    assert rows[1]["connection"] == "[fd00::1]:50000 > [fd00::2]:19092"


def test_tls_connections_are_counted_once_not_framed(codec: Codec) -> None:
    hello = bytes.fromhex("160301020001") + bytes(600)
    rows, tally = run(codec, [Segment(UP, 1.0, hello, opened=True), Segment(DOWN, 1.1, bytes.fromhex("160303007a") +
                                                                            bytes(0x7A))])
    assert rows == [] and tally == Tally({streams_mod.TLS: 1})


def test_raw_sasl_tokens_after_a_sasl_handshake_v0_are_counted_not_framed(codec: Codec) -> None:
    token = b"\x00alice\x00secret"
    segments = [Segment(UP, 1.0, request(codec, SASL_HANDSHAKE, 0, 1, mechanism="PLAIN"), opened=True),
                Segment(DOWN, 1.1, response(codec, SASL_HANDSHAKE, 0, 1, mechanisms=["PLAIN"])),
                Segment(UP, 1.2, len(token).to_bytes(4, "big") + token), Segment(DOWN, 1.3, bytes(4)),
                Segment(UP, 1.4, request(codec, METADATA, 12, 2)), Segment(DOWN, 1.5, response(codec, METADATA, 12, 2))]
    rows, tally = run(codec, segments)
    assert seen(rows) == [("request", 17, 0, 1), ("response", 17, 0, 1), ("request", 3, 12, 2),
                          ("response", 3, 12, 2)]
    assert tally == Tally({streams_mod.SASL: 2})


def test_produce_with_acks_0_awaits_no_response(codec: Codec) -> None:
    produces = [request(codec, PRODUCE, 9, 1, acks=0, transactionalId="tx"), request(codec, PRODUCE, 3, 2, acks=0),
                request(codec, PRODUCE, 13, 3, acks=-1)]
    rows, tally = run(codec, [Segment(UP, 1.0, b"".join(produces), opened=True)])
    assert [row["correlation_id"] for row in rows] == [1, 2, 3]
    assert tally == Tally({streams_mod.UNANSWERED: 1})  # only the acks=-1 one


def test_an_api_versions_unsupported_version_answer_in_v0_layout_keeps_the_version_and_says_so(codec: Codec) -> None:
    answer = response(codec, API_VERSIONS, 0, 5, errorCode=35, apiKeys=[])
    rows, tally = run(codec, [Segment(UP, 1.0, request(codec, API_VERSIONS, 4, 5), opened=True),
                              Segment(DOWN, 1.1, answer)])
    assert seen(rows)[1] == ("response", 18, 4, 5)
    assert rows[1]["problem"] == streams_mod.V0_LAYOUT and rows[0]["problem"] is None
    assert not tally.line()


def test_a_response_without_its_request_is_a_row_with_a_problem(codec: Codec) -> None:
    rows, tally = run(codec, [Segment(UP, 1.0, request(codec, METADATA, 12, 1), opened=True),
                              Segment(DOWN, 1.1, response(codec, METADATA, 12, 9))])
    assert seen(rows)[1] == ("response", None, None, 9)
    assert rows[1]["problem"] == "no request with correlation id 9 on this connection"
    assert tally == Tally({streams_mod.ORPHANS: 1, streams_mod.UNANSWERED: 1})


def test_a_response_without_its_request_on_a_connection_seen_in_part_blames_the_capture(codec: Codec) -> None:
    rows, _ = run(codec, [Segment(UP, 1.0, request(codec, METADATA, 12, 1)),  # no SYN: picked up mid-connection
                          Segment(DOWN, 1.1, response(codec, METADATA, 12, 9))])
    assert seen(rows)[1] == ("response", None, None, 9)
    assert rows[1]["problem"] != streams_mod.UNMATCHED.format(9) and "in the capture" in rows[1]["problem"]


def test_outstanding_requests_are_bounded_per_connection(codec: Codec, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams_mod, "MAX_OUTSTANDING", 3)
    frames = b"".join(request(codec, METADATA, 12, number) for number in range(5))
    rows, tally = run(codec, [Segment(UP, 1.0, frames, opened=True), Segment(DOWN, 1.1, response(codec, METADATA, 12, 0))])
    assert rows[-1]["problem"] is not None
    assert tally[streams_mod.DROPPED] == 2 and tally[streams_mod.UNANSWERED] == 3


def _tiny_segments_cpu(codec: Codec, count: int) -> float:
    """CPU seconds to feed one frame of ``count`` bytes as one-byte segments, and check it comes out whole."""
    header = request(codec, METADATA, 12, 1)
    frame = (len(header) - 4 + count).to_bytes(4, "big") + header[4:] + bytes(count)
    segments = [Segment(UP, 0.0, frame[:len(header)], opened=True)]
    segments += [Segment(UP, 0.0, frame[at:at + 1]) for at in range(len(header), len(frame))]
    streams = KafkaStreams(codec, Tally())
    start = time.process_time()
    rows = [row for segment in segments for row in streams.feed(segment)]
    spent = time.process_time() - start
    assert [row["bytes"] for row in rows] == [frame]
    return spent


def _unsynced_segments_cpu(codec: Codec, count: int) -> float:
    """CPU seconds to feed ``count`` one-byte segments of noise after a gap, then a frame found again."""
    noise = random.Random(count).randbytes(count)
    frame = request(codec, METADATA, 12, 7)
    segments = [Segment(UP, 0.0, noise[at:at + 1], gap=-1 if at == 0 else 0) for at in range(count)]
    tally = Tally()
    streams = KafkaStreams(codec, tally)
    start = time.process_time()
    rows = [row for segment in [*segments, Segment(UP, 1.0, frame)] for row in streams.feed(segment)]
    spent = time.process_time() - start
    assert [row["bytes"] for row in rows][-1:] == [frame] and tally[streams_mod.SKIPPED] <= count
    return spent


@pytest.mark.parametrize("feed", [_tiny_segments_cpu, _unsynced_segments_cpu])
def test_a_million_tiny_segments_take_linear_time(codec: Codec, feed: Callable[[Codec, int], float]) -> None:
    small, large = feed(codec, 250_000), feed(codec, 1_000_000)
    assert large < 8 * max(small, 0.01)  # 4x the segments: quadratic work would be 16x


def test_controlled_shutdown_v0_has_a_header_without_client_id() -> None:
    """Kafka 4.x removed ControlledShutdown v0-1; the 2024 trunk specs still have them."""
    old = Codec.load(require_shared("kafka-specs", "trunk-2024-10", "clients", "src", "main", "resources", "common",
                                    "message"))
    frames = [request(old, 7, 0, 1, brokerId=3), request(old, 7, 1, 2, client_id="broker-3", brokerId=3)]
    assert len(frames[0]) == 16  # size, key, version, correlation id, brokerId: no client id length
    rows, tally = run(old, [Segment(UP, 1.0, b"".join(frames), opened=True),
                            Segment(DOWN, 1.1, response(old, 7, 0, 1) + response(old, 7, 1, 2))])
    assert seen(rows) == [("request", 7, 0, 1), ("request", 7, 1, 2), ("response", 7, 0, 1), ("response", 7, 1, 2)]
    assert [row["client_id"] for row in rows] == [None, "broker-3", None, "broker-3"] and not tally.line()



def test_a_listener_the_ports_do_not_name_is_found_by_its_first_bytes(codec: Codec) -> None:
    """``--port 9092`` and a second listener on 9094: the flow to 9094 is Kafka too, by its request header."""
    second = Flow(CLIENT, ("10.0.0.2", 9094))
    rows, tally = run(codec, [Segment(second, 1.0, request(codec, API_VERSIONS, 0, 5))])
    assert [(row["api_key"], row["correlation_id"], row["connection"]) for row in rows] == \
        [(API_VERSIONS, 5, "10.0.0.1:40000 > 10.0.0.2:9094")]
    assert tally["non-Kafka flows"] == 0
    rows, tally = run(codec, [Segment(Flow(CLIENT, ("10.0.0.2", 5432)), 1.0, b"\x00\x00\x00\x08SELECT 1")])
    assert rows == [] and tally["non-Kafka flows"] == 1


def test_a_response_to_a_produce_with_acks_zero_is_matched_and_told(codec: Codec) -> None:
    """Kafka sends no response to acks=0 (librdkafka's mock cluster does): it is matched to its request, not an
    orphan, and its row says why it should not be there; an unanswered acks=0 request is no unanswered request."""
    produce = request(codec, PRODUCE, 9, 7, acks=0)
    rows, tally = run(codec, [Segment(UP, 1.0, produce), Segment(DOWN, 1.1, response(codec, PRODUCE, 9, 7)),
                              Segment(UP, 1.2, request(codec, PRODUCE, 9, 8, acks=0))])
    answered = [row for row in rows if row["direction"] == "response"]
    assert [(row["api_key"], row["api_version"], row["correlation_id"]) for row in answered] == [(PRODUCE, 9, 7)]
    assert "acks=0" in answered[0]["problem"]
    assert tally["responses to Produce with acks=0"] == 1
    assert tally["responses without a request"] == tally["requests without a response"] == 0


def test_a_response_the_capture_shows_before_its_request_is_still_matched(codec: Codec) -> None:
    """A capture can show a response before its request (packets of the client's flow reordered on the way to the
    capture): it is held (at most MAX_EARLY per connection) and matched when the request comes; a response whose
    request never comes is an orphan at the end."""
    rows, tally = run(codec, [Segment(UP, 1.0, request(codec, METADATA, 12, 1)),
                              Segment(DOWN, 1.1, response(codec, METADATA, 12, 2)),
                              Segment(DOWN, 1.2, response(codec, METADATA, 12, 1)),
                              Segment(DOWN, 1.3, response(codec, METADATA, 12, 9)),
                              Segment(UP, 1.4, request(codec, METADATA, 12, 2))])
    assert [(row["direction"], row["correlation_id"], row["api_key"], row["problem"] is None) for row in rows] == [
        ("request", 1, METADATA, True), ("response", 1, METADATA, True), ("request", 2, METADATA, True),
        ("response", 2, METADATA, True), ("response", 9, None, False)]
    assert tally["responses without a request"] == 1
