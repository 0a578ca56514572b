"""Compile a message spec, at one version, into composed encode/decode closures.

Specialising once per (message, version) means the hot path never looks at the spec: each
field is a pre-built closure for its type, nullability and encoding (classic or compact) at
that version. Nothing is generated as source code, so no spec text is ever executed.

Values are plain Python data mirroring Kafka's JSON form: a struct is a ``dict`` keyed by the
field name with its first letter lower-cased; integers are ``int``, float64 ``float``, bytes
and records ``bytes``, uuids ``uuid.UUID``, arrays ``list``; ``None`` is null. Only fields
that exist at the version appear. Unknown tagged fields read from the wire are kept, per
struct, under ``UNKNOWN_TAGS`` as ``[(tag, bytes), ...]`` and written back on encode.

The parts: ``leaves`` (primitives and lengths), ``arrays``, ``json_form``, ``tagged`` (tagged-field
sections), ``plans`` (``FieldPlan``, ``StructPlan``) and ``native`` (the C accelerator's view); this
module walks the spec. "Field F at version V" is ``linter.model.traits.field_at``, as for the compat
layout, and how each type travels is ``linter.model.wire``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, NoReturn

from linter.codec.arrays import array_codec, weight
from linter.codec.errors import CodecError, DecodeError, SpecError
from linter.codec.json_form import Convert, leaf_json, map_json
from linter.codec.leaves import leaf_codec
from linter.codec.plans import FieldPlan, StructPlan, int_code
from linter.codec.tagged import UNKNOWN_TAGS
from linter.codec.wire import Decoder, Encoder
from linter.model.defaults import parse_default
from linter.model.registry import StructRegistry
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.traits import field_at
from linter.model.types import FieldType

Codecs = tuple[Encoder, Decoder, Convert, Convert]  # encode, decode, to_json, from_json


def json_key(name: str) -> str:
    """Kafka's JSON converter names: the spec name with its first letter lower-cased."""
    return name[:1].lower() + name[1:]


def _typed(spec: FieldSpec) -> tuple[str, FieldType]:
    """The field's name and type; the codec is given specs that lint clean, so both are there."""
    if spec.name is None or spec.type is None:
        raise SpecError(f"field {spec.name or spec.type_text or '?'} has no usable name or type")
    return spec.name, spec.type


def _not_present(*_: Any) -> NoReturn:
    """The closures of a field the version does not have: never called, as it is never on the wire."""
    raise CodecError("the field does not exist in this version")


