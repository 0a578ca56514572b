"""The table of wire-breaking changes in report.html: its columns, and the cells that let long paths, API
names and version lists wrap in narrow columns, with each witness folded into one line."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from linter.compat.witness_excerpt import excerpt_length
from linter.report.html_parts import Row, code, compact_versions, escape, when
from linter.vocabulary import plural


def location(row: Row) -> str:
    path = row.get("new_path") or row.get("old_path") or row.get("path") or ""
    return f"{path}:{row['line']}" if row.get("line") is not None else path


def short_id(object_id: str | None) -> str:
    """A git id cut to 10 hex digits: unique enough in a table, short enough for a column."""
    return (object_id or "")[:10]


def breakable(path: str) -> str:
    """A path as HTML that may wrap after each slash (and, in a ``path`` cell, anywhere in a long name:
    breaking only between words would cost a path of Kafka's a fifth line)."""
    return "/<wbr>".join(escape(part) for part in path.split("/"))


_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def camel_breakable(name: Any) -> str:
    """``ConsumerGroupMemberMetadataValue`` as HTML that may wrap before each word (``...Member<wbr>Metadata...``):
    a long API name wraps at a word in a narrow column, not at whatever letter reaches the edge."""
    return "<wbr>".join(escape(word) for word in _WORD_START.split("" if name is None else str(name)))


def _versions(row: Row) -> str:
    """A change's versions compacted, breakable after each comma: a long list wraps in its column."""
    return ",<wbr>".join(escape(part) for part in compact_versions(row.get("versions")).split(","))


def _bare_message(row: Row) -> str:
    """The message without its ``API (vN):`` prefix: the API and Versions columns say it."""
    message, name = str(row.get("message") or ""), row.get("message_name")
    return _without_prefix(message, str(name)) if name else message


def _without_prefix(message: str, name: str) -> str:
    """``message`` without a leading ``NAME: `` or ``NAME (v...): `` (string operations: linear in the message)."""
    if not message.startswith(name):
        return message
    rest = message[len(name):]
    if rest.startswith(" (v"):
        close = rest.find(")")
        if close >= 0 and rest.startswith(": ", close + 1):
            return rest[close + 3:]
    return rest[2:] if rest.startswith(": ") else message


def _change(row: Row) -> str:
    """The rule and the bare message in at most three lines; the whole message is the tooltip and is in the
    witness's details, so clamping a long one (a reordering lists every field twice) hides nothing."""
    return (f'<div class="clamp" title="{escape(row.get("message"))}">'
            f"{code(row.get('rule'))} {escape(_bare_message(row))}</div>")


def _byte_count(data: str) -> str:
    return plural(excerpt_length(data), "byte", grouped=True)  # the message's size, also when its hex is an excerpt


def _witness(row: Row) -> str:
    """The proof, collapsed to one line (version, writer, size); open: the bytes, what the other revision
    does with them, and the change they prove, so a reader need not run ``krpc-lint compat``."""
    data = row.get("witness_hex")
    if not data:
        return '<span class="note">none</span>'
    version, writer = row.get("witness_version"), row.get("witness_writer") or "?"
    parts = [f'<p><span class="label">v{escape(version)} bytes written by the {escape(writer)} revision '
             f'({_byte_count(data)}, hex):</span><br><code class="hex">{escape(data)}</code></p>']
    if row.get("witness_reading"):
        parts.append(f"<p>{escape(row['witness_reading'])}</p>")
    versions = compact_versions(row.get("versions"))
    parts.append(f'<p><span class="label">The change:</span> {code(row.get("rule"))} {escape(row.get("name"))}'
                 f"{f', versions {escape(versions)}' if versions else ''}: {escape(_bare_message(row))}</p>")
    summary = f"v{escape(version)}, written by {escape(writer)}: {_byte_count(data)}"
    return f'<details class="witness"><summary>{summary}</summary>{"".join(parts)}</details>'


@dataclass(frozen=True)
class WireColumn:
    """A column of the wire-breaking table: its header, cell class, width (CSS; "" takes the rest) and cell."""

    header: str
    kind: str
    width: str
    cell: Callable[[Row], str]


# Widths in ``ch`` of the table's font, padding included; the change takes what is left (about 25ch on a
# 1240 px page): every collapsed row stays within four lines and no cell can widen the table.
WIRE_COLUMNS: tuple[WireColumn, ...] = (
    WireColumn("Time (UTC)", "", "12ch", lambda row: escape(when(row.get("time")))),
    WireColumn("Commit", "nowrap", "11ch", lambda row: code(short_id(row.get("new_commit")))),
    WireColumn("Path:line", "path", "26ch", lambda row: breakable(location(row))),
    WireColumn("API", "name", "24ch", lambda row: camel_breakable(row.get("message_name"))),
    WireColumn("Versions", "", "8ch", _versions),
    WireColumn("Released in", "", "9ch",
               lambda row: escape(row.get("released_in") if row.get("released") else "no")),
    WireColumn("Change", "", "", _change),
    WireColumn("Witness", "", "27ch", _witness),
)

