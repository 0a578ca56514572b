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


MAX_DUPLICATE_HITS = 100  # findings of repeated keys per file; the rest are counted in one more finding


@check("duplicate-key")
def duplicate_key(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A key repeated in one object; the last value silently wins. A file repeating keys more than
    ``MAX_DUPLICATE_HITS`` times gets that many findings and one counting the rest, so that the report
    of a hostile file (300,000 repeats in 2.4 MB) costs what a few hundred findings cost."""
    duplicates, count = ctx.document.first_duplicates(MAX_DUPLICATE_HITS + 1)
    for path, offset, first in duplicates[:MAX_DUPLICATE_HITS]:
        line, _ = ctx.document.line_col(first)
        yield Hit(path, f'key "{path[-1]}" repeats the one on line {line}; only this last value is used', offset=offset)
    if count > MAX_DUPLICATE_HITS:
        path, offset, _ = duplicates[MAX_DUPLICATE_HITS]
        rest = count - MAX_DUPLICATE_HITS
        yield Hit(path, f"{rest} more repeated keys from here on (not listed one by one, after the first "
                        f"{MAX_DUPLICATE_HITS}); only the last value of each is used", offset=offset)
