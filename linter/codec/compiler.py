"""Compile a message spec, at one version, into composed encode/decode closures.

Specialising once per (message, version) means the hot path never looks at the spec: each
field is a pre-built closure for its type, nullability and encoding (classic or compact) at
that version. Nothing is generated as source code, so no spec text is ever executed.

Values are plain Python data mirroring Kafka's JSON form: a struct is a ``dict`` keyed by the
field name with its first letter lower-cased; integers are ``int``, float64 ``float``, bytes
and records ``bytes``, uuids ``uuid.UUID``, arrays ``list``; ``None`` is null. Only fields
that exist at the version appear. Unknown tagged fields read from the wire are kept, per
struct, under ``UNKNOWN_TAGS`` as ``[(tag, bytes), ...]`` and written back on encode.
"""

from __future__ import annotations

import base64
import math
import operator
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from linter.codec.errors import CodecError, DecodeError, EncodeError, SpecError
from linter.codec.wire import INT8, INT16, INT32, need, read_uvarint, write_uvarint
from linter.model.defaults import parse_default
from linter.model.registry import StructRegistry
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.traits import field_at, leaf_wire
from linter.model.types import INTEGERS, FieldType

UNKNOWN_TAGS = "_unknownTaggedFields"
MAX_STRING_BYTES = 0x7FFF  # Kafka refuses longer strings in every version, compact ones included
ZERO_UUID = uuid.UUID(int=0)

Encoder = Callable[[Any, bytearray], None]
Decoder = Callable[[bytes, int], tuple[Any, int]]

_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H", "uint32": ">I"}


def json_key(name: str) -> str:
    """Kafka's JSON converter names: the spec name with its first letter lower-cased."""
    return name[:1].lower() + name[1:]


# --- leaf types ----------------------------------------------------------------------------------


def _int_codec(type_name: str) -> tuple[Encoder, Decoder]:
    packer = struct.Struct(_FIXED[type_name])
    pack, unpack, size = packer.pack, packer.unpack_from, packer.size
    low, high = INTEGERS[type_name]

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


_DOUBLE = struct.Struct(">d")


def _float_codec() -> tuple[Encoder, Decoder]:
    pack, unpack = _DOUBLE.pack, _DOUBLE.unpack_from

    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not float and type(value) is not int:
            raise EncodeError(f"expected a float, got {type(value).__name__}")
        out += pack(value)

    def decode(buf: bytes, pos: int) -> tuple[float, int]:
        end = need(buf, pos, 8, "float64")
        return unpack(buf, pos)[0], end

    return encode, decode


def _uuid_codec() -> tuple[Encoder, Decoder]:
    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not uuid.UUID:
            raise EncodeError(f"expected a uuid.UUID, got {type(value).__name__}")
        out += value.bytes

    def decode(buf: bytes, pos: int) -> tuple[uuid.UUID, int]:
        end = need(buf, pos, 16, "uuid")
        return uuid.UUID(bytes=bytes(buf[pos:end])), end

    return encode, decode


def _length_codec(compact: bool, classic: struct.Struct, nullable: bool = True,
                  what: str = "value") -> tuple[Callable, Callable]:
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


def _raw_length_codec(compact: bool, classic: struct.Struct) -> tuple[Callable, Callable]:
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
        value = unpack(buf, pos)[0]
        if value < -1:
            raise DecodeError(f"negative length {value}", pos)
        return (None if value == -1 else value), end
    return write_classic, read_classic


def _string_codec(compact: bool, nullable: bool) -> tuple[Encoder, Decoder]:
    write_len, read_len = _length_codec(compact, INT16, nullable, "string")

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
        length, pos = read_len(buf, pos)
        if length is None:
            return None, pos
        if length > MAX_STRING_BYTES:
            raise DecodeError(f"string length {length} is longer than Kafka's limit of {MAX_STRING_BYTES}", start)
        end = need(buf, pos, length, "string")
        try:
            return buf[pos:end].decode("utf-8"), end
        except UnicodeDecodeError as exc:
            raise DecodeError(f"invalid UTF-8 in string: {exc.reason}", pos + exc.start) from None

    return encode, decode


