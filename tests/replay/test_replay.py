"""krpc-lint replay and frames generate: outcomes and paths per frame (no Spark), the synthetic
corpus, then the Spark job on small corpora (Parquet and JSON Lines, corrupt rows, atomic output)."""

from __future__ import annotations

import base64
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, require_shared, require_spark, run_cli
from support.headers import REQUEST_HEADER, RESPONSE_HEADER

from linter.codec import UNKNOWN_TAGS, Codec, SpecError
from linter.compat.sources import read_specs
from linter.frames import generate as frames_mod
from linter.frames.corpus import read_frames
from linter.frames.decode import decoders, loaded
from linter.frames.generate import generate
from linter.replay import run as replay_mod
from linter.replay.batches import replay_batch
from linter.replay.frame import (
    BOTH_FAIL,
    DIFFERS,
    NEW_FAILS,
    OLD_FAILS,
    OUTCOMES,
    SAME,
    Replayed,
    first_difference,
    replay_frame,
)
from linter.replay.run import replay
from linter.spark import schema
from linter.spark.output import OutputExists

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

WIDGET_FETCH, BLOB_PUSH = 1000, 1001


# --- two small revisions of our own: fixtures/valid, then a wire-breaking change -------------------


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """OLD: fixtures/valid plus minimal headers. NEW: the compat demo's new Widget specs (v4 added,
    MaxWaitMs int32 -> int64, RackId renamed, a tagged field added) and BlobPush's StripeCount
    uint16 -> int16 (same width: values >= 32768 read back negative)."""
    root = tmp_path_factory.mktemp("specs")
    old, new = root / "old", root / "new"
    shutil.copytree(REPO_ROOT / "fixtures" / "valid", old)
    for header in (REQUEST_HEADER, RESPONSE_HEADER):
        (old / f"{header['name']}.json").write_text(json.dumps(header))
    shutil.copytree(old, new)
    for changed in (REPO_ROOT / "fixtures" / "compat" / "demo" / "new").iterdir():
        shutil.copy(changed, new / changed.name)
    blob = new / "BlobPushRequest.json"
    text = blob.read_text()
    assert '"StripeCount", "type": "uint16"' in text
    blob.write_text(text.replace('"StripeCount", "type": "uint16"', '"StripeCount", "type": "int16"'))
    return old, new


@pytest.fixture(scope="module")
def codecs(specs: tuple[Path, Path]) -> tuple[Codec, Codec]:
    return Codec.load(specs[0]), Codec.load(specs[1])


def _request(codec: Codec, version: int, body: dict[str, Any], name: str = "WidgetFetchRequest",
             correlation_id: int = 7) -> bytes:
    return codec.encode_request(version, {"correlationId": correlation_id, "clientId": "me"}, body, name)


def _row(frame: bytes | None, direction: str = "request", **columns: Any) -> dict[str, Any]:
    return {"bytes": frame, "direction": direction, **columns}


# --- first_difference -------------------------------------------------------------------------------


@pytest.mark.parametrize("old, new, path", [
    ({"a": 1}, {"a": 1}, None),
    ({"topics": [{"partitions": [{"maxBytes": 1}, {"maxBytes": 2}]}]},
     {"topics": [{"partitions": [{"maxBytes": 1}, {"maxBytes": 3}]}]}, "Topics[0].Partitions[1].MaxBytes"),
    ({"topics": [1, 2, 3]}, {"topics": [1, 2]}, "Topics[2]"),
    ({"topics": []}, {"topics": [1]}, "Topics[0]"),
    ({"topics": None}, {"topics": []}, "Topics"),
    ({"flag": True}, {"flag": 1}, "Flag"),  # a retype bool -> int8 reads the same byte as another value
    ({"ms": 0}, {"ms": 0.0}, "Ms"),
    ({"x": -0.0}, {"x": 0.0}, "X"),
    ({"x": math.nan}, {"x": math.nan}, None),  # the same NaN bits: identical, though nan != nan
    ({"rackId": "r", "n": 1}, {"clientRackId": "r", "n": 1}, None),  # a rename: paired in order
    ({"rackId": "r"}, {"clientRackId": "s"}, "RackId"),
    ({"n": 1}, {"n": 1, "label": None}, None),  # a field only NEW has: not on the wire, its default
    ({"label": "x"}, {UNKNOWN_TAGS: [(1, b"\x02x")]}, "Label"),  # a tagged field NEW no longer knows
    ({UNKNOWN_TAGS: [(1, b"\x00")]}, {UNKNOWN_TAGS: [(1, b"\x01")]}, f"{UNKNOWN_TAGS}[0]"),
])
def test_first_difference(old: Any, new: Any, path: str | None) -> None:
    assert first_difference(old, new) == path
    assert first_difference(old, new, "body") == (None if path is None else f"body.{path}")


