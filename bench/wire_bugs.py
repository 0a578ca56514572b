"""Public wire-encoding bugs of Kafka clients and brokers, rebuilt as byte fixtures for ``krpc-lint frames check``.

Each bug below names its source issue or pull request and its URL. Every frame is built with the project's codec
(``linter.codec.Codec``) from Kafka's own specs, so the valid part of each frame is exactly what Kafka's generated
classes write; then the bug's mutation is applied to those bytes (one documented replacement, checked to match exactly
once) and the int32 size prefix is recomputed, unless the bug is about the prefix. Before anything is written, every
frame is decoded again with the codec and its verdict is compared with the one recorded for it (a clean decode, or the
codec's own error), so a fixture cannot silently drift away from the bug it reproduces.

Output, one corpus per bug in ``DIR`` (default ``fixtures/wire-bugs``):

* ``<bug>.jsonl``: JSON Lines, one frame a line: ``api_key``, ``api_version``, ``direction`` ("request" or "response"),
  ``correlation_id``, ``hex`` (the whole frame: int32 size, header, body). A response line carries its request's
  API key and version, and every response follows its request in the same file.
* ``manifest.json``: for each corpus its source, URL, spec directory (relative to ``../shared/kafka-specs``), a
  one-sentence summary and the findings ``krpc-lint frames check`` must report (``expect``: frame, rule, severity,
  field), plus a ``note`` where the fixture goes beyond what the issue itself shows.

``fixtures/wire-bugs/README.md`` is written by hand; it explains each bug in a table.

Usage: python bench/wire_bugs.py [DIR] [--check] [--shared PATH]

``--check`` builds everything in memory and exits 1 when a file in DIR differs from it (or is missing, or a corpus
there is not built here). The specs come from ``$KRPC_LINT_SHARED/kafka-specs`` or ``../shared/kafka-specs``
(``--shared`` overrides); without them the script exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: the codec lives in this checkout
    sys.path.insert(0, str(ROOT))

from linter.codec import UNKNOWN_TAGS, Codec, DecodeError
from linter.codec.wire import uvarint_bytes as uvarint

DEFAULT_OUT = ROOT / "fixtures" / "wire-bugs"
SPECS = "trunk-2024-10"  # every fixture's specs, relative to ../shared/kafka-specs
TOPIC_ID = uuid.UUID("5f1c7d52-3a0e-4c1b-9b7e-2d4a6e8f0a11")  # an arbitrary topic id for the Fetch fixtures


# --- frames ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One line of a corpus; ``data`` is the whole frame, size prefix included."""

    api_key: int
    api_version: int
    direction: str
    correlation_id: int
    data: bytes

    def line(self) -> dict[str, Any]:
        return {"api_key": self.api_key, "api_version": self.api_version, "direction": self.direction,
                "correlation_id": self.correlation_id, "hex": self.data.hex()}


Mutation = Callable[[bytes], bytes]


def framed(payload: bytes) -> bytes:
    """An int32 size prefix (the payload's length) and the payload."""
    return len(payload).to_bytes(4, "big", signed=True) + payload


def swap(old: bytes, new: bytes) -> Mutation:
    """A mutation replacing ``old`` by ``new``; ``old`` must occur exactly once, so the bug lands where it is meant to."""
    def mutate(data: bytes) -> bytes:
        count = data.count(old)
        if count != 1:
            raise AssertionError(f"mutation target {old.hex()} occurs {count} times in {data.hex()}")
        return data.replace(old, new)
    return mutate


def at_end(old: bytes, new: bytes) -> Mutation:
    """A mutation replacing the bytes ``old`` that end the data (a message's last fields) by ``new``."""
    def mutate(data: bytes) -> bytes:
        if not data.endswith(old):
            raise AssertionError(f"{data.hex()} does not end with {old.hex()}")
        return data[:len(data) - len(old)] + new
    return mutate


def compact_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return uvarint(len(raw) + 1) + raw


