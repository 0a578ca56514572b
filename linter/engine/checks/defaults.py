"""Defaults: a field's ``default`` against its type, and defaults that say nothing (rules KL501-KL503,
KL551, KL552)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import label
from linter.engine.checks.registry import check, options
from linter.engine.context import FileContext, Hit
from linter.engine.fixes import member_removal
from linter.model.defaults import DefaultError, parse_default


@check("default-value", options_schema=options(kind={"enum": ["default-value", "default-empty"]}))
def default_value(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A default must be a valid value of the field's type; ``kind`` picks value (``default-value``, the
    default) or empty-only (``default-empty``) errors."""
    wanted = options.get("kind", "default-value")
    for spec, _ in ctx.fields:
        if spec.type is None or not spec.default_given:
            continue
        try:
            parse_default(spec.type, spec.default)
        except DefaultError as exc:
            if exc.check == wanted:
                yield Hit(spec.child("default"), f"invalid default for {spec.type} field {label(spec)}: {exc}")


@check("null-default-nullable")
def null_default_nullable(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A null default needs every version of the field to be nullable (KIP-893 for structs)."""
    for spec, _ in ctx.fields:
        if spec.default != "null" or spec.type is None or spec.versions is None or spec.nullable_versions is None:
            continue
        t = spec.type
        if not (t.is_array or t.is_string or t.is_bytes or t.is_struct):
            continue
        if not spec.nullable_versions.contains(spec.versions):
            yield Hit(spec.child("default"), f"null cannot be the default of field {label(spec)}: it is "
                      f"nullable in {spec.nullable_versions} but exists in {spec.versions}")


@check("redundant-default")
def redundant_default(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A default equal to the type's implicit default says nothing."""
    for spec, _ in ctx.fields:
        if spec.type is None or not spec.default_given or spec.default == "" or spec.default == "null":
            continue
        try:
            value = parse_default(spec.type, spec.default)
            implicit = parse_default(spec.type, "")
        except DefaultError:
            continue
        if value == implicit and not spec.type.is_records:
            yield Hit(spec.child("default"), f'default "{spec.default}" of field {label(spec)} is the '
                      "implicit default of its type", fix=member_removal(ctx.document, spec.child("default")))


@check("default-on-records")
def default_on_records(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Kafka ignores any default on a records field (it is always null)."""
    for spec, _ in ctx.fields:
        if spec.type is not None and spec.type.is_records and spec.default_given and spec.default != "":
            yield Hit(spec.child("default"), f"records field {label(spec)} ignores its default "
                      f'"{spec.default}"; records default to null', fix=member_removal(ctx.document, spec.child("default")))
