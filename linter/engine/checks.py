"""The library of named checks that rules in ``rules/`` call by name (``check: {function: ...}``).

A check is a small generator: it gets a ``FileContext`` (or a ``DirectoryContext`` for
cross-file checks) and the rule's ``options``, and yields ``Hit``s. Checks never raise on
odd input: a value the model could not bind is ``None`` and the check skips it (another
rule reports why it is missing).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from linter.engine.context import DirectoryContext, FileContext, Hit
from linter.model.defaults import DefaultError, parse_default
from linter.model.spec import FieldSpec, MessageSpec, StructSpec
from linter.model.types import PRIMITIVES
from linter.model.versions import NONE, Versions, shown

CheckFn = Callable[[Any, dict[str, Any]], Iterator[Hit]]


@dataclass(frozen=True)
class CheckDef:
    name: str
    scope: str  # "file" | "directory"
    fn: CheckFn
    doc: str


CHECKS: dict[str, CheckDef] = {}


def check(name: str, scope: str = "file") -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        CHECKS[name] = CheckDef(name, scope, fn, (fn.__doc__ or "").strip())
        return fn

    return register


def _message(ctx: FileContext) -> MessageSpec | None:
    return ctx.message


def _fields(ctx: FileContext) -> list[tuple[FieldSpec, StructSpec]]:
    return ctx.fields


def _versioned(ctx: FileContext) -> MessageSpec | None:
    """The message, if it has at least one valid version (Kafka skips most checks otherwise)."""
    message = ctx.message
    if message is None or message.versions is None or message.versions.empty:
        return None
    return message


def _declared_flexible(ctx: FileContext) -> tuple[MessageSpec, Versions] | None:
    """The message and its non-empty flexibleVersions, when it has valid versions."""
    message = _versioned(ctx)
    flexible = message.flexible_versions.value if message is not None else None
    if flexible is None or flexible.empty:
        return None
    return message, flexible


def _field_label(spec: FieldSpec) -> str:
    return spec.name if spec.name is not None else "(unnamed)"


# --- reading -----------------------------------------------------------------------------


@check("read-problem")
def read_problem(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """The file could not be read as JSON; ``kinds`` selects syntax, trailing, empty, encoding or io."""
    problem = ctx.document.problem
    if problem is not None and problem.kind in options.get("kinds", ()):
        yield Hit((), problem.message, offset=problem.offset)


@check("duplicate-keys")
def duplicate_keys(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A key repeated in one object; the last value silently wins."""
    for path, offset, first in ctx.document.duplicates:
        line, _ = ctx.document.line_col(first)
        yield Hit(path, f'key "{path[-1]}" repeats the one on line {line}; only this last value is used', offset=offset)