class Wire:
    """Builds request and response frames with the codec, header and body apart, so a mutation can target either."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec

    def request(self, name: str, version: int, correlation_id: int, body: dict[str, Any], client_id: str | None,
                mutate: Mutation | None = None, mutate_header: Mutation | None = None) -> Frame:
        api_key = self.codec.spec(name).api_key
        if api_key is None:
            raise ValueError(f"{name} has no apiKey")
        header_version = self.codec.request_header_version(api_key, version)
        header = self.codec.encode("RequestHeader", header_version, {
            "requestApiKey": api_key, "requestApiVersion": version, "correlationId": correlation_id,
            **({"clientId": client_id} if header_version >= 1 else {})})
        encoded = self.codec.encode(name, version, body)
        if mutate_header is not None:
            header = mutate_header(header)
        if mutate is not None:
            encoded = mutate(encoded)
        return Frame(api_key, version, "request", correlation_id, framed(header + encoded))

    def response(self, request: Frame, body: dict[str, Any], mutate: Mutation | None = None) -> Frame:
        """The response to ``request`` (same correlation id, its API key and version)."""
        name = self.codec.response_for(request.api_key).name
        if name is None:
            raise ValueError(f"no response spec for apiKey {request.api_key}")
        header_version = self.codec.response_header_version(request.api_key, request.api_version)
        header = self.codec.encode("ResponseHeader", header_version, {"correlationId": request.correlation_id})
        encoded = self.codec.encode(name, request.api_version, body)
        if mutate is not None:
            encoded = mutate(encoded)
        return Frame(request.api_key, request.api_version, "response", request.correlation_id,
                     framed(header + encoded))


# --- what the codec must say about each frame -------------------------------------------------------------------------


def decodes(check: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None, why: str = "") -> Verdict:
    """The frame decodes; ``check(header, body)`` (if given) must hold, e.g. that a field read back as its default."""
    return Verdict(None, check, why)


def refused(reason: str) -> Verdict:
    """The codec refuses the frame with a ``DecodeError`` whose text holds ``reason``."""
    return Verdict(reason, None, "")


@dataclass(frozen=True)
class Verdict:
    error: str | None
    check: Callable[[dict[str, Any], dict[str, Any]], bool] | None
    why: str

    def verify(self, codec: Codec, frame: Frame, where: str) -> None:
        try:
            if frame.direction == "request":
                _, _, header, body = codec.decode_request(frame.data)
            else:
                header, body = codec.decode_response(frame.api_key, frame.api_version, frame.data)
        except DecodeError as exc:
            if self.error is None:
                raise AssertionError(f"{where}: the codec refuses a frame meant to decode: {exc}") from None
            if self.error not in str(exc):
                raise AssertionError(f"{where}: the codec says {str(exc)!r}, expected {self.error!r}") from None
            return
        if self.error is not None:
            raise AssertionError(f"{where}: the codec decodes a frame it should refuse ({self.error!r})")
        if self.check is not None and not self.check(header, body):
            raise AssertionError(f"{where}: decoded, but {self.why}")


# --- the bugs ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    frame: int
    rule: str
    severity: str
    field: str | None = None

    def entry(self) -> dict[str, Any]:
        out: dict[str, Any] = {"frame": self.frame, "rule": self.rule, "severity": self.severity}
        if self.field is not None:
            out["field"] = self.field
        return out


@dataclass(frozen=True)
class Bug:
    file: str
    source: str
    url: str
    summary: str
    build: Callable[[Wire], list[tuple[Frame, Verdict]]]
    expect: list[Expect]
    note: str | None = None
    specs: str = SPECS

    def manifest_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"file": self.file, "source": self.source, "url": self.url, "specs": self.specs,
                                 "summary": self.summary, "expect": [e.entry() for e in self.expect]}
        if self.note is not None:
            entry["note"] = self.note
        return entry


def fetch_body(version: int, partition: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    """A consumer's FetchRequest at ``version`` (12+) for partition 0 of one topic."""
    part = {"partition": 0, "currentLeaderEpoch": 3, "fetchOffset": 100, "lastFetchedEpoch": -1, "logStartOffset": -1,
            "partitionMaxBytes": 1048576, **(partition or {})}
    topic = {"topic": "orders"} if version <= 12 else {"topicId": TOPIC_ID}
    body = {"maxWaitMs": 500, "minBytes": 1, "maxBytes": 52428800, "isolationLevel": 1, "sessionId": 0,
            "sessionEpoch": -1, "topics": [{**topic, "partitions": [part]}], "forgottenTopicsData": [], "rackId": "",
            "clusterId": None, **top}
    if version <= 14:
        body["replicaId"] = -1
    return body


