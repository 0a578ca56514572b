"""Declarative checks: a JSON Schema condition on each node of a kind, plus a message template.

The schema sees a node's *facts*: its properties as Kafka binds them (strings, booleans,
integers) and a few derived ones, so a user rule never deals with JSON spelling quirks.
A node that does not match the schema is a hit.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from linter.engine.context import FileContext, Hit
from linter.engine.rules import render
from linter.model.spec import FieldSpec, MessageSpec, StructSpec


def field_facts(spec: FieldSpec, struct: StructSpec, message: MessageSpec) -> dict[str, Any]:
    t = spec.type
    kind = None if t is None else "structArray" if t.is_struct_array else "array" if t.is_array \
        else "struct" if t.is_struct else "primitive"
    facts = {
        "name": spec.name, "type": spec.type_text, "typeKind": kind, "versions": spec.versions_prop.text,
        "taggedVersions": spec.raw.get("taggedVersions"), "nullableVersions": spec.raw.get("nullableVersions"),
        "default": spec.default if spec.default_given else None, "about": spec.about, "entityType": spec.entity_type,
        "tag": spec.tag, "tagged": spec.tagged, "mapKey": spec.map_key, "ignorable": spec.ignorable,
        "zeroCopy": spec.zero_copy, "topLevel": struct.kind == "message", "struct": struct.name,
        "message": message.name, "messageType": message.type,
    }
    return {k: v for k, v in facts.items() if v is not None}


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
def _compiled(schema_json: str):
    import json

    import fastjsonschema

    return fastjsonschema.compile(json.loads(schema_json))


def _validator(schema: dict[str, Any]):
    import json

    return _compiled(json.dumps(schema, sort_keys=True))


def run_declarative(ctx: FileContext, check: dict[str, Any]) -> Iterator[Hit]:
    import fastjsonschema

    message = ctx.message
    if message is None:
        return
    validate = _validator(check["schema"])
    template = str(check["message"])
    at = check.get("at")
    for path, facts in ctx.facts(check["on"], _nodes):
        try:
            validate(facts)
        except fastjsonschema.JsonSchemaException:
            target = (*path, at) if at else path
            yield Hit(target, render(template, facts))


def _nodes(ctx: FileContext, kind: str) -> Iterator[tuple[tuple, dict[str, Any]]]:
    message = ctx.message
    if kind == "message":
        from pathlib import Path

        yield (), message_facts(message, Path(ctx.path).name)
    elif kind == "field":
        for spec, struct in ctx.fields:
            yield spec.path, field_facts(spec, struct, message)
    else:
        for struct in ctx.structs:
            if struct.kind != "message":
                yield struct.path, struct_facts(struct, message)
