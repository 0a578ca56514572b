"""Structural validation of a spec file by the JSON Schema of the format (``spec.schema.json``).

The schema is the single statement of which keys exist and which JSON kinds each accepts
(as leniently as Jackson binds them). A compiled validator (fastjsonschema) answers "is this
file well-formed?" at near-native speed; only when the answer is no does ``jsonschema``
walk the document to list every error with its path.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from linter.model.spec import Issue

SCHEMA_RESOURCE = "spec.schema.json"

# Which check owns an error, by the JSON Schema keyword that failed.
_CHECK_BY_KEYWORD = {
    "additionalProperties": "unknown-key",
    "required": "required-property",
    "enum": "enum-value",
    "minimum": "number-range",
    "maximum": "number-range",
}


def schema_text() -> str:
    return resources.files("linter.model").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def spec_schema() -> dict[str, Any]:
    return json.loads(schema_text())


@lru_cache(maxsize=1)
def _fast_validator():
    import fastjsonschema

    return fastjsonschema.compile(spec_schema(), use_default=False)


@lru_cache(maxsize=1)
def _full_validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(spec_schema())


def is_well_formed(document: Any) -> bool:
    import fastjsonschema

    try:
        _fast_validator()(document)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def structure_issues(document: Any) -> list[Issue]:
    """Every structural problem of a parsed spec file, mapped to a check and a JSON path."""
    if is_well_formed(document):
        return []
    issues = []
    for error in _full_validator().iter_errors(document):
        for leaf in _leaf_errors(error):
            issues.extend(_issues_for(leaf))
    return issues


def _leaf_errors(error) -> list:
    """Descend into ``anyOf``: report the errors of the branch meant for the value's JSON kind.

    A list of fields fails ``anyOf[array, object, null]``; what the author needs is the
    error inside the array branch (an unknown key in field 3), not "matches no branch".
    """
    if error.validator != "anyOf" or not error.context or not isinstance(error.instance, (list, dict)):
        return [error]
    branches: dict[int, list] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    fitting = [errs for errs in branches.values() if all(e.relative_path for e in errs)]
    if len(fitting) != 1:
        return [error]
    return [leaf for sub in fitting[0] for leaf in _leaf_errors(sub)]


def _issues_for(error) -> list[Issue]:
    path = tuple(error.absolute_path)
    keyword = error.validator
    if keyword == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extras = sorted(set(error.instance) - set(allowed))
        return [
            Issue("unknown-key", (*path, key), f'unknown key "{key}" (known keys: {", ".join(allowed)})', at_key=True)
            for key in extras
        ]
    if keyword == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        what = "message" if not path else "field" if "fields" in path else "struct"
        reason = f'the {what} has no "{missing}"'
        if missing == "apiKey":
            reason += f' (required for {error.instance.get("type")} specs)'
        return [Issue("required-property", path, reason)]
    if keyword == "enum":
        allowed = ", ".join(str(v) for v in error.validator_value if v is not None)
        return [Issue("enum-value", path, f"{_name(path)} {json.dumps(error.instance)} is not one of: {allowed}")]
    if keyword in ("minimum", "maximum"):
        return [Issue("number-range", path, f"{_name(path)} {error.instance} is out of range")]
    hint = error.schema.get("x-message") if isinstance(error.schema, dict) else None
    if _is_range_error(error):
        return [Issue("number-range", path, f"{_name(path)} {error.instance} {hint or 'is out of range'}")]
    if keyword == "type" and error.validator_value == "object":
        return [Issue("value-kind", path, f"{_name(path)} must be an object, found {json.dumps(error.instance)[:40]}")]
    message = f"{_name(path)} {hint}" if hint else error.message
    return [Issue(_CHECK_BY_KEYWORD.get(keyword, "value-kind"), path, f"{message}, found {_show(error.instance)}")]


def _is_range_error(error) -> bool:
    """An integer of the right kind but outside its Java range (``tag``, ``apiKey``)."""
    if error.validator != "anyOf" or not isinstance(error.instance, (int, float)) or isinstance(error.instance, bool):
        return False
    return any(sub.validator in ("minimum", "maximum") for sub in error.context)


def _name(path: tuple) -> str:
    for part in reversed(path):
        if isinstance(part, str):
            return part
    return "the document root" if not path else "the list item"


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