# twmb/franz-go#961 (https://github.com/twmb/franz-go/issues/961), fixed by #962: kmsg v1.11.0 always wrote
# FetchPartition's tagged ReplicaDirectoryId (tag 0, a uuid; only brokers set it), the zero uuid included, at every
# flexible Fetch version; a broker answered "Tag 0 is not valid for version 16" (InvalidRequestException).
def franz_go_961(wire: Wire) -> list[tuple[Frame, Verdict]]:
    plain = struct.pack(">iiqiqi", 0, 3, 100, -1, -1, 1048576) + b"\x00"  # the partition, its empty tag section
    zero_uuid_tag = struct.pack(">iiqiqi", 0, 3, 100, -1, -1, 1048576) + b"\x01" + b"\x00" + uvarint(16) + bytes(16)
    mutate = swap(plain, zero_uuid_tag)

    def zero_uuid(header: dict[str, Any], body: dict[str, Any]) -> bool:
        return bool(body["topics"][0]["partitions"][0]["replicaDirectoryId"] == uuid.UUID(int=0))

    def kept_unknown(header: dict[str, Any], body: dict[str, Any]) -> bool:
        return bool(body["topics"][0]["partitions"][0].get(UNKNOWN_TAGS) == [(0, bytes(16))])

    return [
        (wire.request("FetchRequest", 16, 1, fetch_body(16), "kgo", mutate),  # tag 0 is not a field at v16
         decodes(kept_unknown, "the codec should keep tag 0 of FetchPartition v16 as an unknown tag")),
        (wire.request("FetchRequest", 17, 2, fetch_body(17), "kgo", mutate),
         decodes(zero_uuid, "ReplicaDirectoryId should read back as the zero uuid, its default")),
    ]


# IBM/sarama#3638 (https://github.com/IBM/sarama/pull/3638): sarama's FetchResponse v12+ encoder (used by its mock
# broker) wrote the tagged structs DivergingEpoch and CurrentLeader without the struct's own trailing tagged-field
# section, and sized the tag by the bytes it wrote: one byte short. Kafka's reader reads the struct in full.
def sarama_3638(wire: Wire) -> list[tuple[Frame, Verdict]]:
    def partition(**tagged: Any) -> dict[str, Any]:
        return {"partitionIndex": 0, "errorCode": 0, "highWatermark": 120, "lastStableOffset": 120,
                "logStartOffset": 0, "abortedTransactions": [], "preferredReadReplica": -1, "records": b"", **tagged}

    def response(part: dict[str, Any]) -> dict[str, Any]:
        return {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0,
                "responses": [{"topic": "orders", "partitions": [part]}]}

    diverging = struct.pack(">iq", 4, 110)
    leader = struct.pack(">ii", 2, 7)
    first = wire.request("FetchRequest", 12, 10, fetch_body(12), "sarama")
    second = wire.request("FetchRequest", 12, 11, fetch_body(12), "sarama")
    return [
        (first, decodes()),
        (wire.response(first, response(partition(divergingEpoch={"epoch": 4, "endOffset": 110})),
                       swap(b"\x01\x00" + uvarint(13) + diverging + b"\x00", b"\x01\x00" + uvarint(12) + diverging)),
         refused("has 12 bytes but its value used 13")),
        (second, decodes()),
        (wire.response(second, response(partition(currentLeader={"leaderId": 2, "leaderEpoch": 7})),
                       swap(b"\x01\x01" + uvarint(9) + leader + b"\x00", b"\x01\x01" + uvarint(8) + leader)),
         refused("has 8 bytes but its value used 9")),
    ]


