"""Fixes: the text edits a fixable rule's findings carry, and applying them (``krpc-lint lint --fix``/``--diff``).

An edit replaces the characters between two offsets of the file; everything else (comments, layout, line ends)
is kept byte for byte. Checks build edits from the positions the parser recorded (``value_edit``, ``key_edit``,
``member_removal``); ``planned_edits`` groups a report's edits by file and ``apply_edits`` applies the ones that
do not overlap, in one pass, after checking that the text they replace is still there.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from collections.abc import Iterable

from linter.engine.findings import Edit, Finding
from linter.parse.document import SpecDocument
from linter.parse.files import replace_file
from linter.parse.jsonc import JsonPath
from linter.parse.scanner import tokens, value_end

__all__ = ["apply_edits", "fixed_text", "git_quoted", "key_edit", "member_removal", "planned_edits", "unified_diff",
           "value_edit", "write_atomically"]

_KEY_HEAD = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"[ \t\r\n]*:[ \t\r\n]*')  # "key" : (blanks only)
_BLANK = re.compile(r"[ \t\r\n]*")


def _value_span(document: SpecDocument, path: JsonPath) -> tuple[int, int, int] | None:
    """Where the key of the JSON value at ``path`` starts (-1 in an array), and where the value starts and ends;
    ``None`` when the path is not in the file, or the file repeats a key (which one a fix would edit is not
    clear)."""
    if document.first_duplicates(0)[1]:  # counted, not listed: a path per repeated key costs its depth
        return None
    found = document.positions.exact(tuple(path))
    if found is None:
        return None
    key, start = found
    return key, start, value_end(document.text, start)


def _has_comment(text: str) -> bool:
    """Whether ``text`` (a piece of the file) holds a comment: a fix never deletes one."""
    return any(kind != "string" for kind, _, _ in tokens(text))


def value_edit(document: SpecDocument, path: JsonPath, new: str) -> tuple[Edit, ...]:
    """The edit that replaces the value at ``path`` by ``new`` (JSON text: a string keeps its quotes); none
    when the value holds a comment."""
    span = _value_span(document, path)
    if span is None:
        return ()
    _, start, end = span
    old = document.text[start:end]
    return () if old == new or _has_comment(old) else (Edit(start, end, old, new),)


def key_edit(document: SpecDocument, path: JsonPath, new_key: str) -> tuple[Edit, ...]:
    """The edit that renames the object member at ``path`` to ``new_key``, its value untouched."""
    span = _value_span(document, path)
    if span is None or span[0] < 0:
        return ()
    key = span[0]
    end = value_end(document.text, key)
    old, new = document.text[key:end], json.dumps(new_key)
    return () if old == new else (Edit(key, end, old, new),)


def member_removal(document: SpecDocument, path: JsonPath) -> tuple[Edit, ...]:
    """The edit that removes the object member at ``path`` with exactly one adjacent comma: the one before it
    (and the blanks between), else the one after it (and the blanks that follow), else none (the only
    member). No edit when a comment lies in what would be removed: comments are never deleted."""
    span = _value_span(document, path)
    if span is None or span[0] < 0:
        return ()
    key, value_start, value_stop = span
    text = document.text
    if _KEY_HEAD.fullmatch(text, key, value_start) is None or _has_comment(text[value_start:value_stop]):
        return ()
    before = key
    while before > 0 and text[before - 1] in " \t\r\n":
        before -= 1
    after = _BLANK.match(text, value_stop)
    after_end = after.end() if after else value_stop
    if before > 0 and text[before - 1] == ",":
        start, end = before - 1, value_stop
    elif text.startswith(",", after_end):
        follow = _BLANK.match(text, after_end + 1)
        start, end = key, follow.end() if follow else after_end + 1
    elif before > 0 and text[before - 1] == "{" and text.startswith("}", after_end):
        start, end = key, value_stop  # the only member
    else:
        return ()  # a comment next to the member: leave it to the user
    return (Edit(start, end, text[start:end], ""),)


def planned_edits(findings: Iterable[Finding], files: Iterable[str]) -> dict[str, list[Edit]]:
    """The edits of ``findings`` by file, for the files in ``files`` only (those the user named or walked)."""
    allowed = set(files)
    out: dict[str, list[Edit]] = {}
    for finding in findings:
        if finding.fix and finding.path in allowed:
            out.setdefault(finding.path, []).extend(finding.fix)
    return out


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, int]:
    """``text`` with the edits that do not overlap an earlier one (by position) and still find their text
    applied, and how many were applied."""
    parts: list[str] = []
    cursor, applied = 0, 0
    for edit in sorted(set(edits)):
        if edit.start < cursor or text[edit.start:edit.end] != edit.old:
            continue  # overlaps an edit already taken (the next run fixes it), or the file changed
        parts += [text[cursor:edit.start], edit.new]
        cursor, applied = edit.end, applied + 1
    parts.append(text[cursor:])
    return "".join(parts), applied


def fixed_text(file: str, edits: Iterable[Edit]) -> tuple[str, str, int]:
    """The text of ``file`` (UTF-8; a BOM kept as the character it is), that text with ``edits`` applied and how
    many were applied. Offsets are the parser's, which reads a BOM as one blank: the same length."""
    with open(file, "rb") as handle:
        text = handle.read().decode("utf-8")
    new, applied = apply_edits(text, edits)
    return text, new, applied


def unified_diff(file: str, old: str, new: str) -> str:
    """What ``--diff`` prints for one file: lines are what git calls lines (ended by LF only: a U+2028 or a form
    feed inside a spec's string ends none), paths quoted as git quotes them (``git_quoted``). The spec's own
    lines are as they are: the command line shows them through ``cli.lint_fix.printable_diff``."""
    shown = file.lstrip("/")  # an absolute path reads a/tmp/x.json, as git diff --no-index writes it
    lines = difflib.unified_diff(_lines(old), _lines(new), fromfile=git_quoted(f"a/{shown}"),
                                 tofile=git_quoted(f"b/{shown}"))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


_C_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
              0x22: '\\"', 0x5C: "\\\\"}


def git_quoted(path: str) -> str:
    """A diff header's path as git writes it (``core.quotePath``): as it is when it is printable ASCII without
    ``"`` or a backslash, else in double quotes with C escapes and every other byte in octal, which ``git apply``
    reads back; so a file name never puts a control character, a line break or a bidi character in a diff. A
    lone surrogate is the byte it stands for (``\\udcff``: 0xff), or the three bytes UTF-8 would give it."""
    if path.isascii() and path.isprintable() and '"' not in path and "\\" not in path:
        return path
    try:
        data = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = path.encode("utf-8", "surrogatepass")
    shown = (_C_ESCAPES.get(byte) or (chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}") for byte in data)
    return '"' + "".join(shown) + '"'


def write_atomically(file: str, text: str) -> None:
    """Replace the regular file ``file`` by ``text`` with ``linter.parse.files.replace_file`` (one step, its
    mode kept). Raises ``OSError`` for anything but a regular file: a link or a device is never written."""
    if not stat.S_ISREG(os.stat(file, follow_symlinks=False).st_mode):
        raise OSError(f"{file}: not a regular file; not fixed")
    replace_file(file, text)