# --- replay_frame: every outcome ----------------------------------------------------------------------


def test_same_differs_and_the_failures(codecs: tuple[Codec, Codec]) -> None:
    old, new = codecs
    blob = old.default("BlobPushRequest", 1)
    same = replay_frame(old, new, _row(_request(old, 1, {**blob, "stripeCount": 1}, "BlobPushRequest")))
    assert same == Replayed(SAME, BLOB_PUSH, "BlobPushRequest", 1, 7, None, None, None)

    negative_zero = _request(old, 1, {**blob, "stripeCount": 1, "sampleRatio": -0.0}, "BlobPushRequest")
    assert replay_frame(old, new, _row(negative_zero)).outcome == SAME  # floats: compared bit for bit

    differs = replay_frame(old, new, _row(_request(old, 1, {**blob, "stripeCount": 40000}, "BlobPushRequest")))
    assert differs == Replayed(DIFFERS, BLOB_PUSH, "BlobPushRequest", 1, 7, "body.StripeCount", None, None)

    # MaxWaitMs is 8 bytes in NEW: it eats the topics count, which then runs out
    fetch = _request(old, 0, old.default("WidgetFetchRequest", 0))
    assert replay_frame(old, new, _row(fetch)) == Replayed(
        NEW_FAILS, WIDGET_FETCH, "WidgetFetchRequest", 0, 7, "body.Topics", None,
        "byte 30 at body.Topics: length: needs 4 bytes, only 0 left")

    v4 = _request(new, 4, new.default("WidgetFetchRequest", 4))  # only NEW has v4
    assert replay_frame(old, new, _row(v4)) == Replayed(
        OLD_FAILS, WIDGET_FETCH, "WidgetFetchRequest", 4, 7, None,
        "WidgetFetchRequest has no version 4 (valid versions: 0-3)", None)

    response = old.encode_response(WIDGET_FETCH, 2, {"correlationId": 9}, old.default("WidgetFetchResponse", 2))
    assert replay_frame(old, new, _row(response, "response", api_key=WIDGET_FETCH, api_version=2)) == Replayed(
        SAME, WIDGET_FETCH, "WidgetFetchResponse", 2, 9, None, None, None)


def test_a_frame_kind_whose_plans_agree_is_decoded_once(codecs: tuple[Codec, Codec]) -> None:
    """Both revisions share one decoder exactly where header and body plans have equal signatures;
    a frame such a decoder refuses fails on both sides, with the one error."""
    old, new = codecs
    old_side, new_side = decoders(old), decoders(new)
    shared = {True: 0, False: 0}
    for message in (old.request_for(WIDGET_FETCH), old.request_for(BLOB_PUSH), old.response_for(WIDGET_FETCH)):
        direction = "request" if message.name.endswith("Request") else "response"
        for version in message.versions:
            old_api, new_api = (side.api(direction, message.api_key, version) for side in (old_side, new_side))
            header = old.request_header_version if direction == "request" else old.response_header_version
            header_name = "RequestHeader" if direction == "request" else "ResponseHeader"
            agree = all(old.plan(name, v).signature == new.plan(name, v).signature
                        for name, v in ((header_name, header(message.api_key, version)), (message.name, version)))
            assert (old_api.decode is new_api.decode) == agree, (message.name, version)
            shared[agree] += 1
    assert shared[True] and shared[False]

    response = old.encode_response(WIDGET_FETCH, 2, {"correlationId": 9}, old.default("WidgetFetchResponse", 2))
    cut = response[:-2]
    cut = len(cut[4:]).to_bytes(4, "big") + cut[4:]  # a size that matches: the body itself is short
    failed = replay_frame(old, new, _row(cut, "response", api_key=WIDGET_FETCH, api_version=2))
    assert failed.outcome == BOTH_FAIL and failed.old_error == failed.new_error and failed.path


def test_failures_in_the_header_and_unknown_apis(codecs: tuple[Codec, Codec]) -> None:
    old, new = codecs
    frame = bytearray(_request(old, 1, old.default("WidgetFetchRequest", 1)))
    frame[12:14] = b"\x00\xff"  # clientId length 255: past the end
    result = replay_frame(old, new, _row(bytes(frame)))
    assert (result.outcome, result.path) == (BOTH_FAIL, "header.ClientId")
    assert result.old_error == result.new_error == "byte 14 at header.ClientId: string: needs 255 bytes, only 18 left"

    unknown = bytes.fromhex("0000000a03e7000000000007ffff")  # apiKey 999 v0
    assert replay_frame(old, new, _row(unknown)) == Replayed(
        BOTH_FAIL, 999, None, 0, 7, None, "no request spec with apiKey 999", "no request spec with apiKey 999")


