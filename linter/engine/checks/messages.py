"""Messages: what a message's type allows and how it is named (rules KL701, KL705, KL751, KL752)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import versioned
from linter.engine.checks.registry import RPC_TYPE, check, options
from linter.engine.context import DirectoryContext, FileContext, Hit


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


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # one lookbehind and one lookahead: linear


def snake_case(name: str) -> str:
    """A message name as snake_case file names spell it (Redpanda's copies): an underscore before each capital
    that follows a lowercase letter or a digit, then lowercased.

    >>> snake_case("FetchRequest"), snake_case("LeaderAndIsrRequest"), snake_case("Dummy2Record")
    ('fetch_request', 'leader_and_isr_request', 'dummy2_record')
    """
    return _CAMEL_BOUNDARY.sub("_", name).lower()


_EXPECTED = {"kafka": lambda name: name, "snake_case": snake_case}


@check("file-name-matches", scope="directory")
def file_name_matches(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Each spec file is named after its message, by one convention: Kafka's (``FetchRequest.json``) or
    snake_case (``fetch_request.json``, as vendor copies such as Redpanda's name them). The config's
    ``file-naming`` (top level or per path) picks it; by default it is inferred per directory: the convention
    every file that follows one follows there, Kafka's when the files mix them."""
    named: list[tuple[FileContext, str, str, bool, bool]] = []
    kafka_only = snake_only = False
    for ctx in directory.files:
        message = ctx.message
        if message is None or not message.name or ctx.file_naming == "any":
            continue
        base = os.path.basename(ctx.path)
        stem = os.path.splitext(base)[0]
        # a snake_case name is at least as long as the message's: a longer name (a hostile one) matches neither
        kafka = stem == message.name
        snake = len(message.name) <= len(stem) and stem == snake_case(message.name)
        kafka_only |= kafka and not snake
        snake_only |= snake and not kafka
        named.append((ctx, message.name, base, kafka, snake))
    inferred = "snake_case" if snake_only and not kafka_only else "kafka"
    mixed = kafka_only and snake_only
    for ctx, name, base, kafka, snake in named:
        naming = inferred if ctx.file_naming == "infer" else ctx.file_naming
        if (kafka, snake)[naming == "snake_case"]:
            continue
        if naming == "kafka" and ctx.file_naming == "infer":
            why = " (files here mix Kafka's and snake_case names)" if mixed and snake else ""
        else:
            why = f" ({'this directory' if ctx.file_naming == 'infer' else 'file-naming'}: {naming})"
        yield Hit(("name",), f"message {name} is in {base}; expected {_EXPECTED[naming](name)}.json{why}",
                  file=ctx.path)


@check("name-suffix", options_schema=options(type=RPC_TYPE))
def name_suffix(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Requests end in Request and responses in Response (``type`` picks which; request by default)."""
    message = ctx.message
    wanted = options.get("type", "request")
    suffix = wanted.capitalize()
    if message is not None and message.type == wanted and message.name and not message.name.endswith(suffix):
        yield Hit(("name",), f"{wanted} name {message.name} does not end with {suffix}")
