"""What several check families share: the message when Kafka would check it, how a field is named in a
finding, and the messages of a directory by apiKey, and its requests with their responses."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import NamedTuple

from linter.engine.context import DirectoryContext, FileContext
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.versions import Versions


def versioned(ctx: FileContext) -> tuple[MessageSpec, Versions] | None:
    """The message and its valid versions, if it has at least one (Kafka skips most checks otherwise)."""
    message = ctx.message
    versions = message.versions if message is not None else None
    if message is None or versions is None or versions.empty:
        return None
    return message, versions


def label(spec: FieldSpec) -> str:
    """A field's name in a finding."""
    return spec.name if spec.name is not None else "(unnamed)"


def by_api_key(directory: DirectoryContext, kind: str) -> dict[int, list[tuple[FileContext, MessageSpec]]]:
    """The messages of one type (request, response, coordinator-key...) in a directory, by apiKey, in file
    name order."""
    table: dict[int, list[tuple[FileContext, MessageSpec]]] = defaultdict(list)
    for ctx, message in directory.messages():
        if message.type == kind and message.api_key is not None:
            table[message.api_key].append((ctx, message))
    return table


class Pair(NamedTuple):
    """A request and its response (the first of each for their apiKey, as Kafka's generator pairs them)."""

    api_key: int
    request_ctx: FileContext
    request: MessageSpec
    response_ctx: FileContext
    response: MessageSpec


def request_response_pairs(directory: DirectoryContext) -> Iterator[Pair]:
    """Each apiKey of the directory that has both a request and a response (a missing partner is KL703/KL704's)."""
    responses = by_api_key(directory, "response")
    for key, owners in by_api_key(directory, "request").items():
        if key in responses:
            (request_ctx, request), (response_ctx, response) = owners[0], responses[key][0]
            yield Pair(key, request_ctx, request, response_ctx, response)
