"""The fixed revision F of ``compat --suggest``, version by version: the versions where F has an attribute (the
old revision's answer up to the released top, the new one's above it) as range arithmetic, never a loop over
version numbers, and ``_Blocked``, a change Kafka's format cannot carry in a new version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from linter.engine.findings import Edit
from linter.model.spec import MessageSpec
from linter.model.versions import NONE, SHORT_MAX, Versions
from linter.parse.document import SpecDocument
from linter.parse.jsonc import JsonPath


class _Blocked(Exception):
    """A change Kafka's format cannot carry in a new version."""


@dataclass
class Plan:
    """The edits under way for one message: its old and new specs, released top ``frozen``, new top ``top``."""

    old: MessageSpec
    new: MessageSpec
    old_doc: SpecDocument
    new_doc: SpecDocument
    frozen: int
    top: int
    edits: list[Edit] = field(default_factory=list)
    inserts: dict[tuple[JsonPath, int], list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def new_top(self) -> int:
        assert self.new.versions is not None  # compare built it
        return self.new.versions.highest

    @property
    def scope(self) -> Span:
        assert self.new.versions is not None
        return Span.of(Versions(self.new.versions.lowest, self.top))

    def wanted(self, old: Versions, new: Versions, scope: Span) -> Span:
        """The versions of ``scope`` where F has an attribute the old revision has in ``old`` and the new one in
        ``new``: the old answer up to the released top, the new answer above it (for versions past the new
        revision's top, its answer at its top). Range arithmetic: no work per version number."""
        above = Versions(max(self.new_top, self.frozen) + 1, self.top) if new.contains(self.new_top) else NONE
        parts = (old.intersect(Versions(0, self.frozen)), new.intersect(Versions(self.frozen + 1, self.new_top)), above)
        return Span.of(*parts).within(scope)

    def as_range(self, versions: Span, what: str) -> Versions:
        """``versions`` written as one range (open-ended when it reaches the new top)."""
        if not versions:
            return NONE
        if len(versions.parts) > 1:
            raise _Blocked(f"{what} would need versions {versions}, which is not one range")
        low, high = versions.parts[0]
        return Versions(low, SHORT_MAX if high == self.top else high)


@dataclass(frozen=True)
class Span:
    """A set of versions as sorted, disjoint, non-adjacent ranges: what a wanted attribute may come to before it
    is known to be one range."""

    parts: tuple[tuple[int, int], ...] = ()

    @staticmethod
    def of(*ranges: Versions) -> Span:
        merged: list[tuple[int, int]] = []
        for low, high in sorted((r.lowest, r.highest) for r in ranges if not r.empty):
            if merged and low <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
            else:
                merged.append((low, high))
        return Span(tuple(merged))

    def within(self, other: Span) -> Span:
        return Span.of(*(Versions(a, b).intersect(Versions(c, d)) for a, b in self.parts for c, d in other.parts))

    def reaches(self, version: int) -> bool:
        """Whether some version of the set is at or below ``version``."""
        return bool(self.parts) and self.parts[0][0] <= version

    def __bool__(self) -> bool:
        return bool(self.parts)

    def __str__(self) -> str:
        return ", ".join(str(Versions(low, high)) for low, high in self.parts) or "none"
