"""JSON with comments, read exactly as leniently as Kafka's generator (Jackson) reads it.

Two readers share one contract (same values, same verdict):

* ``fast_load`` strips comments and hands the text to the C ``json`` module. It is the hot
  path: clean spec files never pay for position tracking.
* ``PositionalParser`` is a small recursive-descent parser that records the offset of
  every key and value. It runs only when a file needs positions (a finding to report,
  a syntax error to explain, duplicate keys to point at).

Jackson accepts ``//`` and ``/* */`` comments between tokens, a leading UTF-8 BOM and
whitespace or comments after the root value; it rejects everything else that strict JSON
rejects (``#`` comments, trailing commas, single quotes, NaN, raw control characters in
strings, leading zeros, trailing tokens). Duplicate keys are accepted, the last one wins.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

Path = tuple[str | int, ...]

# Jackson ends a // comment at CR or LF and rejects control characters (but tab) in comments.
_CTRL = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f"
_LINE_COMMENT = rf"//[^\r\n{_CTRL}]*"
_BLOCK_COMMENT = rf"/\*(?:[^*{_CTRL}]|\*(?!/))*\*/"
_COMMENT_OR_STRING = re.compile(rf'"(?:[^"\\\n]|\\.)*"|({_LINE_COMMENT}|{_BLOCK_COMMENT})')
# Keeps each string (group 1) and turns each comment into a space, entirely in C: an
# unmatched group is replaced by "", so the template is "string + space" or "space".
_STRING_OR_COMMENT = re.compile(rf'("(?:[^"\\\n]|\\.)*")|{_LINE_COMMENT}|{_BLOCK_COMMENT}')
# Text the fast path leaves to the positional parser: lone CRs (line ends for comments but not
# for our line splitting) and control characters (Jackson rejects them in comments too).
_LONE_CR = re.compile(r"\r(?!\n)")
_CONTROL_CHAR = re.compile(f"[{_CTRL}]")


def _needs_careful_read(text: str) -> bool:
    return ("\r" in text and _LONE_CR.search(text) is not None) or _CONTROL_CHAR.search(text) is not None
_HAS_COMMENT_START = re.compile(r"/[/*]")


class JsonSyntaxError(Exception):
    """A syntax error at a character offset; ``kind`` picks the rule that reports it."""

    def __init__(self, offset: int, message: str, kind: str = "syntax") -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.kind = kind  # "syntax" | "trailing" | "empty"


class _Duplicate(Exception):
    pass


def _strip_comments(text: str) -> str:
    """Blank out comments. Strings cannot span lines in valid JSON (and ``json.loads``
    rejects the document if one does), so only lines holding a '/' need the regex; block
    comments, which may span lines, send the whole text through it."""
    if "/" not in text:
        return text
    if "/*" in text:
        return _STRING_OR_COMMENT.sub(r"\1 ", text)
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
            out.append(before)  # the usual case: a comment that owns the rest of the line
        else:
            out.append(_STRING_OR_COMMENT.sub(r"\1 ", text[line_start:line_end]))
        start = line_end
        slash = find("/", line_end)
    out.append(text[start:])
    return "".join(out)


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Duplicate
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_without_duplicates, parse_constant=_reject_constant)


def fast_load(text: str) -> Any | None:
    """Return the value of a clean document, or ``None`` when the slow path must decide.

    ``None`` means: a syntax problem, duplicate keys, or anything unusual. The root of a
    Kafka spec is always an object, so ``None`` is never a real answer.
    """
    if _needs_careful_read(text):
        return None
    try:
        return _DECODER.decode(_strip_comments(text))
    except (ValueError, _Duplicate, RecursionError):
        return None


# ---------------------------------------------------------------------------------------
# Positional parser

_WS = re.compile(rf"(?:[ \t\r\n]+|{_LINE_COMMENT}|{_BLOCK_COMMENT})*")
_STRING = re.compile(r'"((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*)"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_MAX_DEPTH = 200


def _describe(ch: str) -> str:
    if not ch:
        return "end of input"
    if ch < " " or ch == "\x7f":
        return f"control character (code {ord(ch)})"
    return f"'{ch}' (code {ord(ch)})"


@dataclass
class Positions:
    """Offsets of every key and value of one document, by JSON path."""

    values: dict[Path, int] = field(default_factory=dict)
    keys: dict[Path, int] = field(default_factory=dict)
    duplicates: list[tuple[Path, int, int]] = field(default_factory=list)  # path, offset, first offset


class PositionalParser:
    """Recursive-descent JSON-with-comments parser that records where everything is."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.positions = Positions()

    def parse(self) -> Any:
        text = self.text
        self._skip()
        if self.pos >= len(text):
            raise JsonSyntaxError(self.pos, "no content: the document is empty or only comments", "empty")
        value = self._value((), 0)
        self._skip()
        if self.pos < len(text):
            raise JsonSyntaxError(
                self.pos,
                f"unexpected {_describe(text[self.pos])} after the root object; only comments and "
                "whitespace may follow it",
                "trailing",
            )
        return value

    def _skip(self) -> None:
        text = self.text
        self.pos = _WS.match(text, self.pos).end()
        if text.startswith("/*", self.pos):
            end = text.find("*/", self.pos + 2)
            if end < 0:
                raise JsonSyntaxError(self.pos, "unterminated block comment")
            bad = re.search(f"[{_CTRL}]", text[self.pos : end])
            raise JsonSyntaxError(self.pos + bad.start(), "control character in a comment")
        if text.startswith("//", self.pos):
            raise JsonSyntaxError(self.pos, "control character in a comment")
        if text.startswith("/", self.pos) and not text.startswith("//", self.pos):
            raise JsonSyntaxError(self.pos, "unexpected '/': comments start with // or /*")

    def _value(self, path: Path, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise JsonSyntaxError(self.pos, f"nesting deeper than {_MAX_DEPTH} levels")
        text, start = self.text, self.pos
        self.positions.values[path] = start
        ch = text[start : start + 1]
        if ch == "{":
            return self._object(path, depth)
        if ch == "[":
            return self._array(path, depth)
        if ch == '"':
            return self._string()
        match = _NUMBER.match(text, start)
        if match and match.end() > start:
            return self._number(match)
        for word, literal in _LITERALS.items():
            if text.startswith(word, start) and not text[start + len(word) : start + len(word) + 1].isalnum():
                self.pos = start + len(word)
                return literal
        if not ch:
            raise JsonSyntaxError(start, "unexpected end of input: expected a value")
        raise JsonSyntaxError(
            start, f"unexpected {_describe(ch)}: expected a value (string, number, object, array, true, false or null)"
        )

    def _number(self, match: re.Match[str]) -> int | float:
        token = match.group(0)
        end = match.end()
        following = self.text[end : end + 1]
        if following.isalnum() or following == ".":
            raise JsonSyntaxError(match.start(), f"invalid number '{token}{following}...'")
        if token.lstrip("-").startswith("0") and len(token.lstrip("-")) > 1 and token.lstrip("-")[1].isdigit():
            raise JsonSyntaxError(match.start(), "invalid number: leading zeros are not allowed")
        if len(token) > 4000:  # Python refuses longer int conversions; no spec needs one
            raise JsonSyntaxError(match.start(), f"number with {len(token)} digits is too long")
        self.pos = end
        if "." in token or "e" in token or "E" in token:
            return float(token)
        return int(token)

    def _string(self) -> str:
        text, start = self.text, self.pos
        match = _STRING.match(text, start)
        if match is None:
            self._explain_bad_string(start)
        self.pos = match.end()
        body = match.group(1)
        if "\\" not in body:
            return body
        return json.loads(match.group(0))

    def _explain_bad_string(self, start: int) -> None:
        text = self.text
        i = start + 1
        while i < len(text):
            ch = text[i]
            if ch == '"':
                break
            if ch == "\\":
                nxt = text[i + 1 : i + 2]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6] or ""):
                    i += 6
                    continue
                if nxt and nxt in '"\\/bfnrt':
                    i += 2
                    continue
                raise JsonSyntaxError(i, f"invalid escape sequence '\\{nxt}' in string")
            if ch < " ":
                raise JsonSyntaxError(i, f"unescaped {_describe(ch)} in string: it must be escaped with a backslash")
            i += 1
        raise JsonSyntaxError(start, "unterminated string")

    def _object(self, path: Path, depth: int) -> dict[str, Any]:
        text = self.text
        self.pos += 1
        result: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        self._skip()
        if text.startswith("}", self.pos):
            self.pos += 1
            return result
        while True:
            key_offset = self.pos
            if not text.startswith('"', key_offset):
                raise JsonSyntaxError(
                    key_offset, f"unexpected {_describe(text[key_offset:key_offset + 1])}: expected a double-quoted key"
                )
            key = self._string()
            self._skip()
            if not text.startswith(":", self.pos):
                raise JsonSyntaxError(self.pos, f"unexpected {_describe(text[self.pos:self.pos + 1])}: expected ':'")
            self.pos += 1
            self._skip()
            child = (*path, key)
            if key in first_seen:
                self.positions.duplicates.append((child, key_offset, first_seen[key]))
            else:
                first_seen[key] = key_offset
            self.positions.keys[child] = key_offset
            result[key] = self._value(child, depth + 1)
            self._skip()
            ch = text[self.pos : self.pos + 1]
            self.pos += 1
            if ch == "}":
                return result
            if ch != ",":
                raise JsonSyntaxError(self.pos - 1, f"unexpected {_describe(ch)}: expected ',' or '}}'")
            self._skip()
            if text.startswith("}", self.pos):
                raise JsonSyntaxError(self.pos, "trailing comma before '}'")

    def _array(self, path: Path, depth: int) -> list[Any]:
        text = self.text
        self.pos += 1
        result: list[Any] = []
        self._skip()
        if text.startswith("]", self.pos):
            self.pos += 1
            return result
        while True:
            result.append(self._value((*path, len(result)), depth + 1))
            self._skip()
            ch = text[self.pos : self.pos + 1]
            self.pos += 1
            if ch == "]":
                return result
            if ch != ",":
                raise JsonSyntaxError(self.pos - 1, f"unexpected {_describe(ch)}: expected ',' or ']'")
            self._skip()
            if text.startswith("]", self.pos):
                raise JsonSyntaxError(self.pos, "trailing comma before ']'")


class LineIndex:
    """Turns character offsets into 1-based ``(line, column)``."""

    def __init__(self, text: str) -> None:
        self._starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            self._starts.append(i + 1)
            i = find("\n", i + 1)

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1
