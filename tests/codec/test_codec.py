"""Codec behaviour on small specs of our own: errors with offsets and paths, versions, tags, headers."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from linter.codec import UNKNOWN_TAGS, Codec, DecodeError, EncodeError, SpecError

SPEC = {
    "name": "ClusterStateResponse", "type": "response", "apiKey": 1100, "validVersions": "0-3",
    "flexibleVersions": "2+",
    "fields": [
        {"name": "ThrottleTimeMs", "type": "int32", "versions": "0+", "about": "."},
        {"name": "ClusterId", "type": "string", "versions": "1+", "nullableVersions": "1+", "ignorable": True,
         "default": "null", "about": "."},
        {"name": "Epoch", "type": "int64", "versions": "3+", "default": "-1", "about": "."},
        {"name": "Topics", "type": "[]Topic", "versions": "0+", "about": ".", "fields": [
            {"name": "Name", "type": "string", "versions": "0+", "about": "."},
            {"name": "TopicId", "type": "uuid", "versions": "0+", "about": "."},
            {"name": "Partitions", "type": "[]Partition", "versions": "0+", "about": ".", "fields": [
                {"name": "Index", "type": "int32", "versions": "0+", "about": "."},
                {"name": "Leader", "type": "int32", "versions": "0+", "about": "."},
            ]},
        ]},
        {"name": "Note", "type": "string", "versions": "2+", "tag": 0, "taggedVersions": "2+", "default": "",
         "about": "."},
        {"name": "Cursor", "type": "Cursor", "versions": "3+", "about": ".", "fields": [
            {"name": "Epoch", "type": "int32", "versions": "3+", "default": "-1", "about": "."},
            {"name": "Id", "type": "uuid", "versions": "3+", "about": "."},
            {"name": "Ratio", "type": "float64", "versions": "3+", "about": "."}]},
    ],
}
REQUEST = {
    "name": "ClusterStateRequest", "type": "request", "apiKey": 1100, "validVersions": "0-3",
    "flexibleVersions": "2+", "fields": [{"name": "IncludeTopics", "type": "bool", "versions": "0+", "about": "."}],
}
HEADERS = [
    {"name": "RequestHeader", "type": "header", "validVersions": "0-2", "flexibleVersions": "2+", "fields": [
        {"name": "RequestApiKey", "type": "int16", "versions": "0+", "about": "."},
        {"name": "RequestApiVersion", "type": "int16", "versions": "0+", "about": "."},
        {"name": "CorrelationId", "type": "int32", "versions": "0+", "about": "."},
        {"name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "ignorable": True,
         "flexibleVersions": "none", "about": "."}]},
    {"name": "ResponseHeader", "type": "header", "validVersions": "0-1", "flexibleVersions": "1+", "fields": [
        {"name": "CorrelationId", "type": "int32", "versions": "0+", "about": "."}]},
]


@pytest.fixture(scope="module")
def codec(tmp_path_factory):
    directory = tmp_path_factory.mktemp("specs")
    for spec in (SPEC, REQUEST, *HEADERS):
        (directory / f"{spec['name']}.json").write_text(json.dumps(spec))
    return Codec.load(directory)


def topics(count: int = 4, partitions: int = 2) -> list[dict]:
    return [{"name": f"t{i}", "topicId": uuid.UUID(int=i),
             "partitions": [{"index": p, "leader": p + 100} for p in range(partitions)]} for i in range(count)]


def value(version: int, **more) -> dict:
    out = {"throttleTimeMs": 5, "topics": topics()}
    if version >= 1:
        out["clusterId"] = "c1"
    if version >= 3:
        out["epoch"] = 7
        out["cursor"] = {"epoch": -1, "id": uuid.UUID(int=0), "ratio": 0.0}
    if version >= 2:
        out["note"] = ""
    out.update(more)
    return out


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_round_trip_every_version(codec, version):
    original = value(version, note="hello") if version >= 2 else value(version)
    data = codec.encode("ClusterStateResponse", version, original)
    assert codec.decode("ClusterStateResponse", version, data) == original


def test_encode_errors_name_the_field_path(codec):
    bad = value(3)
    bad["topics"][3]["partitions"][0]["leader"] = 2**31
    with pytest.raises(EncodeError) as raised:
        codec.encode("ClusterStateResponse", 3, bad)
    assert raised.value.path == "Topics[3].Partitions[0].Leader"
    assert "int32 range" in str(raised.value)
    wrong_type = value(3, throttleTimeMs=True)
    with pytest.raises(EncodeError, match="expected an integer") as raised:
        codec.encode("ClusterStateResponse", 3, wrong_type)
    assert raised.value.path == "ThrottleTimeMs"
    missing = value(3)
    del missing["topics"][1]["name"]
    with pytest.raises(EncodeError, match="missing required value") as raised:
        codec.encode("ClusterStateResponse", 3, missing)
    assert raised.value.path == "Topics[1].Name"


def test_decode_errors_carry_offset_and_path(codec):
    data = codec.encode("ClusterStateResponse", 3, value(3))
    with pytest.raises(DecodeError) as raised:
        codec.decode("ClusterStateResponse", 3, data[:-36])
    assert raised.value.path.startswith("Topics[3].Partitions")
    assert 0 < raised.value.offset <= len(data) - 36
    with pytest.raises(DecodeError, match="trailing bytes") as raised:
        codec.decode("ClusterStateResponse", 3, data + b"\x00")
    assert raised.value.offset == len(data)


def test_declared_lengths_are_not_trusted(codec):
    # v0: int32 throttle, then int32 array count 0x7fffffff with no bytes behind it
    with pytest.raises(DecodeError, match="array of 2147483647 elements") as raised:
        codec.decode("ClusterStateResponse", 0, bytes.fromhex("00000000" "7fffffff"))
    assert raised.value.offset == 4 and raised.value.path == "Topics"
    with pytest.raises(DecodeError, match="negative length"):
        codec.decode("ClusterStateResponse", 0, bytes.fromhex("00000000" "00000001" "fffe"))


def test_varints_longer_than_five_bytes_are_refused(codec):
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        codec.decode("ClusterStateResponse", 2, bytes.fromhex("00000000" "ffffffffff01"))


def test_down_conversion_checks_fields_missing_from_the_version(codec):
    v3 = value(3)
    with pytest.raises(EncodeError, match="does not exist in version 1") as raised:
        codec.encode("ClusterStateResponse", 1, {**value(1), "epoch": 7})
    assert raised.value.path == "Epoch"
    assert codec.encode("ClusterStateResponse", 1, {**value(1), "epoch": -1})  # the default: fine
    dropped = {k: v for k, v in v3.items() if k not in ("epoch", "note", "cursor")}
    assert codec.decode("ClusterStateResponse", 0, codec.encode("ClusterStateResponse", 0, dropped)) == value(0)
    with pytest.raises(EncodeError, match="has no field 'bogus'"):
        codec.encode("ClusterStateResponse", 3, {**v3, "bogus": 1})


def test_tagged_fields_only_when_not_default_and_unknown_tags_survive(codec):
    plain = codec.encode("ClusterStateResponse", 2, value(2))
    tagged = codec.encode("ClusterStateResponse", 2, value(2, note="hi"))
    assert plain.endswith(b"\x00") and tagged.endswith(bytes.fromhex("01" "00" "03" "03" "6869"))
    unknown = plain[:-1] + bytes.fromhex("01" "07" "02" "abcd")  # one tagged field: tag 7, 2 bytes
    decoded = codec.decode("ClusterStateResponse", 2, unknown)
    assert decoded[UNKNOWN_TAGS] == [(7, b"\xab\xcd")]
    assert codec.encode("ClusterStateResponse", 2, decoded) == unknown
    with pytest.raises(DecodeError, match="ascending"):
        codec.decode("ClusterStateResponse", 2, plain[:-1] + bytes.fromhex("02" "07" "00" "07" "00"))


def test_null_where_not_nullable(codec):
    with pytest.raises(EncodeError, match="not nullable") as raised:
        codec.encode("ClusterStateResponse", 1, value(1, topics=[{"name": None, "topicId": uuid.UUID(int=0),
                                                                    "partitions": []}]))
    assert raised.value.path == "Topics[0].Name"
    data = bytes.fromhex("00000000" "ffff" "00000001" "ffff")
    with pytest.raises(DecodeError, match="null string"):
        codec.decode("ClusterStateResponse", 1, data)


def test_json_form(codec):
    original = value(3)
    as_json = codec.to_json("ClusterStateResponse", 3, original)
    assert as_json["topics"][1]["topicId"] == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert "note" not in as_json  # tagged field at its default
    assert codec.from_json("ClusterStateResponse", 3, json.loads(json.dumps(as_json))) == original


def test_request_and_response_frames_and_header_versions(codec):
    assert codec.request_header_version(1100, 1) == 1 and codec.request_header_version(1100, 2) == 2
    assert codec.response_header_version(1100, 1) == 0 and codec.response_header_version(1100, 3) == 1
    frame = codec.encode_request(2, {"requestApiKey": 1100, "correlationId": 9, "clientId": "me"},
                                 {"includeTopics": True})
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    name, version, header, body = codec.decode_request(frame)
    assert (name, version, header["correlationId"], header["clientId"], body) == \
        ("ClusterStateRequest", 2, 9, "me", {"includeTopics": True})
    response = codec.encode_response(1100, 3, {"correlationId": 9}, value(3))
    assert codec.decode_response(1100, 3, response) == ({"correlationId": 9}, value(3))
    with pytest.raises(DecodeError, match="frame size") as raised:
        codec.decode_request(frame[:-1])
    assert raised.value.offset == 0
    truncated = response[4:-5]
    with pytest.raises(DecodeError) as raised:
        codec.decode_response(1100, 3, len(truncated).to_bytes(4, "big") + truncated)
    assert 4 < raised.value.offset <= len(truncated) + 4


def test_hostile_field_names_are_just_keys(tmp_path):
    hostile = "__import__('os').system('touch " + str(tmp_path / "pwned") + "')"
    spec = {"name": "Odd", "type": "data", "validVersions": "0", "flexibleVersions": "0+",
            "fields": [{"name": "Fine", "type": "int32", "versions": "0+"}]}
    (tmp_path / "Odd.json").write_text(json.dumps(spec))
    codec = Codec.load(tmp_path)
    spec_field = codec.spec("Odd").fields[0]
    object.__setattr__(spec_field, "name", hostile)  # a name the linter would refuse, forced in
    codec._plans.clear()
    codec._compilers.clear()
    data = codec.encode("Odd", 0, {hostile[:1].lower() + hostile[1:]: 5})
    assert data == bytes.fromhex("0000000500")
    assert not (tmp_path / "pwned").exists()


def test_specs_with_errors_are_refused(tmp_path):
    (tmp_path / "Bad.json").write_text('{"name": "Bad", "type": "data", "validVersions": "0+", "fields": []}')
    with pytest.raises(SpecError, match=r"1 spec file has errors .*\(first: Bad.json:1:1 KL20") as refused:
        Codec.load(tmp_path)
    assert "\n" not in str(refused.value) and "--allow-invalid" in str(refused.value)
    (tmp_path / "Good.json").write_text('{"name": "Good", "type": "data", "validVersions": "0", '
                                        '"flexibleVersions": "0+", "fields": []}')
    loaded = Codec.load(tmp_path, allow_invalid=True)
    assert loaded.names == ["Good"] and [Path(p).name for p in loaded.skipped] == ["Bad.json"]
    assert Codec.load(tmp_path / "Good.json").skipped == ()
    with pytest.raises(SpecError, match="no such file"):
        Codec.load(tmp_path / "missing")


def test_unknown_message_and_version(codec):
    with pytest.raises(KeyError, match="Nope"):
        codec.encode("Nope", 0, {})
    with pytest.raises(ValueError, match="no version 9"):
        codec.encode("ClusterStateResponse", 9, {})


def test_down_conversion_compares_structs_with_kafkas_default(codec):
    at_default = {**value(1), "cursor": {"epoch": -1, "id": uuid.UUID(int=0)}}
    assert codec.encode("ClusterStateResponse", 1, at_default) == codec.encode("ClusterStateResponse", 1, value(1))
    with pytest.raises(EncodeError, match="does not exist in version 1") as raised:
        codec.encode("ClusterStateResponse", 1, {**value(1), "cursor": {"epoch": 3}})
    assert raised.value.path == "Cursor"
    from_json = codec.from_json("ClusterStateResponse", 1, {
        **codec.to_json("ClusterStateResponse", 1, value(1)),
        "cursor": {"epoch": -1, "id": "AAAAAAAAAAAAAAAAAAAAAA", "ratio": 0.0}})
    assert codec.encode("ClusterStateResponse", 1, from_json) == codec.encode("ClusterStateResponse", 1, value(1))


def test_unknown_tag_payloads_must_be_bytes(codec):
    with pytest.raises(EncodeError, match="bytes"):
        codec.encode("ClusterStateResponse", 2, {**value(2), UNKNOWN_TAGS: [(9, 10**12)]})
    with pytest.raises(EncodeError, match="no JSON form"):
        codec.from_json("ClusterStateResponse", 2, {UNKNOWN_TAGS: []})


def test_float64_json_needs_a_fraction_like_kafkas_converter(codec):
    as_json = codec.to_json("ClusterStateResponse", 3, value(3))
    as_json["cursor"] = {"epoch": -1, "id": "AAAAAAAAAAAAAAAAAAAAAA", "ratio": 1}
    with pytest.raises(EncodeError, match="fraction or exponent") as raised:
        codec.from_json("ClusterStateResponse", 3, as_json)
    assert raised.value.path == "Cursor.Ratio"
    as_json["cursor"]["ratio"] = 1.0
    assert codec.from_json("ClusterStateResponse", 3, as_json)["cursor"]["ratio"] == 1.0


def test_a_frame_of_an_unknown_api_is_a_decode_error_both_ways() -> None:
    """A response of an API the specs lack is a ``DecodeError`` at the payload's first byte (4: after the size), as a
    request's is (issue 27: it was a bare KeyError)."""
    codec = Codec.load("fixtures/valid")
    with pytest.raises(DecodeError, match="no response spec with apiKey 71") as response:
        codec.decode_response(71, 0, bytes.fromhex("0000000400000007"))
    with pytest.raises(DecodeError, match="no request spec with apiKey 71") as request:
        codec.decode_request(bytes.fromhex("0000000a0047000000000007ffff"))
    assert response.value.offset == request.value.offset == 4