@pytest.mark.parametrize("row, error", [
    ({"direction": "request"}, "no frame: bytes and hex are both null"),
    ({"direction": "request", "hex": "zz"},
     "hex is not hexadecimal text: non-hexadecimal number found in fromhex() arg at position 0"),
    ({"direction": "request", "bytes": b""},
     "a request frame needs 12 bytes at least (size, apiKey, apiVersion, correlationId), got 0"),
    ({"direction": "request", "bytes": bytes.fromhex("0000000903e8000100000007ffff")},
     "frame size 9 does not match the 10 bytes that follow"),
    ({"direction": "sideways", "bytes": b"\x00" * 12}, "direction must be 'request' or 'response', got 'sideways'"),
    ({"direction": None, "bytes": b"\x00" * 12}, "direction must be 'request' or 'response', got None"),
    ({"direction": "response", "bytes": bytes.fromhex("0000000400000007")},
     "a response frame needs api_key and api_version: those of the request it answers"),
    ({"direction": "request", "bytes": bytes.fromhex("0000000a03e8000100000007ffff"), "api_key": 1001},
     "the api_key column (1001) does not match the header's requestApiKey (1000)"),
    ({"direction": "request", "bytes": bytes.fromhex("0000000a03e8000100000007ffff"), "api_version": 2},
     "the api_version column (2) does not match the header's requestApiVersion (1)"),
    ({"direction": "request", "bytes": bytes.fromhex("0000000a03e8000100000007ffff"), "correlation_id": 8},
     "the correlation_id column (8) does not match the header's (7)"),
])
def test_a_row_that_is_not_a_frame_is_both_fail(codecs: tuple[Codec, Codec], row: dict[str, Any],
                                                 error: str) -> None:
    result = replay_frame(*codecs, row)
    assert (result.outcome, result.old_error, result.new_error, result.path) == (BOTH_FAIL, error, error, None)


def test_garbage_of_any_length_is_a_result_never_an_exception(codecs: tuple[Codec, Codec]) -> None:
    import random

    rng = random.Random(5)
    good = _request(codecs[0], 3, codecs[0].default("WidgetFetchRequest", 3))
    for _ in range(300):
        noise = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            noise[rng.randrange(4, len(noise))] = rng.randrange(256)
        cut = bytes(noise[:rng.randint(4, len(noise))])
        cut = (len(cut) - 4).to_bytes(4, "big") + cut[4:]
        for direction in ("request", "response"):
            result = replay_frame(*codecs, _row(cut, direction, api_key=WIDGET_FETCH, api_version=3))
            assert result.outcome in OUTCOMES


def test_a_batch_replays_each_frame_as_replay_frame_does(specs: tuple[Path, Path], codecs: tuple[Codec, Codec],
                                                         tmp_path: Path) -> None:
    """replay_batch takes a short path for well-formed frames of kinds both revisions decode alike;
    row by row, its outcomes and counts are those of replay_frame, on good frames and broken ones."""
    import random
    from collections import Counter

    generate(specs[0], 600, tmp_path / "good.parquet", seed=2)
    rows = pq.read_table(tmp_path / "good.parquet").to_pylist()
    rng = random.Random(3)
    for row in rng.sample(rows, 200):  # breakages the short path must hand over to _replay
        frame, how = bytearray(row["bytes"]), rng.randrange(7)
        if how == 0:
            frame = frame[:rng.randrange(len(frame))]  # truncated: the size no longer matches
        elif how == 1:
            frame[rng.randrange(4, len(frame))] ^= 1 << rng.randrange(8)
        elif how == 2:
            row["correlation_id"] += 1
        elif how == 3:
            row["api_key"] = 1 - row["api_key"] if row["direction"] == "request" else None
        elif how == 4:
            row["api_version"] = (row["api_version"] or 0) + 7
        elif how == 5:
            row["direction"] = "sideways"
        else:
            frame = frame[:4] + bytes(2)  # a frame too short for its header
        row["bytes"] = bytes(frame)
    batch = pa.RecordBatch.from_pylist(rows, schema=pa.schema([
        ("api_key", pa.int32()), ("api_version", pa.int32()), ("direction", pa.string()),
        ("correlation_id", pa.int32()), ("bytes", pa.binary())]))
    old_side, new_side = decoders(codecs[0]), decoders(codecs[1])
    counts: dict[tuple, int] = {}
    mismatches = replay_batch(old_side, new_side, batch, counts).to_pylist()
    expected = [(index, replay_frame(old_side, new_side, row)) for index, row in enumerate(rows)]
    assert [(row["row"], row["outcome"], row["path"], row["old_error"], row["new_error"]) for row in mismatches] == \
        [(index, r.outcome, r.path, r.old_error, r.new_error) for index, r in expected if r.outcome != SAME]
    assert counts == Counter((r.api_key, r.api_name, r.api_version, row["direction"], r.outcome)
                             for (_, r), row in zip(expected, rows))
    assert len({r.outcome for _, r in expected}) >= 3 and counts


