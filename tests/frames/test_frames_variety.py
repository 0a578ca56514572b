"""``frames generate``'s variety (issue 15): distinct payloads, valid frames, the same bytes per seed,
and the value distributions behind them (``linter.frames.values``)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import require_shared

from linter.codec import Codec
from linter.codec.values import Array, Leaf, Struct, shape
from linter.frames import generate as frames_mod
from linter.frames.corpus import CORRELATION_OFFSET
from linter.frames.generate import generate
from linter.frames.values import Traffic, dict_maker, int_maker
from linter.model.wire import INTEGERS

pq = pytest.importorskip("pyarrow.parquet")

COUNT, DISTINCT = 20_000, 10_000  # the bar (50,000 of 100,000) at a fifth of the size


@pytest.fixture(scope="module")
def kafka() -> Path:
    return require_shared("kafka-specs", "3.7.0")


@pytest.fixture(scope="module")
def codec(kafka: Path) -> Codec:
    return Codec.load(kafka)


@pytest.fixture(scope="module")
def corpus(kafka: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("variety") / "frames.parquet"
    assert generate(kafka, COUNT, out) == COUNT  # the default seed
    return pq.read_table(out).to_pylist()


def payload(row: dict[str, Any]) -> bytes:
    """The frame without its correlation id, which differs in every row by design."""
    frame, at = row["bytes"], CORRELATION_OFFSET[row["direction"]]
    return frame[:at] + bytes(4) + frame[at + 4:]


def test_a_corpus_holds_mostly_distinct_payloads_of_every_kind(corpus: list[dict[str, Any]], codec: Codec) -> None:
    assert len({payload(row) for row in corpus}) >= DISTINCT
    kinds = {(k.api_key, k.api_version, k.direction) for k in frames_mod.kinds(codec)}
    assert {(row["api_key"], row["api_version"], row["direction"]) for row in corpus} == kinds


def test_every_frame_decodes_and_encodes_back_to_its_bytes(corpus: list[dict[str, Any]], codec: Codec) -> None:
    """Valid frames, and the variety is in the bodies, not only in the headers' client ids."""
    bodies = set()
    for index, row in enumerate(corpus):
        frame = row["bytes"]
        if row["direction"] == "request":
            name, version, header, body = codec.decode_request(frame)
            assert (codec.spec(name).api_key, version) == (row["api_key"], row["api_version"])
            assert codec.encode_request(version, header, body, name) == frame
        else:
            header, body = codec.decode_response(row["api_key"], row["api_version"], frame)
            name = codec.response_for(row["api_key"]).name
            assert codec.encode_response(row["api_key"], row["api_version"], header, body) == frame
        assert header["correlationId"] == row["correlation_id"] == index
        bodies.add((name, row["api_version"], codec.encode(name, row["api_version"], body)))
    assert len(bodies) >= DISTINCT * 9 // 10


def test_the_same_seed_writes_the_same_file(kafka: Path, tmp_path: Path) -> None:
    """Byte for byte, Parquet included (no timestamps in it), and JSON Lines; another seed differs."""
    for suffix in (".parquet", ".jsonl"):
        a, b, c = (tmp_path / f"{name}{suffix}" for name in "abc")
        generate(kafka, 6000, a, seed=7)  # more than POOL: a pool of new values, then repeats
        generate(kafka, 6000, b, seed=7)
        generate(kafka, 6000, c, seed=8)
        assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_pool_size_grows_with_the_corpus_up_to_a_cap() -> None:
    assert [frames_mod.pool_size(n) for n in (0, 10, frames_mod.POOL)] == [0, 10, frames_mod.POOL]
    assert frames_mod.pool_size(100_000) == 60_000
    assert frames_mod.pool_size(10**8) == frames_mod.FRESH_MAX


# --- the distributions ----------------------------------------------------------------------------


def _walk(node: Struct, value: dict[str, Any], stats: Counter, seen: dict[str, list]) -> None:
    """Counts what the issue asks for: nulls, tagged fields present, string / bytes / array sizes."""
    for slot in node.slots:
        item = value[slot.key]
        if slot.nullable:
            stats["null" if item is None else "not null"] += 1
        if slot.default is not None:
            stats["tagged default" if item == slot.default() else "tagged present"] += 1
        if item is not None:
            _walk_shape(slot.shape, item, stats, seen)


def _walk_shape(node: Any, item: Any, stats: Counter, seen: dict[str, list]) -> None:
    if isinstance(node, Struct):
        _walk(node, item, stats, seen)
    elif isinstance(node, Array):
        seen["array"].append(len(item))
        for element in item:
            _walk_shape(node.element, element, stats, seen)
    elif isinstance(node, Leaf) and node.kind in ("string", "bytes", "records"):
        seen[node.kind].append(item)
    elif isinstance(node, Leaf) and node.kind in INTEGERS:
        seen["int"].append(item)


