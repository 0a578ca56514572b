"""Text that can always be written, and that cannot take over what reads it.

What krpc-lint prints goes to a terminal, to a CI log (GitHub's runner reads a line starting with ``::``, after
leading blanks, or holding ``##[`` anywhere, as a workflow command) and into Markdown job summaries. Names, paths
and the values messages quote come from specs and file names a pull request may have written, so every piece of
text krpc-lint did not write goes through one of these before it is printed:

- :func:`printable` (a name, a path, a message, a witness, a hint in a line of text): every C0 control
  (newline, carriage return, tab, ESC, NUL...), DEL, every C1 control (U+0080-U+009F, NEL), U+2028/U+2029 and the
  bidirectional embeddings, overrides, isolates and marks of "Trojan Source" (U+202A-U+202E, U+2066-U+2069,
  U+200E, U+200F, U+061C) become visible escapes (``\\n``, ``\\x1b``, ``\\u202e``), a lone surrogate
  (``"Foo\\ud800"`` in a spec) is ``\\ud800`` and an undecodable file-name byte (``os.fsdecode`` leaves
  ``\\udcff``) is ``\\xff``; GitHub's legacy command marker ``##[`` becomes ``##\\x5b``. The result is one
  line that encodes as UTF-8. Clean text (all of Kafka's) is returned as it is after one character-class scan.
- :func:`writable` (a whole document krpc-lint laid out, as ``cli.common.emit`` writes it): only lone surrogates
  are escaped, so the layout's own newlines stay.
- :func:`json_text` (JSON and SARIF): JSON escaping, plus ``\\uXXXX`` for the characters above that JSON may
  carry raw (DEL, C1, U+2028, bidi) and for the ``[`` of ``##[``, so the strings still read back as the exact
  original text.
- :func:`markdown_text` (a Markdown table cell or list item): :func:`printable`, then a backslash before every
  character Markdown or HTML gives a meaning where the input can stand (``|``, backticks, ``<``, ``&``, ``*``,
  ``_``, ``~``, ``\\``, and the ``]`` of ``](``); :func:`markdown_code` a code span that no backtick or ``|`` in the
  text can end.
- :func:`guard_lines` (the last step of every text renderer): a line that would still start with ``::`` (after
  the blanks the runner skips) gets its first ``:`` shown as ``\\x3a``; a relative path that starts a line is
  shown as ``./::x.json`` by :func:`lead_path` before that.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from collections.abc import Callable
from typing import Any

# Every character printable() escapes, as ranges; one character class of them (and one of what JSON leaves raw) is
# matched one step per character (no alternation, no repetition): the linear form tests/project/test_linear_patterns.py
# accepts.
_CONTROLS = ((0x00, 0x1F), (0x7F, 0x9F), (0x061C, 0x061C), (0x200E, 0x200F), (0x2028, 0x202E), (0x2066, 0x2069))
_UNSAFE_RANGES = (*_CONTROLS, (0xD800, 0xDFFF))  # lone surrogates
_JSON_RANGES = _CONTROLS[1:]  # json.dumps escapes C0 itself


def _class(ranges: tuple[tuple[int, int], ...]) -> re.Pattern[str]:
    return re.compile("[" + "".join(f"\\u{low:04x}-\\u{high:04x}" for low, high in ranges) + "]")


_UNSAFE = _class(_UNSAFE_RANGES)
_JSON_UNSAFE = _class(_JSON_RANGES)
# Markdown's and HTML's active characters (the backslash first: escapes are themselves escaped).
_MARKDOWN_CHARS = "\\`*_<&|~"  # and "](", the only way brackets act where the input stands (see markdown_text)
_MARKDOWN = re.compile("[" + re.escape(_MARKDOWN_CHARS) + "]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
LEGACY_COMMAND = "##["  # GitHub's runner reads it anywhere in a line (ActionCommand.TryParse)
COMMAND = "::"  # ... and this at the start of a line, after blanks (ActionCommand.TryParseV2)


def _escape_surrogates(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    return "".join(_shown(c) for c in error.object[error.start:error.end]), error.end


def _escape_surrogates_in_json(error: UnicodeError) -> tuple[str, int]:
    shown, end = _escape_surrogates(error)
    return shown.replace("\\", "\\\\"), end


codecs.register_error("krpc-lint-escape", _escape_surrogates)
codecs.register_error("krpc-lint-json-escape", _escape_surrogates_in_json)


def _shown(char: str) -> str:
    """One unsafe character as its visible escape."""
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for an undecodable byte: the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_CHUNK = 1 << 16  # a long text is escaped in pieces of this many characters
_FEW = 16  # distinct characters to escape in a chunk, beyond which one pass with a lookup beats str.replace


def _substituted(pattern: re.Pattern[str], escape: Callable[[str], str], text: str) -> str:
    """Each character of ``text`` that ``pattern`` (one character class) matches replaced by ``escape(char)``, in
    chunks: memory of the result plus one chunk's matches, never one small string per match of the whole text
    (a 14 MB name of 1.7 million newlines), and C speed when a chunk holds few distinct characters to escape."""
    pieces = []
    for start in range(0, len(text), _CHUNK):
        chunk = text[start:start + _CHUNK]
        found = set(pattern.findall(chunk))
        if len(found) <= _FEW:
            for char in sorted(found, key="\\".__ne__):  # a backslash first: the other escapes insert some
                chunk = chunk.replace(char, escape(char))
        else:
            chunk = pattern.sub(lambda match: escape(match[0]), chunk)
        pieces.append(chunk)
    return "".join(pieces)


# Each escape worked out once per character met (a table of every character of the ranges cost 1 ms at every
# start of the command line).
_printable_escape = functools.cache(_shown)


@functools.cache
def _json_escape(char: str) -> str:
    return f"\\u{ord(char):04x}"


def _markdown_escape(char: str) -> str:
    return "\\" + char


def printable(text: str) -> str:
    """``text`` as one line that shows what it holds and cannot act: controls, line breaks, bidi characters and
    lone surrogates as visible escapes, ``##[`` as ``##\\x5b``. Text without any is returned as it is."""
    if _UNSAFE.search(text) is not None:
        text = _substituted(_UNSAFE, _printable_escape, text)
    if LEGACY_COMMAND in text:
        text = text.replace(LEGACY_COMMAND, "##\\x5b")
    return text