# IBM/sarama#2107 (https://github.com/IBM/sarama/pull/2107): sarama's decoder failed with "non-empty tagged fields are
# not supported yet" on ApiVersionsResponse v3 from Kafka 2.7.0+, which fills its tagged fields (SupportedFeatures,
# KAFKA-10028). The bytes are Kafka's and valid: nothing is mutated, and krpc-lint must accept them.
def sarama_2107(wire: Wire) -> list[tuple[Frame, Verdict]]:
    request = wire.request("ApiVersionsRequest", 3, 1, {"clientSoftwareName": "sarama",
                                                        "clientSoftwareVersion": "1.31.0"}, "sarama")
    keys = [(0, 0, 9), (1, 0, 13), (3, 0, 12), (18, 0, 3)]
    body = {"errorCode": 0, "throttleTimeMs": 0,
            "apiKeys": [{"apiKey": k, "minVersion": lo, "maxVersion": hi} for k, lo, hi in keys],
            "supportedFeatures": [{"name": "metadata.version", "minVersion": 1, "maxVersion": 20}],
            "finalizedFeaturesEpoch": 42,
            "finalizedFeatures": [{"name": "metadata.version", "maxVersionLevel": 20, "minVersionLevel": 20}],
            "zkMigrationReady": False}

    def tagged(header: dict[str, Any], body: dict[str, Any]) -> bool:
        return bool(body["finalizedFeaturesEpoch"] == 42 and len(body["supportedFeatures"]) == 1)

    return [(request, decodes()),
            (wire.response(request, body), decodes(tagged, "the three tagged fields should read back"))]


# confluentinc/librdkafka#4207 (https://github.com/confluentinc/librdkafka/pull/4207): rd_kafka_ListGroupsRequest wrote
# the request's tagged-field section itself at v3+, and the common request finalizer wrote it again: one extra 0x00.
def librdkafka_4207(wire: Wire) -> list[tuple[Frame, Verdict]]:
    extra = at_end(b"\x00", b"\x00\x00")
    return [
        (wire.request("ListGroupsRequest", 3, 1, {}, "rdkafka", extra), refused("1 trailing bytes")),
        (wire.request("ListGroupsRequest", 4, 2, {"statesFilter": []}, "rdkafka", extra),
         refused("1 trailing bytes")),
    ]


# redpanda-data/redpanda#5451 (https://github.com/redpanda-data/redpanda/pull/5451): redpanda's protocol generator
# made every field with a nullableVersions nullable at all its versions, so it could write (and read) null where
# Kafka's schema forbids it. The PR's two examples: DeleteTopicsResponse Name ("versions": "0+",
# "nullableVersions": "6+") and OffsetFetchRequest Topics ("versions": "0-7", "nullableVersions": "2-7").
def redpanda_5451(wire: Wire) -> list[tuple[Frame, Verdict]]:
    delete = wire.request("DeleteTopicsRequest", 5, 1, {"topicNames": ["orders"], "timeoutMs": 30000}, "rdkafka")
    deleted = {"throttleTimeMs": 0, "responses": [{"name": "orders", "errorCode": 0, "errorMessage": None}]}
    offsets = {"groupId": "pandaproxy", "topics": []}
    return [
        (delete, decodes()),
        (wire.response(delete, deleted, swap(compact_string("orders"), b"\x00")),  # compact null: length 0
         refused("Responses[0].Name: null string where the field is not nullable")),
        (wire.request("OffsetFetchRequest", 1, 2, offsets, "pandaproxy",
                      at_end(b"\x00\x00\x00\x00", b"\xff\xff\xff\xff")),  # int32 count -1: null
         refused("at Topics: null")),
    ]


