"""Byte surgery on real Kafka frames, driven by the codec's plans (for tests that seed faults).

``Layout`` walks a whole frame with the plans of its header and body (``Codec.plan``) and says where every field
lies: its span in the frame (the 4-byte size prefix included, as the frame checker counts offsets), where its length
prefix ends for strings, bytes and arrays, and where each struct's tagged-field section is. It is written here, apart
from the checker's own walker (``linter.wirecheck.reader``), so a test does not locate a fault with the code it
tests: fields are read with the codec's per-field decoders, the structure (arrays, structs, tagged sections) is
walked here. ``replace`` swaps one span for other bytes and writes the size prefix again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from linter.codec.wire import INT16, INT32, read_uvarint, uvarint_bytes
from linter.model.wire import WIRE

if TYPE_CHECKING:
    from linter.codec import Codec
    from linter.codec.plans import FieldPlan, StructPlan

HEADERS = {"request": "RequestHeader", "response": "ResponseHeader"}
PREFIX = 4  # the size prefix: every offset here counts it


@dataclass(frozen=True)
class Span:
    """Where one field lies in the frame; ``body`` starts after its length prefix (strings, bytes, arrays) or its
    presence marker (nullable structs), else at ``start``."""

    start: int
    end: int
    body: int


@dataclass(frozen=True)
class Section:
    """A struct's tagged-field section: its count varint at ``start``, and each entry as (tag, entry start, value
    start, value end)."""

    start: int
    count_end: int
    end: int
    entries: tuple[tuple[int, int, int, int], ...]


class Layout:
    """Every field of one whole frame, by path (``header.ClientId``, ``body.Topics[0].Partitions[1].Index``)."""

    def __init__(self, codec: Codec, direction: str, frame: bytes, api_key: int | None = None,
                 api_version: int | None = None) -> None:
        if INT32.unpack_from(frame)[0] != len(frame) - PREFIX:
            raise ValueError("the size prefix does not match the frame")
        if direction == "request":
            api_key, api_version = INT16.unpack_from(frame, 4)[0], INT16.unpack_from(frame, 6)[0]
            message = codec.request_for(api_key)
            header_version = codec.request_header_version(api_key, api_version)
        else:
            assert api_key is not None and api_version is not None, "a response needs its request's API and version"
            message = codec.response_for(api_key)
            header_version = codec.response_header_version(api_key, api_version)
        assert message.name is not None
        self.codec = codec
        self.name, self.version, self.header_version = message.name, api_version, header_version
        self.header = codec.plan(HEADERS[direction], header_version)
        self.body = codec.plan(message.name, api_version)
        self.frame = frame
        self.fields: dict[str, Span] = {}
        self.sections: dict[str, Section] = {}
        self.plans: dict[str, StructPlan] = {}
        end = self._struct(self.header, PREFIX, "header")
        self.body_start = end
        end = self._struct(self.body, end, "body")
        if end != len(frame):
            raise ValueError(f"the plans read {end} of the frame's {len(frame)} bytes")

    # --- the walk ----------------------------------------------------------------------------------------

    def _struct(self, plan: StructPlan, pos: int, path: str) -> int:
        self.plans[path] = plan
        for field in plan.regular_fields:
            pos = self._field(field, pos, f"{path}.{field.name}")
        if plan.flexible:
            pos = self._section(plan, pos, path)
        return pos

    def _field(self, field: FieldPlan, pos: int, path: str) -> int:
        frame = self.frame
        if field.type.is_array:
            count, body = self._length(field, pos, INT32)
            end = body
            if field.nested is not None:
                for index in range(count or 0):
                    end = self._struct(field.nested, end, f"{path}[{index}]")
            else:
                _, end = field.decode(frame, pos)
        elif field.nested is not None:
            body = pos
            if field.nullable:  # KIP-893: a marker byte (a varint when tagged), then the struct unless null
                marker, body = read_uvarint(frame, pos) if field.tag is not None else (frame[pos], pos + 1)
                null = marker == 0 if field.tag is not None else marker >= 0x80
                end = body if null else self._struct(field.nested, body, path)
            else:
                end = self._struct(field.nested, body, path)
        else:
            primitive = WIRE[field.type.name]
            body = pos
            if primitive.size is None:
                _, body = self._length(field, pos, INT16 if primitive.travels_as == "string" else INT32)
            _, end = field.decode(frame, pos)
        self.fields[path] = Span(pos, end, body)
        return end

    def _length(self, field: FieldPlan, pos: int, classic: Any) -> tuple[int | None, int]:
        if field.compact:
            value, end = read_uvarint(self.frame, pos)
            return (None if value == 0 else value - 1), end
        value = classic.unpack_from(self.frame, pos)[0]
        return (None if value < 0 else value), pos + classic.size

    def _section(self, plan: StructPlan, pos: int, path: str) -> int:
        start = pos
        count, pos = read_uvarint(self.frame, pos)
        count_end, entries = pos, []
        for _ in range(count):
            entry = pos
            tag, pos = read_uvarint(self.frame, pos)
            size, pos = read_uvarint(self.frame, pos)
            entries.append((tag, entry, pos, pos + size))
            field = plan.tagged_by_number.get(tag)
            if field is not None:
                self.fields[f"{path}.{field.name}"] = Span(entry, pos + size, pos)
            pos += size
        self.sections[path] = Section(start, count_end, pos, tuple(entries))
        return pos

    # --- what a test builds from it ----------------------------------------------------------------------

    def tagged_entry(self, path: str, tag: int, value: Any, size: int | None = None) -> bytes:
        """A tagged-field entry of the struct at ``path``: tag, size (the value's own unless ``size``), value."""
        field = self.plans[path].tagged_by_number[tag]
        out = bytearray()
        field.encode(value, out)
        return uvarint_bytes(tag) + uvarint_bytes(len(out) if size is None else size) + bytes(out)

    def with_section(self, path: str, entries: list[bytes]) -> bytes:
        """The frame with the tagged-field section of the struct at ``path`` replaced by ``entries``."""
        section = self.sections[path]
        return replace(self.frame, section.start, section.end, uvarint_bytes(len(entries)) + b"".join(entries))


def replace(frame: bytes, start: int, end: int, new: bytes, *, size: int | None = None) -> bytes:
    """``frame`` with bytes ``start:end`` (offsets counting the size prefix) replaced by ``new``, and its size prefix
    written again: the right size, unless ``size`` is given."""
    assert PREFIX <= start <= end <= len(frame), (start, end, len(frame))
    payload = frame[PREFIX:start] + new + frame[end:]
    return INT32.pack(len(payload) if size is None else size) + payload


def resized(frame: bytes, size: int) -> bytes:
    """``frame`` with its size prefix saying ``size``."""
    return INT32.pack(size) + frame[PREFIX:]


__all__ = ["Layout", "Section", "Span", "replace", "resized"]