def _bytes_codec(compact: bool, nullable: bool) -> tuple[Encoder, Decoder]:
    write_len, read_len = _length_codec(compact, INT32, nullable, "bytes")

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


def _array_codec(compact: bool, nullable: bool, element: tuple[Encoder, Decoder],
                 fixed: str | None = None, bulk: tuple[str, tuple[str, ...]] | None = None) -> tuple[Encoder, Decoder]:
    """An array; ``fixed`` (a struct code like "i") packs an array of integers in one call, ``bulk``
    (element format, keys) an array of structs made only of fixed-width integers."""
    write_len, read_len = _length_codec(compact, INT32, nullable, "array")
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

    def decode(buf: bytes, pos: int) -> tuple[list | None, int]:
        start = pos
        count, pos = read_len(buf, pos)
        if count is None:
            return None, pos
        if count > len(buf) - pos:
            raise DecodeError(f"array of {count} elements, but only {len(buf) - pos} bytes left", start)
        items = []
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


def _fixed_array_codec(write_len, read_len, element: tuple[Encoder, Decoder], code: str,
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

    def decode(buf: bytes, pos: int) -> tuple[list | None, int]:
        if compact and pos < len(buf):
            count = buf[pos] - 1
            if 0 <= count < 127:
                end = pos + 1 + count * width
                if end <= len(buf):
                    return list(unpacks[count](buf, pos + 1)), end
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


def _bulk_array_codec(write_len, read_len, nullable: bool, element: tuple[Encoder, Decoder],
                      bulk: tuple[str, tuple[str, ...]], compact: bool) -> tuple[Encoder, Decoder]:
    """Arrays of structs made only of fixed-width integers (plus an empty tagged section when
    flexible) in one struct call per array; anything unusual takes the per-element path, which
    also produces the precise errors."""
    code, keys = bulk
    tag_byte = code.endswith("B")
    row = struct.Struct(">" + code)
    iter_unpack, row_size = row.iter_unpack, row.size
    pad_code = code[:-1] + "x" if tag_byte else code  # the empty tagged section, written as a 0 pad byte
    key_set, getter = frozenset(keys), operator.itemgetter(*keys)
    packers: dict[int, Callable] = {}
    slow_encode, slow_decode = _array_codec(compact, nullable, element)

    def encode(value: Any, out: bytearray) -> None:
        if type(value) is not list or not value:
            slow_encode(value, out)
            return
        flat: list = []
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

    def decode(buf: bytes, pos: int) -> tuple[list | None, int]:
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


# --- JSON form of leaf values ---------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise EncodeError(f"expected base64 text for {what}, got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise EncodeError(f"invalid base64 for {what}") from None


def uuid_to_text(value: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def uuid_from_text(text: Any) -> uuid.UUID:
    if not isinstance(text, str) or len(text) != 22:
        raise EncodeError(f"expected a 22-character base64url uuid, got {text!r}")
    try:
        return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))
    except ValueError:
        raise EncodeError(f"invalid uuid {text!r}") from None


def _float_from_json(value: Any) -> float:
    """Kafka's converter reads float64 from a JSON number with a fraction or exponent only."""
    if type(value) is float:
        return value
    if value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if type(value) is int:
        raise EncodeError(f"float64 needs a JSON number with a fraction or exponent (write {value}.0), as in "
                          "Kafka's JSON form")
    raise EncodeError(f"expected a number, got {value!r}")


def _float_to_json(value: float) -> Any:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _leaf_json(type_name: str) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """(to_json, from_json) for a primitive type; null passes through both."""
    if type_name == "uuid":
        return uuid_to_text, uuid_from_text
    if type_name == "bytes":
        return _b64, lambda text: _unb64(text, "bytes")
    if type_name == "records":
        return (lambda value: ""), (lambda text: _unb64(text, "records"))
    if type_name == "float64":
        return _float_to_json, _float_from_json
    return (lambda value: value), (lambda value: value)