# redpanda-data/redpanda#11443 (https://github.com/redpanda-data/redpanda/pull/11443), fixing #11358: redpanda encoded a
# primitive tagged field without an explicit default even when it held 0, its implicit default. #11358 was a 4-byte
# mismatch against franz-go's bytes (tag, size, int16): CreateTopicsResponse's TopicConfigErrorCode is the int16 tagged
# field without a default that redpanda answers (the backport #11647 touched the test's CreateTopics response).
def redpanda_11443(wire: Wire) -> list[tuple[Frame, Verdict]]:
    request = wire.request("CreateTopicsRequest", 5, 1, {
        "topics": [{"name": "orders", "numPartitions": 3, "replicationFactor": 1, "assignments": [], "configs": []}],
        "timeoutMs": 30000, "validateOnly": False}, "franz-go")
    config = {"name": "cleanup.policy", "value": "delete", "readOnly": False, "configSource": 5, "isSensitive": False}
    body = {"throttleTimeMs": 0, "topics": [{"name": "orders", "errorCode": 0, "errorMessage": None,
                                             "topicConfigErrorCode": 0, "numPartitions": 3, "replicationFactor": 1,
                                             "configs": [config]}]}
    # the body ends: config's tag section, the topic's (empty), the response's (empty)
    mutate = at_end(b"\x00\x00\x00", b"\x00" + b"\x01\x00\x02\x00\x00" + b"\x00")

    def zero(header: dict[str, Any], body: dict[str, Any]) -> bool:
        return bool(body["topics"][0]["topicConfigErrorCode"] == 0)

    return [(request, decodes()),
            (wire.response(request, body, mutate), decodes(zero, "TopicConfigErrorCode should read back as 0"))]


# influxdata/rskafka#155 (https://github.com/influxdata/rskafka/pull/155): rskafka wrote arrays of primitives with the
# classic int32 count even in flexible versions; the one such field it sent was CreateTopicsRequest v5's
# Topics[].Assignments[].BrokerIds ([]int32), which must be a compact array (count + 1 as an unsigned varint).
def rskafka_155(wire: Wire) -> list[tuple[Frame, Verdict]]:
    body = {"topics": [{"name": "orders", "numPartitions": -1, "replicationFactor": -1,
                        "assignments": [{"partitionIndex": 0, "brokerIds": [1, 2, 3]}], "configs": []}],
            "timeoutMs": 5000, "validateOnly": False}
    ids = struct.pack(">iii", 1, 2, 3)
    return [(wire.request("CreateTopicsRequest", 5, 1, body, "rskafka",
                          swap(uvarint(4) + ids, struct.pack(">i", 3) + ids)),
             refused("Topics[0].Assignments[0].BrokerIds: null"))]


# aio-libs/aiokafka#1139 (https://github.com/aio-libs/aiokafka/pull/1139), review comment: the new encoder wrote a
# struct's tagged fields in the order its schema declared them (dict order), not in ascending tag order as KIP-482
# requires. Kafka's own specs declare every struct's tags in ascending order, so the fixture takes the one request
# with two tags, FetchRequest (ClusterId tag 0, ReplicaState tag 1), as a schema declaring them the other way writes it.
def aiokafka_1139(wire: Wire) -> list[tuple[Frame, Verdict]]:
    cluster = compact_string("kafka-cluster")
    state = struct.pack(">iq", 1, 5) + b"\x00"
    in_order = b"\x02" + b"\x00" + uvarint(len(cluster)) + cluster + b"\x01" + uvarint(len(state)) + state
    reversed_ = b"\x02" + b"\x01" + uvarint(len(state)) + state + b"\x00" + uvarint(len(cluster)) + cluster
    body = fetch_body(15, clusterId="kafka-cluster", replicaState={"replicaId": 1, "replicaEpoch": 5})
    return [(wire.request("FetchRequest", 15, 1, body, "aiokafka", at_end(in_order, reversed_)),
             refused("tags must be ascending"))]  # the codec is stricter than Kafka, which reads them in any order


# dpkp/kafka-python#2725 (https://github.com/dpkp/kafka-python/pull/2725): TaggedFields.encode wrote each tagged field
# as its tag then its value, without the value's size (kafka/protocol/types.py before the fix). The tags it allowed
# were > 0; the only such tag in Kafka's requests is FetchRequest's ReplicaState (tag 1, v15+).
def kafka_python_2725(wire: Wire) -> list[tuple[Frame, Verdict]]:
    state = struct.pack(">iq", 1, 5) + b"\x00"
    body = fetch_body(15, replicaState={"replicaId": 1, "replicaEpoch": 5})
    return [(wire.request("FetchRequest", 15, 1, body, "kafka-python",
                          at_end(b"\x01\x01" + uvarint(len(state)) + state, b"\x01\x01" + state)),
             # the codec reads on past the declared size and stops at the frame's end, as Kafka's reader does
             refused("ReplicaState: tagged field count: expected a varint, found the end of the input"))]