# --- frames generate -------------------------------------------------------------------------------


def test_generate_is_deterministic_and_covers_every_api_version(specs: tuple[Path, Path], tmp_path: Path) -> None:
    old = specs[0]
    assert generate(old, 2000, tmp_path / "a.parquet", seed=3) == 2000
    generate(old, 2000, tmp_path / "b.parquet", seed=3)
    generate(old, 2000, tmp_path / "c.parquet", seed=4)
    a, b, c = (pq.read_table(tmp_path / f"{name}.parquet") for name in "abc")
    assert a.schema.names == ["api_key", "api_version", "direction", "correlation_id", "bytes"]
    assert a.equals(b) and not a.equals(c)
    rows = a.to_pylist()
    assert [row["correlation_id"] for row in rows] == list(range(2000))
    kinds = {(k.api_key, k.api_version, k.direction) for k in frames_mod.kinds(Codec.load(old))}
    assert {(row["api_key"], row["api_version"], row["direction"]) for row in rows} == kinds
    assert len(kinds) == 2 * (4 + 2)  # WidgetFetch v0-3, BlobPush v0-1, requests and responses
    codec = Codec.load(old)
    for row in rows[:200]:  # real frames, with the row's correlation id in the header
        if row["direction"] == "request":
            name, version, header, _ = codec.decode_request(row["bytes"])
            assert (codec.spec(name).api_key, version) == (row["api_key"], row["api_version"])
        else:
            header, _ = codec.decode_response(row["api_key"], row["api_version"], row["bytes"])
        assert header["correlationId"] == row["correlation_id"]

    generate(old, 2000, tmp_path / "a.jsonl", seed=3)
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert [bytes.fromhex(line.pop("hex")) for line in lines] == [row.pop("bytes") for row in rows]
    assert lines == rows

    with pytest.raises(OutputExists):
        generate(old, 10, tmp_path / "a.parquet")
    assert generate(old, 10, tmp_path / "a.parquet", overwrite=True) == 10
    assert pq.read_table(tmp_path / "a.parquet").num_rows == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "a.parquet", "b.parquet", "c.parquet"]


def test_generate_needs_the_header_specs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="frames need Kafka's RequestHeader spec"):
        generate(REPO_ROOT / "fixtures" / "valid", 10, tmp_path / "f.parquet")
    assert not (tmp_path / "f.parquet").exists()


def test_kafka_3_7_to_trunk_breaks_only_the_unstable_consumer_group_describe_v0(tmp_path: Path) -> None:
    """The real corpus: 3.7.0 -> trunk 2024-10 reads every frame the same, except ConsumerGroupDescribeResponse
    v0 (unstable in 3.7.0), whose member Assignment lost three fields."""
    import random

    from linter.codec.values import random_value

    kafka = require_shared("kafka-specs")
    old, new = kafka / "3.7.0", kafka / "trunk-2024-10"
    generate(old, 1000, tmp_path / "kafka.parquet", seed=1)
    results, counts = _replay_in_process(old, new, tmp_path / "kafka.parquet")
    assert sum(counts.values()) == 1000
    assert {(key[1], key[2], key[4]) for key in counts if key[4] != SAME} <= {
        ("ConsumerGroupDescribeResponse", 0, NEW_FAILS)}

    codec, name = loaded(read_specs(old)).codec, "ConsumerGroupDescribeResponse"
    frames = (codec.encode_response(69, 0, {"correlationId": 1}, random_value(codec, name, 0, random.Random(seed)))
              for seed in range(100))
    results = [replay_frame(loaded(read_specs(old)), loaded(read_specs(new)),
                            _row(frame, "response", api_key=69, api_version=0)) for frame in frames]
    assert {result.outcome for result in results} == {SAME, NEW_FAILS}  # SAME: no group has a member
    paths = {result.path for result in results if result.outcome == NEW_FAILS}
    assert "body.Groups[0].Members[0].Assignment" in paths  # where NEW reads past the end of a shorter struct
    assert all(path.startswith("body.Groups[") and ".Members[0]." in path and "Assignment" in path for path in paths)


# --- the Spark job -----------------------------------------------------------------------------------