# --- structs ---------------------------------------------------------------------------------------


@dataclass
class FieldPlan:
    """One field at one version."""

    spec: FieldSpec
    key: str
    present: bool  # exists at this version (tagged or not)
    tag: int | None  # set when the field is tagged at this version
    ignorable: bool
    default: Callable[[], Any]  # a fresh default value
    encode: Encoder | None = None
    decode: Decoder | None = None
    to_json: Callable[[Any], Any] | None = None
    from_json: Callable[[Any], Any] | None = None
    is_default: Callable[[Any], bool] | None = None  # Kafka's notion, whatever the version
    nested: StructPlan | None = None  # the struct (or array element struct) at this version
    nullable: bool = False  # null is allowed at this version
    compact: bool = False  # compact (flexible) encoding of strings, bytes and arrays


class StructPlan:
    """A struct at one version: its fields in wire order, its tagged fields, and the rest."""

    def __init__(self, name: str, fields: list[FieldPlan], flexible: bool, version: int) -> None:
        self.name = name
        self.version = version
        self.flexible = flexible
        self.fields = fields
        self.regular = [(f.key, f.spec.name, f.encode, f.decode) for f in fields if f.present and f.tag is None]
        self.steps = _steps([f for f in fields if f.present and f.tag is None])
        self.tagged = sorted((f for f in fields if f.present and f.tag is not None), key=lambda f: f.tag)
        self.tagged_by_number = {f.tag: f for f in self.tagged}
        self.absent = [f for f in fields if not f.present]
        self.names = {f.key: f.spec.name for f in fields}
        self.keys = frozenset(f.key for f in fields if f.present) | {UNKNOWN_TAGS}
        self.bulk = None  # (wire format of one element, keys) when the struct is only fixed-width integers
        if len(self.steps) == 1 and self.steps[0][0] is not None and not self.tagged:
            packer, keys = self.steps[0][0], self.steps[0][1]
            self.bulk = (packer.format[1:] + ("B" if flexible else ""), keys)
        self.encode = self._fast_encode()  # closures over this plan's constants shadow the methods
        self.decode = self._fast_decode()

    def _fast_decode(self) -> Decoder:
        steps = tuple((None, keys, decode, 0) if packer is None else (packer.unpack_from, keys, None, packer.size)
                      for packer, keys, _, decode in self.steps)
        names, flexible, tagged, decode_tagged = self.names, self.flexible, bool(self.tagged), self._decode_tagged
        plain = StructPlan.decode.__get__(self)

        def decode(buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
            start = pos
            result: dict[str, Any] = {}
            for unpack, keys, decode_one, size in steps:
                if unpack is None:
                    try:
                        result[keys], pos = decode_one(buf, pos)
                    except CodecError as exc:
                        raise exc.at(names[keys]) from None
                    continue
                try:
                    result.update(zip(keys, unpack(buf, pos), strict=True))
                except struct.error:
                    return plain(buf, start)  # too few bytes: the plain path raises the precise error
                pos += size
            if flexible:
                if not tagged and pos < len(buf) and buf[pos] == 0:
                    pos += 1
                else:
                    pos = decode_tagged(buf, pos, result)
            return result, pos

        return decode

    def _fast_encode(self) -> Encoder:
        steps = tuple((None, keys, encode) if packer is None else (packer.pack, operator.itemgetter(*keys), None)
                      for packer, keys, encode, _ in self.steps)
        known, check_extra, explain = self.keys, self._check_extra_keys, self._explain_encode_error
        name, flexible, tagged, encode_tagged = self.name, self.flexible, bool(self.tagged), self._encode_tagged

        def encode(value: Any, out: bytearray) -> None:
            if type(value) is not dict:
                raise EncodeError(f"expected a struct (dict) for {name}, got {type(value).__name__}")
            if not known.issuperset(value):
                check_extra(value)
            try:
                for pack, key, encode_one in steps:
                    if pack is None:
                        encode_one(value[key], out)
                        continue
                    items = key(value)
                    for item in items:
                        if type(item) is not int:  # bool is an int to struct, not to us
                            raise struct.error("not an integer")
                    out += pack(*items)
            except (KeyError, CodecError, struct.error) as exc:
                explain(value)
                raise EncodeError(f"cannot encode {name}: {exc}") from None
            if flexible:
                if tagged or UNKNOWN_TAGS in value:
                    encode_tagged(value, out)
                else:
                    out.append(0)

        return encode

    def default(self) -> dict[str, Any]:
        return {f.key: f.default() for f in self.fields if f.present}

    _signature: tuple | None = None

    @property
    def signature(self) -> tuple:
        """What decoding this struct depends on, and nothing else: its encodings, field names (they
        name error paths), types, tags and the defaults absent tagged fields get. Two plans with
        equal signatures decode every input to the same value or the same error, whichever specs
        they came from, so ``krpc-lint replay`` decodes a frame once when both revisions agree."""
        if self._signature is None:
            self._signature = (self.flexible, tuple(_field_signature(f) for f in self.fields if f.present))
        return self._signature

    # the optional C accelerator walks this description of the plan (see _speedups.c) ---------

    _native: Any = None

    def native_tuple(self) -> tuple:
        """(fields, flexible, tagged decoder, tagged encoder, known keys, regular count, tagged
        fields): the C accelerator reads the tagged fields itself, ``(tag, field, default,
        factory)`` each, unless there are more than it tracks (then the Python decoder does)."""
        fields = tuple(_native_field(f) for f in self.fields if f.present and f.tag is None)
        tagged = bool(self.tagged)
        native_tags = tuple((f.tag, _native_field(f), *_shared_default(f)) for f in self.tagged) \
            if len(self.tagged) <= MAX_NATIVE_TAGS else None
        return (fields, self.flexible, self._decode_tagged if tagged else None,
                self._tagged_bytes if tagged else None, self.keys, len(fields), native_tags)

    def native_plan(self, speedups) -> Any:
        """The plan compiled for the C accelerator (once)."""
        if self._native is None:
            self._native = speedups.compile_plan(self.native_tuple())
        return self._native

    def _tagged_bytes(self, value: dict) -> bytes:
        out = bytearray()
        self._encode_tagged(value, out)
        return bytes(out)

    # encode ---------------------------------------------------------------------------------

    def _explain_encode_error(self, value: dict) -> None:
        """Re-run the plain per-field path to raise a precise error with the field's path."""
        for key, name, encode, _ in self.regular:
            if key not in value:
                raise EncodeError(f"missing required value (field {name} exists in version {self.version})").at(name)
            try:
                encode(value[key], bytearray())
            except CodecError as exc:
                raise exc.at(name) from None

    def _check_extra_keys(self, value: dict) -> None:
        for key, item in value.items():
            if key in self.keys:
                continue
            plan = next((f for f in self.absent if f.key == key), None)
            if plan is None:
                raise EncodeError(f"{self.name} has no field {key!r}")
            if not plan.ignorable and not plan.is_default(item):
                raise EncodeError(f"field {plan.spec.name} does not exist in version {self.version} and is not "
                                  "ignorable, but has a non-default value").at(plan.spec.name)

    def _encode_tagged(self, value: dict, out: bytearray) -> None:
        entries: list[tuple[int, bytes]] = []
        for plan in self.tagged:
            item = value.get(plan.key, _MISSING)
            if item is _MISSING or item == plan.default():
                continue
            payload = bytearray()
            try:
                plan.encode(item, payload)
            except CodecError as exc:
                raise exc.at(plan.spec.name) from None
            entries.append((plan.tag, payload))
        unknown = value.get(UNKNOWN_TAGS)
        if unknown:
            entries = _merge_unknown(entries, unknown, self.tagged_by_number)
        write_uvarint(len(entries), out)
        for tag, payload in entries:
            write_uvarint(tag, out)
            write_uvarint(len(payload), out)
            out += payload

    # decode ---------------------------------------------------------------------------------

    def decode(self, buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
        result: dict[str, Any] = {}
        for packer, keys, _, decode in self.steps:
            if packer is None:
                try:
                    result[keys], pos = decode(buf, pos)
                except CodecError as exc:
                    raise exc.at(self.names[keys]) from None
                continue
            end = pos + packer.size
            if end > len(buf):
                raise DecodeError(f"needs {packer.size} bytes for {len(keys)} fixed-width fields, only "
                                  f"{len(buf) - pos} left", pos).at(self.names[keys[0]])
            result.update(zip(keys, packer.unpack_from(buf, pos), strict=True))
            pos = end
        if self.flexible:
            if not self.tagged and pos < len(buf) and buf[pos] == 0:
                pos += 1  # the usual empty tagged-field section
            else:
                pos = self._decode_tagged(buf, pos, result)
        return result, pos

    def _decode_tagged(self, buf: bytes, pos: int, result: dict[str, Any]) -> int:
        count, pos = read_uvarint(buf, pos, "tagged field count")
        if count > len(buf) - pos:
            raise DecodeError(f"{count} tagged fields, but only {len(buf) - pos} bytes left", pos)
        previous = -1
        for _ in range(count):
            start = pos
            tag, pos = read_uvarint(buf, pos, "tag")
            if tag <= previous:
                raise DecodeError(f"tag {tag} after tag {previous}: tags must be ascending and unique", start)
            previous = tag
            size, pos = read_uvarint(buf, pos, f"size of tag {tag}")
            end = need(buf, pos, size, f"tagged field {tag}")
            plan = self.tagged_by_number.get(tag)
            if plan is None:
                result.setdefault(UNKNOWN_TAGS, []).append((tag, bytes(buf[pos:end])))
            else:
                try:
                    result[plan.key], used = plan.decode(buf, pos)
                except CodecError as exc:
                    raise exc.at(plan.spec.name) from None
                if used != end:
                    raise DecodeError(f"tagged field {plan.spec.name} (tag {tag}) has {size} bytes but its value "
                                      f"used {used - pos}", pos).at(plan.spec.name)
            pos = end
        for plan in self.tagged:
            if plan.key not in result:
                result[plan.key] = plan.default()
        return pos

    # JSON form ------------------------------------------------------------------------------

    def to_json(self, value: dict[str, Any]) -> dict[str, Any]:
        """Kafka's JsonConverter form: fields of this version in spec order; tagged ones only when
        they differ from their default."""
        out = {}
        for plan in self.fields:
            if not plan.present or plan.key not in value:
                continue
            item = value[plan.key]
            if plan.tag is not None and item == plan.default():
                continue
            out[plan.key] = None if item is None else plan.to_json(item)
        return out

    def from_json(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise EncodeError(f"expected a JSON object for {self.name}, got {type(data).__name__}")
        if UNKNOWN_TAGS in data:
            raise EncodeError(f"{UNKNOWN_TAGS} has no JSON form (Kafka's converter never writes unknown tags)")
        out = {}
        by_key = {f.key: f for f in self.fields}
        for key, item in data.items():
            plan = by_key.get(key)
            if plan is None:
                out[key] = item  # kept as is: encode() reports the unknown key
                continue
            try:
                out[key] = None if item is None else plan.from_json(item)
            except CodecError as exc:
                raise exc.at(plan.spec.name) from None
        for plan in self.tagged:
            out.setdefault(plan.key, plan.default())
        return out


_MISSING = object()


_NATIVE_INT = {"int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint16": 5, "uint32": 6}
(_K_PY, _K_INT, _K_BOOL, _K_FLOAT, _K_UUID, _K_STRING, _K_BYTES, _K_INT_ARRAY, _K_STRUCT_ARRAY,
 _K_STRUCT) = range(10)


def _field_signature(plan: FieldPlan) -> tuple:
    """A present field's part of ``StructPlan.signature``: a struct's own name is not read from the
    wire, so only its fields count; a tagged field's default is what an absent one decodes to."""
    field_type = plan.spec.type
    kind = field_type.name if plan.nested is None else "struct"
    return (plan.spec.name, plan.key, field_type.is_array, kind, plan.nullable, plan.compact, plan.tag,
            None if plan.tag is None else repr(plan.default()), None if plan.nested is None else plan.nested.signature)


MAX_NATIVE_TAGS = 64  # _speedups.c marks the tags it has seen in one 64-bit word
_IMMUTABLE = (int, bool, float, str, bytes, type(None), uuid.UUID)


def _shared_default(plan: FieldPlan) -> tuple[Any, Callable[[], Any] | None]:
    """(default, None) when every absent value can share one immutable default, else (None, factory)."""
    value = plan.default()
    return (value, None) if type(value) in _IMMUTABLE else (None, plan.default)


def _native_field(plan: FieldPlan) -> tuple:
    """(key, kind, compact, nullable, extra) of one regular field for the C accelerator."""
    field_type, name = plan.spec.type, plan.spec.type.name
    python = (_K_PY, (plan.decode, plan.encode))
    if field_type.is_array:
        if plan.nested is not None:
            kind, extra = _K_STRUCT_ARRAY, plan.nested.native_tuple()
        elif name in _NATIVE_INT:
            kind, extra = _K_INT_ARRAY, _NATIVE_INT[name]
        else:
            kind, extra = python
    elif plan.nested is not None:  # a tagged nullable struct's marker is 0/1, not -1/1: Python reads it
        kind, extra = python if plan.nullable and plan.tag is not None else (_K_STRUCT, plan.nested.native_tuple())
    elif name in _NATIVE_INT:
        kind, extra = _K_INT, _NATIVE_INT[name]
    else:
        kind, extra = {"bool": (_K_BOOL, None), "float64": (_K_FLOAT, None), "uuid": (_K_UUID, None),
                       "string": (_K_STRING, None), "bytes": (_K_BYTES, None),
                       "records": (_K_BYTES, None)}.get(name, python)
    return plan.key, kind, plan.compact, plan.nullable, extra


def _steps(fields: list[FieldPlan]) -> list[tuple]:
    """Wire-order steps: ``(None, key, encode, decode)`` for one field, or ``(Struct, keys, None, None)``
    for a run of two or more consecutive fixed-width integer fields packed and unpacked in one call."""
    steps: list[tuple] = []
    run: list[FieldPlan] = []

    def flush() -> None:
        if len(run) >= 2:
            code = ">" + "".join(_FIXED[f.spec.type.name][1:] for f in run)
            steps.append((struct.Struct(code), tuple(f.key for f in run), None, None))
        else:
            steps.extend((None, f.key, f.encode, f.decode) for f in run)
        run.clear()

    for plan in fields:
        field_type = plan.spec.type
        if not field_type.is_array and field_type.name in _FIXED:
            run.append(plan)
        else:
            flush()
            steps.append((None, plan.key, plan.encode, plan.decode))
    flush()
    return steps


def _merge_unknown(entries: list[tuple[int, bytes]], unknown: Any, known: dict) -> list[tuple[int, bytes]]:
    merged = dict(entries)
    try:
        pairs = [(tag, bytes(payload)) for tag, payload in unknown
                 if type(tag) is int and tag >= 0 and isinstance(payload, (bytes, bytearray, memoryview))]
    except (TypeError, ValueError):
        pairs = []
    if len(pairs) != len(unknown):  # never bytes(n) of an integer: that would allocate n bytes
        raise EncodeError(f"{UNKNOWN_TAGS} must be a list of (tag >= 0, bytes) pairs")
    for tag, payload in pairs:
        if tag in known or tag in merged:
            raise EncodeError(f"unknown tagged field {tag} collides with a known or repeated tag")
        merged[tag] = payload
    return sorted(merged.items())


# --- the compiler -----------------------------------------------------------------------------------


class MessageCompiler:
    """Builds the ``StructPlan`` of a message (and its nested structs) at one version."""

    def __init__(self, message: MessageSpec) -> None:
        self.message = message
        self.registry = StructRegistry(message)
        self.flexible_versions = message.flexible
        self._open: set[str] = set()  # structs being compiled, to refuse recursive ones

    def compile(self, version: int) -> StructPlan:
        flexible = self.flexible_versions.contains(version)
        return self._struct(self.message.name or "message", self.message.fields, version, flexible)

    def _struct(self, name: str, fields: tuple[FieldSpec, ...], version: int, flexible: bool) -> StructPlan:
        if name in self._open:
            raise SpecError(f"struct {name} contains itself; recursive structs cannot be encoded")
        self._open.add(name)
        try:
            return StructPlan(name, [self._field(spec, version, flexible) for spec in fields], flexible, version)
        finally:
            self._open.discard(name)

    def _struct_fields(self, spec: FieldSpec) -> tuple[FieldSpec, ...]:
        if spec.fields:
            return spec.fields
        definition = self.registry.lookup(spec.type.name)
        return definition.fields if definition is not None else ()

    def _field(self, spec: FieldSpec, version: int, flexible: bool) -> FieldPlan:
        at = field_at(spec, version, flexible)
        field_type = spec.type
        nested = None
        if field_type.struct_name is not None:
            nested = self._struct(field_type.name, self._struct_fields(spec), version, flexible)
        plan = FieldPlan(spec, json_key(spec.name), at.present, at.tag, spec.ignorable, _default_factory(spec, nested))
        plan.is_default = self._default_test(spec)
        plan.nested, plan.nullable, plan.compact = nested, at.nullable, at.compact
        if at.present:
            plan.encode, plan.decode, plan.to_json, plan.from_json = self._type_codec(
                field_type, nested, at.compact, at.nullable, at.tag is not None)
        else:
            plan.from_json = self._json_reader(spec)
        return plan

    def _default_test(self, spec: FieldSpec) -> Callable[[Any], bool]:
        """Whether a value equals the field's default as Kafka sees it: a struct is default when each
        field it gives holds that field's default, in any version (``new Struct()`` in Java)."""
        field_type = spec.type
        default = parse_default(field_type, spec.default)
        if field_type.name == "uuid" and not field_type.is_array and default is not None:
            default = uuid.UUID(bytes=default)
        if field_type.struct_name is None or field_type.is_array or default is None:
            return lambda value: value == default
        members = {json_key(f.name): f for f in self._struct_fields(spec)}
        tests: dict[str, Callable[[Any], bool]] = {}

        def is_default(value: Any) -> bool:
            if type(value) is not dict:
                return False
            for key, item in value.items():
                member = members.get(key)
                if member is None:
                    return False
                if key not in tests:
                    tests[key] = self._default_test(member)
                if not tests[key](item):
                    return False
            return True

        return is_default

    def _json_reader(self, spec: FieldSpec) -> Callable[[Any], Any]:
        """JSON to Python for a field whatever the version (for fields absent at the version, whose
        values are only checked against their default)."""
        field_type = spec.type
        if field_type.struct_name is None:
            leaf = _leaf_json(field_type.name)[1]
            return _map_json(leaf, field_type.name) if field_type.is_array else leaf
        members = {json_key(f.name): f for f in self._struct_fields(spec)}

        def read_struct(data: Any) -> Any:
            if not isinstance(data, dict):
                return data
            out = {}
            for key, item in data.items():
                member = members.get(key)
                out[key] = item if member is None or item is None else self._json_reader(member)(item)
            return out

        return _map_json(read_struct, field_type.name) if field_type.is_array else read_struct

    def _type_codec(self, field_type: FieldType, nested: StructPlan | None, compact: bool, nullable: bool,
                    tagged: bool):
        name = field_type.name
        if field_type.is_array:
            if nested is not None:
                element = (nested.encode, nested.decode)
                to_json, from_json = nested.to_json, nested.from_json
            else:
                element = self._leaf(field_type.element, compact, nullable=False)
                to_json, from_json = _leaf_json(name)
            encode, decode = _array_codec(compact, nullable, element, _FIXED.get(name, ">")[1:] or None,
                                          nested.bulk if nested is not None else None)
            return encode, decode, _map_json(to_json), _map_json(from_json, name)
        if nested is not None:
            encode, decode = _nullable_struct(nested, nullable, tagged)
            return encode, decode, nested.to_json, nested.from_json
        encode, decode = self._leaf(field_type, compact, nullable)
        to_json, from_json = _leaf_json(name)
        return encode, decode, to_json, from_json

    @staticmethod
    def _leaf(field_type: FieldType, compact: bool, nullable: bool) -> tuple[Encoder, Decoder]:
        name = field_type.name
        if name in _FIXED:
            return _int_codec(name)
        if name == "bool":
            return _bool_codec()
        if name == "float64":
            return _float_codec()
        if name == "uuid":
            return _uuid_codec()
        if leaf_wire(name, compact).startswith("string/"):
            return _string_codec(compact, nullable)
        return _bytes_codec(compact, nullable)  # bytes and records share the wire form (leaf_wire)



def _default_factory(spec: FieldSpec, nested: StructPlan | None) -> Callable[[], Any]:
    """A function returning a fresh default value (mutable defaults are never shared)."""
    field_type = spec.type
    value = parse_default(field_type, spec.default)
    if nested is not None and not field_type.is_array and value is not None:
        return nested.default
    if isinstance(value, list):
        return list
    if field_type.name == "uuid" and not field_type.is_array:
        frozen = uuid.UUID(bytes=value) if value is not None else None
        return lambda: frozen
    return lambda: value


def _map_json(convert: Callable[[Any], Any], what: str = "array") -> Callable[[Any], Any]:
    def each(items: Any) -> list:
        if not isinstance(items, list):
            raise EncodeError(f"expected a list for {what}, got {type(items).__name__}")
        out = []
        for index, item in enumerate(items):
            try:
                out.append(None if item is None else convert(item))
            except CodecError as exc:
                raise exc.at(index) from None
        return out

    return each


def _nullable_struct(plan: StructPlan, nullable: bool, tagged: bool) -> tuple[Encoder, Decoder]:
    """A struct field; nullable structs (KIP-893) carry a presence marker: int8 -1/1 as a regular
    field, uvarint 0/1 inside a tagged field's payload."""
    if not nullable:
        return plan.encode, plan.decode

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            out += b"\x00" if tagged else b"\xff"
            return
        out += b"\x01"
        plan.encode(value, out)

    def decode(buf: bytes, pos: int) -> tuple[dict | None, int]:
        if pos >= len(buf):
            raise DecodeError("struct presence marker: no bytes left", pos)
        marker = buf[pos]
        if marker == (0 if tagged else 0xFF):
            return None, pos + 1
        if marker != 1:
            raise DecodeError(f"struct presence marker is {marker:#04x}, not {'0 or 1' if tagged else '-1 or 1'}", pos)
        return plan.decode(buf, pos + 1)

    return encode, decode


__all__ = ["INT8", "UNKNOWN_TAGS", "MessageCompiler", "StructPlan", "json_key", "uuid_from_text", "uuid_to_text"]
