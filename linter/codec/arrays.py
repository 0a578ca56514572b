"""Arrays: a length (or null), then the elements. Arrays of fixed-width integers, and of structs made
only of them, are packed and unpacked with one ``struct`` call instead of one per element."""

from __future__ import annotations

import operator
import struct
import threading
from collections.abc import Callable
from typing import Any

from linter.codec.errors import CodecError, DecodeError, EncodeError
from linter.codec.leaves import LengthReader, LengthWriter, length_codec
from linter.codec.wire import INT32, Decoder, Encoder

Bulk = tuple[str, tuple[str, ...]]  # an element struct's row format (struct codes) and its keys, in order


WIDE = 64  # an element building more values than this besides its bytes counts against the allowance ...
VALUES_PER_BYTE = 4  # ... of values a decode may build that its input does not hold, per byte of input ...
VALUES_FLOOR = 65_536  # ... plus these


class _Allowance(threading.local):
    """Values that the decode in progress on this thread may still build without bytes of the input behind
    them: the elements of arrays of structs that take no bytes (structs of empty structs, at a version that
    is not flexible) and the defaults of absent tagged fields. Kafka checks each array alone (its generated
    readers refuse a length above the bytes remaining: ``MessageDataGenerator.generateVariableLengthReader``,
    apache/kafka db28f81a), so such arrays nested in another array multiplied (10 KB of hex claimed a million
    elements, 547 MB), and an element of one byte with 1,000 tagged fields built 1,000 defaults (20 KB of hex:
    287 MB). Arrays whose element builds more than ``WIDE`` values besides its bytes (or any, when it takes
    no bytes) take ``count * weight`` from ``VALUES_PER_BYTE * len(input) + VALUES_FLOOR``; the others build
    at most ``WIDE`` per byte of their own. Kafka's specs have no such element (18 values at most).

    An array's length takes a byte at least, so within one decode the arrays start at increasing offsets:
    a start at or before the last one, or another buffer, is another decode (``Codec`` also starts afresh)."""

    def __init__(self) -> None:
        self.buf: bytes | None = None
        self.start = -1
        self.left = 0

    def take(self, buf: bytes, start: int, count: int, weight: int) -> None:
        if self.buf is not buf or start <= self.start:
            self.buf, self.left = buf, VALUES_PER_BYTE * len(buf) + VALUES_FLOOR
        self.start = start
        self.left -= count * weight
        if self.left < 0:
            raise DecodeError(f"array of {count} elements of {weight} values each that the input does not hold "
                              f"(structs without bytes, defaults of absent tagged fields): with those before it, "
                              f"more than the {VALUES_PER_BYTE * len(buf) + VALUES_FLOOR:,} allowed for an input of "
                              f"{len(buf):,} bytes ({VALUES_PER_BYTE} per byte + {VALUES_FLOOR:,})", start)

    def fresh(self) -> None:
        self.buf, self.start = None, -1


def weight(takes_no_bytes: bool, entries: int) -> int:
    """What one element of an array counts against ``ALLOWANCE``: its values when it takes no bytes or
    builds more than ``WIDE`` of them, else nothing (its bytes pay for them)."""
    if takes_no_bytes:
        return entries + 1
    return entries if entries > WIDE else 0


ALLOWANCE = _Allowance()


def array_codec(compact: bool, nullable: bool, element: tuple[Encoder, Decoder],
                fixed: str | None = None, bulk: Bulk | None = None, weight: int = 0) -> tuple[Encoder, Decoder]:
    """An array; ``fixed`` (a struct code like "i") packs an array of integers in one call, ``bulk``
    (element format, keys) an array of structs made only of fixed-width integers; ``weight``: what each
    element counts against the decode's ``ALLOWANCE`` (``weight()``)."""
    write_len, read_len = length_codec(compact, INT32, nullable, "array")
    encode_item, decode_item = element
    if fixed is not None:
        return _fixed_array_codec(write_len, read_len, element, fixed, compact)
    if bulk is not None:
        return _bulk_array_codec(write_len, read_len, nullable, element, bulk, compact)

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            write_len(None, out)
            return
        if type(value) is not list and type(value) is not tuple:
            raise EncodeError(f"expected a list, got {type(value).__name__}")
        write_len(len(value), out)
        index = 0
        try:
            for index, item in enumerate(value):
                encode_item(item, out)
        except CodecError as exc:
            raise exc.at(index) from None

    def decode(buf: bytes, pos: int) -> tuple[list[Any] | None, int]:
        start = pos
        count, pos = read_len(buf, pos)
        if count is None:
            return None, pos
        if count > len(buf) - pos:
            raise DecodeError(f"array of {count} elements, but only {len(buf) - pos} bytes left", start)
        if weight and count:
            ALLOWANCE.take(buf, start, count, weight)
        items: list[Any] = []
        append = items.append
        index = 0
        try:
            for index in range(count):
                item, pos = decode_item(buf, pos)
                append(item)
        except CodecError as exc:
            raise exc.at(index) from None
        return items, pos

    return encode, decode


