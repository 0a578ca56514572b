"""Rule messages: the ``{placeholders}`` a rule's message may hold, and filling them. Shared by the rule
loader (which validates templates) and the declarative checks (which fill them), so neither imports the
other; ``RuleError`` lives here for the same reason."""

from __future__ import annotations

import string
from typing import Any

from linter.errors import KrpcLintError


class RuleError(KrpcLintError, ValueError):
    """A rule file that cannot be loaded; the message names the file and the problem."""


def template_fields(template: str, source: str = "") -> list[str]:
    """The ``{placeholders}`` of a message template; anything but a plain name is refused."""
    names = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise RuleError(f"{source}: bad message template: {exc}") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise RuleError(f"{source}: message placeholders are plain names like {{name}}, not {{{name}}}")
        names.append(name)
    return names


def render(template: str, facts: dict[str, Any]) -> str:
    """Fill a template with plain values only: no attribute access, no format specs."""
    out = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is not None:
            out.append(str(facts.get(name, "")))
    return "".join(out)
