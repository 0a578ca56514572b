"""About the run itself: the inline suppressions, checked after the other rules used them (rules KL901,
KL902)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.registry import check
from linter.engine.context import FileContext, Hit


@check("unused-suppression", scope="meta")
def unused_suppression(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A suppression comment that silenced nothing is stale and hides future problems.

    One that names a compat rule (KL1xxx) is left alone: lint never runs those, ``krpc-lint compat`` uses it.
    """
    for item in ctx.suppressions:
        if item.reason and not item.used and not ctx.compat_rules.intersection(item.rules):
            yield Hit((), f"suppression of {', '.join(item.rules)} matches no finding", position=(item.line, item.col))


@check("suppression-reason", scope="meta")
def suppression_reason(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A suppression must say why, so reviewers can judge it; without a reason it suppresses nothing."""
    for item in ctx.suppressions:
        if not item.reason:
            yield Hit((), f"suppression of {', '.join(item.rules)} gives no reason", position=(item.line, item.col))
