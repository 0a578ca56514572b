"""Findings and the report of a run: the one result type every output format renders."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITY_ORDER = {"error": 3, "warning": 2, "info": 1}
_COMPAT_KEYS = ("message_name", "versions", "released", "witness")


@dataclass(frozen=True, slots=True, order=True)
class Edit:
    """Replace the text between two character offsets of a file (``start`` to ``end``, ``old`` as it was there)
    with ``new``: the fix of a finding of a fixable rule (``krpc-lint lint --fix``)."""

    start: int
    end: int
    old: str
    new: str


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One problem at one place: ``path:line:col: rule message``.

    ``rule`` is the id (``KL301``), ``name`` its name (``field-name-pattern``); ``severity`` is
    the effective one after the config (error, warning, info); ``category`` groups rules (for
    compat rules: ``WIRE_BREAKING``, ``SOURCE_ONLY``, ...); ``hint`` says how to fix it. Lines
    and columns count from 1. Findings sort by path, then position, and compare by value, so
    tests can assert on them directly.

    >>> from linter import lint
    >>> finding = lint("fixtures/invalid/KL301-field-name-pattern.json").findings[-1]
    >>> f"{finding.path}:{finding.line}:{finding.col}: {finding.rule} [{finding.name}] {finding.severity}"
    'fixtures/invalid/KL301-field-name-pattern.json:11:15: KL301 [field-name-pattern] error'
    >>> finding.hint
    'Rename the field using only letters and digits, starting with a letter (e.g. MemberId).'
    """

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
    # fixable rules only: the edits that fix it (``lint --fix``), in the JSON output only when there are some
    fix: tuple[Edit, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON output's form (docs/json-output.md); the compat keys only on compat findings.

        >>> from linter import compare
        >>> old, new = "fixtures/compat/KL1001-field-inserted/old", "fixtures/compat/KL1001-field-inserted/new"
        >>> as_dict = compare(old, new).findings[0].to_dict()
        >>> as_dict["rule"], as_dict["versions"], as_dict["witness"]["hex"]
        ('KL1001', [0, 1, 2], 'ebaa945500')
        """
        out = asdict(self)
        if self.message_name is None:
            for key in _COMPAT_KEYS:
                del out[key]
        else:
            out["versions"] = list(self.versions)
        if self.fix:
            out["fix"] = [asdict(edit) for edit in self.fix]
        else:
            del out["fix"]
        return out

    def at_least(self, level: str) -> bool:
        """Whether the severity reaches ``level`` (info < warning < error): what ``--fail-on`` tests.

        >>> finding = Finding("A.json", 3, 5, "KL801", "missing-about", "warning", "style", "no about")
        >>> finding.at_least("info"), finding.at_least("error")
        (True, False)
        """
        return SEVERITY_ORDER[self.severity] >= SEVERITY_ORDER[level]


@dataclass
class Report:
    """Every finding of a run, sorted by file and position, with counts.

    ``suppressed`` counts findings silenced by ``krpc-lint: ignore`` comments and ``baselined``
    those matched by the baseline file; neither kind is in ``findings``.

    >>> from linter import lint
    >>> report = lint("fixtures/invalid/KL301-field-name-pattern.json")
    >>> [f.rule for f in report.findings]
    ['KL752', 'KL301']
    >>> report.failed(), report.failed("error")
    (True, True)
    """

    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    suppressed: int = 0
    baselined: int = 0
    skipped: int = 0  # JSON files in the directories given that are not specs (linter.parse.discovery)
    notes: list[str] = field(default_factory=list)  # said once on stderr (a fork's generator read, ...)

    @property
    def summary(self) -> dict[str, Any]:
        """Counts by severity plus files, suppressed and baselined: the JSON output's ``summary``.

        >>> from linter import lint
        >>> lint("fixtures/invalid/KL301-field-name-pattern.json").summary
        {'files': 1, 'findings': 2, 'errors': 1, 'warnings': 1, 'infos': 0, 'suppressed': 0, 'baselined': 0, 'skipped': 0}
        """
        counts = Counter(f.severity for f in self.findings)
        return {
            "files": self.files,
            "findings": len(self.findings),
            "errors": counts.get("error", 0),
            "warnings": counts.get("warning", 0),
            "infos": counts.get("info", 0),
            "suppressed": self.suppressed,
            "baselined": self.baselined,
            "skipped": self.skipped,
        }

    def failed(self, fail_on: str = "error") -> bool:
        """Whether a finding reaches ``fail_on``: the CLI exits 1 exactly then.

        >>> report = Report([Finding("A.json", 3, 5, "KL801", "missing-about", "warning", "style", "no about")])
        >>> report.failed(), report.failed("warning")
        (False, True)
        """
        return any(f.at_least(fail_on) for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """The JSON output (``krpc-lint lint --format json``): findings and summary.

        >>> from linter import Config, lint
        >>> as_dict = lint("fixtures/invalid/KL801-missing-about.json", Config(profile="strict")).to_dict()
        >>> [f["rule"] for f in as_dict["findings"]], as_dict["summary"]["warnings"]
        (['KL752', 'KL801'], 2)
        """
        return {"findings": [f.to_dict() for f in self.findings], "summary": self.summary}
