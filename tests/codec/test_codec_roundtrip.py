"""Round trips of the codec for every message and every version of trunk-2024-10.

Values come from ``linter.codec.values`` (Hypothesis strategies and the seeded
``random_value``): value -> bytes -> value gives the same value (floats compared bit for bit)
and the same bytes again; value -> JSON text -> value gives the same value; unknown tagged
fields are kept and written back unchanged, whether the encoder made them or not. Last,
Kafka's limit on string lengths, which bounds what may round trip.
"""

from __future__ import annotations

import json
import math
import random
import uuid
from typing import Any

import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linter.codec import UNKNOWN_TAGS, Codec, DecodeError, EncodeError
from linter.codec.values import (
    Array,
    Leaf,
    Struct,
    identical,
    random_value,
    shape,
    strategy,
)
from linter.codec.wire import uvarint_bytes

SPECS = shared_path() / "kafka-specs" / "trunk-2024-10"
CODEC = Codec.load(SPECS) if SPECS.is_dir() else None  # once per module: parametrization needs the pairs
PAIRS = [(name, version) for name in CODEC.names for version in CODEC.spec(name).versions] if CODEC else []
FLEXIBLE = [(name, version) for name, version in PAIRS if CODEC.plan(name, version).flexible]
SEEDS = (0, 1, 2)

# (message, version) -> why it fails; the cases run as xfail(strict=True) until the codec is fixed.
KNOWN_BUGS: dict[tuple[str, int], str] = {}

EXAMPLES = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.data_too_large])


def params(pairs: list[tuple[str, int]]) -> list:
    """The pairs as pytest params with readable ids and the known bugs marked; a placeholder that
    skips (fails in CI, through ``shared_dir``) when the specs are missing."""
    if not pairs:
        return [pytest.param(None, None, id="no-specs")]
    return [pytest.param(name, version, id=f"{name}-v{version}",
                         marks=[pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[(name, version)])]
                         if (name, version) in KNOWN_BUGS else [])
            for name, version in pairs]


@pytest.fixture(scope="module")
def codec(shared_dir) -> Codec:
    assert CODEC is not None, f"{SPECS} is missing from {shared_dir}"
    return CODEC


# --- comparison ---------------------------------------------------------------------------------


def test_identical_tells_floats_and_types_apart():
    assert identical({"a": [1.5, -0.0]}, {"a": [1.5, -0.0]})
    assert not identical({"a": [-0.0]}, {"a": [0.0]})
    assert not identical({"a": True}, {"a": 1})
    assert not identical({"a": 1}, {"a": 1, "b": 2})
    assert not identical([(1, b"x")], [(1, b"y")])


def assert_binary_roundtrip(codec: Codec, name: str, version: int, value: dict) -> bytes:
    data = codec.encode(name, version, value)
    decoded = codec.decode(name, version, data)
    assert identical(decoded, value), f"decode(encode(value)) differs:\n{decoded!r}\n!=\n{value!r}"
    assert codec.encode(name, version, decoded) == data, "encode(decode(data)) != data"
    return data


def assert_json_roundtrip(codec: Codec, name: str, version: int, value: dict) -> None:
    form = codec.to_json(name, version, value)
    text = json.dumps(form, ensure_ascii=False, allow_nan=False)
    back = codec.from_json(name, version, json.loads(text))
    assert identical(back, value), f"from_json(to_json(value)) differs:\n{back!r}\n!=\n{value!r}"
    assert json.dumps(codec.to_json(name, version, back), ensure_ascii=False) == text


def present_keys(codec: Codec, name: str, version: int) -> set[str]:
    return {field.key for field in codec.plan(name, version).fields if field.present}


# --- Hypothesis values ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "version"), params(PAIRS))
def test_binary_roundtrip(codec, name, version):
    keys = present_keys(codec, name, version)

    @EXAMPLES
    @given(strategy(codec, name, version))
    def check(value):
        assert set(value) == keys
        assert_binary_roundtrip(codec, name, version, value)

    check()


