"""Declarative checks: a JSON Schema condition on each node of a kind, plus a message template.

The schema sees a node's *facts*: its properties as Kafka binds them (strings, booleans,
integers) and a few derived ones, so a user rule never deals with JSON spelling quirks.
A node that does not match the schema is a hit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from linter.engine.context import Facts, FileContext, Hit
from linter.engine.templates import render, template_fields
from linter.model.spec import FieldSpec, MessageSpec, StructSpec

Validate = Callable[[Any], Any]  # a compiled schema: raises fastjsonschema.JsonSchemaException on a mismatch
Selection = tuple[str, frozenset[str] | None]  # a node kind, and the facts its rules read (None: all)


def _type_kind(spec: FieldSpec) -> str | None:
    t = spec.type
    if t is None:
        return None
    return "structArray" if t.is_struct_array else "array" if t.is_array else "struct" if t.is_struct else "primitive"


# One extractor per fact, so a rule whose schema reads only "name" pays only for "name".
FIELD_FACTS: dict[str, Callable[[FieldSpec, StructSpec, MessageSpec], Any]] = {
    "name": lambda f, s, m: f.name,
    "type": lambda f, s, m: f.type_text,
    "typeKind": lambda f, s, m: _type_kind(f),
    "versions": lambda f, s, m: f.versions_prop.text,
    "taggedVersions": lambda f, s, m: f.raw.get("taggedVersions"),
    "nullableVersions": lambda f, s, m: f.raw.get("nullableVersions"),
    "default": lambda f, s, m: f.default if f.default_given else None,
    "about": lambda f, s, m: f.about,
    "entityType": lambda f, s, m: f.entity_type,
    "tag": lambda f, s, m: f.tag,
    "tagged": lambda f, s, m: f.tagged,
    "mapKey": lambda f, s, m: f.map_key,
    "ignorable": lambda f, s, m: f.ignorable,
    "zeroCopy": lambda f, s, m: f.zero_copy,
    "nullableEverywhere": lambda f, s, m: None if f.nullable_versions is None or f.versions is None
    else f.nullable_versions.contains(f.versions),
    "topLevel": lambda f, s, m: s.kind == "message",
    "struct": lambda f, s, m: s.name,
    "message": lambda f, s, m: m.name,
    "messageType": lambda f, s, m: m.type,
}


def field_facts(spec: FieldSpec, struct: StructSpec, message: MessageSpec,
                keys: Iterable[str] | None = None) -> dict[str, Any]:
    """The facts of a field (all of them, or only ``keys``); absent facts are left out."""
    facts = {}
    for key in FIELD_FACTS if keys is None else keys:
        value = FIELD_FACTS[key](spec, struct, message)
        if value is not None:
            facts[key] = value
    return facts


_PROJECTABLE = {"properties", "required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "if", "then",
                "else", "type", "title", "description", "$comment"}


def needed_facts(schema: Any, template: str) -> frozenset[str] | None:
    """Fact names a schema and its message can read, or ``None`` when it may read any."""
    keys: set[str] = set(template_fields(template))

    def walk(node: Any) -> bool:
        if not isinstance(node, dict):
            return isinstance(node, bool)
        if set(node) - _PROJECTABLE:
            return False
        keys.update(node.get("properties", {}))
        keys.update(node.get("required", ()))
        for name, others in node.get("dependentRequired", {}).items():
            keys.add(name)
            keys.update(others)
        subs = [*node.get("allOf", ()), *node.get("anyOf", ()), *node.get("oneOf", ())]
        subs += [node[k] for k in ("not", "if", "then", "else") if k in node]
        return all(walk(sub) for sub in subs)

    return frozenset(keys) if walk(schema) else None


def message_facts(message: MessageSpec, file_name: str) -> dict[str, Any]:
    facts = {
        "name": message.name, "type": message.type, "apiKey": message.api_key,
        "validVersions": message.valid_versions.text, "flexibleVersions": message.flexible_versions.text,
        "deprecatedVersions": message.deprecated_versions.text, "listeners": list(message.listeners),
        "latestVersionUnstable": message.latest_version_unstable, "file": file_name,
        "commonStructs": [c.name for c in message.common_structs if c.name],
    }
    return {k: v for k, v in facts.items() if v is not None}


def struct_facts(struct: StructSpec, message: MessageSpec) -> dict[str, Any]:
    facts = {"name": struct.name, "kind": struct.kind, "versions": None if struct.versions is None else str(struct.versions),
             "fieldCount": len(struct.fields), "message": message.name}
    return {k: v for k, v in facts.items() if v is not None}


@lru_cache(maxsize=256)
def compiled(schema_json: str) -> Validate:
    """The schema compiled, its patterns run by RE2; the rule loader compiles each schema once to refuse
    what cannot be."""
    import fastjsonschema

    from linter.engine.patterns import linear_patterns

    schema, formats = linear_patterns(json.loads(schema_json))
    validate: Validate = fastjsonschema.compile(schema, formats=formats)
    return validate


def declarative_runner(check: dict[str, Any]) -> Callable[[FileContext], Iterator[Hit]]:
    """A declarative check as one call per file: its schema compiled and the facts it needs worked out once."""
    import fastjsonschema

    schema_json = json.dumps(check["schema"], sort_keys=True)
    validate = compiled(schema_json)
    template = str(check["message"])
    at = check.get("at")
    selection: Selection = (check["on"], _needed(schema_json, template) if check["on"] == "field" else None)

    def run(ctx: FileContext) -> Iterator[Hit]:
        if ctx.message is None:
            return
        for path, facts in ctx.facts(selection, _nodes):
            try:
                validate(facts)
            except fastjsonschema.JsonSchemaException:
                yield Hit((*path, at) if at else path, render(template, facts))

    return run


@lru_cache(maxsize=256)
def _needed(schema_json: str, template: str) -> frozenset[str] | None:
    known = needed_facts(json.loads(schema_json), template)
    return known if known is not None and known <= FIELD_FACTS.keys() else None


def _nodes(ctx: FileContext, selection: Selection) -> Iterator[Facts]:
    kind, keys = selection
    message = ctx.message
    if message is None:
        return
    if kind == "message":
        yield (), message_facts(message, Path(ctx.path).name)
    elif kind == "field":
        for spec, struct in ctx.fields:
            yield spec.path, field_facts(spec, struct, message, keys)
    else:
        for struct in ctx.structs:
            if struct.kind != "message":
                yield struct.path, struct_facts(struct, message)
