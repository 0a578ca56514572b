"""The wire-size advisor (KIP-636): the bytes of a message's values, per field path, and what they would
be with some fields tagged, counted exactly by encoding both ways with the codec.

``measure`` walks the compiled plan beside each value and attributes every byte the encoder writes:

- a primitive (or an array of primitives) field: its whole encoding, at ``Topics[].ErrorCode``;
- an array of structs: its length prefix at the array's path (``Topics``), its elements' fields below it;
- a struct field: its presence marker (nullable structs) at its path, its fields below it;
- a struct's tagged-field count: at the path of the struct's field (``Topics`` for its elements), and at
  ``""`` (the message itself) for the top level;
- a tagged field that is written (it differs from its default): its tag and size varints at its path,
  beside its payload; one that is not written costs nothing, and is listed with 0 bytes.

So the bytes per path always add up to the encoded length (the tests check it on Kafka's specs).

``tag_fields`` builds the what-if spec: the message's JSON with the chosen fields tagged from their first
flexible version on (fresh tags per struct); ``kip636_paths`` chooses every ErrorCode and ErrorMessage of
a response, as KIP-636 proposes (a nullable ErrorMessage without a default gets ``"default": "null"``:
a tagged field is written whenever it differs from its default, so with the implicit ``""`` default a null
message would cost its tag and size instead of saving a byte).

>>> from linter.codec import Codec
>>> codec = Codec.load("fixtures/valid")
>>> value = codec.default("WidgetFetchRequest", 2)
>>> sizes = measure(codec, "WidgetFetchRequest", 2, [value])
>>> sizes.bytes == len(codec.encode("WidgetFetchRequest", 2, value)) == sum(sizes.fields.values())
True
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from linter.codec.codec import Codec
from linter.codec.errors import CodecError, EncodeError
from linter.codec.plans import FieldPlan, StructPlan
from linter.codec.tagged import UNKNOWN_TAGS
from linter.codec.wire import uvarint_bytes
from linter.errors import KrpcLintError
from linter.model.spec import MessageSpec, build_message
from linter.model.versions import Versions
from linter.model.wire import WIRE

KIP636_FIELDS = ("ErrorCode", "ErrorMessage")
_FIXED = {name: primitive.size for name, primitive in WIRE.items() if primitive.size is not None}  # bytes per type
MESSAGE_PATH = ""  # the message's own bytes: its top-level tagged-field count
_MISSING = object()


class SizeError(KrpcLintError, ValueError):
    """A what-if the spec cannot take (a field path it does not have), or values that do not encode."""


@dataclass
class Sizes:
    """The bytes of ``count`` values of one message version: in all, and per field path (wire order)."""

    name: str
    version: int
    count: int = 0
    bytes: int = 0
    fields: dict[str, int] = field(default_factory=dict)


def measure(codec: Codec, name: str, version: int, values: Iterable[dict[str, Any]],
            sizes: Sizes | None = None) -> Sizes:
    """Encode each value (its bytes are the total) and attribute them to field paths; ``sizes``: add to
    these (a corpus is measured frame by frame).

    A value the codec refuses raises its ``EncodeError`` (with the field path), numbered by position
    when there are several."""
    plan = codec.plan(name, version)
    sizes = Sizes(name, version) if sizes is None else sizes
    for index, value in enumerate(values):
        try:
            sizes.bytes += len(codec.encode(name, version, value))
        except CodecError as exc:
            raise exc.at(index) from None
        sizes.count += 1
        _struct(plan, value, "", MESSAGE_PATH, sizes.fields)
    return sizes


def wire_order(codec: Codec, name: str, version: int, fields: dict[str, int]) -> dict[str, int]:
    """``fields`` in wire order (regular fields, then tagged ones, depth first; the message's own bytes
    last), whatever order the values met them in: the same order for every run over the same paths."""
    order: dict[str, int] = {}
    _order(codec.plan(name, version), "", order)
    order.setdefault(MESSAGE_PATH, len(order))
    return dict(sorted(fields.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def _order(plan: StructPlan, prefix: str, out: dict[str, int]) -> None:
    for spec in (*plan.regular_fields, *plan.tagged):
        path = prefix + spec.name
        out.setdefault(path, len(out))
        if spec.nested is not None:
            _order(spec.nested, path + ("[]." if spec.type.is_array else "."), out)
    out.setdefault(prefix + UNKNOWN_TAGS, len(out))


def encoded_bytes(codec: Codec, name: str, version: int, values: Iterable[dict[str, Any]]) -> int:
    """The total encoded length of the values."""
    return sum(len(codec.encode(name, version, value)) for value in values)


def _add(out: dict[str, int], path: str, size: int) -> None:
    out[path] = out.get(path, 0) + size


def _struct(plan: StructPlan, value: dict[str, Any], prefix: str, owner: str, out: dict[str, int]) -> int:
    """The bytes of a struct value, attributed under ``prefix``; its own (the tagged count) to ``owner``."""
    total = 0
    for spec in plan.regular_fields:
        total += _field(spec, value[spec.key], prefix, out)
    if not plan.flexible:
        return total
    written = 0
    for spec in plan.tagged:  # ascending tags, as written
        path = prefix + spec.name
        item = value.get(spec.key, _MISSING)
        if item is _MISSING or item == spec.default():
            _add(out, path, 0)
            continue
        payload = _field(spec, item, prefix, out)
        assert spec.tag is not None
        header = len(uvarint_bytes(spec.tag)) + len(uvarint_bytes(payload))
        _add(out, path, header)
        total += header + payload
        written += 1
    for tag, data in value.get(UNKNOWN_TAGS) or ():
        size = len(uvarint_bytes(tag)) + len(uvarint_bytes(len(data))) + len(data)
        _add(out, prefix + UNKNOWN_TAGS, size)
        total += size
        written += 1
    count = len(uvarint_bytes(written))
    _add(out, owner, count)
    return total + count


def _field(spec: FieldPlan, item: Any, prefix: str, out: dict[str, int]) -> int:
    """The bytes of one field's value (a tagged field's payload, without its tag and size)."""
    path = prefix + spec.name
    nested = spec.nested
    if nested is None:  # a primitive or an array of primitives: its encoding, whole
        # a fixed-width value is its width: it was checked when the whole value was encoded
        size = None if spec.type.is_array else _FIXED.get(spec.type.name)
        if size is None:
            data = bytearray()
            spec.encode(item, data)
            size = len(data)
        _add(out, path, size)
        return size
    if spec.type.is_array:
        if item is None:
            own = 1 if spec.compact else 4
        else:
            own = len(uvarint_bytes(len(item) + 1)) if spec.compact else 4
        _add(out, path, own)
        return own + sum(_struct(nested, element, path + "[].", path, out) for element in item or ())
    own = 1 if spec.nullable else 0  # the presence marker of a nullable struct (KIP-893)
    _add(out, path, own)
    if item is None:
        return own
    return own + _struct(nested, item, path + ".", path, out)


# --- the what-if spec ---------------------------------------------------------------------------


def kip636_paths(message: MessageSpec) -> list[str]:
    """Every ErrorCode and ErrorMessage field of a response (none for other messages), as paths."""
    if message.type != "response":
        return []
    return [path for path, raw in _walk(message.raw, message.raw.get("fields"), "")
            if raw.get("name") in KIP636_FIELDS]


def tag_fields(message: MessageSpec, paths: Iterable[str], null_error_messages: bool = False) -> MessageSpec:
    """The message with the fields at ``paths`` tagged in its flexible versions where they exist (fresh
    tags, numbered after the struct's highest); fields already tagged, or with no flexible version, are
    left alone. ``null_error_messages`` gives a nullable ErrorMessage without a default ``"default": "null"``.

    ``SizeError`` for a path the message does not have."""
    raw = copy.deepcopy(message.raw)
    flexible = message.flexible
    found = {path.replace("[]", ""): (field_raw, siblings)
             for path, field_raw, siblings in _walk_with_siblings(raw, raw.get("fields"), "")}
    for path in paths:
        key = path.replace("[]", "")
        if key not in found:
            raise SizeError(f"{message.name} has no field {path!r} (a path like Topics[].ErrorCode)")
        field_raw, siblings = found[key]
        if "taggedVersions" in field_raw or "tag" in field_raw:
            continue
        versions = Versions.parse(field_raw.get("versions"))
        if versions is None:
            continue
        tagged = versions.intersect(flexible)
        if tagged.empty:
            continue
        tags = [item.get("tag") for item in siblings if isinstance(item, dict)]
        field_raw["tag"] = max([t for t in tags if isinstance(t, int)], default=-1) + 1
        field_raw["taggedVersions"] = str(tagged)
        nullable = Versions.parse(field_raw.get("nullableVersions"))
        if (null_error_messages and field_raw.get("name") == "ErrorMessage" and "default" not in field_raw
                and nullable is not None and nullable.contains(tagged)):
            field_raw["default"] = "null"
    return build_message(raw, message.path)


def _walk(raw: dict[str, Any], fields: Any, prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, field_raw, _ in _walk_with_siblings(raw, fields, prefix):
        yield path, field_raw


def _walk_with_siblings(raw: dict[str, Any], fields: Any, prefix: str,
                        seen: frozenset[str] = frozenset()) -> Iterator[tuple[str, dict[str, Any], list[Any]]]:
    """Every field of a spec's JSON, depth first, with its path (``Topics[].ErrorCode``) and its struct's field
    list; a struct type without inline fields is looked up in ``commonStructs``."""
    if not isinstance(fields, list):
        return
    for item in fields:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        path = prefix + item["name"]
        yield path, item, fields
        nested = item.get("fields")
        type_text = str(item.get("type", ""))
        type_name = type_text.removeprefix("[]")
        below = path + ("[]." if type_text.startswith("[]") else ".")
        if nested is None and type_name not in seen:
            common = next((s for s in raw.get("commonStructs") or () if isinstance(s, dict)
                           and s.get("name") == type_name), None)
            if common is not None:
                yield from _walk_with_siblings(raw, common.get("fields"), below, seen | {type_name})
        else:
            yield from _walk_with_siblings(raw, nested, below, seen)


def what_if_codec(message: MessageSpec, paths: Iterable[str], null_error_messages: bool = False) -> Codec:
    """A codec holding only the edited message."""
    return Codec([tag_fields(message, paths, null_error_messages)])


def what_if_bytes(codec: Codec, name: str, version: int, values: Iterable[dict[str, Any]]) -> int:
    """The encoded length of values under another codec (the what-if spec); its refusals as ``SizeError``."""
    try:
        return encoded_bytes(codec, name, version, values)
    except EncodeError as exc:
        raise SizeError(f"the what-if spec cannot encode the values: {exc}") from None


__all__ = ["KIP636_FIELDS", "MESSAGE_PATH", "SizeError", "Sizes", "encoded_bytes", "kip636_paths", "measure",
           "tag_fields", "what_if_bytes", "what_if_codec"]