@pytest.mark.parametrize(("name", "version"), params(PAIRS))
def test_json_roundtrip(codec, name, version):
    @settings(EXAMPLES, max_examples=4)
    @given(strategy(codec, name, version, empty_records=True))
    def check(value):
        assert_json_roundtrip(codec, name, version, value)

    check()


# --- seeded random values -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "version"), params(PAIRS))
def test_random_value_roundtrip(codec, name, version):
    for seed in SEEDS:
        value = random_value(codec, name, version, random.Random(seed))
        again = random_value(codec, name, version, random.Random(seed))
        assert identical(value, again), f"seed {seed} is not deterministic"
        assert set(value) == present_keys(codec, name, version)
        assert_binary_roundtrip(codec, name, version, value)
        assert_json_roundtrip(codec, name, version, random_value(codec, name, version, random.Random(seed),
                                                                 empty_records=True))


def walk(node: Any, value: Any, seen: dict[str, int]) -> None:
    """Count the kinds of values a generated message holds, guided by its shape."""
    if value is None:
        seen["null"] += 1
    elif isinstance(node, Struct):
        for slot in node.slots:
            item = value[slot.key]
            if slot.default is not None:
                seen["tagged default" if identical(item, slot.default()) else "tagged set"] += 1
            walk(slot.shape, item, seen)
    elif isinstance(node, Array):
        seen["array>0" if value else "array=0"] += 1
        seen["long array"] += len(value) >= 128
        for item in value:
            walk(node.element, item, seen)
    elif isinstance(node, Leaf):
        if isinstance(value, int) and not isinstance(value, bool) and value in (node.low, node.high):
            seen["int edge"] += 1
        if isinstance(value, float) and math.copysign(1.0, value) < 0 and value == 0:
            seen["-0.0"] += 1
        if isinstance(value, str) and any(ord(c) > 0xFFFF for c in value):
            seen["astral"] += 1
        if isinstance(value, (str, bytes)) and len(value.encode() if isinstance(value, str) else value) >= 128:
            seen["long"] += 1
        if isinstance(value, uuid.UUID) and value.int:
            seen["uuid"] += 1


def test_random_values_cover_the_interesting_cases(codec):
    """Over the corpus, the seeded values hold nulls, tagged fields both ways, edges and long values,
    and differ from seed to seed."""
    seen: dict[str, int] = dict.fromkeys(("null", "tagged default", "tagged set", "array>0", "array=0", "int edge",
                                          "-0.0", "astral", "long", "long array", "uuid"), 0)
    differ = 0
    for name, version in PAIRS:
        values = [random_value(codec, name, version, random.Random(seed)) for seed in SEEDS]
        for value in values:
            walk(shape(codec, name, version), value, seen)
        differ += not identical(values[0], values[1])
    assert all(seen.values()), seen
    assert differ > len(PAIRS) * 0.9


def test_generated_values_respect_nullability(codec):
    """A null where the version does not allow it is refused by the encoder: the generator never makes one."""
    name, version = "RequestHeader", 1  # ClientId is nullable, RequestApiKey is not
    value = random_value(codec, name, version, random.Random(0))
    assert set(value) >= {"clientId", "requestApiKey"}
    with pytest.raises(EncodeError):
        codec.encode(name, version, {**value, "requestApiKey": None})
    codec.encode(name, version, {**value, "clientId": None})


# --- unknown tagged fields ------------------------------------------------------------------------


LONG_PAYLOAD = 130  # a two-byte size varint


def unknown_tags(codec: Codec, name: str, version: int) -> st.SearchStrategy:
    """Sorted (tag, payload) pairs with tags the top-level struct does not know."""
    known = set(codec.plan(name, version).tagged_by_number)
    free = [tag for tag in range(max(known, default=-1) + 8) if tag not in known] + [2**31 - 1]
    return st.lists(st.tuples(st.sampled_from(free), st.binary(max_size=LONG_PAYLOAD)), min_size=1, max_size=3,
                    unique_by=lambda pair: pair[0]).map(sorted)