_PACKERS: dict[str, list[struct.Struct]] = {}


def _packers(code: str) -> list[struct.Struct]:
    """Structs for 0..127 elements of one integer code (the counts a one-byte compact length covers)."""
    packers = _PACKERS.get(code)
    if packers is None:
        packers = _PACKERS[code] = [struct.Struct(f">{count}{code}") for count in range(128)]
    return packers


def _fixed_array_codec(write_len: LengthWriter, read_len: LengthReader, element: tuple[Encoder, Decoder], code: str,
                       compact: bool) -> tuple[Encoder, Decoder]:
    encode_item, _ = element
    width = struct.calcsize(">" + code)
    packs = [packer.pack for packer in _packers(code)]
    unpacks = [packer.unpack_from for packer in _packers(code)]

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            write_len(None, out)
            return
        if type(value) is not list and type(value) is not tuple:
            raise EncodeError(f"expected a list, got {type(value).__name__}")
        count = len(value)
        try:
            for item in value:
                if type(item) is not int:
                    raise struct.error("not an integer")
            packed = packs[count](*value) if count < 128 else struct.pack(f">{count}{code}", *value)
        except struct.error:
            for index, item in enumerate(value):  # find and name the offending element
                try:
                    encode_item(item, bytearray())
                except CodecError as exc:
                    raise exc.at(index) from None
            raise
        if compact and count < 127:
            out.append(count + 1)
        else:
            write_len(count, out)
        out += packed

    def decode(buf: bytes, pos: int) -> tuple[list[int] | None, int]:
        if compact and pos < len(buf):
            short = buf[pos] - 1
            if 0 <= short < 127:
                end = pos + 1 + short * width
                if end <= len(buf):
                    return list(unpacks[short](buf, pos + 1)), end
        start = pos
        count, pos = read_len(buf, pos)
        if count is None:
            return None, pos
        end = pos + count * width
        if end > len(buf):
            raise DecodeError(f"array of {count} elements needs {count * width} bytes, only {len(buf) - pos} left",
                              start)
        if count < 128:
            return list(unpacks[count](buf, pos)), end
        return list(struct.unpack_from(f">{count}{code}", buf, pos)), end

    return encode, decode


def _bulk_array_codec(write_len: LengthWriter, read_len: LengthReader, nullable: bool, element: tuple[Encoder, Decoder],
                      bulk: Bulk, compact: bool) -> tuple[Encoder, Decoder]:
    """Arrays of structs made only of fixed-width integers (plus an empty tagged section when
    flexible) in one struct call per array; anything unusual takes the per-element path, which
    also produces the precise errors."""
    code, keys = bulk
    tag_byte = code.endswith("B")
    row = struct.Struct(">" + code)
    iter_unpack, row_size = row.iter_unpack, row.size
    pad_code = code[:-1] + "x" if tag_byte else code  # the empty tagged section, written as a 0 pad byte
    key_set, getter = frozenset(keys), operator.itemgetter(*keys)
    packers: dict[int, Callable[..., bytes]] = {}
    slow_encode, slow_decode = array_codec(compact, nullable, element)

    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not list or not value:
            slow_encode(value, out)
            return
        flat: list[Any] = []
        extend = flat.extend
        for item in value:
            if type(item) is not dict or not key_set.issuperset(item) or len(item) != len(keys):
                slow_encode(value, out)
                return
            extend(getter(item))
        for number in flat:
            if type(number) is not int:
                slow_encode(value, out)
                return
        count = len(value)
        pack = packers.get(count)
        if pack is None:
            pack = packers[count] = struct.Struct(">" + pad_code * count).pack
        try:
            packed = pack(*flat)
        except struct.error:
            slow_encode(value, out)  # an out-of-range number: the slow path names it
            return
        write_len(count, out)
        out += packed

    def decode(buf: bytes, pos: int) -> tuple[list[Any] | None, int]:
        start = pos
        count, pos = read_len(buf, pos)
        if count:
            end = pos + count * row_size
            if end <= len(buf):
                rows = list(iter_unpack(buf[pos:end]))
                if not tag_byte or not any(r[-1] for r in rows):
                    # a row may end with the tag-count byte, which has no key
                    return [dict(zip(keys, r, strict=False)) for r in rows], end
        return slow_decode(buf, start)

    return encode, decode


__all__ = ["ALLOWANCE", "VALUES_FLOOR", "VALUES_PER_BYTE", "WIDE", "Bulk", "array_codec", "weight"]
