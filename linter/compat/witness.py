"""Byte-level proof from the codec: cross-decode values written by one revision with the other.

A wire break gets a *witness*: a value one revision encodes at a version, the hex, and what
the other revision decodes from it (or its ``DecodeError``). A version judged compatible is
cross-checked the same way with a few generated values in each direction; any divergence
is a finding, so a mistake of the layout comparison cannot pass silently. (A version whose
layouts are the same wire, names included, is not: ``layout.same_wire``.)

Divergence is judged by meaning, not by Python equality: the regular fields are compared in
wire order (names must agree, allowing for known renames; wrapper structs that a
non-flexible version inlines are flattened), and every tagged field the writer actually sent
must read back the same wherever the reader knows that field. A tag the reader does not know
is skipped, as Kafka skips it: that loss is what ``tag-removed`` reports.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from linter.codec.codec import Codec
from linter.codec.compiler import FieldPlan, StructPlan
from linter.codec.errors import CodecError, DecodeError
from linter.codec.values import identical, random_value
from linter.compat.diff import Witness
from linter.model.spec import MessageSpec
from linter.model.traits import header_version

Flat = tuple[list[tuple[str, Any]], dict[str, tuple[bool, Any]]]


HEADER_NAMES = ("RequestHeader", "ResponseHeader")


@dataclass(frozen=True)
class Headers:
    """Each revision's RequestHeader and ResponseHeader specs (none when a revision lacks them)."""

    old: tuple[MessageSpec, ...] = ()
    new: tuple[MessageSpec, ...] = ()


