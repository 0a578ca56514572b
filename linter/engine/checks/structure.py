"""Structure: what the JSON Schema of the spec format and the binding of the model (version and type
syntax) found, and values Jackson only takes through its coercions (rules KL101-KL105, KL201, KL302,
KL303, KL803)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from linter.engine.checks.registry import check, kinds
from linter.engine.checks.tagged import draft_issues, hex_tag
from linter.engine.context import FileContext, Hit
from linter.engine.fixes import value_edit
from linter.model.jackson import BindError, as_bool, as_int, as_string
from linter.parse.jsonc import JsonPath


@check("structure", options_schema=kinds("unknown-key", "value-kind", "enum-value", "number-range",
                                         "required-property"))
def structure(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Structural errors from the JSON Schema of the spec format; ``kinds`` selects which. KIP-482 draft syntax
    is kip482-draft-syntax's to report, with its final form."""
    selected = options.get("kinds", ())
    draft = draft_issues(ctx)
    for issue in ctx.structure:
        if issue.check in selected and issue not in draft:
            yield Hit(issue.path, issue.message, issue.at_key)


@check("model-issue", options_schema=kinds("version-syntax", "type-syntax", "array-of-arrays"))
def model_issue(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Problems found while binding the model (version and type syntax); ``kinds`` selects which."""
    for kind in options.get("kinds", ()):
        for issue in ctx.model_issues(kind):
            yield Hit(issue.path, issue.message, issue.at_key)


@check("lenient-scalar")
def lenient_scalar(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Numbers and booleans written as strings (or the reverse) only work through Jackson's coercions. The fix
    writes the value Jackson binds in its own JSON kind, so the spec means exactly what it meant."""
    for spec, _ in ctx.fields:
        for key in ("mapKey", "ignorable", "zeroCopy"):
            if key in spec.raw and not isinstance(spec.raw[key], bool):
                yield _lenient(ctx, spec.child(key), f"{key} should be a JSON boolean, not {spec.raw[key]!r}",
                               as_bool, spec.raw[key])
        if "tag" in spec.raw and isinstance(spec.raw["tag"], (str, float, bool)) and hex_tag(spec.raw["tag"]) is None:
            yield _lenient(ctx, spec.child("tag"), f"tag should be a JSON integer, not {spec.raw['tag']!r}",
                           partial(as_int, bits=32), spec.raw["tag"])
        if "default" in spec.raw and spec.raw["default"] is not None and not isinstance(spec.raw["default"], str):
            yield _lenient(ctx, spec.child("default"), f"default should be a JSON string, not {spec.raw['default']!r}",
                           as_string, spec.raw["default"])
    message = ctx.message
    if message is not None and "apiKey" in message.raw and isinstance(message.raw["apiKey"], str):
        yield _lenient(ctx, ("apiKey",), f"apiKey should be a JSON integer, not {message.raw['apiKey']!r}",
                       partial(as_int, bits=16), message.raw["apiKey"])


def _lenient(ctx: FileContext, path: JsonPath, message: str, bind: Callable[[Any, str], Any], raw: Any) -> Hit:
    """A lenient scalar's hit, fixed to the JSON of the value Jackson binds (none when it binds nothing)."""
    try:
        bound = bind(raw, str(path[-1]))
    except BindError:
        bound = None
    fix = value_edit(ctx.document, path, json.dumps(bound)) if bound is not None else ()
    return Hit(path, message, fix=fix)