@pytest.mark.parametrize(("name", "version"), params(FLEXIBLE))
def test_unknown_tags_roundtrip(codec, name, version):
    @settings(EXAMPLES, max_examples=4)
    @given(strategy(codec, name, version), unknown_tags(codec, name, version))
    def check(value, tags):
        data = codec.encode(name, version, {**value, UNKNOWN_TAGS: tags})
        decoded = codec.decode(name, version, data)
        assert decoded.pop(UNKNOWN_TAGS) == tags
        assert identical(decoded, value)
        assert codec.encode(name, version, {**decoded, UNKNOWN_TAGS: tags}) == data

    check()


@pytest.mark.parametrize(("name", "version"), params(FLEXIBLE))
def test_unknown_tag_in_handmade_bytes(codec, name, version):
    """Bytes the encoder did not write: the empty top-level tagged section (a final 0x00) becomes one
    unknown field, which decode keeps and encode writes back byte for byte."""
    default = codec.default(name, version)
    data = codec.encode(name, version, default)
    assert data[-1:] == b"\x00", "the default value ends with an empty tagged section"
    known = codec.plan(name, version).tagged_by_number
    tag = max(known, default=-1) + 5
    payload = bytes(range(200))  # a two-byte size varint
    patched = data[:-1] + uvarint_bytes(1) + uvarint_bytes(tag) + uvarint_bytes(len(payload)) + payload
    decoded = codec.decode(name, version, patched)
    assert decoded.pop(UNKNOWN_TAGS) == [(tag, payload)]
    assert identical(decoded, default)
    assert codec.encode(name, version, {**decoded, UNKNOWN_TAGS: [(tag, payload)]}) == patched


def test_unknown_tag_in_bytes_spelled_out(codec):
    """One message spelled out in full: ApiVersionsRequest v3 with a tag the spec does not define."""
    name, version = "ApiVersionsRequest", 3
    data = bytes.fromhex("02" "6b" "02" "31") + bytes.fromhex("01" "07" "02" "cafe")  # "k", "1", tag 7 = cafe
    decoded = codec.decode(name, version, data)
    assert decoded == {"clientSoftwareName": "k", "clientSoftwareVersion": "1", UNKNOWN_TAGS: [(7, b"\xca\xfe")]}
    assert codec.encode(name, version, decoded) == data


# --- Kafka's limits -------------------------------------------------------------------------------

STRING_MAX = 0x7FFF  # Kafka refuses longer strings in every version, compact ones included

@pytest.mark.parametrize(("name", "version", "key"), [("FindCoordinatorRequest", 0, "key"),  # int16 length
                                                      ("ApiVersionsRequest", 3, "clientSoftwareName")])  # compact
def test_strings_up_to_0x7fff_bytes_round_trip(codec, name, version, key):
    assert_binary_roundtrip(codec, name, version, {**codec.default(name, version), key: "é" * (STRING_MAX // 2) + "x"})


def test_classic_strings_longer_than_0x7fff_bytes_are_refused(codec):
    value = {**codec.default("FindCoordinatorRequest", 0), "key": "x" * (STRING_MAX + 1)}
    with pytest.raises(EncodeError, match="longer than Kafka's limit of 32767"):
        codec.encode("FindCoordinatorRequest", 0, value)


def test_compact_strings_longer_than_0x7fff_bytes_are_refused_on_encode(codec):
    value = {**codec.default("ApiVersionsRequest", 3), "clientSoftwareName": "x" * (STRING_MAX + 1)}
    with pytest.raises(EncodeError):
        codec.encode("ApiVersionsRequest", 3, value)


def test_compact_strings_longer_than_0x7fff_bytes_are_refused_on_decode(codec):
    too_long = uvarint_bytes(STRING_MAX + 2) + b"x" * (STRING_MAX + 1)  # compact: length + 1
    data = too_long + uvarint_bytes(2) + b"1" + b"\x00"  # ClientSoftwareVersion "1", no tagged fields
    with pytest.raises(DecodeError) as caught:
        codec.decode("ApiVersionsRequest", 3, data)
    assert caught.value.offset <= 3 and caught.value.path == "ClientSoftwareName"  # at the length