class CrossCodec:
    """The codecs of both revisions of one message (with their header specs, for frame witnesses).

    ``old_version`` maps a version of the new revision to the old revision's version holding the same
    bytes: the same number, except for a coordinator key converted from a ``data`` record (its old
    version was its record type, KAFKA-18301)."""

    def __init__(self, old: MessageSpec, new: MessageSpec, renames: dict[tuple[str, str], str],
                 old_version: Callable[[int], int] = lambda version: version, headers: Headers = Headers()) -> None:
        self.old = Codec([old, *(h for h in headers.old if h.name != old.name)])
        self.new = Codec([new, *(h for h in headers.new if h.name != new.name)])
        self.names = {"old": old.name, "new": new.name}
        self.renames = renames  # (struct path in new names, old name) -> new name
        self.old_version = old_version

    def version_of(self, side: str, version: int) -> int:
        return self.old_version(version) if side == "old" else version

    def codec(self, side: str) -> Codec:
        return self.old if side == "old" else self.new

    def attempt(self, version: int, writer: str, seed: int, size: int = 3) -> Witness | None:
        """Write a random value with one revision, read it with the other; a witness if they disagree."""
        reader = "new" if writer == "old" else "old"
        w_codec, r_codec = self.codec(writer), self.codec(reader)
        w_name, r_name = self.names[writer], self.names[reader]
        w_version, r_version = self.version_of(writer, version), self.version_of(reader, version)
        value = random_value(w_codec, w_name, w_version, random.Random(seed), size)
        data = w_codec.encode(w_name, w_version, value)
        try:
            decoded = r_codec.decode(r_name, r_version, data)
        except DecodeError as exc:
            return self._witness(version, writer, data, value, None, error=str(exc))
        written = flatten(w_codec.plan(w_name, w_version), value)
        read = flatten(r_codec.plan(r_name, r_version), decoded)
        reason = Comparison(self.renames, old_writes=writer == "old").divergence(written, read)
        if reason is None:
            return None
        return self._witness(version, writer, data, value, decoded, reason=reason)

    def _witness(self, version: int, writer: str, data: bytes, written: Any, read: Any, *,
                 error: str | None = None, reason: str = "") -> Witness:
        reader = "new" if writer == "old" else "old"
        shown = {writer: self._json(writer, version, written), reader: self._json(reader, version, read)}
        return Witness(version, writer, data.hex(), shown["old"], shown["new"], error, reason)

    def _json(self, side: str, version: int, value: Any) -> Any:
        if value is None:
            return None
        return self.codec(side).to_json(self.names[side], self.version_of(side, version), value)

    def frame_witness(self, version: int) -> Witness | None:
        """A default request or response frame written by the old revision, read by the new one, whose
        header version at ``version`` differs; ``None`` when a revision has no header spec to frame it."""
        old, new = self.old.spec(self.names["old"]), self.new.spec(self.names["new"])
        try:
            body = self.old.default(old.name, version)
            if old.type == "request":
                header = {"correlationId": 1, "clientId": "krpc-lint"}
                frame = self.old.encode_request(version, header, body, name=old.name)
                read = lambda: self.new.decode_request(frame)[2:]  # noqa: E731 - (header, body)
            else:
                frame = self.old.encode_response(old.api_key, version, {"correlationId": 1}, body)
                read = lambda: self.new.decode_response(new.api_key, version, frame)  # noqa: E731
        except (KeyError, ValueError):  # no header spec in a revision, or a header version it lacks
            return None
        old_header, new_header = header_version(old, version), header_version(new, version)
        shown = {"header version": old_header, "body": self.old.to_json(old.name, version, body)}
        try:
            got_header, got_body = read()
        except (DecodeError, KeyError, ValueError) as exc:
            return Witness(version, "old", frame.hex(), shown, None, error=f"read with {old.type} header v{new_header}: {exc}")
        return Witness(version, "old", frame.hex(), shown, {"header version": new_header, "header": got_header},
                       reason=f"the frame's {old.type} header v{old_header} is read as v{new_header}")

    def search(self, version: int, attempts: int, seed: int = 0) -> Witness | None:
        """The first disagreement among ``attempts`` values per direction, old writer first; small
        values (empty arrays, then one element) come first so that a witness stays readable."""
        for index in range(attempts):
            size = min(index // 4, 3)
            for writer in ("old", "new"):
                try:
                    found = self.attempt(version, writer, seed * 7919 + index * 2 + (writer == "new"), size)
                except CodecError:
                    continue  # a value one side cannot even encode says nothing about the other
                if found is not None:
                    return found
        return None


def flatten(plan: StructPlan, value: dict[str, Any], prefix: str = "") -> Flat:
    """Regular fields in wire order as (name, value), and tagged fields by name as (sent, value).

    Names are qualified by the wrapper structs a non-flexible version inlines, as ``Slot.where``.
    """
    regular: list[tuple[str, Any]] = []
    tagged: dict[str, tuple[bool, Any]] = {}
    for field in plan.fields:
        if not field.present:
            continue
        item = value.get(field.key)
        where = prefix + field.spec.name
        if field.tag is not None:
            tagged[where] = (not field.is_default(item), _leaf(field, item))
        elif field.nested is not None and not field.spec.type.is_array and not field.nullable and not plan.flexible:
            regular.extend(flatten(field.nested, item, where + ".")[0])  # inlined on the wire: no bytes of its own
        else:
            regular.append((where, _leaf(field, item)))
    return regular, tagged


def _leaf(field: FieldPlan, item: Any) -> Any:
    if field.nested is None or item is None:
        return item
    if field.spec.type.is_array:
        return [flatten(field.nested, element) for element in item]
    return flatten(field.nested, item)


class Comparison:
    """Walks a written and a read value together; struct paths use the new revision's names, as
    the renames found by the layout comparison do."""

    def __init__(self, renames: dict[tuple[str, str], str], old_writes: bool) -> None:
        self.renames = renames if old_writes else {(path, new): old for (path, old), new in renames.items()}
        self.old_writes = old_writes

    def divergence(self, written: Flat, read: Flat, path: str = "") -> str | None:
        """Where a value read back means something else than the value written, or ``None``."""
        w_regular, w_tagged = written
        r_regular, r_tagged = read
        if len(w_regular) != len(r_regular):
            return f"{path or 'the message: '}{len(w_regular)} fields written, {len(r_regular)} read"
        for (w_name, w_value), (r_name, r_value) in zip(w_regular, r_regular):
            if self._renamed(path, w_name) != r_name:
                return f"{path}{w_name} is read as {r_name}"
            found = self._values(w_value, r_value, self._nested_path(path, w_name, r_name))
            if found:
                return found
        readable = dict(r_regular) | {name: value for name, (_, value) in r_tagged.items()}
        for w_name, (sent, w_value) in w_tagged.items():
            r_name = self._renamed(path, w_name)
            if sent and r_name in readable:
                found = self._values(w_value, readable[r_name], self._nested_path(path, w_name, r_name))
                if found:
                    return found
        return None

    def _renamed(self, path: str, name: str) -> str:
        return self.renames.get((path, name), name)

    def _nested_path(self, path: str, w_name: str, r_name: str) -> str:
        return f"{path}{r_name if self.old_writes else w_name}"

    def _values(self, written: Any, read: Any, where: str) -> str | None:
        if isinstance(written, tuple) and isinstance(read, tuple):
            return self.divergence(written, read, where + ".")
        if isinstance(written, list) and isinstance(read, list) and written and isinstance(written[0], tuple):
            if len(written) != len(read):
                return f"{where}: {len(written)} elements written, {len(read)} read"
            for w_item, r_item in zip(written, read):
                found = self._values(w_item, r_item, where + "[]")
                if found:
                    return found
            return None
        if identical(written, read):
            return None
        return f"{where}: wrote {_short(written)}, read {_short(read)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
