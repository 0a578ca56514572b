"""Versions: validVersions, flexibleVersions and every field's versions, and how they are written
(rules KL202-KL208, KL251-KL257)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import label, versioned
from linter.engine.checks.registry import check, options
from linter.engine.context import FileContext, Hit
from linter.engine.findings import Edit
from linter.engine.fixes import value_edit
from linter.model.registry import StructRegistry
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.versions import NONE, Versions
from linter.parse.jsonc import JsonPath


def _declared_flexible(ctx: FileContext) -> tuple[MessageSpec, Versions, Versions] | None:
    """The message, its valid versions and its non-empty flexibleVersions, when it has valid versions."""
    found = versioned(ctx)
    flexible = found[0].flexible_versions.value if found is not None else None
    if found is None or flexible is None or flexible.empty:
        return None
    return found[0], found[1], flexible


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
            yield Hit(spec.path, f"struct field {label(spec)} has no versions; struct fields need them "
                      "even when tagged")
        elif spec.versions is None and (spec.tagged_versions or NONE).empty:
            yield Hit(spec.path, f"field {label(spec)} has no versions (and no taggedVersions to take them from)")


def _given(ctx: FileContext, path: JsonPath) -> bool:
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
    found = versioned(ctx)
    if found is not None and found[0].flexible_versions.text is None:
        yield Hit((), 'no flexibleVersions: use "0+" for a new message, or "none"')


@check("flexible-versions-open-ended")
def flexible_versions_open_ended(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """flexibleVersions is none or an open range: once flexible, every later version is."""
    declared = _declared_flexible(ctx)
    if declared is not None and not declared[2].open_ended:
        message = declared[0]
        yield Hit(("flexibleVersions",), f'flexibleVersions "{message.flexible_versions.text}" is not open-ended')


@check("flexible-versions-reachable")
def flexible_versions_reachable(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """flexibleVersions that start after the last valid version make no version flexible."""
    declared = _declared_flexible(ctx)
    if declared is not None and declared[1].intersect(declared[2]).empty:
        _, versions, flexible = declared
        yield Hit(("flexibleVersions",), f"flexibleVersions {flexible} start after the last valid version "
                  f"{versions.highest}: no version is flexible")


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


def _overlap(fields: tuple[FieldSpec, ...], parent: Versions, registry: StructRegistry) -> Iterator[Hit]:
    for spec in fields:
        name = spec.type.struct_name if spec.type is not None else None
        if name is None or spec.versions is None:
            continue
        definition = registry.lookup(name)
        if definition is None or definition.kind != "inline" or definition.path != spec.path:
            continue
        current = parent.intersect(spec.versions)
        if current.empty:
            yield Hit(spec.child("versions"), f"struct field {label(spec)} has versions {spec.versions}, "
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
            yield Hit(spec.child("flexibleVersions"), f"field {label(spec)} has flexibleVersions {override}, "
                      f"which is not within the message's flexible versions {message.flexible}")


@check("field-versions-valid")
def field_versions_valid(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Field versions that never meet the message's validVersions (the field is never sent)."""
    found = versioned(ctx)
    if found is None:
        return
    message, versions = found
    for spec in message.fields:
        yield from _never_present(spec, versions)
    for common in message.common_structs:
        for spec in common.fields:
            yield from _never_present(spec, versions)


def _never_present(spec: FieldSpec, parent: Versions) -> Iterator[Hit]:
    if spec.versions is None or spec.versions.empty:
        return
    current = parent.intersect(spec.versions)
    if current.empty:
        below = " (all below the lowest valid version, as after a KIP-896 baseline: the field can go)" \
            if spec.versions.highest < parent.lowest else ""
        yield Hit(spec.child("versions"), f"field {label(spec)} has versions {spec.versions}, none of "
                  f"which is valid here ({parent}){below}")
        return
    for child in spec.fields:
        yield from _never_present(child, current)


@check("nullable-within-versions", options_schema=options(mode={"enum": ["overlap", "subset"]}))
def nullable_within_versions(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """nullableVersions that never meet the field's versions (``mode: overlap``, the default), or that reach
    outside them at all (``mode: subset``)."""
    subset = options.get("mode", "overlap") == "subset"
    for spec, _ in ctx.fields:
        nullable, versions = spec.nullable_versions, spec.versions
        if nullable is None or versions is None or nullable.empty or versions.empty:
            continue
        both = nullable.intersect(versions)
        if both.empty and not subset:
            yield Hit(spec.child("nullableVersions"), f"field {label(spec)} is nullable in {nullable} but "
                      f"exists only in {versions}: nullableVersions never apply")
        elif subset and not both.empty and both != nullable:
            yield Hit(spec.child("nullableVersions"), f"field {label(spec)} exists in {versions}; write "
                      f"its nullableVersions {nullable} as {both}", fix=_narrowed_nullable(ctx, spec, both))


def _narrowed_nullable(ctx: FileContext, spec: FieldSpec, both: Versions) -> tuple[Edit, ...]:
    """The fix: nullableVersions written as their part within the field's versions, where alone they apply.
    None when the field is tagged outside its versions (Kafka rejects that; which range is meant is unclear)."""
    tagged, versions = spec.tagged_versions, spec.versions
    if versions is None or (tagged is not None and not tagged.empty and not versions.contains(tagged)):
        return ()
    return value_edit(ctx.document, spec.child("nullableVersions"), json.dumps(str(both)))


@check("deprecated-versions-valid")
def deprecated_versions_valid(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
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
    if ctx.message is None:
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
            yield Hit(path, f'write "{text}" as {_canonical(text)}', fix=_canonical_edit(ctx, path, text))


def _version_strings(node: Any, path: JsonPath) -> Iterator[tuple[JsonPath, Any]]:
    if isinstance(node, dict):
        for key, child in node.items():
            if key.endswith("ersions") and not isinstance(child, (dict, list)):
                yield (*path, key), child
            else:
                yield from _version_strings(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _version_strings(child, (*path, index))


def _canonical_edit(ctx: FileContext, path: JsonPath, text: str) -> tuple[Edit, ...]:
    """The fix: the string replaced by its canonical spelling, when there is one."""
    try:
        parsed = Versions.parse(text)
    except ValueError:
        return ()
    canonical = str(parsed) if parsed is not None else ""
    if not _STRICT_VERSIONS.fullmatch(canonical):
        return ()
    return value_edit(ctx.document, path, json.dumps(canonical))


def _canonical(text: str) -> str:
    try:
        parsed = Versions.parse(text)
    except ValueError:
        return "a valid range"
    return f'"{parsed}"' if parsed is not None else "a valid range"
