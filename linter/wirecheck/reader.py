"""Kafka's reader, byte by byte: a message walked as Kafka's generated ``read`` methods walk it, as lenient as
they are, every deviation from what Kafka's writer produces recorded as a ``Deviation``.

The codec's decoder is strict (it refuses a boolean of 2, tags out of order...): right for a codec, wrong for
judging a sender, since Kafka accepts those. This walker takes what Kafka takes and says what it took:

- a reading Kafka refuses, or one that leaves it reading other bytes than the sender wrote (a length beyond the
  frame, a tagged field whose size disagrees with its value), ends the walk (``Refused``): what follows would be
  read from the wrong place;
- a reading Kafka makes sense of, but not the sender's (invalid UTF-8 read as U+FFFD), or makes the sender's
  sense of although its writer would never write those bytes (a boolean of 2, a varint with a redundant byte, a
  tagged field holding its default), is noted and the walk goes on.

What Kafka does with each, and where its sources say so, is docs/wire-check.md. Each deviation names its check
(``CHECKS``); the rules ``check: {wire: NAME}`` give it an id and a severity.
"""

from __future__ import annotations

import struct
import uuid
from typing import TYPE_CHECKING, Any, NamedTuple

from linter.codec.errors import CodecError, join_path
from linter.codec.leaves import MAX_STRING_BYTES
from linter.codec.tagged import UNKNOWN_TAGS
from linter.codec.wire import INT16, INT32, uvarint_bytes
from linter.model.wire import WIRE

if TYPE_CHECKING:
    from linter.codec.plans import FieldPlan, StructPlan

# The checks this walker and the frame checker report (each a rule ``check: {wire: NAME}``).
TRAILING_BYTES = "trailing-bytes"
BEYOND_FRAME = "length-beyond-frame"
VARINT_TOO_LONG = "varint-too-long"
TAGGED_SIZE = "tagged-size-mismatch"
HEADER_VERSION = "header-version-mismatch"
UNMATCHED_RESPONSE = "unmatched-response"
FRAME_SIZE = "frame-size-mismatch"
NULL_NOT_NULLABLE = "null-not-nullable"
INVALID_UTF8 = "invalid-utf8"
STRING_TOO_LONG = "string-too-long"
TAG_NOT_IN_VERSION = "tag-not-in-version"
TAGGED_DEFAULT = "tagged-field-default"
TAGS_NOT_ASCENDING = "tags-not-ascending"
TAG_REPEATED = "tag-repeated"
VARINT_NOT_MINIMAL = "varint-not-minimal"
BOOL_NOT_CANONICAL = "bool-not-canonical"
NULL_MARKER = "null-marker-not-canonical"
FALLBACK_LAYOUT = "api-versions-v0-layout"
UNKNOWN_API = "unknown-api"
UNKNOWN_VERSION = "unknown-version"
SECTION_CHECKS = frozenset({TAGGED_DEFAULT, TAGS_NOT_ASCENDING, TAG_REPEATED})  # the section as a whole is wrong
CHECKS = (TRAILING_BYTES, BEYOND_FRAME, VARINT_TOO_LONG, TAGGED_SIZE, HEADER_VERSION, UNMATCHED_RESPONSE, FRAME_SIZE,
          NULL_NOT_NULLABLE, INVALID_UTF8, STRING_TOO_LONG, TAG_NOT_IN_VERSION, TAGGED_DEFAULT, TAGS_NOT_ASCENDING, TAG_REPEATED,
          VARINT_NOT_MINIMAL, BOOL_NOT_CANONICAL, NULL_MARKER, FALLBACK_LAYOUT, UNKNOWN_API, UNKNOWN_VERSION)

VALUES_PER_BYTE, VALUES_FLOOR = 4, 65_536  # values a walk may build per byte of its input, plus these
SHOWN = 64  # bytes of a witness kept: a deviation's place is its offset, its bytes only illustrate it
MAX_NOTED = 100  # deviations noted in one frame (a frame of 100 MB could hold millions); the rest are counted
_BIG_FLOAT = struct.Struct(WIRE["float64"].format)


