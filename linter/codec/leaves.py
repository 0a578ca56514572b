"""Encode/decode closures of the primitive types, and of the lengths (or nulls) in front of strings,
bytes and arrays. Each type's width, struct format and range come from ``linter.model.wire``."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from linter.codec.errors import DecodeError, EncodeError
from linter.codec.wire import (
    INT16,
    INT32,
    Decoder,
    Encoder,
    need,
    read_uvarint,
    write_uvarint,
)
from linter.model.wire import WIRE, Primitive

MAX_STRING_BYTES = 0x7FFF  # Kafka refuses longer strings in every version, compact ones included

LengthWriter = Callable[[int | None, bytearray], None]  # a length, or None for null
LengthReader = Callable[[bytes, int], tuple[int | None, int]]


def leaf_codec(type_name: str, compact: bool, nullable: bool) -> tuple[Encoder, Decoder]:
    """The codec of a primitive at one encoding (compact or classic lengths) and nullability."""
    primitive = WIRE[type_name]
    if primitive.bounds is not None:
        return _int_codec(primitive, primitive.bounds)
    if primitive.size is None:  # bytes and records share the wire form
        return (_string_codec if primitive.travels_as == "string" else _bytes_codec)(compact, nullable)
    if type_name == "bool":
        return _bool_codec()
    if type_name == "float64":
        return _float_codec()
    return _uuid_codec(primitive.size)


def _int_codec(primitive: Primitive, bounds: tuple[int, int]) -> tuple[Encoder, Decoder]:
    type_name = primitive.name
    packer = struct.Struct(primitive.format)
    pack, unpack, size = packer.pack, packer.unpack_from, packer.size
    low, high = bounds

    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not int:
            raise EncodeError(f"expected an integer ({type_name}), got {type(value).__name__}")
        if not low <= value <= high:
            raise EncodeError(f"{value} is out of the {type_name} range {low} to {high}")
        out += pack(value)

    def decode(buf: bytes, pos: int) -> tuple[int, int]:
        end = pos + size
        if end > len(buf):
            raise DecodeError(f"{type_name} needs {size} bytes, only {len(buf) - pos} left", pos)
        return unpack(buf, pos)[0], end

    return encode, decode


def _bool_codec() -> tuple[Encoder, Decoder]:
    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not bool:
            raise EncodeError(f"expected a bool, got {type(value).__name__}")
        out.append(1 if value else 0)

    def decode(buf: bytes, pos: int) -> tuple[bool, int]:
        if pos >= len(buf):
            raise DecodeError("bool needs 1 byte, none left", pos)
        byte = buf[pos]
        if byte > 1:
            raise DecodeError(f"bool byte is {byte}, not 0 or 1", pos)
        return byte == 1, pos + 1

    return encode, decode


DOUBLE = struct.Struct(WIRE["float64"].format)


def _float_codec() -> tuple[Encoder, Decoder]:
    pack, unpack, size = DOUBLE.pack, DOUBLE.unpack_from, DOUBLE.size

    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not float and type(value) is not int:
            raise EncodeError(f"expected a float, got {type(value).__name__}")
        out += pack(value)

    def decode(buf: bytes, pos: int) -> tuple[float, int]:
        end = need(buf, pos, size, "float64")
        return unpack(buf, pos)[0], end

    return encode, decode


def _uuid_codec(size: int) -> tuple[Encoder, Decoder]:
    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not uuid.UUID:
            raise EncodeError(f"expected a uuid.UUID, got {type(value).__name__}")
        out += value.bytes

    def decode(buf: bytes, pos: int) -> tuple[uuid.UUID, int]:
        end = need(buf, pos, size, "uuid")
        return uuid.UUID(bytes=bytes(buf[pos:end])), end

    return encode, decode


def length_codec(compact: bool, classic: struct.Struct, nullable: bool = True,
                 what: str = "value") -> tuple[LengthWriter, LengthReader]:
    """Write/read a length or null (``None``); a null where the field is not nullable is an error."""
    write, read = _raw_length_codec(compact, classic)
    if nullable:
        return write, read

    def write_checked(length: int | None, out: bytearray) -> None:
        if length is None:
            raise EncodeError(f"null is not allowed: the {what} is not nullable in this version")
        write(length, out)

    def read_checked(buf: bytes, pos: int) -> tuple[int | None, int]:
        length, end = read(buf, pos)
        if length is None:
            raise DecodeError(f"null {what} where the field is not nullable", pos)
        return length, end

    return write_checked, read_checked


def _raw_length_codec(compact: bool, classic: struct.Struct) -> tuple[LengthWriter, LengthReader]:
    """Write/read a length with null: compact uvarint(n + 1) (0 = null), classic signed (-1 = null)."""
    if compact:
        def write(length: int | None, out: bytearray) -> None:
            write_uvarint(0 if length is None else length + 1, out)

        def read(buf: bytes, pos: int) -> tuple[int | None, int]:
            if pos < len(buf) and buf[pos] < 0x80:  # the common one-byte length
                value = buf[pos]
                return (None if value == 0 else value - 1), pos + 1
            value, pos = read_uvarint(buf, pos)
            return (None if value == 0 else value - 1), pos
        return write, read

    pack, unpack, size, high = classic.pack, classic.unpack_from, classic.size, 2 ** (classic.size * 8 - 1) - 1

    def write_classic(length: int | None, out: bytearray) -> None:
        if length is not None and length > high:
            raise EncodeError(f"length {length} does not fit in {classic.size * 8} bits")
        out += pack(-1 if length is None else length)

    def read_classic(buf: bytes, pos: int) -> tuple[int | None, int]:
        end = need(buf, pos, size, "length")
        value: int = unpack(buf, pos)[0]
        if value < -1:
            raise DecodeError(f"negative length {value}", pos)
        return (None if value == -1 else value), end
    return write_classic, read_classic


def _string_codec(compact: bool, nullable: bool) -> tuple[Encoder, Decoder]:
    write_len, read_len = length_codec(compact, INT16, nullable, "string")

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            write_len(None, out)
            return
        if type(value) is not str:
            raise EncodeError(f"expected a str, got {type(value).__name__}")
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise EncodeError(f"string is not valid Unicode (lone surrogate at {exc.start})") from None
        if compact and len(data) < 127:
            out.append(len(data) + 1)  # the one-byte compact length
        else:
            if len(data) > MAX_STRING_BYTES:
                raise EncodeError(f"string of {len(data)} UTF-8 bytes is longer than Kafka's limit of "
                                  f"{MAX_STRING_BYTES}")
            write_len(len(data), out)
        out += data

    def decode(buf: bytes, pos: int) -> tuple[str | None, int]:
        if compact and pos < len(buf):
            length = buf[pos] - 1
            if 0 <= length < 127:
                end = pos + 1 + length
                if end <= len(buf):
                    try:
                        return buf[pos + 1:end].decode("utf-8"), end
                    except UnicodeDecodeError:
                        pass  # the plain path below reports it with its offset
        start = pos
        size, pos = read_len(buf, pos)
        if size is None:
            return None, pos
        if size > MAX_STRING_BYTES:
            raise DecodeError(f"string length {size} is longer than Kafka's limit of {MAX_STRING_BYTES}", start)
        end = need(buf, pos, size, "string")
        try:
            return buf[pos:end].decode("utf-8"), end
        except UnicodeDecodeError as exc:
            raise DecodeError(f"invalid UTF-8 in string: {exc.reason}", pos + exc.start) from None

    return encode, decode


def _bytes_codec(compact: bool, nullable: bool) -> tuple[Encoder, Decoder]:
    write_len, read_len = length_codec(compact, INT32, nullable, "bytes")

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            write_len(None, out)
            return
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise EncodeError(f"expected bytes, got {type(value).__name__}")
        write_len(len(value), out)
        out += value

    def decode(buf: bytes, pos: int) -> tuple[bytes | None, int]:
        length, pos = read_len(buf, pos)
        if length is None:
            return None, pos
        end = need(buf, pos, length, "bytes")
        return bytes(buf[pos:end]), end

    return encode, decode


__all__ = ["DOUBLE", "MAX_STRING_BYTES", "LengthReader", "LengthWriter", "leaf_codec", "length_codec"]
