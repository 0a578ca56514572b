"""The linear scanner of JSON-with-comments text: where its strings and comments are, where a value ends, and
the text with its comments blanked (the fast path's input).

Every pattern here runs over untrusted text, so none may backtrack: a run of ordinary characters is one
possessive character-class loop (no state kept per character: a 15 MB string costs no memory), and a comment's
end is found with str.find, never by a pattern that could retry from every "/*".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_SPECIAL = re.compile(r'["/]')
_STRING_BODY = re.compile(r'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+')  # up to the closing quote, or the line's end
_EOL = re.compile(r"[\r\n]")


def match_end(match: re.Match[str] | None) -> int:
    """Where a pattern that always matches (a possessive loop, if only over nothing) stopped."""
    assert match is not None
    return match.end()


def tokens(text: str) -> Iterator[tuple[str, int, int]]:
    """Each string and comment of a JSON-with-comments text, in order, as ``(kind, start, end)``: kind is
    ``string``, ``comment``, ``open-string`` (no closing quote on its line) or ``open-comment`` (a ``/*``
    never closed, which ends the scan). Linear in the text: every character is looked at a bounded
    number of times, whatever the text holds."""
    pos, size, find = 0, len(text), text.find
    while True:
        special = _SPECIAL.search(text, pos)
        if special is None:
            return
        start = special.start()
        if text[start] == '"':
            body = _STRING_BODY.match(text, start + 1)
            assert body is not None  # a possessive loop matches, if only the empty string
            end = body.end()
            if end < size and text[end] == '"':
                yield "string", start, end + 1
                pos = end + 1
            else:
                yield "open-string", start, end
                pos = end
        elif text.startswith("//", start):
            line_end = _EOL.search(text, start)
            pos = size if line_end is None else line_end.start()
            yield "comment", start, pos
        elif text.startswith("/*", start):
            close = find("*/", start + 2)
            if close < 0:
                yield "open-comment", start, size
                return
            pos = close + 2
            yield "comment", start, pos
        else:
            pos = start + 1


_STRUCTURAL = re.compile(r'[\[\]{}"/]')
_SCALAR_END = re.compile(r'[^,\]}\s/]*+')


def value_end(text: str, start: int) -> int:
    """The offset just past the JSON value that starts at ``start`` of a well-formed JSON-with-comments text
    (as the positional parser recorded it): where a fix inserts after it or cuts it out. Linear: brackets are
    counted and strings and comments skipped, each character looked at a bounded number of times."""
    if text.startswith('"', start):
        return match_end(_STRING_BODY.match(text, start + 1)) + 1
    if not text.startswith(("{", "["), start):
        return match_end(_SCALAR_END.match(text, start))
    return next((offset + 1 for offset, depth in brackets(text, start) if depth == 0), len(text))


def brackets(text: str, pos: int) -> Iterator[tuple[int, int]]:
    """Each bracket from ``pos`` on, as (its offset, the depth after it: an opening bracket adds one, a closing
    one takes one away), strings and comments skipped. Linear: each character is looked at a bounded number
    of times."""
    depth = 0
    while True:
        found = _STRUCTURAL.search(text, pos)
        if found is None:
            return
        ch, pos = found.group(), found.start()
        if ch == '"':
            pos = match_end(_STRING_BODY.match(text, pos + 1)) + 1
        elif ch == "/":
            if text.startswith("//", pos):
                line_end = _EOL.search(text, pos)
                pos = len(text) if line_end is None else line_end.start()
            else:
                close = text.find("*/", pos + 2)
                pos = len(text) if close < 0 else close + 2
        else:
            depth += 1 if ch in "[{" else -1
            yield pos, depth
            pos += 1


def strip_comments(text: str) -> str | None:
    """The text with each comment blanked to a space; ``None`` when a string or comment is left open (the
    positional parser then explains it). Strings cannot span lines in valid JSON, so without block
    comments only the lines holding a '/' are scanned; the usual one, a comment owning the rest of its
    line, is cut without a scan. (Public: the benches' floor, ``json.loads`` of the blanked text, uses it too.)"""
    if "/" not in text:
        return text
    if "/*" in text:
        return _blank_comments(text)
    out = []
    find, start = text.find, 0
    slash = find("/")
    while slash >= 0:
        line_start = text.rfind("\n", 0, slash) + 1
        line_end = find("\n", slash)
        if line_end < 0:
            line_end = len(text)
        out.append(text[start:line_start])
        before = text[line_start:slash]
        if '"' not in before and text.startswith("//", slash):
            out.append(before)
        else:
            line = _blank_comments(text[line_start:line_end])
            if line is None:
                return None
            out.append(line)
        start = line_end
        slash = find("/", line_end)
    out.append(text[start:])
    return "".join(out)


def _blank_comments(text: str) -> str | None:
    out, done = [], 0
    for kind, start, end in tokens(text):
        if kind == "comment":
            out.append(text[done:start])
            out.append(" ")
            done = end
        elif kind != "string":
            return None
    out.append(text[done:])
    return "".join(out)

