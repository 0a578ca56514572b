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
from typing import Any, NoReturn

from linter.errors import KrpcLintError
from linter.parse.bounded_json import MAX_DEPTH, within_depth
from linter.parse.scanner import match_end, strip_comments

JsonPath = tuple[str | int, ...]  # keys and indexes from the root to a value

# Jackson ends a // comment at CR or LF and rejects control characters (but tab) in comments.
_CTRL = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f"
# Text the fast path leaves to the positional parser: lone CRs (line ends for comments but not
# for our line splitting) and control characters (Jackson rejects them in comments too).
_LONE_CR = re.compile(r"\r(?!\n)")
_CONTROL_CHAR = re.compile(f"[{_CTRL}]")


def _needs_careful_read(text: str) -> bool:
    return ("\r" in text and _LONE_CR.search(text) is not None) or _CONTROL_CHAR.search(text) is not None


class JsonSyntaxError(KrpcLintError):
    """A syntax error at a character offset; ``kind`` picks the rule that reports it."""

    def __init__(self, offset: int, message: str, kind: str = "syntax") -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.kind = kind  # "syntax" | "trailing" | "empty"


class _Duplicate(Exception):
    pass


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
    stripped = strip_comments(text)
    if stripped is None:
        return None
    try:
        value = _DECODER.decode(stripped)
    except (ValueError, _Duplicate, RecursionError):
        return None
    if text.count("{") + text.count("[") < MAX_DEPTH:
        return value  # too few brackets to nest that deep: no walk needed (every real spec)
    return value if within_depth(value) else None


# ---------------------------------------------------------------------------------------
# Positional parser

