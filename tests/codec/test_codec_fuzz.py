"""Hostile input for the decoder: random bytes, truncated and bit-flipped golden vectors, and
lengths that promise far more than the input holds.

Whatever the bytes, ``codec.decode`` either returns a value that encodes and decodes back to
itself, or raises ``DecodeError`` with an offset inside the input and a field path; it never
raises anything else, never runs for a second (a ``SIGALRM`` timer stops it), and never
allocates in proportion to a declared length rather than to the input.
"""

from __future__ import annotations

import json
import random
import signal
import struct
import sys
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linter.codec import Codec, DecodeError
from linter.codec.values import identical
from linter.codec.wire import uvarint_bytes

TIME_LIMIT = 20.0  # seconds, per decode: a hang guard only (a decode of a few bytes takes microseconds; never a speed check)
MEMORY_LIMIT = 1 << 20  # bytes allocated at the peak, for an input of a few bytes
SAMPLE = 150  # golden vectors truncated at every length, and bit-flipped at every byte
FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def codec(shared_dir) -> Codec:
    return Codec.load(shared_dir / "kafka-specs" / "trunk-2024-10")


@pytest.fixture(scope="module")
def vectors(shared_dir) -> list[tuple[str, int, bytes]]:
    lines = (shared_dir / "golden" / "vectors.jsonl").read_text(encoding="utf-8").splitlines()
    return [(item["message"], item["version"], bytes.fromhex(item["hex"])) for item in map(json.loads, lines)]


@pytest.fixture(scope="module")
def sample(vectors) -> list[tuple[str, int, bytes]]:
    """A fixed sample of non-empty vectors, always with the largest one."""
    candidates = [vector for vector in vectors if vector[2]]
    largest = max(candidates, key=lambda vector: len(vector[2]))
    return [largest, *random.Random(2024).sample(candidates, SAMPLE - 1)]


class Hang(BaseException):
    """Raised by the timer; a BaseException so that no ``except Exception`` in the codec swallows it."""


@pytest.fixture(autouse=True)
def alarm():
    def on_alarm(signum, frame):
        raise Hang(f"decode ran for more than {TIME_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def decode(codec: Codec, name: str, version: int, data: bytes) -> dict | DecodeError:
    """The decoded value or the DecodeError, checked: no other exception, no hang, a sane offset and path,
    and a value that survives encode -> decode."""
    where = f"{name} v{version} bytes {data.hex() or '(empty)'}"
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
            value = codec.decode(name, version, data)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data), f"{where}: offset {exc.offset} outside the input ({exc})"
        assert isinstance(exc.path, str), f"{where}: path {exc.path!r}"
        value = exc
    except Hang:
        pytest.fail(f"{where}: decode ran for more than {TIME_LIMIT} s")
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{where}: {type(exc).__name__} instead of DecodeError: {exc}")
    if isinstance(value, DecodeError):
        return value
    again = codec.decode(name, version, codec.encode(name, version, value))
    assert identical(again, value), f"{where}: decoded {value!r}, but its encoding decodes to {again!r}"
    return value


def test_decode_helper_reports_foreign_exceptions(codec, monkeypatch):
    """The checks above can fail: an IndexError or a bad offset from the codec is reported."""
    plan = codec.plan("ApiVersionsRequest", 3)

    def broken(buf, pos):
        raise IndexError("boom")

    monkeypatch.setattr(plan, "decode", broken)
    with pytest.raises(pytest.fail.Exception, match="IndexError instead of DecodeError"):
        decode(codec, "ApiVersionsRequest", 3, b"\x00")

    def far(buf, pos):
        raise DecodeError("far away", len(buf) + 1)

    monkeypatch.setattr(plan, "decode", far)
    with pytest.raises(AssertionError, match="outside the input"):
        decode(codec, "ApiVersionsRequest", 3, b"\x00")


def test_timer_stops_a_hang(codec, monkeypatch):
    plan = codec.plan("ApiVersionsRequest", 3)

    def forever(buf, pos):
        while True:
            pass

    monkeypatch.setattr(plan, "decode", forever)
    monkeypatch.setattr(sys.modules[__name__], "TIME_LIMIT", 0.05)
    with pytest.raises(pytest.fail.Exception, match="more than"):
        decode(codec, "ApiVersionsRequest", 3, b"\x00")


# --- random input ------------------------------------------------------------------------------------