class MessageCompiler:
    """Builds the ``StructPlan`` of a message (and its nested structs) at one version."""

    def __init__(self, message: MessageSpec) -> None:
        self.message = message
        self.registry = StructRegistry(message)
        self.flexible_versions = message.flexible
        self._open: set[str] = set()  # structs being compiled, to refuse recursive ones

    def compile(self, version: int) -> StructPlan:
        too_deep = self.registry.too_deep  # before the walk below, which recurses once per level
        if too_deep is not None:
            raise SpecError(too_deep)
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

    def _struct_fields(self, spec: FieldSpec, field_type: FieldType) -> tuple[FieldSpec, ...]:
        if spec.fields:
            return spec.fields
        definition = self.registry.lookup(field_type.name)
        return definition.fields if definition is not None else ()

    def _field(self, spec: FieldSpec, version: int, flexible: bool) -> FieldPlan:
        name, field_type = _typed(spec)
        at = field_at(spec, version, flexible)
        nested = None
        if field_type.struct_name is not None:
            nested = self._struct(field_type.name, self._struct_fields(spec, field_type), version, flexible)
        default, is_default = _default_factory(spec, field_type, nested), self._default_test(spec)
        codecs: Codecs
        if at.present:
            codecs = self._type_codec(field_type, nested, at.compact, at.nullable, at.tag is not None)
        else:
            codecs = (_not_present, _not_present, _not_present, self._json_reader(spec))
        encode, decode, to_json, from_json = codecs
        return FieldPlan(spec=spec, name=name, type=field_type, key=json_key(name), present=at.present, tag=at.tag,
                         nullable=at.nullable, compact=at.compact, ignorable=spec.ignorable, default=default,
                         is_default=is_default, nested=nested, encode=encode, decode=decode, to_json=to_json,
                         from_json=from_json)

    def _default_test(self, spec: FieldSpec) -> Callable[[Any], bool]:
        """Whether a value equals the field's default as Kafka sees it: a struct is default when each
        field it gives holds that field's default, in any version (``new Struct()`` in Java)."""
        _, field_type = _typed(spec)
        default = parse_default(field_type, spec.default)
        if field_type.name == "uuid" and not field_type.is_array and isinstance(default, bytes):
            default = uuid.UUID(bytes=default)
        if field_type.struct_name is None or field_type.is_array or default is None:
            return lambda value: value == default
        members = {json_key(_typed(f)[0]): f for f in self._struct_fields(spec, field_type)}
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

    def _json_reader(self, spec: FieldSpec) -> Convert:
        """JSON to Python for a field whatever the version (for fields absent at the version, whose
        values are only checked against their default)."""
        _, field_type = _typed(spec)
        if field_type.struct_name is None:
            leaf = leaf_json(field_type.name)[1]
            return map_json(leaf, field_type.name) if field_type.is_array else leaf
        members = {json_key(_typed(f)[0]): f for f in self._struct_fields(spec, field_type)}

        def read_struct(data: Any) -> Any:
            if not isinstance(data, dict):
                return data
            out = {}
            for key, item in data.items():
                member = members.get(key)
                out[key] = item if member is None or item is None else self._json_reader(member)(item)
            return out

        return map_json(read_struct, field_type.name) if field_type.is_array else read_struct

    @staticmethod
    def _type_codec(field_type: FieldType, nested: StructPlan | None, compact: bool, nullable: bool,
                    tagged: bool) -> Codecs:
        name = field_type.name
        to_json: Convert
        from_json: Convert
        if field_type.is_array:
            element: tuple[Encoder, Decoder]
            if nested is not None:
                element = (nested.encode, nested.decode)
                to_json, from_json = nested.to_json, nested.from_json
            else:
                element = leaf_codec(name, compact, nullable=False)
                to_json, from_json = leaf_json(name)
            encode, decode = array_codec(compact, nullable, element, int_code(field_type),
                                         nested.bulk if nested is not None else None,
                                         weight=0 if nested is None else weight(nested.takes_no_bytes, nested.entries))
            return encode, decode, map_json(to_json), map_json(from_json, name)
        if nested is not None:
            encode, decode = _nullable_struct(nested, nullable, tagged)
            return encode, decode, nested.to_json, nested.from_json
        encode, decode = leaf_codec(name, compact, nullable)
        to_json, from_json = leaf_json(name)
        return encode, decode, to_json, from_json


def _default_factory(spec: FieldSpec, field_type: FieldType, nested: StructPlan | None) -> Callable[[], Any]:
    """A function returning a fresh default value (mutable defaults are never shared)."""
    value = parse_default(field_type, spec.default)
    if nested is not None and not field_type.is_array and value is not None:
        return nested.default
    if isinstance(value, list):
        return list
    if field_type.name == "uuid" and not field_type.is_array:
        frozen = uuid.UUID(bytes=value) if isinstance(value, bytes) else None
        return lambda: frozen
    return lambda: value


def _nullable_struct(plan: StructPlan, nullable: bool, tagged: bool) -> tuple[Encoder, Decoder]:
    """A struct field; nullable structs (KIP-893) carry a presence marker: int8 -1/1 as a regular
    field, uvarint 0/1 inside a tagged field's payload."""
    if not nullable:
        return plan.encode, plan.decode
    struct_encode, struct_decode = plan.encode, plan.decode

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            out += b"\x00" if tagged else b"\xff"
            return
        out += b"\x01"
        struct_encode(value, out)

    def decode(buf: bytes, pos: int) -> tuple[dict[str, Any] | None, int]:
        if pos >= len(buf):
            raise DecodeError("struct presence marker: no bytes left", pos)
        marker = buf[pos]
        if marker == (0 if tagged else 0xFF):
            return None, pos + 1
        if marker != 1:
            raise DecodeError(f"struct presence marker is {marker:#04x}, not {'0 or 1' if tagged else '-1 or 1'}", pos)
        return struct_decode(buf, pos + 1)

    return encode, decode


__all__ = ["UNKNOWN_TAGS", "FieldPlan", "MessageCompiler", "StructPlan", "json_key"]