@check("structure")
def structure(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Structural errors from the JSON Schema of the spec format; ``kinds`` selects which."""
    kinds = options.get("kinds", ())
    for issue in ctx.structure:
        if issue.check in kinds:
            yield Hit(issue.path, issue.message, issue.at_key)


@check("model-issue")
def model_issue(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Problems found while binding the model (version and type syntax); ``kinds`` selects which."""
    for kind in options.get("kinds", ()):
        for issue in ctx.model_issues(kind):
            yield Hit(issue.path, issue.message, issue.at_key)


# --- versions ----------------------------------------------------------------------------


@check("versions-required")
def versions_required(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A field (without taggedVersions), common struct or message has no versions."""
    message = ctx.message
    if message is None:
        return
    if not message.valid_versions.given:
        yield Hit((), f"message {message.name} has no validVersions")
    for common in message.common_structs:
        if common.versions is None and not _given(ctx, (*common.path, "versions")):
            yield Hit(common.path, f"common struct {common.name} has no versions")
    for spec, _ in ctx.fields:
        if spec.versions_prop.given:
            continue  # given but unparseable: version-syntax reports it
        struct_typed = spec.type is not None and spec.type.struct_name is not None
        if struct_typed:
            yield Hit(spec.path, f"struct field {_field_label(spec)} has no versions; struct fields need them "
                      "even when tagged")
        elif spec.versions is None and (spec.tagged_versions or NONE).empty:
            yield Hit(spec.path, f"field {_field_label(spec)} has no versions (and no taggedVersions to take them from)")


def _given(ctx: FileContext, path: tuple) -> bool:
    node: Any = ctx.document.value
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, (str, int, float)) and str(node).strip() != ""


@check("valid-versions-bounded")
def valid_versions_bounded(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """validVersions must have a maximum: an open range would make every future version valid."""
    message = ctx.message
    if message is not None and message.versions is not None and message.versions.contains(32767):
        yield Hit(("validVersions",), f'validVersions "{message.valid_versions.text}" has no maximum version')


@check("flexible-versions-required")
def flexible_versions_required(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A message with valid versions must say which are flexible."""
    message = _versioned(ctx)
    if message is not None and message.flexible_versions.text is None:
        yield Hit((), 'no flexibleVersions: use "0+" for a new message, or "none"')


@check("flexible-versions-open-ended")
def flexible_versions_open_ended(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """flexibleVersions is none or an open range: once flexible, every later version is."""
    declared = _declared_flexible(ctx)
    if declared is not None and not declared[1].open_ended:
        message = declared[0]
        yield Hit(("flexibleVersions",), f'flexibleVersions "{message.flexible_versions.text}" is not open-ended')


@check("flexible-versions-reachable")
def flexible_versions_reachable(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """flexibleVersions that start after the last valid version make no version flexible."""
    declared = _declared_flexible(ctx)
    if declared is not None and declared[0].versions.intersect(declared[1]).empty:
        message, flexible = declared
        yield Hit(("flexibleVersions",), f"flexibleVersions {flexible} start after the last valid version "
                  f"{message.versions.highest}: no version is flexible")


@check("struct-versions-overlap")
def struct_versions_overlap(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Every generated struct needs at least one version in common with its parent."""
    message, registry = ctx.message, ctx.registry
    if message is None or registry is None or message.versions is None:
        return
    if message.versions.empty:
        if not ctx.target.removed_apis:  # since Kafka 4.0 an empty message is a removed API
            yield Hit(("validVersions",), f'validVersions "{message.valid_versions.text}" contains no version '
                      f"(Kafka {ctx.target.name} has no removed APIs; 4.0 and later accept it)")
        return
    yield from _overlap(message.fields, message.versions, registry)
    for common in message.common_structs:
        if common.versions is not None and common.versions.empty:
            yield Hit((*common.path, "versions"), f"common struct {common.name} has no versions")


def _overlap(fields: tuple[FieldSpec, ...], parent: Versions, registry) -> Iterator[Hit]:
    for spec in fields:
        name = spec.type.struct_name if spec.type is not None else None
        if name is None or spec.versions is None:
            continue
        definition = registry.lookup(name)
        if definition is None or definition.kind != "inline" or definition.path != spec.path:
            continue
        current = parent.intersect(spec.versions)
        if current.empty:
            yield Hit(spec.child("versions"), f"struct field {_field_label(spec)} has versions {spec.versions}, "
                      f"none of which are in its parent's versions {parent}")
        else:
            yield from _overlap(spec.fields, current, registry)


@check("field-flexible-versions-subset")
def field_flexible_versions_subset(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A field-level flexibleVersions override must lie within the message's flexible versions."""
    message = ctx.message
    if message is None:
        return
    for spec, _ in ctx.fields:
        override = spec.flexible_versions.value
        if override is not None and spec.flexible_versions.given and message.flexible.intersect(override) != override:
            yield Hit(spec.child("flexibleVersions"), f"field {_field_label(spec)} has flexibleVersions {override}, "
                      f"which is not within the message's flexible versions {message.flexible}")


# --- fields and types --------------------------------------------------------------------


@check("nullable-type")
def nullable_type(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Only strings, bytes, records, arrays and structs can be null."""
    for spec, _ in _fields(ctx):
        if spec.type is not None and spec.nullable_versions and not spec.nullable_versions.empty \
                and not spec.type.can_be_nullable:
            yield Hit(spec.child("nullableVersions"), f"field {_field_label(spec)} of type {spec.type} cannot be nullable")


_ENTITY_BASE = {"transactionalId": "string", "groupId": "string", "topicName": "string",
                "producerId": "int64", "brokerId": "int32"}


@check("entity-type-matches")
def entity_type_matches(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """An entityType names what the value identifies, so the type must be the entity's type."""
    for spec, _ in _fields(ctx):
        base = _ENTITY_BASE.get(spec.entity_type or "unknown")
        if base is None or spec.type is None:
            continue
        if spec.type.name != base:
            yield Hit(spec.child("entityType"), f"field {_field_label(spec)} has entityType {spec.entity_type}, "
                      f"which needs type {base} (or []{base}), not {spec.type}")


@check("fields-only-on-structs")
def fields_only_on_structs(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Nested ``fields`` belong to struct and array types only."""
    for spec, _ in _fields(ctx):
        if spec.has_fields and spec.type is not None and not spec.type.is_array and not spec.type.is_struct:
            yield Hit(spec.child("fields"), f"field {_field_label(spec)} of type {spec.type} cannot have fields")


@check("fields-on-primitive-array")
def fields_on_primitive_array(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Nested fields on an array of primitives are accepted by Kafka and silently ignored."""
    for spec, _ in _fields(ctx):
        if spec.has_fields and spec.type is not None and spec.type.is_array and spec.type.struct_name is None:
            yield Hit(spec.child("fields"), f"field {_field_label(spec)} is {spec.type}: its nested fields are ignored")


@check("flexible-override-type")
def flexible_override_type(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Only string and bytes fields may override flexibleVersions (for old header formats)."""
    for spec, _ in _fields(ctx):
        text = spec.flexible_versions.text
        if text and spec.type is not None and not (spec.type.is_string or spec.type.is_bytes):
            yield Hit(spec.child("flexibleVersions"), f"field {_field_label(spec)} of type {spec.type} cannot "
                      "override flexibleVersions; only string and bytes fields can")


@check("zero-copy-bytes-only")
def zero_copy_bytes_only(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """zeroCopy shares the receive buffer, which only makes sense for bytes."""
    for spec, _ in _fields(ctx):
        if spec.zero_copy and spec.type is not None and not spec.type.is_bytes:
            yield Hit(spec.child("zeroCopy"), f"field {_field_label(spec)} of type {spec.type} cannot use zeroCopy")


@check("unique-field-names")
def unique_field_names(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Field names are unique within a struct (``ignore_case`` compares them case-insensitively)."""
    message = ctx.message
    if message is None:
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
            yield Hit(spec.child("mapKey"), f"top-level field {_field_label(spec)} cannot be a mapKey")


@check("primitive-named-struct")
def primitive_named_struct(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A type like ``Int32`` or ``String`` is read as a struct name, not the primitive."""
    lowered = {p.lower(): p for p in PRIMITIVES}
    for spec, _ in _fields(ctx):
        if spec.type is not None and spec.type.struct_name and spec.type.name.lower() in lowered:
            yield Hit(spec.child("type"), f'type "{spec.type_text}" is read as a struct named {spec.type.name}; '
                      f'did you mean {"[]" if spec.type.is_array else ""}{lowered[spec.type.name.lower()]}?')


@check("field-convention")
def field_convention(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Fields whose name matches ``name`` (a regex) have ``type`` and, with ``nullable_everywhere``,
    are nullable in all of their versions."""
    pattern = re.compile(options["name"])
    wanted_type = options.get("type")
    nullable = options.get("nullable_everywhere", False)
    for spec, _ in _fields(ctx):
        if spec.name is None or spec.type is None or not pattern.search(spec.name):
            continue
        if wanted_type is not None and str(spec.type) != wanted_type:
            yield Hit(spec.child("type"), f"field {spec.name} has type {spec.type}; fields named like this are {wanted_type}")
        elif nullable and not (spec.nullable_versions and spec.versions and spec.nullable_versions.contains(spec.versions)):
            yield Hit(spec.child("name"), f"field {spec.name} should be nullable in all of its versions {spec.versions} "
                      "(null means nothing to say)")


# --- tagged fields -------------------------------------------------------------------------


def _tagged_fields(ctx: FileContext) -> Iterator[FieldSpec]:
    for spec, _ in _fields(ctx):
        if spec.tag is not None:
            yield spec


@check("tag-non-negative")
def tag_non_negative(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Tags are unsigned varints on the wire."""
    for spec in _tagged_fields(ctx):
        if spec.tag < 0:
            yield Hit(spec.child("tag"), f"field {_field_label(spec)} has tag {spec.tag}; tags cannot be negative")


@check("tag-needs-tagged-versions")
def tag_needs_tagged_versions(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A tag without taggedVersions would never be sent."""
    for spec in _tagged_fields(ctx):
        if spec.tagged_versions is not None and spec.tagged_versions.empty:
            yield Hit(spec.child("tag"), f"field {_field_label(spec)} has tag {spec.tag} but no taggedVersions")


@check("tagged-versions-need-tag")
def tagged_versions_need_tag(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """taggedVersions without a tag number cannot be encoded."""
    for spec, _ in _fields(ctx):
        raw_tag = spec.raw.get("tag")
        no_tag = raw_tag is None or (isinstance(raw_tag, str) and raw_tag.strip() == "")
        if no_tag and spec.tagged_versions is not None and not spec.tagged_versions.empty:
            yield Hit(spec.child("taggedVersions"), f"field {_field_label(spec)} has taggedVersions "
                      f"{spec.tagged_versions} but no tag")


@check("tagged-versions-open-ended")
def tagged_versions_open_ended(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Once tagged, a field stays tagged in every later version."""
    for spec in _tagged_fields(ctx):
        tagged = spec.tagged_versions
        if tagged is not None and not tagged.empty and not tagged.open_ended:
            yield Hit(spec.child("taggedVersions"), f"field {_field_label(spec)} has taggedVersions {tagged}, "
                      "which is not open-ended")


@check("tagged-versions-within-versions")
def tagged_versions_within_versions(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A field can only be tagged in versions where it exists."""
    for spec in _tagged_fields(ctx):
        tagged, versions = spec.tagged_versions, spec.versions
        if tagged is None or versions is None or tagged.empty:
            continue
        if tagged.intersect(versions) != tagged:
            yield Hit(spec.child("taggedVersions"), f"field {_field_label(spec)} has taggedVersions {tagged} "
                      f"outside its versions {versions}")


@check("tagged-versions-flexible")
def tagged_versions_flexible(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Tagged fields live in the tagged-field section, which only flexible versions have."""
    message = ctx.message
    if message is None:
        return
    for spec, _ in ctx.fields:
        tagged = spec.tagged_versions
        if tagged is None or tagged.empty:
            continue
        override = spec.flexible_versions.value
        flexible = override if override is not None and spec.flexible_versions.given else message.flexible
        if tagged.intersect(flexible) != tagged:
            yield Hit(spec.child("taggedVersions"), f"field {_field_label(spec)} has taggedVersions {tagged}, "
                      f"not within the flexible versions {flexible}")


@check("tagged-nullability-uniform")
def tagged_nullability_uniform(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A tagged field is nullable in all of its tagged versions or in none."""
    for spec in _tagged_fields(ctx):
        tagged, nullable = spec.tagged_versions, spec.nullable_versions
        if tagged is None or nullable is None or tagged.empty:
            continue
        both = nullable.intersect(tagged)
        if not both.empty and both != tagged:
            yield Hit(spec.child("nullableVersions"), f"field {_field_label(spec)} is nullable in {nullable} but "
                      f"tagged in {tagged}: all tagged versions must be nullable, or none")


@check("no-tagged-map-key")
def no_tagged_map_key(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A key field must always be present, so it cannot be tagged."""
    for spec in _tagged_fields(ctx):
        if spec.map_key:
            yield Hit(spec.child("mapKey"), f"tagged field {_field_label(spec)} cannot be a mapKey")


@check("no-tagged-records")
def no_tagged_records(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Record batches cannot be tagged fields."""
    for spec, _ in _fields(ctx):
        if spec.type is not None and spec.type.is_records and spec.tagged_versions and not spec.tagged_versions.empty:
            yield Hit(spec.child("taggedVersions"), f"records field {_field_label(spec)} cannot be a tagged field")


@check("unique-tags")
def unique_tags(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Two fields with one tag would be indistinguishable on the wire."""
    message = ctx.message
    if message is None:
        return
    for struct in ctx.structs:
        seen: dict[int, str] = {}
        for spec in struct.fields:
            if spec.tag is None:
                continue
            if spec.tag in seen:
                yield Hit(spec.child("tag"), f"in {struct.name}, field {_field_label(spec)} reuses tag {spec.tag} "
                          f"of field {seen[spec.tag]}")
            else:
                seen[spec.tag] = _field_label(spec)


@check("contiguous-tags")
def contiguous_tags(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Tags start at 0 without gaps: small tags take one byte on the wire."""
    message = ctx.message
    if message is None:
        return
    for struct in ctx.structs:
        tags = {spec.tag for spec in struct.fields if spec.tag is not None}
        if any(tag < 0 for tag in tags):
            continue  # a negative tag is tag-non-negative's finding; a gap below it says nothing more
        for expected in range(len(tags)):
            if expected not in tags:
                where = struct.fields_path or struct.path
                yield Hit(where, f"in {struct.name}, tags are not contiguous: tag {expected} is unused but "
                          f"higher tags are ({', '.join(map(str, sorted(tags)))})")
                break


# --- defaults ------------------------------------------------------------------------------


@check("default-value")
def default_value(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A default must be a valid value of the field's type; ``kind`` picks value or empty-only errors."""
    wanted = options.get("kind", "default-value")
    for spec, _ in _fields(ctx):
        if spec.type is None or not spec.default_given:
            continue
        try:
            parse_default(spec.type, spec.default)
        except DefaultError as exc:
            if exc.check == wanted:
                yield Hit(spec.child("default"), f"invalid default for {spec.type} field {_field_label(spec)}: {exc}")


@check("null-default-nullable")
def null_default_nullable(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A null default needs every version of the field to be nullable (KIP-893 for structs)."""
    for spec, _ in _fields(ctx):
        if spec.default != "null" or spec.type is None or spec.versions is None or spec.nullable_versions is None:
            continue
        t = spec.type
        if not (t.is_array or t.is_string or t.is_bytes or t.is_struct):
            continue
        if not spec.nullable_versions.contains(spec.versions):
            yield Hit(spec.child("default"), f"null cannot be the default of field {_field_label(spec)}: it is "
                      f"nullable in {spec.nullable_versions} but exists in {spec.versions}")


@check("redundant-default")
def redundant_default(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A default equal to the type's implicit default says nothing."""
    for spec, _ in _fields(ctx):
        if spec.type is None or not spec.default_given or spec.default == "" or spec.default == "null":
            continue
        try:
            value = parse_default(spec.type, spec.default)
            implicit = parse_default(spec.type, "")
        except DefaultError:
            continue
        if value == implicit and not spec.type.is_records:
            yield Hit(spec.child("default"), f'default "{spec.default}" of field {_field_label(spec)} is the '
                      "implicit default of its type")


@check("default-on-records")
def default_on_records(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Kafka ignores any default on a records field (it is always null)."""
    for spec, _ in _fields(ctx):
        if spec.type is not None and spec.type.is_records and spec.default_given and spec.default != "":
            yield Hit(spec.child("default"), f"records field {_field_label(spec)} ignores its default "
                      f'"{spec.default}"; records default to null')


# --- structs -------------------------------------------------------------------------------


@check("common-struct-capitalized")
def common_struct_capitalized(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Struct names become Java class names and must start with a capital letter."""
    if ctx.registry is not None:
        for common in ctx.registry.lowercase_commons:
            yield Hit((*common.path, "name"), f"common struct {common.name} must start with a capital letter")


@check("unique-struct-names")
def unique_struct_names(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """One struct name, one definition: common structs and inline structs share a namespace."""
    registry = ctx.registry
    if registry is None:
        return
    for common in registry.duplicate_commons:
        yield Hit((*common.path, "name"), f"common struct {common.name} is defined twice")
    for spec in registry.duplicate_inline:
        first = registry.lookup(spec.type.name)
        where = ctx.document.locate(first.path)[0] if first is not None else "?"
        yield Hit(spec.child("type"), f"struct {spec.type.name} is already defined by the field on line {where}; "
                  "an inline struct name can be used only once")


@check("common-struct-not-respecified")
def common_struct_not_respecified(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A field typed with a common struct must not list the struct's fields again."""
    if ctx.registry is not None:
        for spec in ctx.registry.respecified_commons:
            yield Hit(spec.child("fields"), f"field {_field_label(spec)} re-specifies common struct "
                      f"{spec.type.name} as an inline struct")


@check("struct-defined")
def struct_defined(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Inside common structs, struct types must be defined elsewhere (inline structs are not registered there)."""
    if ctx.registry is not None:
        for spec in ctx.registry.missing:
            inline = " (inline structs are not allowed inside common structs)" if spec.has_fields else ""
            yield Hit(spec.child("type"), f"struct {spec.type.name} is not defined{inline}")


@check("unused-common-struct")
def unused_common_struct(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A common struct no field reaches is dead weight in the generated code."""
    if ctx.registry is not None:
        for common in ctx.registry.unused_commons():
            yield Hit((*common.path, "name"), f"common struct {common.name} is not used by any field")


@check("empty-struct-type")
def empty_struct_type(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A struct type with no fields and no common struct: Kafka silently generates an empty struct."""
    message, registry = ctx.message, ctx.registry
    if message is None or registry is None:
        return
    for spec, _ in _fields(ctx):
        name = spec.type.struct_name if spec.type is not None else None
        definition = registry.lookup(name) if name else None
        if definition is not None and definition.kind == "inline" and definition.path == spec.path \
                and not spec.has_fields and "fields" not in spec.raw:
            yield Hit(spec.child("type"), f"struct type {name} has no fields and no common struct defines it")


@check("struct-name-pattern")
def struct_name_pattern(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A struct type that is no class name: [A-Z][A-Za-z0-9]*, checked without a pattern (string predicates
    are linear whatever the name holds)."""
    for spec, _ in _fields(ctx):
        name = spec.type.struct_name if spec.type is not None else None
        if name is not None and not (name.isascii() and name.isalnum() and name[0].isupper()):
            yield Hit(spec.child("type"), f'struct type "{shown(spec.type_text or name)}" is not a class name: use a '
                                          "capital letter followed by letters and digits")


@check("recursive-struct")
def recursive_struct(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A struct reachable from itself: found with an iterative depth-first search over the registry's edges
    (no recursion, so a hostile chain of structs costs no stack), reported once per cycle at the field that
    closes it."""
    registry = ctx.registry
    if ctx.message is None or registry is None:
        return
    edges: dict[str, list[tuple[str, tuple]]] = {}
    for source, target, path in registry.edges:
        if registry.lookup(target) is not None:
            edges.setdefault(source, []).append((target, path))
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in edges:
        if state.get(start):
            continue
        state[start] = 1
        stack = [(start, iter(edges.get(start, ())))]
        while stack:
            node, following = stack[-1]
            step = next(following, None)
            if step is None:
                state[node] = 2
                stack.pop()
                continue
            target, path = step
            if state.get(target) == 1:
                cycle = [name for name, _ in stack[[name for name, _ in stack].index(target):]]
                yield Hit((*path, "type"), f"struct {target} contains itself ({' -> '.join([*cycle, target])}): "
                                           "it has no finite layout")
            elif not state.get(target):
                state[target] = 1
                stack.append((target, iter(edges.get(target, ()))))


@check("empty-struct-array")
def empty_struct_array(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """An array of structs whose elements have no field in some non-flexible version it is sent in."""
    message, registry = _versioned(ctx), ctx.registry
    if message is None or registry is None:
        return
    flexible = message.flexible
    for spec, _ in _fields(ctx):
        if spec.type is None or not spec.type.is_struct_array or spec.versions is None:
            continue
        definition = registry.lookup(spec.type.name)
        if definition is None:
            continue
        sent = spec.versions.intersect(message.versions)
        classic = sent if flexible.empty else sent.intersect(Versions(0, flexible.lowest - 1))
        empty = _first_uncovered(classic, [f.versions for f in definition.fields if f.versions is not None])
        if empty is not None:
            yield Hit(spec.child("type"), f"{spec.name}: {spec.type.name} has no field at version {empty}, which is "
                                          "not flexible: its elements take no bytes, so readers refuse the array")


def _first_uncovered(wanted: Versions, covering: list[Versions]) -> int | None:
    """The first version of ``wanted`` in none of ``covering`` (ranges, so the cost follows their number)."""
    if wanted.empty:
        return None
    candidate = wanted.lowest
    for versions in sorted((v for v in covering if not v.empty), key=lambda v: v.lowest):
        if versions.lowest > candidate:
            break
        candidate = max(candidate, versions.highest + 1)
        if candidate > wanted.highest:
            return None
    return candidate if candidate <= wanted.highest else None


# --- message -------------------------------------------------------------------------------


@check("request-only-properties")
def request_only_properties(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """listeners and latestVersionUnstable describe how a broker serves a request."""
    message = _versioned(ctx)
    if message is None or message.type == "request":
        return
    if message.listeners:
        yield Hit(("listeners",), f"listeners are only valid on requests, not on a {message.type}")
    if message.latest_version_unstable:
        yield Hit(("latestVersionUnstable",), f"latestVersionUnstable is only valid on requests, not on a {message.type}")


@check("file-name-matches")
def file_name_matches(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Kafka names each spec file after its message; tools find specs by that name."""
    message = ctx.message
    base = os.path.basename(ctx.path)
    if message is not None and message.name and os.path.splitext(base)[0] != message.name:
        yield Hit(("name",), f"message {message.name} is in {base}; expected {message.name}.json")


@check("name-suffix")
def name_suffix(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Requests end in Request and responses in Response (``type`` picks which)."""
    message = ctx.message
    wanted = options.get("type", "request")
    suffix = wanted.capitalize()
    if message is not None and message.type == wanted and message.name and not message.name.endswith(suffix):
        yield Hit(("name",), f"{wanted} name {message.name} does not end with {suffix}")


@check("versions-within")
def versions_within(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Field versions that never meet the message's validVersions (the field is never sent)."""
    message = _versioned(ctx)
    if message is None:
        return
    for spec in message.fields:
        yield from _never_present(spec, message.versions)
    for common in message.common_structs:
        for spec in common.fields:
            yield from _never_present(spec, message.versions)


def _never_present(spec: FieldSpec, parent: Versions) -> Iterator[Hit]:
    if spec.versions is None or spec.versions.empty:
        return
    current = parent.intersect(spec.versions)
    if current.empty:
        below = " (all below the lowest valid version, as after a KIP-896 baseline: the field can go)" \
            if spec.versions.highest < parent.lowest else ""
        yield Hit(spec.child("versions"), f"field {_field_label(spec)} has versions {spec.versions}, none of "
                  f"which is valid here ({parent}){below}")
        return
    for child in spec.fields:
        yield from _never_present(child, current)


@check("nullable-within-versions")
def nullable_within_versions(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """nullableVersions that never meet the field's versions (``mode: overlap``), or that reach
    outside them at all (``mode: subset``)."""
    subset = options.get("mode", "overlap") == "subset"
    for spec, _ in _fields(ctx):
        nullable, versions = spec.nullable_versions, spec.versions
        if nullable is None or versions is None or nullable.empty or versions.empty:
            continue
        both = nullable.intersect(versions)
        if both.empty and not subset:
            yield Hit(spec.child("nullableVersions"), f"field {_field_label(spec)} is nullable in {nullable} but "
                      f"exists only in {versions}: nullableVersions never apply")
        elif subset and not both.empty and both != nullable:
            yield Hit(spec.child("nullableVersions"), f"field {_field_label(spec)} exists in {versions}; write "
                      f"its nullableVersions {nullable} as {both}")


@check("deprecated-within-valid")
def deprecated_within_valid(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """deprecatedVersions must be versions the message has."""
    message = ctx.message
    if message is None or message.versions is None:
        return
    deprecated = message.deprecated_versions.value
    if deprecated is not None and not deprecated.empty and not message.versions.contains(deprecated):
        yield Hit(("deprecatedVersions",), f"deprecatedVersions {deprecated} are not all within validVersions "
                  f"{message.versions}")


_REVERSED = re.compile(r"^\s*\+?(\d+)\s*-\s*\+?(\d+)\s*$")


@check("empty-version-range")
def empty_version_range(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A range like "3-1" is silently empty ("none"); say "none" if that is meant."""
    message = ctx.message
    if message is None:
        return
    keys = ("versions", "nullableVersions", "taggedVersions", "flexibleVersions")
    for spec, _ in ctx.fields:
        for key in keys:
            text = spec.raw.get(key)
            match = _REVERSED.match(text) if isinstance(text, str) and "-" in text else None
            if match and _digits_above(match.group(1), match.group(2)):
                yield Hit(spec.child(key), f'{key} "{text}" is an empty range (it means "none")')


def _digits_above(first: str, second: str) -> bool:
    """``int(first) > int(second)`` for digit strings of any length (Python's int() refuses more than 4,300
    digits, and a hostile range may hold more)."""
    first, second = first.lstrip("0") or "0", second.lstrip("0") or "0"
    return (len(first), first) > (len(second), second)


_STRICT_VERSIONS = re.compile(r"none|(?:0|[1-9][0-9]*)(?:\+|-(?:0|[1-9][0-9]*))?")


@check("canonical-version-syntax")
def canonical_version_syntax(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Versions written as Kafka writes them: "0+", "1-3", "5", "none" (no spaces, signs or zero padding)."""
    value = ctx.document.value
    if not isinstance(value, dict):
        return
    for path, text in _version_strings(value, ()):
        if isinstance(text, str) and text.strip() and not _STRICT_VERSIONS.fullmatch(text):
            yield Hit(path, f'write "{text}" as {_canonical(text)}')


def _version_strings(node: Any, path: tuple) -> Iterator[tuple[tuple, Any]]:
    if isinstance(node, dict):
        for key, child in node.items():
            if key.endswith("ersions") and not isinstance(child, (dict, list)):
                yield (*path, key), child
            else:
                yield from _version_strings(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _version_strings(child, (*path, index))


def _canonical(text: str) -> str:
    try:
        parsed = Versions.parse(text)
    except ValueError:
        return "a valid range"
    return f'"{parsed}"' if parsed is not None else "a valid range"


@check("lenient-scalar")
def lenient_scalar(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Numbers and booleans written as strings (or the reverse) only work through Jackson's coercions."""
    for spec, _ in _fields(ctx):
        for key in ("mapKey", "ignorable", "zeroCopy"):
            if key in spec.raw and not isinstance(spec.raw[key], bool):
                yield Hit(spec.child(key), f"{key} should be a JSON boolean, not {spec.raw[key]!r}")
        if "tag" in spec.raw and isinstance(spec.raw["tag"], (str, float, bool)):
            yield Hit(spec.child("tag"), f"tag should be a JSON integer, not {spec.raw['tag']!r}")
        if "default" in spec.raw and spec.raw["default"] is not None and not isinstance(spec.raw["default"], str):
            yield Hit(spec.child("default"), f"default should be a JSON string, not {spec.raw['default']!r}")
    message = ctx.message
    if message is not None and "apiKey" in message.raw and isinstance(message.raw["apiKey"], str):
        yield Hit(("apiKey",), f"apiKey should be a JSON integer, not {message.raw['apiKey']!r}")


# --- cross-file ----------------------------------------------------------------------------


def _by_api_key(directory: DirectoryContext, kind: str) -> dict[int, list[tuple[FileContext, MessageSpec]]]:
    table: dict[int, list[tuple[FileContext, MessageSpec]]] = defaultdict(list)
    for ctx, message in directory.messages():
        if message.type == kind and message.api_key is not None:
            table[message.api_key].append((ctx, message))
    return table


@check("unique-api-key", scope="directory")
def unique_api_key(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """One request, one response, one metadata record and one coordinator key and value per apiKey in a
    directory; a removed API (validVersions none) keeps its apiKey reserved."""
    for kind in ("request", "response", "metadata", "coordinator-key", "coordinator-value"):
        for key, owners in _by_api_key(directory, kind).items():
            first = owners[0][1]
            owner = f"removed {kind} {first.name} (validVersions none)" if first.removed else f"{kind} {first.name}"
            for ctx, message in owners[1:]:
                yield Hit(("apiKey",), f"{kind} {message.name} has apiKey {key}, already used by {owner}",
                          file=ctx.path)


@check("paired-api", scope="directory")
def paired_api(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Every request has a response with its apiKey (``of: request``), and the reverse (``of: response``)."""
    if not directory.complete or any(ctx.message is None for ctx in directory.files):
        return  # an unreadable file may be the missing partner: absence is not proven
    have, want = ("request", "response") if options.get("of", "request") == "request" else ("response", "request")
    partners = _by_api_key(directory, want)
    for key, owners in _by_api_key(directory, have).items():
        if key not in partners:
            ctx, message = owners[0]
            yield Hit(("apiKey",), f"{have} {message.name} (apiKey {key}) has no {want} in {directory.directory.name}/",
                      file=ctx.path)


@check("pair-agrees", scope="directory")
def pair_agrees(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A request and its response share validVersions and flexibleVersions (they are negotiated together)."""
    responses = _by_api_key(directory, "response")
    for key, owners in _by_api_key(directory, "request").items():
        if key not in responses:
            continue
        request, response = owners[0][1], responses[key][0]
        for prop in ("valid_versions", "flexible_versions"):
            left, right = getattr(request, prop).value, getattr(response[1], prop).value
            if left is not None and right is not None and left != right:
                label = "validVersions" if prop == "valid_versions" else "flexibleVersions"
                yield Hit((label,), f"{response[1].name} has {label} {right} but {request.name} has {left}",
                          file=response[0].path)
        if request.name and response[1].name and request.name.endswith("Request") \
                and response[1].name != request.name[: -len("Request")] + "Response":
            yield Hit(("name",), f"{response[1].name} answers {request.name} (apiKey {key}); expected "
                      f"{request.name[:-len('Request')]}Response", file=response[0].path)


# --- meta: about the run itself --------------------------------------------------------------


@check("unused-suppression", scope="meta")
def unused_suppression(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A suppression comment that silenced nothing is stale and hides future problems.

    One that names a compat rule (KL1xxx) is left alone: lint never runs those, ``krpc-lint compat`` uses it.
    """
    compat = getattr(ctx, "compat_rules", frozenset())  # set by the runner: ids and names of the compat rules
    for item in getattr(ctx, "suppressions", ()):
        if item.reason and not item.used and not compat.intersection(item.rules):
            yield Hit((), f"suppression of {', '.join(item.rules)} matches no finding", position=(item.line, item.col))


@check("suppression-reason", scope="meta")
def suppression_reason(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A suppression must say why, so reviewers can judge it; without a reason it suppresses nothing."""
    for item in getattr(ctx, "suppressions", ()):
        if not item.reason:
            yield Hit((), f"suppression of {', '.join(item.rules)} gives no reason", position=(item.line, item.col))

