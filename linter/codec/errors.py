"""Codec errors: where in the bytes (offset) and where in the message (field path) it went wrong."""

from __future__ import annotations

from typing import Self

from linter.errors import KrpcLintError


def join_path(parts: list[str | int]) -> str:
    """``["Topics", 3, "Partitions", 0, "Leader"]`` -> ``Topics[3].Partitions[0].Leader``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def unknown_message(names: list[str], name: str) -> str:
    """Why ``name`` is not a message of specs defining ``names``, with the closest names (a typo is the usual
    cause): the one wording of the codec, size and frames commands and the library alike.

    >>> unknown_message(["FetchRequest", "FetchResponse"], "FetchRequst")
    "unknown message 'FetchRequst'; did you mean FetchRequest or FetchResponse? (the specs define 2 messages)"
    """
    import difflib

    close = difflib.get_close_matches(name, names, n=3)
    suggestion = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"unknown message {name!r}{suggestion} (the specs define {len(names)} messages)"


class CodecError(KrpcLintError, ValueError):
    """Base of encode and decode errors; ``path`` grows as the error leaves nested structs."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.reason = message
        self.parts: list[str | int] = []

    def at(self, part: str | int) -> Self:
        """Prepend one level of the field path (called while unwinding)."""
        self.parts.insert(0, part)
        return self

    @property
    def path(self) -> str:
        """Where in the message: ``Topics[3].Partitions[0].Leader``; empty at the top level."""
        return join_path(self.parts)


class DecodeError(CodecError):
    """Bytes that are not a valid encoding; ``offset`` is the byte where reading failed.

    >>> error = DecodeError("needs 4 bytes, only 1 left", 12).at("Leader").at(0).at("Partitions")
    >>> str(error), error.offset, error.reason
    ('byte 12 at Partitions[0].Leader: needs 4 bytes, only 1 left', 12, 'needs 4 bytes, only 1 left')
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset

    def __str__(self) -> str:
        where = f" at {self.path}" if self.parts else ""
        return f"byte {self.offset}{where}: {self.reason}"


class EncodeError(CodecError):
    """A value that cannot be written at the requested version; ``path`` names the field.

    >>> str(EncodeError("expected an integer (int32), got str").at("MaxWaitMs"))
    'MaxWaitMs: expected an integer (int32), got str'
    """

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.parts else self.reason


class SpecError(KrpcLintError, ValueError):
    """The specs given to the codec are not usable (missing, or with lint errors)."""
