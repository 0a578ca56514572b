"""What several check families share: the message when Kafka would check it, how a field is named in a
finding, and the messages of a directory by apiKey."""

from __future__ import annotations

from collections import defaultdict

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
