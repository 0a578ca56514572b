"""Primitive wire encodings of Kafka's protocol: fixed-width big-endian numbers and varints.

Every reader checks the remaining length before it reads, so a truncated or hostile input
fails with a ``DecodeError`` at the right offset instead of an ``IndexError``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from linter.codec.errors import DecodeError
from linter.model.wire import WIRE

INT8 = struct.Struct(WIRE["int8"].format)
INT16 = struct.Struct(WIRE["int16"].format)  # classic string lengths
INT32 = struct.Struct(WIRE["int32"].format)  # classic bytes, records and array lengths

Encoder = Callable[[Any, bytearray], None]  # appends a value's bytes
Decoder = Callable[[bytes, int], tuple[Any, int]]  # (value, end) of the bytes at an offset


def write_uvarint(value: int, out: bytearray) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def uvarint_bytes(value: int) -> bytes:
    out = bytearray()
    write_uvarint(value, out)
    return bytes(out)


def read_uvarint(buf: bytes, pos: int, what: str = "length") -> tuple[int, int]:
    """An unsigned varint of at most 5 bytes (Kafka's ``readUnsignedVarint``)."""
    if pos >= len(buf):
        raise DecodeError(f"{what}: expected a varint, found the end of the input", pos)
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    start, result, shift = pos, 0, 0
    for _ in range(5):
        if pos >= len(buf):
            raise DecodeError(f"{what}: varint runs past the end of the input", start)
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if result > 0xFFFFFFFF:
                raise DecodeError(f"{what}: varint {result} does not fit in 32 bits", start)
            return result, pos
        shift += 7
    raise DecodeError(f"{what}: varint longer than 5 bytes", start)


def need(buf: bytes, pos: int, size: int, what: str) -> int:
    """The end offset of ``size`` bytes at ``pos``, or a DecodeError if the input is shorter."""
    end = pos + size
    if end > len(buf):
        raise DecodeError(f"{what}: needs {size} bytes, only {len(buf) - pos} left", pos)
    return end
