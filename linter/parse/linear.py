"""Regular expressions over untrusted text, run by RE2: time linear in the text whatever the pattern.

Python's ``re`` backtracks: ``^\\s*([+-]?[0-9]+)?\\s*$`` takes seconds on a string of spaces, ``(a+)+$``
years. Every pattern krpc-lint runs over text it did not write is either compiled here (google-re2, no
backtracking) or one of the documented linear forms that ``tests/project/test_linear_patterns.py`` proves.

RE2 reads UTF-8, so a lone surrogate (a JSON ``"\\ud800"``, an undecodable file-name byte) cannot reach it:
each is matched as U+FFFD, the replacement character, one code point for one, so every offset a match
reports is an offset into the text as given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from linter.errors import KrpcLintError

#: Far above any real pattern; RE2 spends memory in proportion and logs to stderr on huge ones.
MAX_PATTERN_CHARS = 1 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")  # one character class: one step per character


class LinearPattern:
    """One RE2 pattern with the ``re.Pattern`` methods krpc-lint uses, safe on any ``str``."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def search(self, text: str, pos: int = 0) -> Any:
        return self._compiled.search(_utf8_safe(text), pos)

    def match(self, text: str, pos: int = 0) -> Any:
        return self._compiled.match(_utf8_safe(text), pos)

    def fullmatch(self, text: str, pos: int = 0) -> Any:
        return self._compiled.fullmatch(_utf8_safe(text), pos)

    def finditer(self, text: str) -> Iterator[Any]:
        return iter(self._compiled.finditer(_utf8_safe(text)))

    def findall(self, text: str) -> list[Any]:
        return list(self._compiled.findall(_utf8_safe(text)))

    def sub(self, replacement: str | Callable[[Any], str], text: str) -> str:
        return str(self._compiled.sub(replacement, _utf8_safe(text)))

    def split(self, text: str) -> list[str]:
        return list(self._compiled.split(_utf8_safe(text)))


class NotLinearError(KrpcLintError, ValueError):
    """A pattern RE2 cannot run (a back-reference, a look-around); the message says why."""


@lru_cache(maxsize=1024)
def linear(pattern: str) -> LinearPattern:
    """``pattern`` compiled by RE2; :class:`NotLinearError` with RE2's reason when it cannot be."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise NotLinearError(f"a pattern of {len(pattern):,} characters; at most {MAX_PATTERN_CHARS:,} are compiled")
    import re2  # lazy: only the commands that match such patterns pay for its import

    options = re2.Options()
    options.log_errors = False  # the reason goes into our message, not to stderr
    try:
        return LinearPattern(pattern, re2.compile(pattern, options))
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise NotLinearError(reason) from None
    except UnicodeEncodeError:
        raise NotLinearError("it holds a lone surrogate, which is no character RE2 can match") from None


def _utf8_safe(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (same length, same offsets); most text has none."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
