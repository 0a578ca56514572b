"""Structure: what the JSON Schema of the spec format and the binding of the model (version and type
syntax) found, and values Jackson only takes through its coercions (rules KL101-KL105, KL201, KL302,
KL303, KL803)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.registry import check, kinds
from linter.engine.context import FileContext, Hit


@check("structure", options_schema=kinds("unknown-key", "value-kind", "enum-value", "number-range",
                                         "required-property"))
def structure(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Structural errors from the JSON Schema of the spec format; ``kinds`` selects which."""
    selected = options.get("kinds", ())
    for issue in ctx.structure:
        if issue.check in selected:
            yield Hit(issue.path, issue.message, issue.at_key)


@check("model-issue", options_schema=kinds("version-syntax", "type-syntax", "array-of-arrays"))
def model_issue(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Problems found while binding the model (version and type syntax); ``kinds`` selects which."""
    for kind in options.get("kinds", ()):
        for issue in ctx.model_issues(kind):
            yield Hit(issue.path, issue.message, issue.at_key)


@check("lenient-scalar")
def lenient_scalar(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Numbers and booleans written as strings (or the reverse) only work through Jackson's coercions."""
    for spec, _ in ctx.fields:
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
