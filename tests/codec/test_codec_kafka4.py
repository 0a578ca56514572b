"""The codec on Kafka 4.x and trunk 2026 specs: round trips of every message version of the 4.3 client
specs and the trunk samples, header versions from ``headerVersions`` (KIP-1313), coordinator records
(key and value framing, and the same bytes as the pre-4.1 ``data`` records), removed APIs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import require_shared, run_cli, shared_path
from support.headers import REQUEST_HEADER, RESPONSE_HEADER

from linter.codec import Codec, DecodeError
from linter.codec.values import identical, random_value
from linter.engine.context import FileContext
from linter.model.traits import header_version, implied_header_version
from linter.parse.document import read_document

MESSAGES = "src/main/resources/common/message"
SPECS = shared_path() / "kafka-specs"
CORPORA = {
    "4.3": [SPECS / "4.3" / "clients" / MESSAGES],
    "trunk-2026": [SPECS / "trunk-2026-samples" / "group-coordinator" / MESSAGES,
                   *sorted((SPECS / "trunk-2026-samples" / "clients" / MESSAGES).glob("*.json"))],
}


def _codec(corpus: str) -> Codec | None:
    paths = CORPORA[corpus]
    return Codec.load(*paths) if all(p.exists() for p in paths) else None


CODECS = {corpus: _codec(corpus) for corpus in CORPORA}
PAIRS = [(corpus, name, version) for corpus, codec in CODECS.items() if codec is not None
         for name in codec.names if not codec.spec(name).removed for version in codec.spec(name).versions]


def _pairs():
    if not PAIRS:
        return [pytest.param(None, None, None, id="no-specs")]
    return [pytest.param(corpus, name, version, id=f"{corpus}-{name}-v{version}") for corpus, name, version in PAIRS]


@pytest.mark.parametrize(("corpus", "name", "version"), _pairs())
def test_every_version_round_trips(corpus: str | None, name: str | None, version: int | None) -> None:
    require_shared("kafka-specs", "4.3")
    require_shared("kafka-specs", "trunk-2026-samples")
    codec = CODECS[corpus]
    values = [codec.default(name, version)] + [random_value(codec, name, version, random.Random(seed), 2)
                                               for seed in range(3)]
    for value in values:
        data = codec.encode(name, version, value)
        decoded = codec.decode(name, version, data)
        assert identical(decoded, value), f"{name} v{version}: decode(encode(value)) differs"
        assert codec.encode(name, version, decoded) == data


def test_the_corpora_are_covered() -> None:
    require_shared("kafka-specs", "4.3")
    counted = {corpus: sum(1 for c, _, _ in PAIRS if c == corpus) for corpus in CORPORA}
    assert counted["4.3"] > 400, counted  # 108 specs, most with several versions
    assert counted["trunk-2026"] >= 14, counted


# --- header versions -------------------------------------------------------------------------------



def _api(kind: str, header_versions: dict | None) -> dict:
    spec = {"name": f"ShelfScan{kind.capitalize()}", "type": kind, "apiKey": 1180, "validVersions": "0-3",
            "flexibleVersions": "2+", "fields": [{"name": "ShelfId", "type": "int32", "versions": "0+"}]}
    if header_versions is not None:
        spec["headerVersions"] = header_versions
    return spec


def _frames_codec(folder: Path, request_map: dict | None, response_map: dict | None) -> Codec:
    folder.mkdir(exist_ok=True)
    for spec in (REQUEST_HEADER, RESPONSE_HEADER, _api("request", request_map), _api("response", response_map)):
        (folder / f"{spec['name']}.json").write_text(json.dumps(spec), encoding="utf-8")
    return Codec.load(folder)


@pytest.mark.parametrize(("request_map", "response_map", "expected"), [
    (None, None, {0: (1, 0), 1: (1, 0), 2: (2, 1), 3: (2, 1)}),  # derived from flexibleVersions (2+)
    ({"0": "1", "1+": "2"}, {"0": "0", "1+": "1"}, {0: (1, 0), 1: (2, 1), 2: (2, 1), 3: (2, 1)}),
    ({"0+": "2"}, {"0+": "1"}, {0: (2, 1), 1: (2, 1), 2: (2, 1), 3: (2, 1)}),
])
def test_frames_use_the_mapped_header_version(tmp_path: Path, request_map, response_map, expected) -> None:
    codec = _frames_codec(tmp_path, request_map, response_map)
    for version, (request_header, response_header) in expected.items():
        assert (codec.request_header_version(1180, version), codec.response_header_version(1180, version)) \
            == (request_header, response_header)
        header = {"correlationId": 9, "clientId": "c"}
        frame = codec.encode_request(version, header, {"shelfId": 4}, name="ShelfScanRequest")
        # the header is exactly the mapped version's bytes: a tagged-field byte only in header 2
        header_bytes = codec.encode("RequestHeader", request_header,
                                    {**header, "requestApiKey": 1180, "requestApiVersion": version})
        assert frame[4:4 + len(header_bytes)] == header_bytes
        name, got_version, got_header, body = codec.decode_request(frame)
        assert (name, got_version, got_header["correlationId"], body) == ("ShelfScanRequest", version, 9, {"shelfId": 4})
        response = codec.encode_response(1180, version, {"correlationId": 9}, {"shelfId": 4})
        assert len(response) == 4 + 4 + (response_header == 1) + len(codec.encode("ShelfScanResponse", version,
                                                                                   {"shelfId": 4}))
        assert codec.decode_response(1180, version, response) == ({"correlationId": 9}, {"shelfId": 4})


def test_a_mapped_header_changes_the_bytes(tmp_path: Path) -> None:
    derived = _frames_codec(tmp_path / "derived", None, None)
    mapped = _frames_codec(tmp_path / "mapped", {"0+": "2"}, {"0+": "1"})
    header = {"correlationId": 1, "clientId": None}
    one = derived.encode_request(0, header, {"shelfId": 1}, name="ShelfScanRequest")
    two = mapped.encode_request(0, header, {"shelfId": 1}, name="ShelfScanRequest")
    assert len(two) == len(one) + 1  # header v2 adds its (empty) tagged-field section
    with pytest.raises(DecodeError):
        derived.decode_request(two)  # read with header v1, the tagged-field byte becomes body bytes


def test_header_version_follows_the_trunk_samples() -> None:
    folder = require_shared("kafka-specs", "trunk-2026-samples", "clients", *MESSAGES.split("/"))
    spec = FileContext(read_document("DeleteTopicsRequest.json", (folder / "DeleteTopicsRequest.json").read_bytes())).message
    assert [header_version(spec, v) for v in spec.versions] == [1, 1, 1, 2, 2, 2]  # versions 1-6
    assert all(header_version(spec, v) == implied_header_version(spec, v) for v in spec.versions)


# --- coordinator records ---------------------------------------------------------------------------

def _key_pairs(codec: Codec) -> list[int]:
    return sorted(codec.spec(n).api_key for n in codec.names if codec.spec(n).type == "coordinator-key")


def test_coordinator_records_round_trip() -> None:
    require_shared("kafka-specs", "trunk-2026-samples")
    codec = CODECS["trunk-2026"]
    keys = _key_pairs(codec)
    assert len(keys) >= 6, keys
    for api_key in keys:
        key_spec = next(codec.spec(n) for n in codec.names if codec.spec(n).type == "coordinator-key"
                        and codec.spec(n).api_key == api_key)
        value_spec = next(codec.spec(n) for n in codec.names if codec.spec(n).type == "coordinator-value"
                          and codec.spec(n).api_key == api_key)
        key = random_value(codec, key_spec.name, 0, random.Random(api_key), 2)
        for version in value_spec.versions:
            value = random_value(codec, value_spec.name, version, random.Random(version), 2)
            key_bytes, value_bytes = codec.encode_record(api_key, key, value, version)
            assert key_bytes[:2] == api_key.to_bytes(2, "big") and value_bytes[:2] == version.to_bytes(2, "big")
            record = codec.decode_record(key_bytes, value_bytes)
            assert (record.api_key, record.key_name, record.value_name, record.value_version) == \
                (api_key, key_spec.name, value_spec.name, version)
            assert identical(record.key, key) and identical(record.value, value)
        tombstone = codec.decode_record(codec.encode_record(api_key, key, None)[0], None)
        assert tombstone.value is None and identical(tombstone.key, key)


def test_coordinator_keys_are_the_bytes_of_the_old_data_records() -> None:
    """KAFKA-18301 moved the record type from the key's version to its apiKey: the bytes must not change.
    The 2024 ``data`` *Key at version N, prefixed with N, equals the 2026 key record of apiKey N."""
    old_dir = require_shared("kafka-specs", "trunk-2024-10", "group-coordinator", *MESSAGES.split("/"))
    old, new = Codec.load(old_dir), CODECS["trunk-2026"]
    compared = 0
    for name in new.names:
        spec = new.spec(name)
        if spec.type != "coordinator-key" or name not in old.names:
            continue
        before = old.spec(name)
        assert before.type == "data" and before.versions.lowest == before.versions.highest == spec.api_key
        for seed in range(5):
            key = random_value(new, name, 0, random.Random(seed), 2)
            old_bytes = spec.api_key.to_bytes(2, "big") + old.encode(name, spec.api_key, key)
            assert new.encode_record(spec.api_key, key, None)[0] == old_bytes
            assert identical(new.decode_record(old_bytes, None).key, key)
        compared += 1
    assert compared >= 4, f"only {compared} keys exist in both revisions"


def test_record_errors_name_the_part_and_offset() -> None:
    codec = Codec.load("fixtures/valid")
    with pytest.raises(DecodeError) as unknown:
        codec.decode_record(bytes.fromhex("0009"), None)
    assert (unknown.value.offset, unknown.value.path) == (0, "key")
    with pytest.raises(DecodeError) as short:
        codec.decode_record(bytes.fromhex("000700016700000003"), bytes.fromhex("0000000000"))
    assert (short.value.offset, short.value.path) == (2, "value.Count")


def test_a_removed_api_has_no_version_to_encode() -> None:
    codec = Codec.load("fixtures/valid")
    assert codec.spec("WidgetResetRequest").removed
    with pytest.raises(ValueError, match="was removed"):
        codec.encode("WidgetResetRequest", 0, {})


def test_the_record_commands_round_trip_and_name_bad_bytes() -> None:
    record = {"recordType": 7, "key": {"groupId": "g", "widgetId": 3}, "valueVersion": 1,
              "value": {"count": 5, "updatedMs": 9}}
    encoded = run_cli("codec", "record", "encode", "--specs", "fixtures/valid", stdin=json.dumps(record))
    assert encoded.returncode == 0, encoded.stderr
    key_hex, value_hex = encoded.stdout.split()
    assert key_hex == "000700016700000003" and value_hex.startswith("0001")
    decoded = run_cli("codec", "record", "decode", "--specs", "fixtures/valid", key_hex, value_hex)
    assert decoded.returncode == 0 and json.loads(decoded.stdout) == {**record, "keyName": "WidgetLedgerKey",
                                                                     "valueName": "WidgetLedgerValue"}
    tombstone = run_cli("codec", "record", "decode", "--specs", "fixtures/valid", key_hex)
    assert json.loads(tombstone.stdout)["value"] is None
    broken = run_cli("codec", "record", "decode", "--specs", "fixtures/valid", key_hex[:-2])
    assert broken.returncode == 1 and broken.stderr == "krpc-lint: error: byte 5 at key.WidgetId: int32 needs 4 bytes, only 3 left\n"
    unknown = run_cli("codec", "record", "encode", "--specs", "fixtures/valid", stdin='{"recordType": 9, "key": {}}')
    assert unknown.returncode == 1 and "no coordinator-key spec with apiKey 9" in unknown.stderr

