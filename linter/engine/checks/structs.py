"""Structs: common and inline struct definitions, their names, and structs that cannot be laid out
(rules KL601-KL604, KL651-KL655)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import label, versioned
from linter.engine.checks.registry import check
from linter.engine.context import FileContext, Hit
from linter.model.registry import MAX_STRUCT_NESTING, ROOT, StructRegistry
from linter.model.spec import FieldSpec
from linter.model.versions import ALL, Versions, shown


def _type_name(spec: FieldSpec) -> str:
    """The struct a field's type names (the registry lists only fields with a struct type)."""
    return spec.type.name if spec.type is not None else label(spec)


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
        name = _type_name(spec)
        first = registry.lookup(name)
        where = ctx.document.locate(first.path)[0] if first is not None else "?"
        yield Hit(spec.child("type"), f"struct {name} is already defined by the field on line {where}; "
                  "an inline struct name can be used only once")


@check("common-struct-not-respecified")
def common_struct_not_respecified(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A field typed with a common struct must not list the struct's fields again."""
    if ctx.registry is not None:
        for spec in ctx.registry.respecified_commons:
            yield Hit(spec.child("fields"), f"field {label(spec)} re-specifies common struct "
                      f"{_type_name(spec)} as an inline struct")


@check("struct-defined")
def struct_defined(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Inside common structs, struct types must be defined elsewhere (inline structs are not registered there)."""
    if ctx.registry is not None:
        for spec in ctx.registry.missing:
            inline = " (inline structs are not allowed inside common structs)" if spec.has_fields else ""
            yield Hit(spec.child("type"), f"struct {_type_name(spec)} is not defined{inline}")


@check("unused-common-struct")
def unused_common_struct(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A common struct no field reaches is dead weight in the generated code."""
    if ctx.registry is not None:
        for common in ctx.registry.unused_commons():
            yield Hit((*common.path, "name"), f"common struct {common.name} is not used by any field")


@check("empty-struct-type")
def empty_struct_type(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A struct type with no fields and no common struct: Kafka silently generates an empty struct."""
    registry = ctx.registry
    if ctx.message is None or registry is None:
        return
    for spec, _ in ctx.fields:
        name = spec.type.struct_name if spec.type is not None else None
        definition = registry.lookup(name) if name else None
        if definition is not None and definition.kind == "inline" and definition.path == spec.path \
                and not spec.has_fields and "fields" not in spec.raw:
            yield Hit(spec.child("type"), f"struct type {name} has no fields and no common struct defines it")


@check("struct-name-pattern")
def struct_name_pattern(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A struct type that is no class name: [A-Z][A-Za-z0-9]*, checked without a pattern (string predicates
    are linear whatever the name holds)."""
    for spec, _ in ctx.fields:
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
    edges = registry.children
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
    too_deep = registry.too_deep
    if too_deep is not None:
        deepest = max(((registry.levels.get(target, 0), path) for source, target, path in registry.edges
                       if source == ROOT), default=(0, ()))[1]
        yield Hit((*deepest, "type"), too_deep)


@check("empty-struct-array")
def empty_struct_array(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """An array of structs whose elements have no field in some non-flexible version it is sent in."""
    found, registry = versioned(ctx), ctx.registry
    if found is None or registry is None:
        return
    message, versions = found
    flexible = message.flexible
    known: dict[str, list[Versions]] = {}  # one per file: every array of a struct shares its walk
    for spec, _ in ctx.fields:
        if spec.type is None or not spec.type.is_struct_array or spec.versions is None:
            continue
        definition = registry.lookup(spec.type.name)
        if definition is None:
            continue
        sent = spec.versions.intersect(versions)
        classic = sent if flexible.empty else sent.intersect(Versions(0, flexible.lowest - 1))
        empty = _first_uncovered(classic, _byte_versions(spec.type.name, registry, known, set()))
        if empty is not None:
            yield Hit(spec.child("type"), f"{spec.name}: {spec.type.name} has no field that takes bytes at version "
                                          f"{empty}, which is not flexible: its elements take no bytes, so readers "
                                          "refuse the array")


def _byte_versions(name: str, registry: StructRegistry, known: dict[str, list[Versions]],
                   visiting: set[str]) -> list[Versions]:
    """The version ranges in which struct ``name`` writes at least one byte when nothing is tagged: some field
    of any type but a struct, a struct field while it is nullable (its marker byte) or while its own struct
    writes one. A struct that contains itself (KL654) or is not defined counts as it can: never / always; past
    ``MAX_STRUCT_NESTING`` levels (which the codec refuses) as always, so the recursion stays that shallow.
    Sorted and disjoint (``_union``), so a struct's list is no longer than the ranges its spec can tell apart,
    however many paths reach it: a chain of structs each holding two of the next does not double it per level.
    ``known`` serves every array of a file; where a walk was cut (a cycle, or past the limit: KL654 reports both)
    what it stored follows the array that reached the struct first."""
    if name in known:
        return known[name]
    definition = registry.lookup(name)
    if definition is None or name in visiting or len(visiting) >= MAX_STRUCT_NESTING:
        return [] if name in visiting else [ALL]
    visiting.add(name)
    found: list[Versions] = []
    for field in definition.fields:
        if field.versions is None:
            continue
        if field.type is None or not field.type.is_struct:
            found.append(field.versions)
            continue
        if field.nullable_versions is not None:
            found.append(field.versions.intersect(field.nullable_versions))
        found.extend(field.versions.intersect(inner)
                     for inner in _byte_versions(field.type.name, registry, known, visiting))
    visiting.discard(name)
    known[name] = merged = _union(found)
    return merged


def _union(ranges: list[Versions]) -> list[Versions]:
    """The versions of ``ranges`` as sorted, disjoint, non-adjacent ranges (empty ones dropped)."""
    merged: list[Versions] = []
    for versions in sorted((v for v in ranges if not v.empty), key=lambda v: v.lowest):
        if merged and versions.lowest <= merged[-1].highest + 1:
            merged[-1] = Versions(merged[-1].lowest, max(merged[-1].highest, versions.highest))
        else:
            merged.append(versions)
    return merged


def _first_uncovered(wanted: Versions, covering: list[Versions]) -> int | None:
    """The first version of ``wanted`` in none of ``covering`` (sorted disjoint ranges, ``_union``'s)."""
    if wanted.empty:
        return None
    candidate = wanted.lowest
    for versions in covering:
        if versions.lowest > candidate:
            break
        candidate = max(candidate, versions.highest + 1)
        if candidate > wanted.highest:
            return None
    return candidate if candidate <= wanted.highest else None
