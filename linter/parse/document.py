"""A spec file as read from disk: its text, its JSON value, and positions on demand."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linter.parse.files import InputError, read_regular
from linter.parse.jsonc import (
    JsonPath,
    JsonSyntaxError,
    LineIndex,
    PositionalParser,
    Positions,
    fast_load,
)

MAX_SPEC_BYTES = 16 * 1024 * 1024  # far above any real spec; guards memory on hostile input


@dataclass
class ReadProblem:
    """Why a file has no usable JSON value: ``kind`` is encoding, syntax, trailing, empty or io."""

    kind: str
    message: str
    offset: int = 0


@dataclass
class _Parsed:
    """What parsing a file's bytes gave: its text, its value or the problem, positions if they were needed."""

    text: str
    value: Any = None
    problem: ReadProblem | None = None
    positions: Positions | None = None
    clean: bool = False  # read by the fast path: no duplicate keys to look for


class SpecDocument:
    """One spec file. ``value`` is ``None`` when ``problem`` says why it could not be read.

    The bytes are decoded and parsed on first use: a run whose findings all come from the result
    cache (unchanged files) needs the digest and, for suppressions, the text, but never the value."""

    def __init__(self, path: str, data: bytes = b"", parsed: _Parsed | None = None) -> None:
        self.path = path
        # of the bytes: the result cache's key; none for a file that could not be read (never cached)
        self.digest = hashlib.blake2b(data, digest_size=16).hexdigest() if parsed is None else ""
        self._data: bytes | None = data if parsed is None else None
        self._parsed = parsed
        self._text: str | None = parsed.text if parsed is not None else None
        self._lines: LineIndex | None = None

    @property
    def text(self) -> str:
        """The decoded text (decoded, not parsed, when only the text is asked for)."""
        if self._text is None:
            if self._parsed is not None:
                self._text = self._parsed.text
            else:
                data = self._data or b""
                self._text = "" if len(data) > MAX_SPEC_BYTES else decode_text(data)[0]
        return self._text

    @property
    def value(self) -> Any:
        return self._state().value

    @property
    def problem(self) -> ReadProblem | None:
        return self._state().problem

    def _state(self) -> _Parsed:
        if self._parsed is None:
            self._parsed = _parse(self._data or b"")
            self._data = None
        return self._parsed

    @property
    def positions(self) -> Positions:
        """Offsets of every key and value, computed once, the first time they are needed."""
        state = self._state()
        if state.positions is None:
            parser = PositionalParser(state.text)
            try:
                parser.parse()
            except (JsonSyntaxError, RecursionError):
                pass  # positions recorded up to the error are still useful
            state.positions = parser.positions
        return state.positions

    def line_col(self, offset: int) -> tuple[int, int]:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines.line_col(offset)

    def offset_of(self, path: JsonPath, *, key: bool = False) -> int:
        """Offset of the value (or key) at ``path``, falling back to the closest ancestor."""
        return self.positions.offset_of(tuple(path), key=key)

    def locate(self, path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        return self.line_col(self.offset_of(path, key=key))

    @property
    def duplicates(self) -> list[tuple[JsonPath, int, int]]:
        state = self._state()
        if state.value is None or state.clean:
            return []
        return self.positions.duplicates

    def first_duplicates(self, limit: int) -> tuple[list[tuple[JsonPath, int, int]], int]:
        """The first ``limit`` of ``duplicates`` and how many there are: paths are built for those only
        (300,000 repeated keys 190 deep would otherwise hold 57 million names)."""
        state = self._state()
        if state.value is None or state.clean:
            return [], 0
        return self.positions.first_duplicates(limit), self.positions.duplicate_count


def decode_text(data: bytes) -> tuple[str, ReadProblem | None]:
    """Decode UTF-8 (a leading BOM is skipped, as Jackson does); anything else is a problem
    (the text then is a lenient decoding, good only for positions)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Decode leniently only to place the finding on the right line and column.
        shown = data.decode("utf-8", errors="replace")
        offset = len(data[: exc.start].decode("utf-8", errors="replace"))
        return shown, ReadProblem("encoding", f"not valid UTF-8: byte 0x{data[exc.start]:02x} at byte {exc.start}", offset)
    if text.startswith("\ufeff"):
        text = " " + text[1:]  # keep offsets; the BOM reads as whitespace
    return text, None


def read_document(path: str, data: bytes) -> SpecDocument:
    """A document of spec bytes, parsed on first use; never raises for bad content."""
    return SpecDocument(path, data)


def _parse(data: bytes) -> _Parsed:
    if len(data) > MAX_SPEC_BYTES:
        return _Parsed("", problem=ReadProblem("io", f"file is larger than {MAX_SPEC_BYTES} bytes"))
    text, problem = decode_text(data)
    if problem is not None:
        return _Parsed(text or "", problem=problem)
    value = fast_load(text)
    if value is not None:
        return _Parsed(text, value, clean=True)
    parser = PositionalParser(text)
    try:
        value = parser.parse()
    except JsonSyntaxError as exc:
        return _Parsed(text, problem=ReadProblem(exc.kind, exc.message, exc.offset), positions=parser.positions)
    except RecursionError:
        return _Parsed(text, problem=ReadProblem("syntax", "nesting too deep", parser.pos))
    return _Parsed(text, value, positions=parser.positions)


def load_document(file: Path | str, display: str | None = None) -> SpecDocument:
    """Read a spec file from disk; I/O errors become a problem, not an exception."""
    name = display if display is not None else str(file)
    try:
        data = read_regular(file, MAX_SPEC_BYTES, shown="")
    except InputError as exc:
        return SpecDocument(name, parsed=_Parsed("", problem=ReadProblem("io", str(exc).removeprefix(": "))))
    return read_document(name, data)