def writable(text: str) -> str:
    """A whole document krpc-lint laid out, with every lone surrogate escaped so that it encodes as UTF-8; its
    newlines (the layout's) stay. The pieces inside it were made :func:`printable` by their renderer."""
    return _escaped(text, "krpc-lint-escape")


def json_text(data: Any) -> str:
    """``data`` as indented JSON (non-ASCII kept), its lone surrogates escaped inside their strings, and the
    controls, bidi characters and ``##[`` that JSON may carry raw written as ``\\uXXXX`` escapes."""
    return json_safe(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def json_safe(text: str) -> str:
    """JSON text (from ``json.dumps``) with what it may carry raw escaped: lone surrogates as the text
    ``\\ud800``, DEL, C1, U+2028/U+2029 and bidi characters as ``\\uXXXX``, the ``[`` of ``##[`` as ``\\u005b``.
    Outside strings JSON holds none of them, so the document parses to the same values."""
    text = _escaped(text, "krpc-lint-json-escape")
    if _JSON_UNSAFE.search(text) is not None:
        text = _substituted(_JSON_UNSAFE, _json_escape, text)
    return text.replace(LEGACY_COMMAND, "##\\u005b") if LEGACY_COMMAND in text else text


def markdown_text(text: str) -> str:
    """``text`` as inert Markdown inline text, for a table cell, a heading or a list item: :func:`printable` (one
    line), then a backslash before each of ``\\ ` * _ < & | ~`` (CommonMark shows the character itself; in a
    GitHub table ``\\|`` is a pipe inside the cell) and before the ``]`` of ``](``.

    Brackets act only as an inline link or image, ``[text](url)``: the other links need a reference definition,
    which only a line's start can hold, and the input never starts a line. So ``Topics[].Name`` and
    ``['broker']`` stay as they are; ``[x](https://evil)`` is ``[x\\](https://evil)``, text. ``>`` quotes only at
    a line's start and opens no tag once ``<`` is escaped."""
    text = printable(text)
    if _MARKDOWN.search(text) is not None:
        text = _substituted(_MARKDOWN, _markdown_escape, text)
    return text.replace("](", "\\](") if "](" in text else text


def markdown_code(text: str) -> str:
    """``text`` as a Markdown code span that shows it exactly (after :func:`printable`), in a table cell too: the
    fence is longer than any run of backticks inside, and ``|`` is ``\\|`` (GitHub unescapes it in code)."""
    text = printable(text).replace("|", "\\|")
    fence = "`" * (longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def longest_run(text: str, char: str) -> int:
    """The most times ``char`` follows itself in ``text`` (a code fence must be longer than any backtick run)."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == char else 0
        longest = max(longest, run)
    return longest


def lead_path(path: str) -> str:
    """A path :func:`printable`, and shown as ``./path`` when it would start a line with ``::`` (the same file)."""
    shown = printable(path)
    return f"./{shown}" if _leading_command(shown) else shown


def guard_lines(text: str) -> str:
    """Lines of ``text`` (a report krpc-lint laid out, its pieces made :func:`printable`) of which none starts a
    workflow command: a line that starts with ``::`` after blanks gets that first ``:`` as ``\\x3a``, a ``##[``
    anywhere becomes ``##\\x5b``. A report without ``::`` or ``##[`` is returned as it is."""
    if COMMAND not in text and LEGACY_COMMAND not in text:
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if _leading_command(line):
            start = len(line) - len(_lstrip(line))
            line = f"{line[:start]}\\x3a{line[start + 1:]}"
        lines[number] = line.replace(LEGACY_COMMAND, "##\\x5b")
    return "\n".join(lines)


def _lstrip(line: str) -> str:
    """``line`` without the leading blanks GitHub's runner skips (.NET's ``TrimStart``: Unicode white space)."""
    return line.lstrip(_blanks())


@functools.cache
def _blanks() -> str:
    """.NET's char.IsWhiteSpace (what String.TrimStart removes), plus the invisible characters older runtimes also
    trim; worked out the first time a line holds ``::`` (never, for most runs)."""
    return "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + "\u180e\u200b\ufeff"


def _leading_command(line: str) -> bool:
    return _lstrip(line).startswith(COMMAND)


def _escaped(text: str, handler: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", handler).decode("utf-8")