# As the scanner's (linter.parse.scanner), these patterns never backtrack: possessive loops, comment ends by str.find.
_WHITESPACE = re.compile(r"[ \t\r\n]*+")
_LINE_COMMENT = re.compile(rf"//[^\r\n{_CTRL}]*+")
_BLOCK_COMMENT_BODY = re.compile(rf"[^{_CTRL}]*+")  # checked up to the "*/" that str.find located
_STRING = re.compile(r'"([^"\\\x00-\x1f]*+(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*+)*+)"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


def _describe(ch: str) -> str:
    if not ch:
        return "end of input"
    if ch < " " or ch == "\x7f":
        return f"control character (code {ord(ch)})"
    return f"'{ch}' (code {ord(ch)})"


class Positions:
    """Offsets of every key and value of one document, by JSON path. Stored as a tree of nodes (each a
    parent and a key or index), so memory follows the number of values, not values times their depth: a
    path tuple per value would cost a hostile file nested 190 deep ~900 bytes per input byte."""

    ROOT = 0

    def __init__(self) -> None:
        self._child: dict[tuple[int, str | int], int] = {}  # (parent node, key or index) -> node; last one wins
        self._parent: list[int] = [-1]
        self._name: list[str | int] = [""]  # the root has no name; path() never reads it
        self._value_at: list[int] = [-1]  # -1: not reached (a syntax error came first)
        self._key_at: list[int] = [-1]  # -1: an array element, or the root
        self._duplicates: list[tuple[int, int, int]] = []  # node, its key's offset, the first key's offset

    def add(self, parent: int, name: str | int, key_offset: int = -1) -> int:
        """A new node below ``parent``; it replaces an earlier one of the same name (a duplicate key)."""
        node = len(self._parent)
        self._parent.append(parent)
        self._name.append(name)
        self._value_at.append(-1)
        self._key_at.append(key_offset)
        self._child[(parent, name)] = node
        return node

    def set_value(self, node: int, offset: int) -> None:
        self._value_at[node] = offset

    def duplicate(self, node: int, key_offset: int, first_offset: int) -> None:
        self._duplicates.append((node, key_offset, first_offset))

    @property
    def duplicates(self) -> list[tuple[JsonPath, int, int]]:
        """(path, offset, offset of the first key of that name) of each repeated key."""
        return self.first_duplicates(len(self._duplicates))

    @property
    def duplicate_count(self) -> int:
        return len(self._duplicates)

    def first_duplicates(self, limit: int) -> list[tuple[JsonPath, int, int]]:
        """``duplicates`` of the first ``limit`` repeated keys only: a path costs its depth, so 300,000 repeats
        190 deep would otherwise hold 57 million names."""
        return [(self.path(node), offset, first) for node, offset, first in self._duplicates[:limit]]

    def path(self, node: int) -> JsonPath:
        names = []
        while node > self.ROOT:
            names.append(self._name[node])
            node = self._parent[node]
        return tuple(reversed(names))

    def exact(self, path: JsonPath) -> tuple[int, int] | None:
        """Offsets of the key (-1 for an array element) and of the value at exactly ``path``, or ``None`` when
        the document has no such value (no fallback, unlike ``offset_of``)."""
        node = self.ROOT
        for name in path:
            child = self._child.get((node, name))
            if child is None:
                return None
            node = child
        return None if self._value_at[node] < 0 else (self._key_at[node], self._value_at[node])

    def offset_of(self, path: JsonPath, *, key: bool = False) -> int:
        """Offset of the value (or key) at ``path``; else its key (or value), else the closest ancestor's
        value (or key); else 0. One walk down the tree."""
        nodes = [self.ROOT]
        for name in path:
            child = self._child.get((nodes[-1], name))
            if child is None:
                break
            nodes.append(child)
        if len(nodes) == len(path) + 1 and path:
            node = nodes.pop()
            first, second = (self._key_at, self._value_at) if key else (self._value_at, self._key_at)
            for table in (first, second) if not key else (first,):
                if table[node] >= 0:
                    return table[node]
        for node in reversed(nodes[1:]):
            for table in (self._value_at, self._key_at):
                if table[node] >= 0:
                    return table[node]
        return max(self._value_at[self.ROOT], 0)


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
        value = self._value(Positions.ROOT, 0)
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
        """Past whitespace and comments; linear: each comment's end is found with str.find."""
        text, size = self.text, len(self.text)
        blank = _WHITESPACE.match(text, self.pos)  # inline, not match_end(): this runs once per token
        assert blank is not None
        pos = blank.end()
        while pos < size and text[pos] == "/":
            if text.startswith("//", pos):
                end = match_end(_LINE_COMMENT.match(text, pos))
                if end < size and text[end] not in "\r\n":
                    raise JsonSyntaxError(end, "control character in a comment")
            elif text.startswith("/*", pos):
                close = text.find("*/", pos + 2)
                if close < 0:
                    raise JsonSyntaxError(pos, "unterminated block comment")
                bad = match_end(_BLOCK_COMMENT_BODY.match(text, pos + 2, close))
                if bad < close:
                    raise JsonSyntaxError(bad, "control character in a comment")
                end = close + 2
            else:
                raise JsonSyntaxError(pos, "unexpected '/': comments start with // or /*")
            pos = match_end(_WHITESPACE.match(text, end))
        self.pos = pos

    def _value(self, node: int, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise JsonSyntaxError(self.pos, f"nesting deeper than {MAX_DEPTH} levels")
        text, start = self.text, self.pos
        self.positions.set_value(node, start)
        ch = text[start : start + 1]
        if ch == "{":
            return self._object(node, depth)
        if ch == "[":
            return self._array(node, depth)
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
        decoded: str = json.loads(match.group(0))  # the pattern admits only JSON's escapes
        return decoded

    def _explain_bad_string(self, start: int) -> NoReturn:
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

    def _object(self, node: int, depth: int) -> dict[str, Any]:
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
            child = self.positions.add(node, key, key_offset)
            if key in first_seen:
                self.positions.duplicate(child, key_offset, first_seen[key])
            else:
                first_seen[key] = key_offset
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

    def _array(self, node: int, depth: int) -> list[Any]:
        text = self.text
        self.pos += 1
        result: list[Any] = []
        self._skip()
        if text.startswith("]", self.pos):
            self.pos += 1
            return result
        while True:
            result.append(self._value(self.positions.add(node, len(result)), depth + 1))
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

    @property
    def starts(self) -> list[int]:
        """Each line's first offset, the first line's first (0)."""
        return self._starts

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1
