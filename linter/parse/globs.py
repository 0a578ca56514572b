"""Shell globs (``fnmatch``'s meaning) matched in time linear in the path, whatever the glob.

``fnmatch`` translates a glob to a backtracking regular expression, and its translation is itself quadratic
in the glob (each unclosed ``[`` rescans the rest: 8,000 characters took 15 s). A config file may come with a
pull request, so its globs are input: here each glob is translated in one pass to RE2 syntax (``parse.linear``:
no backtracking) with the same meaning as ``fnmatch.fnmatchcase``: ``*`` is any text, ``/`` included (``**``
is the same), ``?`` one character, ``[...]`` a set (``[!...]`` its complement, ``a-z`` a range, a reversed
range dropped with its ends, as fnmatch does), a ``[`` that is never closed a plain character; no escapes.

Lone surrogates (undecodable bytes of a file name) are matched as U+FFFD, in the path and in the glob.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from linter.parse.linear import NotLinearError, linear

MAX_GLOB_CHARS = 65_536  # globs of a config, in all: far more than any path (RE2 could hold a few times more)

_SURROGATES = (0xD800, 0xDFFF)
_REPLACEMENT = 0xFFFD
_NEVER = r"[^\x00-\x{10FFFF}]"  # an empty set: matches no character


def glob_regex(glob: str) -> str:
    """RE2 syntax, fullmatched with ``(?s)``, for ``fnmatch.fnmatchcase(path, glob)``; linear in ``glob``."""
    out: list[str] = []
    i, n = 0, len(glob)
    close = -1  # the first "]" at or after the last place looked from; n: none is left
    star = False
    while i < n:
        c = glob[i]
        i += 1
        if c == "*":
            if not star:
                out.append(".*")
            star = True
            continue
        star = False
        if c == "?":
            out.append(".")
        elif c == "[":
            j = i + 1 if i < n and glob[i] == "!" else i
            j = j + 1 if j < n and glob[j] == "]" else j
            if close < j:  # every search starts past the previous one's answer: one pass over the glob in all
                found = glob.find("]", j)
                close = n if found < 0 else found
            if close >= n:
                out.append(_char(ord("[")))
            else:
                out.append(_set(glob[i:close]))
                i = close + 1
        else:
            out.append(_char(ord(c)))
    return "".join(out)


@lru_cache(maxsize=4096)
def _char(code: int) -> str:
    """One character in RE2's syntax: letters and digits as they are, the rest by code (never special)."""
    if _SURROGATES[0] <= code <= _SURROGATES[1]:
        code = _REPLACEMENT
    return chr(code) if chr(code).isascii() and chr(code).isalnum() else f"\\x{{{code:X}}}"


def _set(stuff: str) -> str:
    """The set ``[stuff]`` means to fnmatch (``stuff`` between the brackets), as an RE2 class.

    fnmatch cuts the set at hyphens (the first one past the first character, each next one at least three
    characters further on) into ranges; a range whose start is above its end is dropped with both ends; a
    hyphen at the very end is a character. The first character left decides negation (``!``), even when it
    was not first before a dropped range."""
    negated = stuff.startswith("!")
    body = stuff[1:] if negated else stuff
    separators: list[int] = []
    found = body.find("-", 1)
    while found >= 0:
        separators.append(found)
        found = body.find("-", found + 3)
    trailing = bool(separators) and separators[-1] == len(body) - 1  # "a-": the hyphen is a character
    if trailing:
        separators.pop()
    dropped: set[int] = set()
    ranges: list[tuple[int, int]] = []
    for at in separators:
        dropped.add(at)
        low, high = ord(body[at - 1]), ord(body[at + 1])
        if low > high:
            dropped.update((at - 1, at + 1))
        else:
            ranges.append((low, high))
    kept = [ord(char) for index, char in enumerate(body) if index not in dropped]
    if not negated and kept and kept[0] == ord("!"):  # fnmatch reads "!" as negation wherever it ends up first
        negated, kept = True, kept[1:]
    if not kept and not ranges:
        return "." if negated else _NEVER
    items = [_char(code) for code in kept]
    for low, high in ranges:
        items.extend(_range(low, high))
    return f"[{'^' if negated else ''}{''.join(items)}]"


def _range(low: int, high: int) -> list[str]:
    """``low-high`` in RE2's class syntax: the surrogates in it (which RE2 cannot name) as U+FFFD."""
    parts = []
    first, last = _SURROGATES
    if low < first:
        parts.append(f"\\x{{{low:X}}}-\\x{{{min(high, first - 1):X}}}")
    if high > last:
        parts.append(f"\\x{{{max(low, last + 1):X}}}-\\x{{{high:X}}}")
    if low <= last and high >= first:
        parts.append(_char(_REPLACEMENT))
    return parts


@lru_cache(maxsize=256)
def glob_matcher(globs: tuple[str, ...], anywhere: bool = False) -> Callable[[str], bool]:
    """Whether a path matches one of ``globs`` (``fnmatch.fnmatchcase``); ``anywhere``: also after any ``/``
    (``fnmatch(path, g) or fnmatch(path, "*/" + g)``). One RE2 pattern for all: time linear in the path.
    ``NotLinearError`` when RE2 cannot hold them (globs of hundreds of thousands of characters)."""
    if not globs:
        return lambda path: False
    if sum(map(len, globs)) > MAX_GLOB_CHARS:
        raise NotLinearError(f"more than {MAX_GLOB_CHARS:,} characters of globs in all")
    pattern = linear(f"(?s){'(?:.*/)?' if anywhere else ''}(?:{'|'.join(map(glob_regex, globs))})")
    fullmatch = pattern.fullmatch
    return lambda path: fullmatch(path) is not None
