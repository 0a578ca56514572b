"""A struct's tagged-field section (KIP-482): a count, then ``(tag, size, payload)`` in ascending tag
order. Known tags decode into their fields, absent ones get their defaults, and unknown ones are kept
under ``UNKNOWN_TAGS`` as ``[(tag, bytes), ...]`` and written back on encode."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from linter.codec.errors import CodecError, DecodeError, EncodeError
from linter.codec.wire import need, read_uvarint, write_uvarint

if TYPE_CHECKING:
    from linter.codec.plans import FieldPlan

UNKNOWN_TAGS = "_unknownTaggedFields"
_MISSING = object()


class TaggedFields:
    """The tagged fields of a struct at one version, by ascending tag."""

    def __init__(self, pairs: list[tuple[int, FieldPlan]]) -> None:
        self.pairs = sorted(pairs, key=lambda pair: pair[0])  # (tag, field)
        self.fields = [plan for _, plan in self.pairs]
        self.by_number = dict(self.pairs)

    def encode(self, value: dict[str, Any], out: bytearray) -> None:
        """The section of a struct value: its tagged fields that differ from their defaults, and the
        unknown tags it carries."""
        entries: list[tuple[int, bytes | bytearray]] = []
        for tag, plan in self.pairs:
            item = value.get(plan.key, _MISSING)
            if item is _MISSING or item == plan.default():
                continue
            payload = bytearray()
            try:
                plan.encode(item, payload)
            except CodecError as exc:
                raise exc.at(plan.name) from None
            entries.append((tag, payload))
        unknown = value.get(UNKNOWN_TAGS)
        if unknown:
            entries = _merge_unknown(entries, unknown, self.by_number)
        write_uvarint(len(entries), out)
        for tag, data in entries:
            write_uvarint(tag, out)
            write_uvarint(len(data), out)
            out += data

    def to_bytes(self, value: dict[str, Any]) -> bytes:
        """The section alone (the C accelerator writes the rest of the struct)."""
        out = bytearray()
        self.encode(value, out)
        return bytes(out)

    def decode(self, buf: bytes, pos: int, result: dict[str, Any]) -> int:
        """Read the section at ``pos`` into ``result`` (defaults for the known tags it lacks); the end."""
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
            plan = self.by_number.get(tag)
            if plan is None:
                result.setdefault(UNKNOWN_TAGS, []).append((tag, bytes(buf[pos:end])))
            else:
                try:
                    result[plan.key], used = plan.decode(buf, pos)
                except CodecError as exc:
                    raise exc.at(plan.name) from None
                if used != end:
                    raise DecodeError(f"tagged field {plan.name} (tag {tag}) has {size} bytes but its value "
                                      f"used {used - pos}", pos).at(plan.name)
            pos = end
        for plan in self.fields:
            if plan.key not in result:
                result[plan.key] = plan.default()
        return pos


def _merge_unknown(entries: list[tuple[int, bytes | bytearray]], unknown: Any,
                   known: dict[int, FieldPlan]) -> list[tuple[int, bytes | bytearray]]:
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


__all__ = ["UNKNOWN_TAGS", "TaggedFields"]