def test_values_vary_as_traffic_does(codec: Codec) -> None:
    traffic, stats = Traffic(codec, random.Random(1)), Counter()
    seen: dict[str, list] = {kind: [] for kind in ("array", "string", "bytes", "records", "int")}
    every = frames_mod.kinds(codec)
    for kind in every * 6:
        traffic.set_size()
        _walk(shape(codec, kind.name, kind.api_version), traffic.value(kind.name, kind.api_version), stats, seen)
    assert 0.05 < stats["null"] / (stats["null"] + stats["not null"]) < 0.5
    assert 0.15 < stats["tagged present"] / (stats["tagged present"] + stats["tagged default"]) < 0.6
    counts = Counter(seen["array"])
    assert counts[0] and counts[1] > counts[2] > counts[5] and max(counts) >= 128  # skewed, with a long tail
    strings = seen["string"]
    assert len(set(strings)) > len(strings) / 10
    assert {len(s) for s in strings} >= set(range(1, 40)) and max(map(len, strings)) >= 128
    assert any(not s.isascii() for s in strings) and any(ord(c) > 0xFFFF for s in strings for c in s)
    assert any(s.startswith("__consumer_offsets") for s in strings)  # topic names from the vocabulary
    sizes = {len(b) for b in seen["bytes"] + seen["records"]}
    assert 0 in sizes and max(sizes) >= 1024 and len(sizes) > 100
    ints = Counter(seen["int"])
    assert ints.most_common(1)[0][0] == 0 and ints[-1] and max(ints) > 2**40 and len(ints) > 1000


@pytest.mark.parametrize("key", ["errorCode", "throttleTimeMs", "partitionIndex", "fetchOffset", "timestamp",
                                 "producerId", "leaderEpoch", "timeoutMs", "maxBytes", "port", "nodeId",
                                 "apiKey", "numPartitions", "sheep"])
def test_integers_stay_within_their_type(key: str) -> None:
    """A field's own distribution applies only where all it draws fits the type; else the generic one."""
    rng = random.Random(key)
    for type_name, (low, high) in INTEGERS.items():
        make = int_maker(rng, key, low, high)
        assert all(low <= make() <= high for _ in range(3000)), type_name


def test_struct_keys_never_reach_generated_code() -> None:
    keys = ['a"}, __import__("os")) #', "b\n    raise SystemExit", "c"]
    make = dict_maker(keys, [lambda: 1, lambda: 2, lambda: None])
    assert make() == dict(zip(keys, [1, 2, None])) and dict_maker([], [])() == {}


def test_allow_invalid_generates_from_the_specs_kafkas_generator_accepts(tmp_path: Path) -> None:
    """Issue 15: Kafka's own 2.8.0 specs hold 30 files later generators refuse: refused in one line without the
    flag; with it, the rest generate frames and the skipped files are reported once."""
    from linter.codec import SpecError

    specs = require_shared("kafka-specs", "2.8.0")
    with pytest.raises(SpecError, match="30 spec files have errors"):
        generate(specs, 10, tmp_path / "refused.parquet")
    told: list[tuple[str, ...]] = []
    assert generate(specs, 200, tmp_path / "frames.parquet", allow_invalid=True, on_skipped=told.append) == 200
    assert len(told) == 1 and len(told[0]) == 30 and not (tmp_path / "refused.parquet").exists()


def test_a_request_version_without_its_response_gets_no_reply_frames(kafka: Path, tmp_path: Path) -> None:
    """A vendor's copy with the request bumped and not yet its response: the extra version has requests only
    (before, generating one was an internal error)."""
    import re
    import shutil

    specs = tmp_path / "specs"
    shutil.copytree(kafka, specs)
    request = next(specs.rglob("HeartbeatRequest.json"))
    text = request.read_text()
    top = int(re.search(r'"validVersions": "0-(\d+)"', text).group(1))
    request.write_text(text.replace(f'"validVersions": "0-{top}"', f'"validVersions": "0-{top + 1}"'))
    key = Codec.load(specs).spec("HeartbeatRequest").api_key
    kinds = [k for k in frames_mod.kinds(Codec.load(specs)) if k.api_key == key]
    assert {k.api_version for k in kinds if k.direction == "request"} == set(range(top + 2))
    assert {k.api_version for k in kinds if k.direction == "response"} == set(range(top + 1))
    out = tmp_path / "frames.parquet"
    generate(specs, 2000, out, seed=1)
    table = pq.read_table(out).to_pydict()
    assert (key, top + 1, "response") not in set(zip(table["api_key"], table["api_version"], table["direction"]))


def test_the_written_parquet_has_the_corpus_ddl_schema(kafka: Path, tmp_path: Path) -> None:
    """One schema source: the generator writes what ``corpus.WRITTEN`` says, which readers cast by ``JSON_INPUT``."""
    from linter.frames.corpus import INPUT_TYPES, WRITTEN
    from linter.spark.schema import arrow_schema, fields

    out = tmp_path / "frames.parquet"
    generate(kafka, 50, out, seed=1)
    assert pq.read_schema(out) == arrow_schema(WRITTEN)
    assert all(INPUT_TYPES[name] == kind for name, kind in fields(WRITTEN))
