"""What a comparison finds: ``Change``\\ s and the ``Witness`` bytes that prove a wire break.

Apart from the diff that makes them, since the report, the changelog, the witnesses and the audit read them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from linter.compat.kinds import ChangeKind
from linter.parse.jsonc import JsonPath
from linter.vocabulary import VERDICTS, Category


@dataclass(frozen=True)
class Witness:
    """Bytes that prove a wire break: written by one revision, read by the other."""

    version: int
    writer: str  # "old" | "new"
    hex: str
    decoded_old: Any
    decoded_new: Any = None
    error: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {"version": self.version, "writer": self.writer, "hex": self.hex, "decoded_old": self.decoded_old}
        if self.error is not None:
            out["error"] = self.error
        else:
            out["decoded_new"] = self.decoded_new
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Change:
    """One difference between the revisions of a message; ``Change.of`` gives it its kind's category.

    ``json_path`` points into the new file (``side="new"``) or, for things that only the old
    file has, into the old one; the report turns it into ``line:col``.
    """

    rule: ChangeKind
    category: Category
    message_name: str
    message: str
    versions: tuple[int, ...]
    side: str = "new"
    json_path: JsonPath = ()
    released: bool = True
    witness: Witness | None = None

    @classmethod
    def of(cls, kind: ChangeKind, message_name: str, message: str, versions: Iterable[int], *, side: str = "new",
           json_path: JsonPath = (), witness: Witness | None = None) -> Change:
        """A change of ``kind``, in its category, affecting ``versions`` (sorted here)."""
        return cls(kind, kind.category, message_name, message, tuple(sorted(versions)), side, json_path,
                   witness=witness)


def primary(changes: list[Change]) -> tuple[Category, list[int]]:
    """The first verdict (gravest first) that applies, and the versions it affects."""
    for category in VERDICTS:
        chosen = [c for c in changes if c.category == category]
        if chosen:
            return category, sorted({v for c in chosen for v in c.versions})
    return Category.SAFE, []


def version_ranges(versions: list[int], separator: str = ", ") -> str:
    """``[0, 1, 2, 5]`` (sorted, distinct) as ``0-2, 5``."""
    out, start = [], None
    for index, version in enumerate(versions):
        if start is None:
            start = version
        if index + 1 == len(versions) or versions[index + 1] != version + 1:
            out.append(str(start) if start == version else f"{start}-{version}")
            start = None
    return separator.join(out)