# kafka-protocol-rs/kafka-protocol-rs#4 (https://github.com/kafka-protocol-rs/kafka-protocol-rs/issues/4; the crate was
# tychedelia/kafka-protocol-rs): the generator's version intersection left RequestHeader v2's tagged-field section out
# of the generated code, so the crate read header v2 as v1 and choked on Kafka's own ApiVersionsRequest v3 (the
# issue's 49 bytes, from kafka-topics.sh 2.8.0: frame 0, valid). Encoding came from the same condition, so the crate
# wrote header v2 without its tagged-field byte, that is header v1 where v2 is needed: frame 1.
ISSUE_4_BYTES = bytes([
    0x00, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x65, 0x00, 0x0d, 0x61, 0x64, 0x6d, 0x69, 0x6e, 0x63, 0x6c, 0x69, 0x65,
    0x6e, 0x74, 0x2d, 0x31, 0x00, 0x12, 0x61, 0x70, 0x61, 0x63, 0x68, 0x65, 0x2d, 0x6b, 0x61, 0x66, 0x6b, 0x61, 0x2d,
    0x6a, 0x61, 0x76, 0x61, 0x06, 0x32, 0x2e, 0x38, 0x2e, 0x30, 0x00])


def kafka_protocol_rs_4(wire: Wire) -> list[tuple[Frame, Verdict]]:
    body = {"clientSoftwareName": "apache-kafka-java", "clientSoftwareVersion": "2.8.0"}
    valid = wire.request("ApiVersionsRequest", 3, 101, body, "adminclient-1")
    if valid.data != framed(ISSUE_4_BYTES):
        raise AssertionError(f"the codec's ApiVersionsRequest v3 is not the issue's bytes: {valid.data.hex()}")
    return [(valid, decodes()),
            (wire.request("ApiVersionsRequest", 3, 102, body, "adminclient-1",
                          mutate_header=at_end(b"\x00", b"")),  # header v2 without its tagged-field section
             refused("tagged field 97: needs 112 bytes, only 22 left"))]