def _replay_in_process(old: Path, new: Path, corpus: Path) -> tuple[list[dict[str, Any]], dict[tuple, int]]:
    """What the Spark job must write, computed in this process: the mismatch rows and the counts."""
    old_side, new_side = loaded(read_specs(old)), loaded(read_specs(new))
    counts: dict[tuple, int] = {}
    rows: list[dict[str, Any]] = []
    first = 0
    for batch in pq.read_table(corpus).to_batches():
        for row in replay_batch(old_side, new_side, batch, counts, 0, first).to_pylist():
            row["frame"] = row["row"]
            rows.append({name: row[name] for name in schema.columns(schema.REPLAY_MISMATCHES)})
        first += batch.num_rows
    return rows, counts


def _table(spark: Any, path: Path) -> list[dict[str, Any]]:
    return [row.asDict() for row in spark.read.parquet(str(path)).collect()]


def _types(spark: Any, ddl: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.createDataFrame([], ddl).schema.fields]


def test_spark_replay_writes_what_the_in_process_replay_finds(spark: Any, specs: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    old, new = specs
    corpus, out = tmp_path / "corpus.parquet", tmp_path / "out"
    generate(old, 3000, corpus, seed=2)
    summary = replay(corpus, old, new, out, spark=spark)

    expected_rows, expected_counts = _replay_in_process(old, new, corpus)
    mismatches = spark.read.parquet(str(out / "mismatches"))
    assert _types(spark, schema.REPLAY_MISMATCHES) == [(f.name, f.dataType.simpleString())
                                                       for f in mismatches.schema.fields]
    assert sorted(_table(spark, out / "mismatches"), key=lambda row: row["frame"]) == expected_rows
    counts = spark.read.parquet(str(out / "counts"))
    assert _types(spark, schema.REPLAY_COUNTS) == [(f.name, f.dataType.simpleString()) for f in counts.schema.fields]
    assert {tuple(row[:5]): row["frames"] for row in counts.collect()} == expected_counts

    # the wire break, as the specs say: WidgetFetchRequest (MaxWaitMs retyped) never reads the same;
    # BlobPushRequest differs exactly when StripeCount >= 32768; responses are untouched
    outcomes: dict[str, set[str]] = {}
    for (_, name, _, _, outcome) in expected_counts:
        outcomes.setdefault(name, set()).add(outcome)
    assert outcomes == {"WidgetFetchRequest": {NEW_FAILS}, "BlobPushRequest": {SAME, DIFFERS},
                        "WidgetFetchResponse": {SAME}, "BlobPushResponse": {SAME}}
    assert {row["path"] for row in expected_rows if row["outcome"] == DIFFERS} == {"body.StripeCount"}
    first = expected_rows[0]
    assert first["frame"] == 0 and first["hex"] == pq.read_table(corpus)["bytes"][0].as_py()[:256].hex()

    assert summary.frames == 3000 and summary.mismatches == len(expected_rows)
    assert summary.outcomes[SAME] == sum(n for key, n in expected_counts.items() if key[4] == SAME)
    written = json.loads((out / "summary.json").read_text())
    assert written["frames"] == 3000 and written["outcomes"] == summary.outcomes and written["frames_per_second"] > 0


def test_json_lines_with_hex_base64_and_broken_rows_over_several_partitions(spark: Any, specs: tuple[Path, Path],
                                                                              tmp_path: Path) -> None:
    old, new = specs
    generate(old, 1500, tmp_path / "corpus.jsonl", seed=6)
    generate(old, 1500, tmp_path / "same.parquet", seed=6)
    expected_rows, _ = _replay_in_process(old, new, tmp_path / "same.parquet")
    blob = Codec.load(old).encode_request(1, {"correlationId": 3, "clientId": None},
                                          {**Codec.load(old).default("BlobPushRequest", 1), "stripeCount": 65535},
                                          "BlobPushRequest")
    broken = [
        json.dumps({"direction": "request", "bytes": base64.b64encode(blob).decode()}),  # base64 bytes in JSON
        '{"api_key": 1000, "direction": "request", "hex": "0000',  # not JSON
        json.dumps({"direction": "request", "hex": "zz"}),
        json.dumps({"direction": "request", "hex": ""}),
        json.dumps({"direction": "request"}),
        json.dumps({"direction": "request", "hex": "0000000a03e7000000000007ffff"}),  # apiKey 999
        json.dumps({"direction": "response", "api_key": 1000, "api_version": 1, "hex": "0000000400000007"}),
    ]
    with open(tmp_path / "corpus.jsonl", "a") as file:
        file.write("\n".join(broken) + "\n")

    small = {"spark.sql.files.openCostInBytes": "1", "spark.sql.files.minPartitionNum": "8"}
    saved = {key: spark.conf.get(key, None) for key in small}
    for key, value in small.items():
        spark.conf.set(key, value)
    try:
        assert read_frames(spark, tmp_path / "corpus.jsonl").rdd.getNumPartitions() > 1
        replay(tmp_path / "corpus.jsonl", old, new, tmp_path / "out", spark=spark)
    finally:
        for key, value in saved.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)

    rows = sorted(_table(spark, tmp_path / "out" / "mismatches"), key=lambda row: row["frame"])
    assert rows[:len(expected_rows)] == expected_rows  # frame numbers: positions in the file
    tail = [{key: row[key] for key in ("frame", "api_key", "api_name", "outcome", "path", "old_error")}
            for row in rows[len(expected_rows):]]
    assert tail == [
        {"frame": 1500, "api_key": BLOB_PUSH, "api_name": "BlobPushRequest", "outcome": DIFFERS,
         "path": "body.StripeCount", "old_error": None},
        {"frame": 1501, "api_key": None, "api_name": None, "outcome": BOTH_FAIL, "path": None,
         "old_error": "not a frame record: '{\"api_key\": 1000, \"direction\": \"request\", \"hex\": \"0000'"},
        {"frame": 1502, "api_key": None, "api_name": None, "outcome": BOTH_FAIL, "path": None,
         "old_error": "hex is not hexadecimal text: non-hexadecimal number found in fromhex() arg at position 0"},
        {"frame": 1503, "api_key": None, "api_name": None, "outcome": BOTH_FAIL, "path": None,
         "old_error": "a request frame needs 12 bytes at least (size, apiKey, apiVersion, correlationId), got 0"},
        {"frame": 1504, "api_key": None, "api_name": None, "outcome": BOTH_FAIL, "path": None,
         "old_error": "no frame: bytes and hex are both null"},
        {"frame": 1505, "api_key": 999, "api_name": None, "outcome": BOTH_FAIL, "path": None,
         "old_error": "no request spec with apiKey 999"},
        {"frame": 1506, "api_key": WIDGET_FETCH, "api_name": "WidgetFetchResponse", "outcome": BOTH_FAIL,
         "path": "body.ThrottleTimeMs", "old_error": "byte 8 at body.ThrottleTimeMs: needs 6 bytes for 2 fixed-width fields, only 0 left"},
    ]
    assert rows[-1]["hex"] == "0000000400000007" and rows[-2]["correlation_id"] == 7


