"""Every golden vector made by Kafka's own generated classes: encode(json) == hex and decode(hex) == json."""

from __future__ import annotations

import json
import struct

import pytest

from linter.codec import Codec


def same(left, right) -> bool:
    """Equality with floats compared bit for bit (-0.0 is not 0.0) and no int/float/bool confusion."""
    if isinstance(left, float) or isinstance(right, float):
        return type(left) is type(right) and struct.pack(">d", left) == struct.pack(">d", right)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


@pytest.fixture(scope="module")
def golden(shared_dir):
    codec = Codec.load(shared_dir / "kafka-specs" / "trunk-2024-10")
    lines = (shared_dir / "golden" / "vectors.jsonl").read_text(encoding="utf-8").splitlines()
    return codec, [json.loads(line) for line in lines]


def test_there_are_1566_vectors_over_every_spec(golden):
    codec, vectors = golden
    assert len(vectors) == 1566
    assert {v["message"] for v in vectors} == set(codec.names)


def test_encode_gives_exactly_kafkas_bytes(golden):
    codec, vectors = golden
    wrong = []
    for vector in vectors:
        name, version = vector["message"], vector["version"]
        encoded = codec.encode(name, version, codec.from_json(name, version, vector["json"])).hex()
        if encoded != vector["hex"]:
            wrong.append(f"{name} v{version}: {encoded[:80]} != {vector['hex'][:80]}")
    assert not wrong, f"{len(wrong)} vectors encode differently:\n" + "\n".join(wrong[:10])


def test_decode_gives_back_kafkas_json(golden):
    codec, vectors = golden
    wrong = []
    for vector in vectors:
        name, version = vector["message"], vector["version"]
        decoded = codec.to_json(name, version, codec.decode(name, version, bytes.fromhex(vector["hex"])))
        if not same(decoded, vector["json"]):
            wrong.append(f"{name} v{version}: {json.dumps(decoded)[:120]}")
    assert not wrong, f"{len(wrong)} vectors decode differently:\n" + "\n".join(wrong[:10])


def test_the_comparison_is_strict():
    assert not same({"a": -0.0}, {"a": 0.0})
    assert not same({"a": 1}, {"a": 1.0})
    assert not same([True], [1])
    assert same({"a": [1.5, "x", None]}, {"a": [1.5, "x", None]})
