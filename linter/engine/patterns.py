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

_PREFIX = "krpc-lint-re2:"
LITERAL_KEYWORDS = ("const", "enum", "default", "examples")  # their values are data, never read as schemas


@lru_cache(maxsize=512)
def compile_linear(pattern: str) -> tuple[Any, str | None]:
    """(compiled RE2 pattern, None), or (None, why RE2 refuses it)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the reason goes into our message, not to stderr
    try:
        return re2.compile(pattern, options), None
    except re2.error as exc:
        return None, str(exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc)
    except UnicodeEncodeError:
        return None, "it holds a lone surrogate, which is no character RE2 can match"


def linear_matcher(pattern: str) -> Callable[[str], bool] | None:
    """``pattern`` (found anywhere in a string) run by RE2, lone surrogates and all; ``None`` when RE2 cannot
    run it (``compile_linear`` says why)."""
    compiled, _ = compile_linear(pattern)
    return None if compiled is None else _matcher(compiled)


def _matcher(compiled: Any) -> Callable[[str], bool]:
    """``pattern`` as JSON Schema means it (found anywhere in the string), answers for short strings
    remembered: the same field and type names recur in every spec, and RE2's Python wrapper costs
    microseconds a call."""
    def search(text: str) -> bool:
        try:
            return compiled.search(text) is not None
        except UnicodeEncodeError:  # RE2 matches UTF-8: a lone surrogate (a JSON "\ud800") is no letter of it
            return compiled.search(_replace_surrogates(text)) is not None

    @lru_cache(maxsize=8192)
    def short(text: str) -> bool:
        return search(text)

    def matches(text: str) -> bool:
        return short(text) if len(text) <= 256 else search(text)

    return matches


def _replace_surrogates(text: str) -> str:
    """Each lone surrogate as U+FFFD, the replacement character, which a pattern can match as one."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


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
