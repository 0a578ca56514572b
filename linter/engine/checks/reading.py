"""Reading: the file as JSON text, before any spec is read from it (rules KL001-KL005)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.registry import check, kinds
from linter.engine.context import FileContext, Hit


@check("read-problem", options_schema=kinds("syntax", "trailing", "empty", "encoding", "io"))
def read_problem(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """The file could not be read as JSON; ``kinds`` selects syntax, trailing, empty, encoding or io."""
    problem = ctx.document.problem
    if problem is not None and problem.kind in options.get("kinds", ()):
        yield Hit((), problem.message, offset=problem.offset)


@check("duplicate-key")
def duplicate_key(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A key repeated in one object; the last value silently wins."""
    for path, offset, first in ctx.document.duplicates:
        line, _ = ctx.document.line_col(first)
        yield Hit(path, f'key "{path[-1]}" repeats the one on line {line}; only this last value is used', offset=offset)
