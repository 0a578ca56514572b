"""Messages: what a message's type allows and how it is named (rules KL701, KL705, KL751, KL752)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import versioned
from linter.engine.checks.registry import RPC_TYPE, check, options
from linter.engine.context import FileContext, Hit


@check("request-only-properties")
def request_only_properties(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """listeners and latestVersionUnstable describe how a broker serves a request."""
    found = versioned(ctx)
    if found is None or found[0].type == "request":
        return
    message = found[0]
    if message.listeners:
        yield Hit(("listeners",), f"listeners are only valid on requests, not on a {message.type}")
    if message.latest_version_unstable:
        yield Hit(("latestVersionUnstable",), f"latestVersionUnstable is only valid on requests, not on a {message.type}")


@check("file-name-matches")
def file_name_matches(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Kafka names each spec file after its message; tools find specs by that name."""
    message = ctx.message
    base = os.path.basename(ctx.path)
    if message is not None and message.name and os.path.splitext(base)[0] != message.name:
        yield Hit(("name",), f"message {message.name} is in {base}; expected {message.name}.json")


@check("name-suffix", options_schema=options(type=RPC_TYPE))
def name_suffix(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Requests end in Request and responses in Response (``type`` picks which; request by default)."""
    message = ctx.message
    wanted = options.get("type", "request")
    suffix = wanted.capitalize()
    if message is not None and message.type == wanted and message.name and not message.name.endswith(suffix):
        yield Hit(("name",), f"{wanted} name {message.name} does not end with {suffix}")
