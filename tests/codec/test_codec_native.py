"""The optional C accelerator agrees with the pure-Python plans, which stay the reference.

`Codec.encode/decode` use the accelerator when it is built (``make`` builds it; CI must have it)
and fall back to the Python plan for anything unusual, including every error, so errors keep
their precise offset and path. These tests compare the two paths directly.
"""

from __future__ import annotations

import json
import os
import random

import pytest

from linter.codec import UNKNOWN_TAGS, Codec, DecodeError
from linter.codec import codec as codec_module
from linter.codec.values import random_value

speedups = codec_module._speedups
if speedups is None:
    reason = "the C accelerator linter/codec/_speedups.c was not built (no compiler?)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason + "; CI must test it", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


@pytest.fixture(scope="module")
def golden(shared_dir):
    codec = Codec.load(shared_dir / "kafka-specs" / "trunk-2024-10")
    lines = (shared_dir / "golden" / "vectors.jsonl").read_text(encoding="utf-8").splitlines()
    return codec, [json.loads(line) for line in lines]


def pure_encode(codec: Codec, name: str, version: int, value) -> bytes:
    out = bytearray()
    codec.plan(name, version).encode(value, out)
    return bytes(out)


def native(codec: Codec, name: str, version: int):
    plan = codec.plan(name, version)
    return plan.native_plan(speedups)


def test_native_paths_match_the_reference_on_every_golden_vector(golden):
    codec, vectors = golden
    for vector in vectors:
        name, version, data = vector["message"], vector["version"], bytes.fromhex(vector["hex"])
        plan = native(codec, name, version)
        decoded = speedups.decode_message(plan, data)  # raises Fallback if the C path declines
        assert decoded == codec.plan(name, version).decode(data, 0)[0], (name, version)
        value = codec.from_json(name, version, vector["json"])
        assert speedups.encode_struct(plan, value) == pure_encode(codec, name, version, value), (name, version)


def test_native_paths_match_on_random_values(golden):
    codec, _ = golden
    rng = random.Random(20261122)
    for name in codec.names:
        for version in codec.spec(name).versions:
            value = random_value(codec, name, version, rng)
            expected = pure_encode(codec, name, version, value)
            assert codec.encode(name, version, value) == expected, (name, version)
            assert codec.decode(name, version, expected) == codec.plan(name, version).decode(expected, 0)[0]


def with_unknown_tags(codec: Codec, name: str, version: int, value: dict, rng: random.Random) -> dict:
    """The value with tags no version knows in its top-level tagged section (when it has one)."""
    if not codec.plan(name, version).flexible:
        return value
    tags = sorted(rng.sample(range(1000, 1100), rng.randint(1, 3)))
    return {**value, UNKNOWN_TAGS: [(tag, rng.randbytes(rng.randint(0, 5))) for tag in tags]}


def test_native_path_reads_tagged_sections_itself_in_the_reference_order(golden):
    """Known tags, unknown tags and absent tags' defaults come out of C exactly as Python orders
    them (dict order shows in ``codec decode``'s JSON), and without falling back to Python."""
    codec, _ = golden
    rng = random.Random(20261123)
    flexible = [(name, version) for name in codec.names for version in codec.spec(name).versions
              if codec.plan(name, version).flexible]
    assert len(flexible) > 300
    for name, version in flexible:
        value = with_unknown_tags(codec, name, version, random_value(codec, name, version, rng), rng)
        data = pure_encode(codec, name, version, value)
        reference, end = codec.plan(name, version).decode(data, 0)
        decoded = speedups.decode_message(native(codec, name, version), data)  # Fallback fails the test
        assert end == len(data) and repr(decoded) == repr(reference), (name, version)


def test_errors_come_from_the_reference_path(golden):
    codec, vectors = golden
    rng = random.Random(7)
    checked = 0
    for vector in rng.sample(vectors, 200):
        name, version, data = vector["message"], vector["version"], bytes.fromhex(vector["hex"])
        if not data:
            continue
        cut = data[: rng.randrange(len(data))]
        with pytest.raises(DecodeError) as through_codec:
            codec.decode(name, version, cut)
        with pytest.raises(DecodeError) as reference:
            _value, end = codec.plan(name, version).decode(cut, 0)
            if end != len(cut):
                raise DecodeError("trailing", end)
        assert (through_codec.value.offset, through_codec.value.path) == \
            (reference.value.offset, reference.value.path)
        checked += 1
    assert checked > 150


def test_bit_flips_never_disagree(golden):
    codec, vectors = golden
    rng = random.Random(11)
    for vector in rng.sample(vectors, 150):
        name, version, data = vector["message"], vector["version"], bytearray.fromhex(vector["hex"])
        if not data:
            continue
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        try:
            reference = codec.plan(name, version).decode(bytes(data), 0)
        except DecodeError:
            reference = None
        try:
            ours = speedups.decode_message(native(codec, name, version), bytes(data))
        except (speedups.Fallback, DecodeError):
            ours = None  # declined (or a Python-handled field refused it): Codec.decode uses the reference
        if reference is not None and reference[1] == len(data):
            assert ours is None or ours == reference[0]
        else:
            assert ours is None, f"{name} v{version}: the C path accepted bytes the reference refuses"