def test_random_bytes(codec):
    pairs = [(name, version) for name in codec.names for version in codec.spec(name).versions]

    @FUZZ
    @given(st.sampled_from(pairs), st.binary(max_size=64))
    def check(pair, data):
        decode(codec, *pair, data)

    check()


def test_spliced_golden_vectors(codec, vectors):
    """Golden bytes with a few random bytes written over, inserted or cut out somewhere: input that is
    mostly well-formed, so the decoder gets deep before it meets the damage."""

    @FUZZ
    @given(st.sampled_from(vectors), st.integers(0, 2500), st.integers(0, 4), st.binary(max_size=6))
    def check(vector, where, cut, patch):
        name, version, data = vector
        where = min(where, len(data))
        decode(codec, name, version, data[:where] + patch + data[where + cut:])

    check()


def test_every_truncation(codec, sample):
    """No proper prefix of a valid encoding is a valid encoding: each fails with DecodeError."""
    for name, version, data in sample:
        assert not isinstance(decode(codec, name, version, data), DecodeError)
        for length in range(len(data)):
            result = decode(codec, name, version, data[:length])
            assert isinstance(result, DecodeError), f"{name} v{version}: prefix {data[:length].hex()} decoded"


def test_bit_flips(codec, sample):
    """One bit flipped at every byte (the bit varies from byte to byte): a value or a DecodeError."""
    rng = random.Random(7)
    outcomes = {"value": 0, "error": 0}
    for name, version, data in sample:
        buf = bytearray(data)
        for index in range(len(buf)):
            bit = 1 << rng.randrange(8)
            buf[index] ^= bit
            result = decode(codec, name, version, bytes(buf))
            buf[index] ^= bit
            outcomes["error" if isinstance(result, DecodeError) else "value"] += 1
    assert outcomes["value"] and outcomes["error"], outcomes


# --- declared lengths far beyond the input -----------------------------------------------------------

HUGE_CLASSIC = {"string": struct.pack(">h", 2**15 - 1), "bytes": struct.pack(">i", 2**31 - 1),
                "records": struct.pack(">i", 2**31 - 1), "array": struct.pack(">i", 2**31 - 1)}
HUGE_COMPACT = uvarint_bytes(2**32 - 1)  # length 2**32 - 2, in five bytes


def huge_inputs(codec: Codec) -> list[tuple[str, int, bytes]]:
    """For every (message, version) whose first field on the wire has a length: that length at its
    largest, followed by a few bytes. For every flexible one: its default encoding with the final
    (empty) tagged section replaced by a huge count, and by one field of a huge size."""
    cases = []
    for name in codec.names:
        for version in codec.spec(name).versions:
            plan = codec.plan(name, version)
            first = next((field for field in plan.fields if field.present and field.tag is None), None)
            kind = None if first is None else "array" if first.spec.type.is_array else first.spec.type.name
            if kind in HUGE_CLASSIC:
                override = first.spec.flexible_versions.value if first.spec.flexible_versions.given else None
                compact = plan.flexible if override is None else override.contains(version)
                cases.append((name, version, (HUGE_COMPACT if compact else HUGE_CLASSIC[kind]) + bytes(6)))
            if plan.flexible:
                body = codec.encode(name, version, codec.default(name, version))[:-1]
                cases.append((name, version, body + HUGE_COMPACT + bytes(6)))
                cases.append((name, version, body + b"\x01\x7f" + HUGE_COMPACT + bytes(6)))
    return cases


def test_huge_declared_lengths_allocate_little(codec):
    cases = huge_inputs(codec)
    assert len(cases) > 500
    for name, version, data in cases:
        codec.plan(name, version)  # compile outside the measurement
    tracemalloc.start()
    try:
        for name, version, data in cases:
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            result = decode(codec, name, version, data)
            peak = tracemalloc.get_traced_memory()[1] - base
            assert isinstance(result, DecodeError), f"{name} v{version}: {data.hex()} decoded"
            assert peak < MEMORY_LIMIT, f"{name} v{version}: {data.hex()} allocated {peak} bytes"
    finally:
        tracemalloc.stop()


def test_memory_check_can_fail():
    """The measurement sees an allocation the size of a declared length."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        bytes(2**31 - 1 >> 10)
        assert tracemalloc.get_traced_memory()[1] - base > MEMORY_LIMIT
    finally:
        tracemalloc.stop()