def test_the_output_is_atomic(spark: Any, specs: tuple[Path, Path], tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = specs
    generate(old, 200, tmp_path / "a.parquet", seed=1)
    generate(old, 300, tmp_path / "b.parquet", seed=1)
    out = tmp_path / "out"
    replay(tmp_path / "a.parquet", old, new, out, spark=spark)
    before = (out / "summary.json").read_text()

    with pytest.raises(OutputExists, match="already exists: pass --overwrite"):
        replay(tmp_path / "b.parquet", old, new, out, spark=spark)
    assert (out / "summary.json").read_text() == before

    real = replay_mod._run

    def dies_after_writing(*args: Any) -> None:
        real(*args)
        raise KeyboardInterrupt  # interrupted once both tables are written, before the rename

    monkeypatch.setattr(replay_mod, "_run", dies_after_writing)
    with pytest.raises(KeyboardInterrupt):
        replay(tmp_path / "b.parquet", old, new, out, overwrite=True, spark=spark)
    assert (out / "summary.json").read_text() == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    monkeypatch.undo()

    summary = replay(tmp_path / "b.parquet", old, new, out, overwrite=True, spark=spark)
    assert summary.frames == 300 and json.loads((out / "summary.json").read_text())["frames"] == 300
    assert sum(row["frames"] for row in _table(spark, out / "counts")) == 300


def test_unusable_input_fails_before_any_output(spark: Any, specs: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = specs
    with pytest.raises(ValueError, match="replay needs Kafka's RequestHeader spec"):
        replay(tmp_path / "none.parquet", REPO_ROOT / "fixtures" / "valid", new, tmp_path / "out", spark=spark)
    pq.write_table(pa.table({"direction": ["request"]}), tmp_path / "no-bytes.parquet")
    with pytest.raises(ValueError, match="FRAMES needs a bytes or a hex column; it has direction"):
        replay(tmp_path / "no-bytes.parquet", old, new, tmp_path / "out", spark=spark)
    (tmp_path / "frames.csv").write_text("x")
    with pytest.raises(ValueError, match="FRAMES must be a packet capture .*, Parquet"):
        replay(tmp_path / "frames.csv", old, new, tmp_path / "out", spark=spark)
    with pytest.raises(FileNotFoundError):
        replay(tmp_path / "missing.parquet", old, new, tmp_path / "out", spark=spark)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames.csv", "no-bytes.parquet"]


def test_replay_and_frames_generate_via_the_cli(specs: tuple[Path, Path], tmp_path: Path) -> None:
    """The commands as a user types them (a fresh process, so a cold Spark), on the OLD/NEW above."""
    require_spark()
    old, new = specs
    frames = tmp_path / "frames.jsonl"
    generated = run_cli("frames", "generate", "--specs", str(old), "--count", "300", "--out", str(frames))
    assert generated.returncode == 0 and generated.stdout == f"wrote 300 frames to {frames}\n", generated.stderr
    result = run_cli("replay", str(frames), "--specs", str(old), "--against", str(new),
                      "--out", str(tmp_path / "r"), "--master", "local[2]")
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first.startswith("300 frames: ") and " differs" in first and "on local[2]" in first
    assert second.startswith(f"wrote {tmp_path / 'r'}/mismatches (")
    assert sorted(os.listdir(tmp_path / "r")) == [".krpc-lint-output", "counts", "mismatches", "summary.json"]


def test_allow_invalid_replays_with_the_specs_kafkas_generator_accepts() -> None:
    """Issue 15: Kafka's own 2.8.0 specs hold 30 files later generators refuse. Without the flag, one line
    before any Spark work; with it, those files are left out (named in the summary) and the rest load."""
    specs = require_shared("kafka-specs", "2.8.0")
    with pytest.raises(SpecError, match="30 spec files have errors") as refused:
        loaded(read_specs(specs))
    assert "\n" not in str(refused.value)
    revision = loaded(read_specs(specs), allow_invalid=True)  # a worker's cache: by digest and allow_invalid
    assert len(revision.codec.skipped) == 30 and "FetchRequest" in revision.codec.names
    with pytest.raises(SpecError, match="30 spec files have errors"):
        loaded(read_specs(specs))  # the same digest, without the flag: still refused, never the codec above


# --- small corpora in this process ----------------------------------------------------------------------

# `krpc-lint replay ARGS` in a fresh process where PySpark cannot be imported: a run that reaches for Spark
# fails (SparkUnavailable, exit 2), so a run that succeeds started none and needed no PySpark.
NO_SPARK = ("import sys; sys.modules['pyspark'] = None; sys.argv = ['krpc-lint', *sys.argv[1:]]; "
            "from linter.cli.main import main; main()")


def _no_spark_cli(*args: str) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", NO_SPARK, "replay", *args], cwd=REPO_ROOT, capture_output=True,
                          check=False, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"})


def _read_back(out: Path) -> dict[str, Any]:
    """Both tables (schemas and rows, sorted) and summary.json without what depends on where and how fast it ran."""
    tables = {name: pq.read_table(out / name) for name in ("mismatches", "counts")}
    summary = json.loads((out / "summary.json").read_text())
    return {"schemas": {name: table.schema for name, table in tables.items()},
            "mismatches": sorted(tables["mismatches"].to_pylist(), key=lambda row: row["frame"]),
            "counts": tables["counts"].to_pylist(),  # the driver writes them sorted, wherever the frames ran
            "summary": {key: value for key, value in summary.items()
                        if key not in ("seconds", "frames_per_second", "master")}}


def test_a_small_corpus_replays_in_process_as_spark_does(specs: tuple[Path, Path], tmp_path: Path) -> None:
    """Without --master a small corpus runs here (no Spark started, PySpark not even importable); with
    --master local[1] on Spark. The same mismatches, counts and summary figures, broken JSON lines included."""
    require_spark()
    old, new = specs
    corpus = tmp_path / "corpus.jsonl"
    generate(old, 1200, corpus, seed=8)
    broken = ['{"api_key": 1000, "direction": "request", "hex": "0000', json.dumps({"direction": "request", "hex": "zz"}),
              json.dumps({"direction": "request", "hex": ""}),
              json.dumps({"direction": "request", "hex": "0000000a03e7000000000007ffff"}),
              json.dumps({"direction": "response", "api_key": 1000, "api_version": 1, "hex": "0000000400000007"}),
              "[1, 2]"]
    with open(corpus, "a") as file:
        file.write("\n".join(broken) + "\n")
    args = (str(corpus), "--specs", str(old), "--against", str(new))
    here = _no_spark_cli(*args, "--out", str(tmp_path / "here"))
    assert here.returncode == 0, here.stderr
    first = here.stdout.splitlines()[0]
    assert first.startswith("1206 frames: ") and first.endswith(" in this process (a small corpus: no Spark)"), first
    assert json.loads((tmp_path / "here" / "summary.json").read_text())["master"] == replay_mod.IN_PROCESS

    spark_run = run_cli("replay", *args, "--out", str(tmp_path / "spark"), "--master", "local[1]")
    assert spark_run.returncode == 0, spark_run.stderr
    assert spark_run.stdout.splitlines()[0].endswith(" on local[1]")
    assert spark_run.stdout.splitlines()[0].split(";")[0] == first.split(";")[0]  # frames and outcomes
    found, expected = _read_back(tmp_path / "here"), _read_back(tmp_path / "spark")
    assert found == expected
    assert len(found["mismatches"]) > len(broken) and found["summary"]["frames"] == 1206


def test_above_the_threshold_or_with_a_session_replay_runs_on_spark(spark: Any, specs: tuple[Path, Path],
                                                                     tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = specs
    generate(old, 300, tmp_path / "corpus.parquet", seed=4)
    assert f"at most {replay_mod.IN_PROCESS_FRAMES:,} frames is replayed in this process" in " ".join(
        run_cli("replay", "--help").stdout.split())  # the help gives the threshold
    here = replay(tmp_path / "corpus.parquet", old, new, tmp_path / "here")
    assert here.master == replay_mod.IN_PROCESS and here.frames == 300
    monkeypatch.setattr(replay_mod, "IN_PROCESS_FRAMES", 299)
    above = replay(tmp_path / "corpus.parquet", old, new, tmp_path / "above")  # the running session
    assert above.master == spark.sparkContext.master
    monkeypatch.undo()
    given = replay(tmp_path / "corpus.parquet", old, new, tmp_path / "given", spark=spark)
    assert given.master == spark.sparkContext.master
    assert _read_back(tmp_path / "here") == _read_back(tmp_path / "above") == _read_back(tmp_path / "given")
    assert (here.frames, here.outcomes, here.mismatches) == (above.frames, above.outcomes, above.mismatches)


def test_a_damaged_row_group_is_a_row_in_process_too(specs: tuple[Path, Path], tmp_path: Path) -> None:
    """parquet_input's repaired copy is read here as Spark reads it: the unreadable row group is one
    both_fail row, the frames after it numbered from there."""
    old, new = specs
    generate(old, 600, tmp_path / "good.parquet", seed=5)
    table = pq.read_table(tmp_path / "good.parquet")
    pq.write_table(table, tmp_path / "corpus.parquet", row_group_size=200, compression="snappy")
    data = bytearray((tmp_path / "corpus.parquet").read_bytes())
    group = pq.ParquetFile(tmp_path / "corpus.parquet").metadata.row_group(1).column(4)
    start = group.data_page_offset
    data[start + 20:start + 60] = b"\xff" * 40  # the second row group's bytes column: unreadable
    (tmp_path / "corpus.parquet").write_bytes(bytes(data))
    summary = replay(tmp_path / "corpus.parquet", old, new, tmp_path / "out")
    assert summary.master == replay_mod.IN_PROCESS and summary.frames == 401
    rows = _read_back(tmp_path / "out")["mismatches"]
    damaged = [row for row in rows if row["old_error"] and "row group 1 of 3" in row["old_error"]]
    assert [(row["frame"], row["outcome"]) for row in damaged] == [(200, BOTH_FAIL)]


def test_a_replay_that_needs_spark_says_so_first_without_pyspark(specs: tuple[Path, Path], tmp_path: Path) -> None:
    """With --master (or a larger corpus), a missing PySpark is the one line, before any progress or output."""
    generate(specs[0], 10, tmp_path / "corpus.parquet", seed=1)
    result = _no_spark_cli(str(tmp_path / "corpus.parquet"), "--specs", str(specs[0]), "--against", str(specs[1]),
                           "--out", str(tmp_path / "out"), "--master", "local[1]")
    assert result.returncode == 2 and not (tmp_path / "out").exists()
    assert result.stderr == "krpc-lint: error: the pipeline needs PySpark: pip install 'krpc-lint[spark]'\n"


def test_a_json_object_without_a_frame_is_replayed_as_spark_reads_it(spark: Any, specs: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"direction": "request", "hex": ""}) + "\n"
                                           + json.dumps({"direction": "request"}) + "\n" + "[1]\n")
    said = {}
    for where, options in (("in-process", {}), ("spark", {"spark": spark})):
        summary = replay(tmp_path / "corpus.jsonl", *specs, tmp_path / where, **options)
        assert (summary.master == replay_mod.IN_PROCESS) == (where == "in-process")
        rows = _read_back(tmp_path / where)["mismatches"]
        said[where] = sorted(((row["direction"], row["old_error"]) for row in rows), key=repr)
    assert ("request", "no frame: bytes and hex are both null") in said["spark"]
    assert said["in-process"] == said["spark"]
