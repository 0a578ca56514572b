"""Strict JSON read within bounds: the one nesting limit (``MAX_DEPTH``) every reader of krpc-lint applies, and
integers refused by their length before any conversion, so that no file read costs a ``RecursionError`` or a
quadratic ``int()``.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from linter.errors import KrpcLintError
from linter.parse.files import read_regular
from linter.parse.scanner import brackets

MAX_DEPTH = 200  # values nested deeper are a syntax finding of a spec (both readers), else NestingError


def within_depth(value: Any) -> bool:
    """Whether no value lies deeper than MAX_DEPTH, the positional parser's limit: the two readers give
    one verdict (the C decoder's own limit is Python's recursion limit, far deeper)."""
    if type(value) is not dict and type(value) is not list:
        return True
    stack = [(value, 0)]
    while stack:
        container, depth = stack.pop()
        children = container.values() if type(container) is dict else container
        if children and depth >= MAX_DEPTH:
            return False
        stack.extend((child, depth + 1) for child in children if type(child) is dict or type(child) is list)
    return True


class NestingError(KrpcLintError, ValueError):
    """A JSON document nested deeper than ``MAX_DEPTH``; the message names the file and where."""


class NumberTooLong(KrpcLintError, ValueError):
    """An integer of more digits than are ever converted; the message names the file and the length."""


MAX_INT_DIGITS = 4_300  # Python's own conversion limit: no real value (Kafka's widest is 20 digits) comes near


def bounded_int(digits: str, source: str = "") -> int:
    """``int(digits)`` for a JSON integer, refused by its length before any conversion (converting a string of
    n digits costs n squared, and Python stops at 4,300 with advice meant for programmers)."""
    count = len(digits) - digits.startswith("-")
    if count > MAX_INT_DIGITS:
        raise NumberTooLong(f"{source}a number of {count:,} digits; at most {MAX_INT_DIGITS:,} are read")
    return int(digits)


def conversion_refusal(exc: ValueError) -> str:
    """Python's refusal to convert a digit string longer than ``MAX_INT_DIGITS`` (raised inside readers that give
    no hook before converting: tomllib, ruamel), in the words of ``bounded_int``; any other message as it is."""
    text = str(exc)
    if "integer string conversion" not in text:
        return text
    count = text.partition("value has ")[2].split(" ", 1)[0]
    return f"a number of {int(count):,} digits; at most {MAX_INT_DIGITS:,} are read" if count.isdigit() else text


def load_json(text: str, source: str = "") -> Any:
    """``json.loads`` of a strict JSON document (a baseline, a cache, a line of JSON Lines) within the one
    nesting limit, ``MAX_DEPTH``, that the JSON-with-comments reader applies to specs: a document nested
    deeper is ``NestingError`` naming ``source`` and the line and column of the first bracket too deep, never a
    ``RecursionError``. The C decoder stops by itself at Python's recursion limit (about 1,000 levels, at the
    cost of reading that far), and a value it returns is walked without recursion (``within_depth``), so the
    common case costs two passes in C and one over the containers; the bracket scan that says where runs only
    for a document refused. Other syntax errors are ``json.loads``'s ``ValueError``."""
    parse_int = functools.partial(bounded_int, source=source)
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return json.loads(text, parse_int=parse_int)  # too few brackets to nest that deep (every real file)
    try:
        value = json.loads(text, parse_int=parse_int)
        if within_depth(value):
            return value
        deepest = _first_too_deep(text)
    except RecursionError:
        deepest = _first_too_deep(text)
    except ValueError:  # a syntax error; one past the nesting limit is reported as that, as the spec reader does
        deepest = _first_too_deep(text)
        if deepest is None:
            raise
    where = ""
    if deepest is not None:
        line = f"line {text.count(chr(10), 0, deepest) + 1}, " if "\n" in text else ""
        where = f" ({line}column {deepest - text.rfind(chr(10), 0, deepest)})"
    raise NestingError(f"{source}JSON nested deeper than {MAX_DEPTH} levels{where}")


def _first_too_deep(text: str) -> int | None:
    """The offset of the first bracket past ``MAX_DEPTH`` (``None`` when none is), strings skipped."""
    return next((offset for offset, depth in brackets(text, 0) if depth > MAX_DEPTH + 1), None)



def read_listing(path: str | os.PathLike[str], schema: str, key: str, what: str, limit: int) -> list[Any]:
    """The list under ``key`` of a JSON file that says ``"schema": schema`` (a baseline): ``ValueError`` naming the
    file and ``what`` it is not, for a file that cannot be read, is no such document or is over ``limit`` bytes."""
    name = os.fspath(path)
    try:
        document = load_json(read_regular(path, limit).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name}: not a {what}: {exc}") from None
    entries = document.get(key) if isinstance(document, dict) else None
    if not isinstance(entries, list) or document.get("schema") != schema:
        raise ValueError(f'{name}: not a {what} (a JSON object with "schema": "{schema}" and "{key}": [...])')
    return entries