BUGS = [
    Bug("franz-go-961.jsonl", "twmb/franz-go#961", "https://github.com/twmb/franz-go/issues/961",
        "kmsg v1.11.0 wrote FetchPartition's tagged ReplicaDirectoryId (tag 0) even as the zero uuid, its default, "
        "which Kafka's writer leaves out, and at Fetch v16 too, where Kafka's reader refuses tag 0.",
        franz_go_961,
        [Expect(0, "KL2011", "error", "body.Topics[0].Partitions[0]"),
         Expect(1, "KL2021", "warning", "body.Topics[0].Partitions[0].ReplicaDirectoryId")],
        note="Frame 0 is the reported request (Fetch v16): Kafka's generated FetchPartition.read throws 'Tag 0 is not "
             "valid for version 16' because tag 0 is a known tag whose taggedVersions (17+) exclude v16 (KL2011, "
             "hence the brokers' InvalidRequest). Frame 1 is the same bytes at v17, where Kafka accepts them: the "
             "field present with its default, which Kafka's writer omits (KL2021)."),
    Bug("sarama-3638.jsonl", "IBM/sarama#3638", "https://github.com/IBM/sarama/pull/3638",
        "sarama's FetchResponse v12 encoder wrote the tagged structs DivergingEpoch and CurrentLeader without their "
        "own empty tagged-field section, with a size one byte short of what Kafka's reader consumes.",
        sarama_3638,
        [Expect(1, "KL2004", "error", "body.Responses[0].Partitions[0].DivergingEpoch"),
         Expect(3, "KL2004", "error", "body.Responses[0].Partitions[0].CurrentLeader")]),
    Bug("sarama-2107.jsonl", "IBM/sarama#2107", "https://github.com/IBM/sarama/pull/2107",
        "sarama's decoder refused ApiVersionsResponse v3 whose tagged fields (SupportedFeatures, ...) were not empty; "
        "the bytes are Kafka's and valid, so krpc-lint must report nothing.",
        sarama_2107, [],
        note="A decoder bug: the frames are valid. The response carries SupportedFeatures, FinalizedFeaturesEpoch and "
             "FinalizedFeatures as a KRaft broker fills them (metadata.version); header v0 per KIP-511."),
    Bug("librdkafka-4207.jsonl", "confluentinc/librdkafka#4207", "https://github.com/confluentinc/librdkafka/pull/4207",
        "librdkafka wrote ListGroupsRequest's tagged-field section twice at v3+, leaving one extra byte after the "
        "body.",
        librdkafka_4207,
        [Expect(0, "KL2001", "error"), Expect(1, "KL2001", "error")]),
    Bug("redpanda-5451.jsonl", "redpanda-data/redpanda#5451", "https://github.com/redpanda-data/redpanda/pull/5451",
        "redpanda's generator ignored nullableVersions' range and treated such fields as nullable at every version, "
        "so it could write null where Kafka's schema does not allow it.",
        redpanda_5451,
        [Expect(1, "KL2008", "error", "body.Responses[0].Name"), Expect(2, "KL2008", "error", "body.Topics")],
        note="Built from the PR's description (it reports no observed failure): frame 1 is DeleteTopicsResponse v5 "
             "from redpanda with a null Name (nullable only from v6), frame 2 an OffsetFetchRequest v1 with null "
             "Topics (nullable only from v2) as a client built on redpanda's generated code writes it."),
    Bug("redpanda-11443.jsonl", "redpanda-data/redpanda#11443", "https://github.com/redpanda-data/redpanda/pull/11443",
        "redpanda encoded primitive tagged fields without an explicit default even when they held 0, their implicit "
        "default, which Kafka's writer omits.",
        redpanda_11443,
        [Expect(1, "KL2021", "warning", "body.Topics[0].TopicConfigErrorCode")],
        note="The message is inferred: #11358 reports a 4-byte difference (tag, size, int16 value), and "
             "CreateTopicsResponse's TopicConfigErrorCode is the int16 tagged field without a default that redpanda "
             "answers; the v22.3.x backport (#11647) changed the test's CreateTopics response."),
    Bug("rskafka-155.jsonl", "influxdata/rskafka#155", "https://github.com/influxdata/rskafka/pull/155",
        "rskafka wrote CreateTopicsRequest v5's BrokerIds ([]int32) with an int32 count instead of a compact array's "
        "unsigned varint in that flexible version.",
        rskafka_155,
        [Expect(0, "KL2008", "error", "body.Topics[0].Assignments[0].BrokerIds")],
        note="Kafka reads the int32 count's first byte 0x00 as the compact length 0, that is null, and BrokerIds is "
             "not nullable: 'non-nullable field brokerIds was serialized as null'. rskafka only wrote BrokerIds for a "
             "manual assignment, which is why the broker 'didn't seem to care'; the fixture has one."),
    Bug("aiokafka-1139.jsonl", "aio-libs/aiokafka#1139", "https://github.com/aio-libs/aiokafka/pull/1139",
        "aiokafka's new tagged-field encoder wrote tags in schema declaration order instead of ascending tag order.",
        aiokafka_1139,
        [Expect(0, "KL2022", "warning", "body")],
        note="From a review comment on the PR (a latent bug). Kafka's reader accepts tags in any order, so only the "
             "warning fires. The message is ours: FetchRequest v15 with ClusterId (tag 0) and ReplicaState (tag 1) "
             "written as 1 then 0."),
    Bug("kafka-python-2725.jsonl", "dpkp/kafka-python#2725", "https://github.com/dpkp/kafka-python/pull/2725",
        "kafka-python's TaggedFields encoder wrote each tagged field as its tag and value without the value's size.",
        kafka_python_2725,
        [Expect(0, "KL2004", "error", "body.ReplicaState")],
        note="The message is ours (FetchRequest v15: ReplicaState is the only tag > 0 of Kafka's requests, and "
             "kafka-python allowed only tags > 0). Kafka reads the value's first byte (0x00) as its size, then reads "
             "the known ReplicaState struct (13 bytes) from the stream regardless: the value passes its declared size "
             "(0 bytes) at its first byte, 12 bytes before it passes the frame's end (where Kafka's read fails), so "
             "KL2004 comes first, not KL2002."),
    Bug("kafka-protocol-rs-4.jsonl", "kafka-protocol-rs/kafka-protocol-rs#4",
        "https://github.com/kafka-protocol-rs/kafka-protocol-rs/issues/4",
        "kafka-protocol-rs generated RequestHeader v2 without its tagged-field section, so it read Kafka's "
        "ApiVersionsRequest v3 as if its header were v1 and wrote header v1 where v2 is needed.",
        kafka_protocol_rs_4,
        [Expect(1, "KL2005", "error", "header")],
        note="Frame 0 is the issue's own bytes (Kafka's Java AdminClient 2.8.0) and valid: the bug was the crate's "
             "decoder, so nothing may be reported. Frame 1 is the same request as the crate's encoder wrote it "
             "(inferred: the generator emits encode and decode from one version condition): read as header v2, "
             "Kafka takes the body's first byte as the header's tag count."),
]


