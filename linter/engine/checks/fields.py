"""Fields and types: what a field's type allows (null, nested fields, zeroCopy, an entityType), unique
names, and the conventions of Kafka's field names (rules KL304-KL310, KL351-KL355)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import label
from linter.engine.checks.registry import check, options
from linter.engine.context import FileContext, Hit
from linter.engine.fixes import member_removal
from linter.engine.patterns import linear_matcher
from linter.model.types import PRIMITIVES


@check("nullable-type")
def nullable_type(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Only strings, bytes, records, arrays and structs can be null."""
    for spec, _ in ctx.fields:
        if spec.type is not None and spec.nullable_versions and not spec.nullable_versions.empty \
                and not spec.type.can_be_nullable:
            yield Hit(spec.child("nullableVersions"), f"field {label(spec)} of type {spec.type} cannot be nullable")


_ENTITY_BASE = {"transactionalId": "string", "groupId": "string", "topicName": "string",
                "producerId": "int64", "brokerId": "int32"}


@check("entity-type-matches")
def entity_type_matches(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """An entityType names what the value identifies, so the type must be the entity's type."""
    for spec, _ in ctx.fields:
        base = _ENTITY_BASE.get(spec.entity_type or "unknown")
        if base is None or spec.type is None:
            continue
        if spec.type.name != base:
            yield Hit(spec.child("entityType"), f"field {label(spec)} has entityType {spec.entity_type}, "
                      f"which needs type {base} (or []{base}), not {spec.type}")


@check("fields-only-on-structs")
def fields_only_on_structs(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Nested ``fields`` belong to struct and array types only."""
    for spec, _ in ctx.fields:
        if spec.has_fields and spec.type is not None and not spec.type.is_array and not spec.type.is_struct:
            yield Hit(spec.child("fields"), f"field {label(spec)} of type {spec.type} cannot have fields")


@check("fields-on-primitive-array")
def fields_on_primitive_array(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Nested fields on an array of primitives are accepted by Kafka and silently ignored."""
    for spec, _ in ctx.fields:
        if spec.has_fields and spec.type is not None and spec.type.is_array and spec.type.struct_name is None:
            yield Hit(spec.child("fields"), f"field {label(spec)} is {spec.type}: its nested fields are ignored")


@check("flexible-override-type")
def flexible_override_type(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Only string and bytes fields may override flexibleVersions (for old header formats)."""
    for spec, _ in ctx.fields:
        text = spec.flexible_versions.text
        if text and spec.type is not None and not (spec.type.is_string or spec.type.is_bytes):
            yield Hit(spec.child("flexibleVersions"), f"field {label(spec)} of type {spec.type} cannot "
                      "override flexibleVersions; only string and bytes fields can",
                      fix=member_removal(ctx.document, spec.child("flexibleVersions")))


@check("zero-copy-bytes-only")
def zero_copy_bytes_only(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """zeroCopy shares the receive buffer, which only makes sense for bytes."""
    for spec, _ in ctx.fields:
        if spec.zero_copy and spec.type is not None and not spec.type.is_bytes:
            yield Hit(spec.child("zeroCopy"), f"field {label(spec)} of type {spec.type} cannot use zeroCopy",
                      fix=member_removal(ctx.document, spec.child("zeroCopy")))


@check("unique-field-names", options_schema=options(ignore_case={"type": "boolean"}))
def unique_field_names(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Field names are unique within a struct (``ignore_case`` compares them case-insensitively)."""
    if ctx.message is None:
        return
    fold = bool(options.get("ignore_case"))
    for struct in ctx.structs:
        seen: dict[str, str] = {}
        for spec in struct.fields:
            if spec.name is None:
                continue
            key = spec.name.lower() if fold else spec.name
            if key in seen and (not fold or seen[key] != spec.name):
                owner = struct.name or "the struct"
                kind = "differs only in case from" if fold else "repeats"
                yield Hit(spec.child("name"), f"in {owner}, field {spec.name} {kind} field {seen[key]}")
            seen.setdefault(key, spec.name)


@check("map-key-not-top-level")
def map_key_not_top_level(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """mapKey marks the key of a struct-array element; the message itself is no array element."""
    message = ctx.message
    if message is None:
        return
    for spec in message.fields:
        if spec.map_key:
            yield Hit(spec.child("mapKey"), f"top-level field {label(spec)} cannot be a mapKey",
                      fix=member_removal(ctx.document, spec.child("mapKey")))


@check("primitive-named-struct")
def primitive_named_struct(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A type like ``Int32`` or ``String`` is read as a struct name, not the primitive."""
    lowered = {p.lower(): p for p in PRIMITIVES}
    for spec, _ in ctx.fields:
        if spec.type is not None and spec.type.struct_name and spec.type.name.lower() in lowered:
            yield Hit(spec.child("type"), f'type "{spec.type_text}" is read as a struct named {spec.type.name}; '
                      f'did you mean {"[]" if spec.type.is_array else ""}{lowered[spec.type.name.lower()]}?')


@check("field-convention", options_schema=options("name", name={"type": "string", "format": "regex"},
                                                  type={"type": "string"},
                                                  nullable_everywhere={"type": "boolean"}))
def field_convention(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Fields whose name matches ``name`` (a regular expression) have ``type`` and, with
    ``nullable_everywhere``, are nullable in all of their versions."""
    matches = linear_matcher(options["name"])  # RE2: checked when the pack loaded (format "regex")
    if matches is None:
        return
    wanted_type = options.get("type")
    nullable = options.get("nullable_everywhere", False)
    for spec, _ in ctx.fields:
        if spec.name is None or spec.type is None or not matches(spec.name):
            continue
        if wanted_type is not None and str(spec.type) != wanted_type:
            yield Hit(spec.child("type"), f"field {spec.name} has type {spec.type}; fields named like this are {wanted_type}")
        elif nullable and not (spec.nullable_versions and spec.versions and spec.nullable_versions.contains(spec.versions)):
            yield Hit(spec.child("name"), f"field {spec.name} should be nullable in all of its versions {spec.versions} "
                      "(null means nothing to say)")
