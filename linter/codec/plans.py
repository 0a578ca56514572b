"""Compiled plans: ``FieldPlan`` (one field at one version) and ``StructPlan`` (a struct at one version,
with its encode/decode closures). ``linter.codec.compiler`` builds them from the spec; the hot paths
here never look at the spec again."""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from linter.codec.errors import CodecError, DecodeError, EncodeError
from linter.codec.json_form import Convert
from linter.codec.native import native_tuple
from linter.codec.tagged import UNKNOWN_TAGS, TaggedFields
from linter.codec.wire import Decoder, Encoder
from linter.model.spec import FieldSpec
from linter.model.types import FieldType
from linter.model.wire import WIRE


@dataclass
class FieldPlan:
    """One field at one version (its codec closures are stubs that refuse when it is not present)."""

    spec: FieldSpec
    name: str  # the spec's field name: error paths use it
    type: FieldType
    key: str  # the value's dict key
    present: bool  # exists at this version (tagged or not)
    tag: int | None  # set when the field is tagged at this version
    nullable: bool  # null is allowed at this version
    compact: bool  # compact (flexible) encoding of strings, bytes and arrays
    ignorable: bool
    default: Callable[[], Any]  # a fresh default value
    is_default: Callable[[Any], bool]  # Kafka's notion, whatever the version
    nested: StructPlan | None  # the struct (or array element struct) at this version
    encode: Encoder
    decode: Decoder
    to_json: Convert
    from_json: Convert


class _One(NamedTuple):
    """A wire step of one field."""

    key: str
    encode: Encoder
    decode: Decoder


class _Run(NamedTuple):
    """A wire step of two or more consecutive fixed-width integer fields, packed in one struct call."""

    packer: struct.Struct
    keys: tuple[str, ...]


StructDecoder = Callable[[bytes, int], tuple[dict[str, Any], int]]  # a Decoder whose values are structs

# The closures' steps are positional tuples, read in the hottest loops without narrowing:
# decoding (unpack or None, key or keys, decode or None, size), encoding (pack or None, key or getter, encode or None).
_DecodeStep = tuple[Any, Any, Any, int]
_EncodeStep = tuple[Any, Any, Any]