# --- building, writing, checking ----------------------------------------------------------------------------------------


def specs_root(shared: str | None) -> Path:
    if shared is not None:
        return Path(shared) / "kafka-specs"
    override = os.environ.get("KRPC_LINT_SHARED")
    return (Path(override) if override else ROOT.parent / "shared") / "kafka-specs"


def build(root: Path) -> dict[str, str]:
    """Every file this script owns in the output directory: name -> text. Verifies each frame with the codec."""
    codecs: dict[str, Codec] = {}
    files: dict[str, str] = {}
    for bug in BUGS:
        if bug.specs not in codecs:
            codecs[bug.specs] = Codec.load(root / bug.specs)
        codec = codecs[bug.specs]
        built = bug.build(Wire(codec))
        for index, (frame, verdict) in enumerate(built):
            verdict.verify(codec, frame, f"{bug.file} frame {index}")
        frames = [frame for frame, _ in built]
        _check_pairing(bug, frames)
        for expect in bug.expect:
            if not 0 <= expect.frame < len(frames):
                raise AssertionError(f"{bug.file}: expected finding on frame {expect.frame}, of {len(frames)}")
        files[bug.file] = "".join(json.dumps(frame.line()) + "\n" for frame in frames)
    files["manifest.json"] = json.dumps([bug.manifest_entry() for bug in BUGS], indent=2) + "\n"
    return files


def _check_pairing(bug: Bug, frames: list[Frame]) -> None:
    """Every response follows a request of the same correlation id, API key and version (no KL2006 by accident)."""
    outstanding: dict[int, tuple[int, int]] = {}
    for index, frame in enumerate(frames):
        if frame.direction == "request":
            if frame.correlation_id in outstanding:
                raise AssertionError(f"{bug.file} frame {index}: correlation id {frame.correlation_id} reused")
            outstanding[frame.correlation_id] = (frame.api_key, frame.api_version)
        elif outstanding.pop(frame.correlation_id, None) != (frame.api_key, frame.api_version):
            raise AssertionError(f"{bug.file} frame {index}: a response without its request before it")


def check(out: Path, files: dict[str, str]) -> list[str]:
    """What differs between ``out`` and the built files (missing, different, or a corpus not built here)."""
    problems = []
    for name, text in files.items():
        path = out / name
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif path.read_bytes() != text.encode("utf-8"):
            problems.append(f"{path}: differs from what bench/wire_bugs.py builds")
    problems += [f"{path}: not built by bench/wire_bugs.py" for path in sorted(out.glob("*.jsonl"))
                 if path.name not in files]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--check", action="store_true", help="verify the files in OUT instead of writing them")
    parser.add_argument("--shared", help="the shared directory holding kafka-specs (default: ../shared)")
    args = parser.parse_args(argv)
    root = specs_root(args.shared)
    if not root.is_dir():
        print(f"wire_bugs: {root} not found (set KRPC_LINT_SHARED or pass --shared)", file=sys.stderr)
        return 2
    files = build(root)
    if args.check:
        problems = check(args.out, files)
        for problem in problems:
            print(problem, file=sys.stderr)
        if not problems:
            print(f"{args.out}: {len(files)} files as built")
        return 1 if problems else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
