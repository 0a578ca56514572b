"""Inline suppressions (``// krpc-lint: ignore[RULE] reason``) and baselines.

A suppression comment covers its own line; a comment alone on its line also covers the
next line. ``ignore-file[...]`` covers the whole file. A reason is required: without one
the comment suppresses nothing and is itself reported.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from linter.engine.findings import Finding
from linter.errors import KrpcLintError
from linter.parse.bounded_json import NestingError, NumberTooLong, load_json
from linter.parse.files import InputError, read_regular
from linter.parse.linear import linear
from linter.parse.scanner import tokens

# Found by RE2 (a comment is input: with re, "krpc-lint:ignore[" repeated without a "]" took quadratic time); the
# blanks are those of re's \s. The reason is the rest of the comment.
_DIRECTIVE = r"krpc-lint:[\t\n\v\f\r\x1c-\x1f\x85\pZ]*(ignore|ignore-file)\[([^\]]*)\]"


@dataclass
class Suppression:
    line: int
    col: int
    rules: tuple[str, ...]
    reason: str
    whole_file: bool
    lines: tuple[int, ...]
    used: bool = field(default=False)

    def covers(self, finding: Finding, names: dict[str, str]) -> bool:
        if not self.reason:
            return False
        if not (self.whole_file or finding.line in self.lines):
            return False
        return finding.rule in self.rules or finding.name in self.rules or "ALL" in self.rules


def parse_suppressions(text: str, line_col: Callable[[int], tuple[int, int]]) -> list[Suppression]:
    """Every suppression comment of a spec text (only comments count, never strings)."""
    if "krpc-lint:" not in text:
        return []
    found = []
    for kind, start, end in tokens(text):
        comment = text[start:end]
        if kind != "comment" or "krpc-lint:" not in comment:
            continue
        directive = linear(_DIRECTIVE).search(comment)
        if directive is None:
            continue
        line, col = line_col(start)
        line_start = text.rfind("\n", 0, start) + 1
        alone = text[line_start:start].strip() == ""
        end_line = line + comment.count("\n")
        lines = (line, end_line + 1) if alone else (line,)
        rules = tuple(r.strip() for r in directive.group(2).split(",") if r.strip())
        reason = comment[directive.end():].removesuffix("*/").strip()
        found.append(Suppression(line, col, rules, reason, directive.group(1) == "ignore-file", lines))
    return found


def _baseline_key(finding: Finding) -> tuple[str, str, str]:
    return (Path(finding.path).as_posix(), finding.rule, finding.message)


def write_baseline(findings: list[Finding], file: str) -> None:
    """Record findings so a repo can adopt the linter; lines are left out so edits don't churn it."""
    entries = sorted(map(_baseline_key, findings))
    data = {"version": 1, "findings": [{"path": p, "rule": r, "message": m} for p, r, m in entries]}
    Path(file).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


Baseline = Counter[tuple[str, str, str]]  # (path, rule, message) -> how many findings it absorbs


class BaselineError(KrpcLintError, ValueError):
    """The baseline file is missing or malformed."""


def read_baseline(file: str) -> Baseline:
    try:
        data = load_json(read_regular(file).decode("utf-8"), f"{file}: ")
        entries = data["findings"]
        return Counter((e["path"], e["rule"], e["message"]) for e in entries)
    except (InputError, NestingError, NumberTooLong) as exc:
        raise BaselineError(str(exc)) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise BaselineError(f"{file}: not a krpc-lint baseline ({exc})") from None


def apply_baseline(findings: list[Finding], baseline: Baseline) -> tuple[list[Finding], int]:
    """Drop findings the baseline knows (each entry absorbs one finding)."""
    remaining = Counter(baseline)
    kept, dropped = [], 0
    for finding in findings:
        key = _baseline_key(finding)
        if remaining[key] > 0:
            remaining[key] -= 1
            dropped += 1
        else:
            kept.append(finding)
    return kept, dropped
