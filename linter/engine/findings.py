"""Findings and the report of a run: the one result type every output format renders."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITY_ORDER = {"error": 3, "warning": 2, "info": 1}
_COMPAT_KEYS = ("message_name", "versions", "released", "witness")


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One problem at one place: ``path:line:col: rule message``."""

    path: str
    line: int
    col: int
    rule: str
    name: str
    severity: str
    category: str
    message: str
    hint: str = ""
    # compat findings only (``krpc-lint compat``): the message, its versions, shipped or not, the proof
    message_name: str | None = field(default=None, compare=False)
    versions: tuple[int, ...] = field(default=(), compare=False)
    released: bool | None = field(default=None, compare=False)
    witness: dict[str, Any] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.message_name is None:
            for key in _COMPAT_KEYS:
                del out[key]
        else:
            out["versions"] = list(self.versions)
        return out

    def at_least(self, level: str) -> bool:
        return SEVERITY_ORDER[self.severity] >= SEVERITY_ORDER[level]


@dataclass
class Report:
    """Every finding of a run, sorted by file and position, with counts."""

    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    suppressed: int = 0
    baselined: int = 0

    @property
    def summary(self) -> dict[str, Any]:
        counts = Counter(f.severity for f in self.findings)
        return {
            "files": self.files,
            "findings": len(self.findings),
            "errors": counts.get("error", 0),
            "warnings": counts.get("warning", 0),
            "infos": counts.get("info", 0),
            "suppressed": self.suppressed,
            "baselined": self.baselined,
        }

    def failed(self, fail_on: str = "error") -> bool:
        return any(f.at_least(fail_on) for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {"findings": [f.to_dict() for f in self.findings], "summary": self.summary}
