"""``StructPlan.signature`` on Kafka's own releases: where two revisions' plans of a message version
have equal signatures, every input decodes alike under both (value and key order, or the same
error at the same offset and path). ``krpc-lint replay`` relies on it to decode such a frame once.

The random specs and mutations of tests/compat/test_compat_properties.py check the same property for
every kind of change; this checks it at the scale of real specs, and that the signatures are not
needlessly strict: most message versions are unchanged between releases and must compare equal.
"""

from __future__ import annotations

import random

from linter.codec import Codec, CodecError
from linter.codec.values import random_value


def outcome(codec: Codec, name: str, version: int, data: bytes) -> tuple:
    try:
        return ("value", repr(codec.decode(name, version, data)))
    except CodecError as exc:
        return ("error", str(exc), exc.offset, exc.path)


def corruptions(data: bytes, rng: random.Random) -> list[bytes]:
    flipped = bytearray(data)
    if flipped:
        flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
    return [data, data[:rng.randrange(len(data) + 1)], bytes(flipped)]


def test_equal_signatures_decode_alike_from_kafka_3_7_to_trunk(kafka_specs):
    """(2.8.0 is not loadable: one of its specs has errors, see docs/compat-kafka.md.)"""
    old, new = Codec.load(kafka_specs / "3.7.0"), Codec.load(kafka_specs / "trunk-2024-10")
    rng = random.Random(20261122)
    equal = differ = 0
    for name in sorted(set(old.names) & set(new.names)):
        for version in sorted(set(old.spec(name).versions) & set(new.spec(name).versions)):
            if old.plan(name, version).signature != new.plan(name, version).signature:
                differ += 1
                continue
            equal += 1
            for writer in (old, new):
                data = writer.encode(name, version, random_value(writer, name, version, rng))
                for item in corruptions(data, rng):
                    assert outcome(old, name, version, item) == outcome(new, name, version, item), \
                        (name, version, item.hex())
    assert differ > 0
    assert equal / (equal + differ) > 0.8, f"{equal} equal, {differ} differ: the signatures are needlessly strict"