class StructPlan:
    """A struct at one version: its fields in wire order, its tagged fields, and the rest."""

    def __init__(self, name: str, fields: list[FieldPlan], flexible: bool, version: int) -> None:
        self.name = name
        self.version = version
        self.flexible = flexible
        self.fields = fields
        self.regular_fields = [f for f in fields if f.present and f.tag is None]
        # no byte on the wire at this version: not flexible (no tagged section), every field an inlined struct
        # that takes none either (the nested plans are built first); arrays of it count against ALLOWANCE
        self.takes_no_bytes: bool = not flexible and all(
            f.nested is not None and not f.type.is_array and not f.nullable and f.nested.takes_no_bytes
            for f in self.regular_fields)
        # values a decoded value holds with its arrays empty (an upper bound: absent tagged fields get defaults)
        self.entries: int = sum(1 + (f.nested.entries if f.nested is not None and not f.type.is_array else 0)
                                for f in fields if f.present)
        self.steps = _steps(self.regular_fields)
        self.tagged_section = TaggedFields([(f.tag, f) for f in fields if f.present and f.tag is not None])
        self.tagged = self.tagged_section.fields
        self.tagged_by_number = self.tagged_section.by_number
        self.absent = [f for f in fields if not f.present]
        self.names = {f.key: f.name for f in fields}
        self.keys = frozenset(f.key for f in fields if f.present) | {UNKNOWN_TAGS}
        self.bulk: tuple[str, tuple[str, ...]] | None = None  # (element format, keys): only fixed-width integers
        if len(self.steps) == 1 and isinstance(self.steps[0], _Run) and not self.tagged:
            run = self.steps[0]
            self.bulk = (run.packer.format[1:] + ("B" if flexible else ""), run.keys)
        self.encode: Encoder = self._fast_encode()
        self.decode: StructDecoder = self._fast_decode()
        self._signature: tuple[Any, ...] | None = None
        self._native: Any = None

    def _fast_decode(self) -> StructDecoder:
        steps: tuple[_DecodeStep, ...] = tuple(
            (None, step.key, step.decode, 0) if isinstance(step, _One)
            else (step.packer.unpack_from, step.keys, None, step.packer.size) for step in self.steps)
        names, flexible, tagged = self.names, self.flexible, bool(self.tagged)
        decode_tagged, plain = self.tagged_section.decode, self.decode_plain

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
        steps: tuple[_EncodeStep, ...] = tuple(
            (None, step.key, step.encode) if isinstance(step, _One)
            else (step.packer.pack, operator.itemgetter(*step.keys), None) for step in self.steps)
        known, check_extra, explain = self.keys, self._check_extra_keys, self._explain_encode_error
        name, flexible, tagged, encode_tagged = self.name, self.flexible, bool(self.tagged), self.tagged_section.encode

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

    @property
    def signature(self) -> tuple[Any, ...]:
        """What decoding this struct depends on, and nothing else: its encodings, field names (they
        name error paths), types, tags and the defaults absent tagged fields get. Two plans with
        equal signatures decode every input to the same value or the same error, whichever specs
        they came from, so ``krpc-lint replay`` decodes a frame once when both revisions agree."""
        if self._signature is None:
            self._signature = (self.flexible, tuple(_field_signature(f) for f in self.fields if f.present))
        return self._signature

    def native_plan(self, speedups: Any) -> Any:
        """The plan compiled for the C accelerator (once; ``linter.codec.native`` describes it)."""
        if self._native is None:
            self._native = speedups.compile_plan(native_tuple(self))
        return self._native

    # encode errors --------------------------------------------------------------------------

    def _explain_encode_error(self, value: dict[str, Any]) -> None:
        """Re-run the plain per-field path to raise a precise error with the field's path."""
        for plan in self.regular_fields:
            name = plan.name
            if plan.key not in value:
                raise EncodeError(f"missing required value (field {name} exists in version {self.version})").at(name)
            try:
                plan.encode(value[plan.key], bytearray())
            except CodecError as exc:
                raise exc.at(name) from None

    def _check_extra_keys(self, value: dict[str, Any]) -> None:
        for key, item in value.items():
            if key in self.keys:
                continue
            plan = next((f for f in self.absent if f.key == key), None)
            if plan is None:
                raise EncodeError(f"{self.name} has no field {key!r}")
            if not plan.ignorable and not plan.is_default(item):
                raise EncodeError(f"field {plan.name} does not exist in version {self.version} and is not "
                                  "ignorable, but has a non-default value").at(plan.name)

    # decode, step by step: the precise errors -----------------------------------------------

    def decode_plain(self, buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
        """What ``decode`` does, without its shortcuts: it raises the precise error where they decline."""
        result: dict[str, Any] = {}
        for step in self.steps:
            if isinstance(step, _One):
                try:
                    result[step.key], pos = step.decode(buf, pos)
                except CodecError as exc:
                    raise exc.at(self.names[step.key]) from None
                continue
            packer, keys = step
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
                pos = self.tagged_section.decode(buf, pos, result)
        return result, pos

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
                raise exc.at(plan.name) from None
        for plan in self.tagged:
            out.setdefault(plan.key, plan.default())
        return out


def int_code(field_type: FieldType) -> str | None:
    """The ``struct`` code of an integer type (of an array's element too), ``None`` for any other."""
    primitive = WIRE.get(field_type.name)
    return primitive.code if primitive is not None and primitive.bounds is not None else None


def _steps(fields: list[FieldPlan]) -> list[_One | _Run]:
    """Wire-order steps: one field, or a run of two or more consecutive fixed-width integer fields
    packed and unpacked in one call."""
    steps: list[_One | _Run] = []
    run: list[tuple[str, FieldPlan]] = []

    def flush() -> None:
        if len(run) >= 2:
            steps.append(_Run(struct.Struct(">" + "".join(code for code, _ in run)), tuple(f.key for _, f in run)))
        else:
            steps.extend(_One(f.key, f.encode, f.decode) for _, f in run)
        run.clear()

    for plan in fields:
        code = None if plan.type.is_array else int_code(plan.type)
        if code is not None:
            run.append((code, plan))
        else:
            flush()
            steps.append(_One(plan.key, plan.encode, plan.decode))
    flush()
    return steps


def _field_signature(plan: FieldPlan) -> tuple[Any, ...]:
    """A present field's part of ``StructPlan.signature``: a struct's own name is not read from the
    wire, so only its fields count; a tagged field's default is what an absent one decodes to."""
    field_type = plan.type
    kind = field_type.name if plan.nested is None else "struct"
    return (plan.name, plan.key, field_type.is_array, kind, plan.nullable, plan.compact, plan.tag,
            None if plan.tag is None else repr(plan.default()), None if plan.nested is None else plan.nested.signature)


__all__ = ["FieldPlan", "StructPlan", "int_code"]