class Deviation(NamedTuple):
    """One place where the bytes are not what Kafka's writer writes."""

    check: str  # one of ``CHECKS``
    offset: int  # of its first byte in the frame, the size prefix included
    path: str  # header.ClientId, body.Topics[0].Name ("" for the frame as a whole)
    message: str
    found: bytes  # the bytes as sent (at most ``SHOWN``)
    expected: bytes | None = None  # what Kafka's writer writes in their place (b"": nothing); None: no one span


class Refused(Exception):
    """The walk ends at ``deviation``: Kafka refuses the bytes, or reads on from another place than the sender meant."""

    def __init__(self, deviation: Deviation) -> None:
        super().__init__(deviation.message)
        self.deviation = deviation


class KafkaReader:
    """One walk over ``buf`` (a frame's bytes after its size prefix: offsets in deviations add ``base``)."""

    def __init__(self, buf: bytes, base: int = 4) -> None:
        self.buf = buf
        self.base = base
        self.end = len(buf)  # where the bytes being read stop: the buffer, or a tagged field's declared size
        self.found: list[Deviation] = []
        self.parts: list[str | int] = []
        self.budget = VALUES_PER_BYTE * len(buf) + VALUES_FLOOR
        self.unknown_tags = 0  # tags read that the struct never had: forward compatibility, no deviation
        self.unnoted = 0  # deviations past MAX_NOTED
        self.keeping = 0  # > 0 while a tagged field's value is read: the only values a check compares

    # --- recording -------------------------------------------------------------------------------------

    def deviation(self, check: str, start: int, stop: int, message: str, expected: bytes | None = None) -> Deviation:
        return Deviation(check, self.base + start, join_path(self.parts), message,
                         bytes(self.buf[start:min(stop, start + SHOWN)]), expected)

    def note(self, check: str, start: int, stop: int, message: str, expected: bytes | None = None) -> None:
        if len(self.found) < MAX_NOTED:
            self.found.append(self.deviation(check, start, stop, message, expected))
        else:
            self.unnoted += 1

    def refuse(self, check: str, start: int, stop: int, message: str, expected: bytes | None = None) -> Refused:
        return Refused(self.deviation(check, start, stop, message, expected))

    def need(self, pos: int, size: int, what: str) -> int:
        """The end of ``size`` bytes at ``pos``; ``Refused`` (``BEYOND_FRAME``) when fewer are left."""
        end = pos + size
        if end > self.end:
            raise self.refuse(BEYOND_FRAME, pos, self.end, f"{what} needs {size} bytes, only {self.end - pos} left")
        return end

    # --- varints and lengths ---------------------------------------------------------------------------

    def signed_uvarint(self, pos: int, what: str) -> tuple[int, int]:
        """An unsigned varint as the Java int Kafka's generated readers hold it: 2^31 and above are negative."""
        value, end = self.uvarint(pos, what)
        return (value - (1 << 32) if value >= 1 << 31 else value), end

    def uvarint(self, pos: int, what: str) -> tuple[int, int]:
        """An unsigned varint as ``ByteUtils.readUnsignedVarint`` reads it: at most 5 bytes, 32 bits."""
        result, shift, start = 0, 0, pos
        for count in range(1, 6):
            if pos >= self.end:
                raise self.refuse(BEYOND_FRAME, start, pos, f"{what}: the varint runs past the end of the frame")
            byte = self.buf[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if result > 0xFFFFFFFF:
                    raise self.refuse(VARINT_TOO_LONG, start, pos, f"{what}: varint {result} does not fit in 32 "
                                      f"bits; Kafka keeps the low 32 bits and reads {result & 0xFFFFFFFF}")
                if count > 1 and byte == 0:
                    self.note(VARINT_NOT_MINIMAL, start, pos, f"{what}: varint {result} written in {count} bytes, "
                              f"Kafka writes {len(uvarint_bytes(result))}", uvarint_bytes(result))
                return result, pos
            shift += 7
        raise self.refuse(VARINT_TOO_LONG, start, pos, f"{what}: varint longer than 5 bytes, which Kafka refuses")

    def length(self, compact: bool, nullable: bool, pos: int, classic: struct.Struct,
               what: str) -> tuple[int | None, int]:
        """A length or null: compact uvarint(n + 1), classic signed; any negative classic length is null to Kafka."""
        start = pos
        if compact:  # Kafka: readUnsignedVarint() - 1 in a Java int, null when negative
            value, pos = self.signed_uvarint(pos, f"{what} length")
            signed = (1 << 31) - 1 if value == -(1 << 31) else value - 1  # the int's subtraction wraps
            canonical = b"\x00"
        else:
            pos = self.need(pos, classic.size, f"{what} length")
            signed = classic.unpack_from(self.buf, start)[0]
            canonical = classic.pack(-1)
        length = None if signed < 0 else signed
        if signed < -1 and nullable:
            self.note(NULL_MARKER, start, pos, f"null {what} written as length {signed}; Kafka reads any negative "
                      f"length as null and writes {canonical.hex()}", canonical)
        if length is None and not nullable:
            raise self.refuse(NULL_NOT_NULLABLE, start, pos, f"null {what} (length {signed}) where the field is not "
                              "nullable in this version; Kafka refuses it")
        return length, pos

    # --- structs -----------------------------------------------------------------------------------------

    def message(self, plan: StructPlan, pos: int, part: str) -> tuple[dict[str, Any], int]:
        """A header or a body at ``pos``, its deviations' paths under ``part``."""
        self.parts = [part]
        return self.struct(plan, pos)

    def struct(self, plan: StructPlan, pos: int) -> tuple[dict[str, Any], int]:
        self.spend(len(plan.fields) + 1, pos)
        value: dict[str, Any] = {}
        for field in plan.regular_fields:
            value[field.key], pos = self.field(field, pos)
        if plan.flexible:
            pos = self.tagged(plan, pos, value)
        return value, pos

    def spend(self, values: int, pos: int) -> None:
        """Values built without bytes (structs of nothing in arrays) are bounded by the input's length."""
        self.budget -= values
        if self.budget < 0:
            raise self.refuse(BEYOND_FRAME, pos, pos, "more values than the frame's bytes can hold (arrays of "
                              "structs that take no bytes)")

    def field(self, plan: FieldPlan, pos: int) -> tuple[Any, int]:
        self.parts.append(plan.name)
        try:
            return self.field_value(plan, pos)
        finally:
            self.parts.pop()

    def nested(self, plan: FieldPlan, pos: int) -> tuple[dict[str, Any] | None, int]:
        """A struct field; a nullable one (KIP-893) has a marker first: as a regular field a byte, negative for
        null, anything else present (Kafka writes -1 or 1); in a tagged field an unsigned varint, 0 for null
        (Kafka writes 0 or 1)."""
        assert plan.nested is not None
        if not plan.nullable:
            return self.struct(plan.nested, pos)
        if plan.tag is not None:  # Kafka: readUnsignedVarint() <= 0 in a Java int is null
            marker, end = self.signed_uvarint(pos, "struct presence marker")
            null, canonical = marker <= 0, (0 if marker <= 0 else 1)
        else:
            end = self.need(pos, 1, "struct presence marker")
            marker = self.buf[pos]
            null, canonical = marker >= 0x80, (0xFF if marker >= 0x80 else 1)
        if marker != canonical or end - pos > 1:
            self.note(NULL_MARKER, pos, end, f"struct presence marker {bytes(self.buf[pos:end]).hex()}; Kafka reads "
                      f"it as {'null' if null else 'present'} and writes {canonical:02x}", bytes([canonical]))
        return (None, end) if null else self.struct(plan.nested, end)

    def array(self, plan: FieldPlan, pos: int) -> tuple[list[Any] | None, int]:
        start = pos
        count, pos = self.length(plan.compact, plan.nullable, pos, INT32, "array")
        if count is None:
            return None, pos
        if count > self.end - pos:
            raise self.refuse(BEYOND_FRAME, start, pos, f"array of {count} elements, but only {self.end - pos} "
                              "bytes left; Kafka refuses to allocate it")
        element = plan.nested
        self.spend(count, pos)
        items: list[Any] = []
        for index in range(count):
            self.parts.append(index)
            try:
                item, pos = (self.struct(element, pos) if element is not None
                             else self.leaf(plan.type.name, plan.compact, False, pos))  # elements: never null
            finally:
                self.parts.pop()
            if self.keeping:  # a value compared to its default; elsewhere, reading it is the check
                items.append(item)
        return items, pos

    def leaf(self, type_name: str, compact: bool, nullable: bool, pos: int) -> tuple[Any, int]:
        primitive = WIRE[type_name]
        if primitive.size is not None:
            end = self.need(pos, primitive.size, type_name)
            if type_name == "bool":
                byte = self.buf[pos]
                if byte > 1:
                    self.note(BOOL_NOT_CANONICAL, pos, end, f"boolean byte {byte:#04x}; Kafka reads any non-zero "
                              "byte as true and writes 0x01", b"\x01")
                return byte != 0, end
            if type_name == "uuid":
                return uuid.UUID(bytes=bytes(self.buf[pos:end])), end
            if type_name == "float64":
                return _BIG_FLOAT.unpack_from(self.buf, pos)[0], end
            return struct.unpack_from(primitive.format, self.buf, pos)[0], end
        if primitive.travels_as == "string":
            return self.string(compact, nullable, pos)
        # Kafka reads any negative records length as null, nullable or not (Readable.readRecords)
        return self.bytes_value(compact, nullable or type_name == "records", pos)

    def string(self, compact: bool, nullable: bool, pos: int) -> tuple[str | None, int]:
        start = pos
        length, pos = self.length(compact, nullable, pos, INT16, "string")
        if length is None:
            return None, pos
        if length > MAX_STRING_BYTES:
            raise self.refuse(STRING_TOO_LONG, start, pos, f"string length {length} is above {MAX_STRING_BYTES}, "
                              "which Kafka refuses")
        end = self.need(pos, length, "string")
        data = bytes(self.buf[pos:end])
        try:
            return data.decode("utf-8"), end
        except UnicodeDecodeError as exc:
            read = data.decode("utf-8", "replace")
            self.note(INVALID_UTF8, pos + exc.start, end, f"string is not UTF-8 (byte {exc.start} of it: "
                      f"{exc.reason}); Kafka reads U+FFFD in its place", None)
            return read, end

    def bytes_value(self, compact: bool, nullable: bool, pos: int) -> tuple[bytes | None, int]:
        length, pos = self.length(compact, nullable, pos, INT32, "bytes")
        if length is None:
            return None, pos
        end = self.need(pos, length, "bytes")
        return bytes(self.buf[pos:end]), end

    # --- tagged fields -----------------------------------------------------------------------------------

    def tagged(self, plan: StructPlan, pos: int, value: dict[str, Any]) -> int:
        """A tagged-field section as Kafka's generated reader loops over it: any order, repeats, unknown tags
        kept; a known tag's value is read from its payload, whose declared size Kafka does not check. Counts,
        tags and sizes are Java ints there: from 2^31 on, negative."""
        section, noted = pos, len(self.found)
        count, pos = self.signed_uvarint(pos, "tagged field count")
        if count < 0:
            self.note(VARINT_TOO_LONG, section, pos, f"tagged field count {count + (1 << 32)} is {count} as Kafka's "
                      "int: Kafka reads no tagged field here, and the rest of the section as what follows")
        previous, seen = -1, set[int]()
        for _ in range(max(count, 0)):
            start = pos
            tag, pos = self.signed_uvarint(pos, "tag")
            size, pos = self.signed_uvarint(pos, f"size of tag {tag}")
            field = plan.tagged_by_number.get(tag)
            if size < 0:
                raise self.refuse(TAGGED_SIZE if field is not None else VARINT_TOO_LONG, start, pos,
                                  f"tag {tag} declares a negative size ({size} as Kafka's int); Kafka "
                                  + ("reads the value past it" if field is not None else "refuses it"))
            end = self.need(pos, size, f"tagged field {tag}")
            self.order(tag, previous, seen, start, end)
            seen.add(tag)
            previous = max(previous, tag)
            if field is None:
                self.not_in_version(plan, tag, start, end)
                self.unknown_tags += 1
                value.setdefault(UNKNOWN_TAGS, []).append((tag, bytes(self.buf[pos:end])))  # forward compatibility
            else:
                value[field.key] = self.tagged_value(field, start, pos, end)
            pos = end
        for field in plan.tagged:
            value.setdefault(field.key, field.default())
        self.witness_section(plan, value, section, pos, noted)
        return pos

    def order(self, tag: int, previous: int, seen: set[int], start: int, end: int) -> None:
        """Tags Kafka reads in any order, and twice, but writes once each, ascending."""
        if tag in seen:
            self.note(TAG_REPEATED, start, end, f"tag {tag} appears twice in one tagged-field section; Kafka keeps "
                      "the last value of a known tag, every copy of an unknown one")
        elif tag < previous:
            self.note(TAGS_NOT_ASCENDING, start, end, f"tag {tag} after tag {previous}; Kafka writes tags in "
                      "ascending order")
        elif tag < 0:
            self.note(VARINT_TOO_LONG, start, end, f"tag {tag + (1 << 32)} is {tag} as Kafka's int: no tag Kafka "
                      "can write")

    def witness_section(self, plan: StructPlan, value: dict[str, Any], start: int, end: int, noted: int) -> None:
        """The section as Kafka's writer writes it, added to the message of each deviation of the section's own
        making (a default written, tags out of order or repeated): the entry's bytes alone do not show it."""
        own = [index for index in range(noted, len(self.found)) if self.found[index].check in SECTION_CHECKS]
        if not own:
            return
        try:
            written = plan.tagged_section.to_bytes(value).hex()
        except CodecError:  # unknown tags out of order or repeated: Kafka's writer refuses to write them back
            return
        sent = bytes(self.buf[start:end]).hex()
        for index in own:
            deviation = self.found[index]
            self.found[index] = deviation._replace(
                message=f"{deviation.message} (the section: sent {sent}, Kafka writes {written})")

    def not_in_version(self, plan: StructPlan, tag: int, start: int, end: int) -> None:
        """A tag unknown at this version is kept as an unknown tag, unless the struct has a field with that tag in
        other versions: Kafka's generated reader refuses it then ("Tag N is not valid for version V")."""
        for field in plan.fields:
            spec = field.spec
            if spec.tag == tag and spec.tagged_versions is not None and field.tag is None:
                raise self.refuse(TAG_NOT_IN_VERSION, start, end, f"tag {tag} is {field.name}'s, which is tagged in "
                                  f"versions {spec.tagged_versions} only, not in version {plan.version}; Kafka "
                                  "refuses it")

    def tagged_value(self, field: FieldPlan, start: int, pos: int, end: int) -> Any:
        """A known tag's value, read within its declared size: a value that needs more, or fewer, bytes is read
        by Kafka from the value's own bytes onwards, so everything after it is misread."""
        outer, self.end = self.end, end
        self.parts.append(field.name)
        self.keeping += 1
        try:
            item, used = self.field_value(field, pos)
        except Refused as exc:
            if exc.deviation.check != BEYOND_FRAME:
                raise
            raise self.refuse(TAGGED_SIZE, start, end, f"tagged field {field.name} (tag {field.tag}) declares "
                              f"{end - pos} bytes, but its value needs more; Kafka reads the value past them") from None
        finally:
            self.end = outer
            self.keeping -= 1
            self.parts.pop()
        if used != end:
            self.parts.append(field.name)
            try:
                raise self.refuse(TAGGED_SIZE, start, end, f"tagged field {field.name} (tag {field.tag}) declares "
                                  f"{end - pos} bytes, but its value takes {used - pos}; Kafka reads on from the "
                                  "value's end")
            finally:
                self.parts.pop()
        if item == field.default():
            self.parts.append(field.name)
            self.note(TAGGED_DEFAULT, start, end, f"tagged field {field.name} (tag {field.tag}) holds its default "
                      f"value {_shown(item)}; Kafka's writer leaves it out", b"")
            self.parts.pop()
        return item

    def field_value(self, field: FieldPlan, pos: int) -> tuple[Any, int]:
        """``field``'s value at ``pos`` with the path already pointing at it."""
        if field.type.is_array:
            return self.array(field, pos)
        if field.nested is not None:
            return self.nested(field, pos)
        return self.leaf(field.type.name, field.compact, field.nullable, pos)


def _shown(value: Any) -> str:
    """A default value as a message shows it (short)."""
    text = ("null" if value is None else str(value) if isinstance(value, uuid.UUID)
            else value.hex() or '""' if isinstance(value, bytes) else repr(value))
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = ["CHECKS", "Deviation", "KafkaReader", "Refused"]
