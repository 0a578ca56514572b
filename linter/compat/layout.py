"""The wire layout of a message at one version: what travels, in order, and nothing else.

Compatibility is decided on this layout, not on the JSON text: field names, ``about`` text,
key order, or where a struct is defined never reach the wire. What does: the ordered
non-tagged fields with their encodings (classic or compact, from ``flexibleVersions`` or a
field-level override), KIP-893 presence markers of nullable structs, and per struct the
tagged fields by tag number. A non-nullable, non-array struct in a non-flexible version is
just its fields inline, so it is flattened here; in a flexible version it keeps its own
tagged-field section and stays a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from linter.errors import KrpcLintError
from linter.model.registry import MAX_STRUCT_NESTING, StructRegistry
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.traits import FieldAt, field_at, representative, version_boundaries
from linter.model.types import FieldType
from linter.model.versions import NONE, Versions

MAX_DEPTH = MAX_STRUCT_NESTING  # the one struct-depth limit; a recursive struct is refused, not followed forever


class LayoutError(KrpcLintError, ValueError):
    """A spec whose layout cannot be worked out (a recursive or undefined struct)."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One field as it travels at a version.

    ``where`` is the field's name qualified by the wrapper structs that were flattened away
    (``Header.PartitionIndex``); ``wire`` is a leaf type (``int32``, ``string/compact``,
    ``bytes/classic``), ``array/compact``, ``struct`` or ``struct?`` (with a presence byte).
    """

    name: str
    where: str
    spec: FieldSpec
    wire: str
    nullable: bool
    element: StructLayout | str | None = None  # array element wire type or struct; the struct itself
    tag: int | None = None
    signature: tuple[Any, ...] = field(default=(), compare=False)

    @property
    def is_array(self) -> bool:
        return self.wire.startswith("array")

    @property
    def is_struct(self) -> bool:
        return self.wire.startswith("struct")

    def describe(self) -> str:
        """The encoding in words, for messages."""
        if self.is_array:
            element = self.element.name if isinstance(self.element, StructLayout) else _leaf_words(self.element)
            return f"{self.wire.split('/')[1]} array of {element}"
        if self.is_struct:
            name = self.element.name if isinstance(self.element, StructLayout) else "?"
            return f"nullable struct {name} (with a presence byte)" if self.wire == "struct?" else f"struct {name}"
        return _leaf_words(self.wire)


def _leaf_words(wire: str | None) -> str:
    if wire and "/" in wire:
        kind, encoding = wire.split("/")
        return f"{encoding} {kind}"
    return str(wire)


@dataclass(frozen=True, slots=True)
class StructLayout:
    """A struct at one version: regular fields in wire order, tagged fields by tag, absent fields."""

    name: str
    flexible: bool
    regular: tuple[Slot, ...]
    tagged: dict[int, Slot]
    absent: tuple[tuple[str, FieldSpec], ...]
    signature: tuple[Any, ...] = field(default=(), compare=False)
    inlined: tuple[tuple[str, FieldSpec], ...] = ()  # wrapper structs flattened away (no bytes of their own)

    def names(self) -> set[str]:
        """Names of the fields present at this version (regular and tagged)."""
        return {s.name for s in self.regular} | {s.name for s in self.tagged.values()}

    def tag_of(self, name: str) -> int | None:
        return next((tag for tag, s in self.tagged.items() if s.name == name), None)


# What _collect fills: regular slots, tagged slots by tag, absent fields and flattened wrappers (with their paths).
_Collected = tuple[list[Slot], dict[int, Slot], list[tuple[str, FieldSpec]], list[tuple[str, FieldSpec]]]


class LayoutBuilder:
    """Layouts of one message, per version (cached)."""

    def __init__(self, message: MessageSpec) -> None:
        self.message = message
        self.registry = StructRegistry(message)
        self.flexible_versions = message.flexible
        self.boundaries = version_boundaries(message)
        self._cache: dict[int, StructLayout] = {}  # by the first version of a segment: one layout per segment

    def flexible(self, version: int) -> bool:
        return self.flexible_versions.contains(version)

    def build(self, version: int) -> StructLayout:
        """The layout at ``version``: built once per segment of versions that every range treats alike."""
        first = representative(self.boundaries, version)
        layout = self._cache.get(first)
        if layout is None:
            root = self.message.name or "message"
            layout = self._cache[first] = self._struct(root, self.message.fields, first, 0)
        return layout

    def _struct(self, name: str, fields: tuple[FieldSpec, ...], version: int, depth: int) -> StructLayout:
        if depth > MAX_DEPTH:
            raise LayoutError(f"struct {name} nests more than {MAX_DEPTH} levels (is it recursive?)")
        regular: list[Slot] = []
        tagged: dict[int, Slot] = {}
        absent: list[tuple[str, FieldSpec]] = []
        inlined: list[tuple[str, FieldSpec]] = []
        self._collect(fields, version, "", (regular, tagged, absent, inlined), depth)
        flexible = self.flexible(version)
        signature = (flexible, tuple(s.signature for s in regular), tuple((t, tagged[t].signature) for t in sorted(tagged)))
        return StructLayout(name, flexible, tuple(regular), tagged, tuple(absent), signature, tuple(inlined))

    def _collect(self, fields: tuple[FieldSpec, ...], version: int, prefix: str, out: _Collected, depth: int) -> None:
        if depth > MAX_DEPTH:  # inlined structs go down here, not through _struct
            raise LayoutError(f"struct fields at {prefix or 'the top'} nest more than {MAX_DEPTH} levels")
        regular, tagged, absent, inlined = out
        flexible = self.flexible(version)
        for spec in fields:
            field_type, name = spec.type, spec.name
            if field_type is None or not name:
                continue
            where = prefix + name
            at = field_at(spec, version, flexible)
            if not at.present:
                absent.append((where, spec))
                continue
            if field_type.is_struct and not at.nullable and at.tag is None and not flexible:
                inlined.append((where, spec))
                members = self._members(spec, field_type)
                self._collect(members, version, where + ".", out, depth + 1)  # inline: no bytes of its own
                continue
            slot = self._slot(spec, name, field_type, where, version, at, depth)
            if slot.tag is not None:
                tagged[slot.tag] = slot
            else:
                regular.append(slot)

    def _slot(self, spec: FieldSpec, name: str, field_type: FieldType, where: str, version: int, at: FieldAt,
              depth: int) -> Slot:
        compact, nullable = at.compact, at.nullable
        primitive = field_type.primitive  # how a leaf travels: linter.model.wire, as for the codec
        element: StructLayout | str | None
        inner: tuple[Any, ...]
        if primitive is None:  # a struct, or an array of structs
            struct = self._struct(field_type.name, self._members(spec, field_type), version, depth + 1)
            element, inner = struct, ("struct", struct.signature)
        else:
            element = primitive.wire(compact)
            inner = (element,)
        if field_type.is_array:
            wire = f"array/{'compact' if compact else 'classic'}"
        elif primitive is None:
            wire = "struct?" if nullable else "struct"
        else:
            wire, element = primitive.wire(compact), None
        return Slot(name, where, spec, wire, nullable, element, at.tag, (wire, *inner))

    def _members(self, spec: FieldSpec, field_type: FieldType) -> tuple[FieldSpec, ...]:
        if spec.fields:
            return spec.fields
        definition = self.registry.lookup(field_type.name)
        if definition is None:
            raise LayoutError(f"struct {field_type.name} is not defined")
        return definition.fields


def same_wire(a: StructLayout, b: StructLayout) -> bool:
    """Whether every value one layout writes is read back by the other as the same named value: equal
    signatures (the same slots, encodings and tags everywhere) and the same field names and nullability
    at every place. Both layouts come from ``traits.field_at``, as the codec's plans do, so a cross-check
    of such a version can find nothing: skipping it keeps compat's codec work in the versions a change
    reshapes."""
    if a.signature != b.signature:
        return False
    return _same_fields(a, b)


def _same_fields(a: StructLayout, b: StructLayout) -> bool:
    pairs = [*zip(a.regular, b.regular), *((a.tagged[tag], b.tagged[tag]) for tag in a.tagged)]
    for x, y in pairs:
        if x.where != y.where or x.nullable != y.nullable:
            return False
        if isinstance(x.element, StructLayout) and isinstance(y.element, StructLayout) \
                and not _same_fields(x.element, y.element):
            return False
    return True


def shared_versions(old: Versions | None, new: Versions | None) -> Versions:
    if old is None or new is None:
        return NONE
    return old.intersect(new)
