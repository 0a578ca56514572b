"""The registry of named checks: ``@check(name, scope, options_schema)`` files a check under the name rules
call it by (``check: {function: NAME, options: {...}}``).

A check's ``options_schema`` is the JSON Schema of the options a rule may give it; the rule loader
validates each rule's options against it, so a misspelt option is an error when the pack loads rather
than a rule that silently finds nothing.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from linter.engine.context import Hit
from linter.engine.patterns import compile_linear

CheckFn = Callable[[Any, dict[str, Any]], Iterator[Hit]]
SCOPES = ("file", "directory", "meta")  # per file, per directory of files, on the finished run of a file


def options(*required: str, **properties: dict[str, Any]) -> dict[str, Any]:
    """The schema of a closed options object: these ``properties`` (``required`` among them) and no other."""
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


NO_OPTIONS = options()
RPC_TYPE = {"enum": ["request", "response"]}  # an option that picks requests or responses


def kinds(*names: str) -> dict[str, Any]:
    """The schema of a check that relays what an earlier stage found: its ``kinds`` option picks some of
    ``names`` (at least one)."""
    return options("kinds", kinds={"type": "array", "items": {"enum": list(names)}, "minItems": 1, "uniqueItems": True})


@dataclass(frozen=True)
class CheckDef:
    name: str
    scope: str  # one of SCOPES
    fn: CheckFn
    options_schema: dict[str, Any]

    @property
    def doc(self) -> str:
        """What the check finds and its options (its docstring): what ``krpc-lint rules explain`` shows."""
        return inspect.cleandoc(self.fn.__doc__ or "")


CHECKS: dict[str, CheckDef] = {}

# Names a check had before it was named after its one rule: a user's pack written against them still loads.
ALIASES = {"duplicate-keys": "duplicate-key", "versions-within": "field-versions-valid",
           "deprecated-within-valid": "deprecated-versions-valid", "pair-agrees": "request-response-agree"}


def check(name: str, scope: str = "file", options_schema: dict[str, Any] = NO_OPTIONS) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated function as the check ``name``."""
    if scope not in SCOPES:
        raise ValueError(f"check {name}: scope must be one of {', '.join(SCOPES)}")

    def register(fn: CheckFn) -> CheckFn:
        if name in CHECKS or name in ALIASES:
            raise ValueError(f"check {name} is registered twice")
        CHECKS[name] = CheckDef(name, scope, fn, options_schema)
        return fn

    return register


def lookup(name: str) -> CheckDef | None:
    """The check a rule names, by its name or a former name."""
    return CHECKS.get(ALIASES.get(name, name))


def _format_checker() -> Any:
    """jsonschema's format checker, with ``regex`` meaning a pattern RE2 runs (``linter.engine.patterns``): an
    option a check matches against spec text must never backtrack, so one RE2 refuses is refused at load."""
    from jsonschema import Draft202012Validator

    checker = copy.deepcopy(Draft202012Validator.FORMAT_CHECKER)
    checker.checks("regex", raises=ValueError)(_runs_linear)
    return checker


def _runs_linear(instance: object) -> bool:
    if isinstance(instance, str):
        compiled, why = compile_linear(instance)
        if compiled is None:
            raise ValueError(f"RE2 (linear time) cannot run it: {why}")
    return True


def options_problem(definition: CheckDef, given: dict[str, Any]) -> str | None:
    """Why ``given`` are no options of the check, in one line naming the option, or ``None``. An unknown
    option is named first (a misspelt one also leaves a required one missing). Called when a rule loads
    (never per file) and only for packs not yet cached, so jsonschema is imported here, not at start."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    schema = definition.options_schema
    known = list(schema.get("properties", {}))
    unknown = [str(key) for key in given if key not in known]
    if unknown and schema.get("additionalProperties") is False:
        return (f"check {definition.name} has no option {', '.join(map(repr, unknown))} "
                f"(its options: {', '.join(known) or 'none'})")
    missing = [name for name in schema.get("required", ()) if name not in given]
    if missing:
        return f"check {definition.name} needs option(s) {', '.join(map(repr, missing))}"
    validator = Draft202012Validator(schema, format_checker=_format_checker())
    error = best_match(validator.iter_errors(given))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    cause = f" ({error.cause})" if error.cause is not None else ""  # why a format refused it, e.g. RE2's reason
    return f"check {definition.name}: option {where}: {error.message}{cause}"
