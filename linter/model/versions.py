"""Version ranges, with the exact parsing rules of Kafka's generator (``Versions.java``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from linter.errors import KrpcLintError

SHORT_MAX = 32767
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


class VersionsError(KrpcLintError, ValueError):
    """A version string Kafka's generator would reject; the message says why."""


def parse_short(text: str) -> int:
    """``Short.parseShort``: optional sign, decimal digits, no surrounding space, 16-bit range."""
    if not _JAVA_INT.fullmatch(text):
        raise VersionsError(f'"{shown(text)}" is not a number')
    if len(text.lstrip("+-").lstrip("0")) > 5:  # Python refuses int() of thousands of digits: never try
        raise VersionsError(f'"{shown(text)}" is out of the 16-bit range')
    value = int(text)
    if not -32768 <= value <= SHORT_MAX:
        raise VersionsError(f'"{text}" is out of the 16-bit range')
    return value


def shown(text: str, limit: int = 40) -> str:
    """Input text quoted back in a message, cut to ``limit`` characters: a hostile value stays readable."""
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive range ``lowest..highest``; empty when ``lowest > highest`` (written ``none``)."""

    lowest: int
    highest: int

    @staticmethod
    def parse(text: str | None, default: Versions | None = None) -> Versions | None:
        """Parse ``"0+"``, ``"1-3"``, ``"5"`` or ``"none"``; blank or missing gives ``default``."""
        if text is None:
            return default
        trimmed = _java_trim(text)
        if not trimmed:
            return default
        if trimmed == "none":
            return NONE
        if trimmed.endswith("+"):
            return Versions._checked(parse_short(trimmed[:-1]), SHORT_MAX)
        dash = trimmed.find("-")
        if dash < 0:
            version = parse_short(trimmed)
            return Versions._checked(version, version)
        return Versions._checked(parse_short(trimmed[:dash]), parse_short(trimmed[dash + 1 :]))

    @staticmethod
    def _checked(lowest: int, highest: int) -> Versions:
        if lowest < 0 or highest < 0:
            raise VersionsError(f"invalid version range {lowest} to {highest}")
        return Versions(lowest, highest)

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    @property
    def open_ended(self) -> bool:
        return not self.empty and self.highest == SHORT_MAX

    def intersect(self, other: Versions) -> Versions:
        lowest, highest = max(self.lowest, other.lowest), min(self.highest, other.highest)
        return NONE if lowest > highest else Versions(lowest, highest)

    def contains(self, other: Versions | int) -> bool:
        """Membership of a version, or (as Kafka) inclusion of a range; the empty range is in every range."""
        if isinstance(other, int):
            return self.lowest <= other <= self.highest
        if other.empty:
            return True
        return self.lowest <= other.lowest and other.highest <= self.highest

    def subtract(self, other: Versions) -> Versions | None:
        """This range minus ``other``; ``None`` when the result would be two ranges."""
        if other.empty:
            return self
        if other.lowest <= self.lowest:
            if other.highest >= self.highest:
                return NONE
            if other.highest < self.lowest:
                return self
            return Versions(other.highest + 1, self.highest)
        if other.highest >= self.highest:
            if other.lowest > self.highest:
                return self
            return Versions(self.lowest, other.lowest - 1)
        return None

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.lowest, self.highest + 1))

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.lowest == self.highest:
            return str(self.lowest)
        if self.highest == SHORT_MAX:
            return f"{self.lowest}+"
        return f"{self.lowest}-{self.highest}"


NONE = Versions(0, -1)
ALL = Versions(0, SHORT_MAX)


def _java_trim(text: str) -> str:
    """``String.trim()``: strips every character up to U+0020, not just whitespace."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


java_trim = _java_trim
