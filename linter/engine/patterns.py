"""Regular expressions from rule packs, run by RE2: linear time in the text whatever the pattern.

A pack is input too (a pull request may change it), and a JSON Schema ``pattern`` such as
``^(a+)+$`` takes exponential time in a backtracking engine (Python's ``re``, which the compiled
schema validators use). Packs' patterns therefore run through google-re2, which has no
backtracking; a pattern RE2 cannot express (back-references, look-around) is refused when the pack
loads. RE2's ``$`` is the end of the text, as in JSON Schema's (ECMA-262) patterns.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from linter.parse.linear import LinearPattern, NotLinearError, linear

_PREFIX = "krpc-lint-re2:"
LITERAL_KEYWORDS = ("const", "enum", "default", "examples")  # their values are data, never read as schemas


def compile_linear(pattern: str) -> tuple[LinearPattern | None, str | None]:
    """(the pattern compiled by RE2 through ``parse.linear``, None), or (None, why RE2 refuses it)."""
    try:
        return linear(pattern), None
    except NotLinearError as exc:
        return None, str(exc)


def linear_matcher(pattern: str) -> Callable[[str], bool] | None:
    """``pattern`` (found anywhere in a string) run by RE2, lone surrogates and all; ``None`` when RE2 cannot
    run it (``compile_linear`` says why)."""
    compiled, _ = compile_linear(pattern)
    return None if compiled is None else _matcher(compiled)


def _matcher(compiled: LinearPattern) -> Callable[[str], bool]:
    """``pattern`` as JSON Schema means it (found anywhere in the string), answers for short strings
    remembered: the same field and type names recur in every spec, and RE2's Python wrapper costs
    microseconds a call."""
    search = compiled.search

    @lru_cache(maxsize=8192)
    def short(text: str) -> bool:
        return search(text) is not None

    def matches(text: str) -> bool:
        return short(text) if len(text) <= 256 else search(text) is not None

    return matches


def linear_patterns(schema: Any) -> tuple[Any, dict[str, Callable[[str], bool]]]:
    """The schema with each ``pattern`` turned into a format that RE2 checks, and those formats (for
    ``fastjsonschema.compile(schema, formats=...)``): same meaning, strings only, no backtracking."""
    formats: dict[str, Callable[[str], bool]] = {}

    def rewrite(node: Any) -> Any:
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: value if key in LITERAL_KEYWORDS else rewrite(value)
               for key, value in node.items() if not (key == "pattern" and isinstance(value, str))}
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            compiled, problem = compile_linear(pattern)
            if compiled is None:
                raise ValueError(f"pattern {pattern!r}: {problem}")
            name = f"{_PREFIX}{len(formats)}"
            formats[name] = _matcher(compiled)
            out["allOf"] = [*out.get("allOf", []), {"format": name}]
        return out

    return rewrite(schema), formats
