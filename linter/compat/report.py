"""Compat changes as lint findings: same ``Finding``, rules, config, suppressions, baseline, formats.

Each change names a rule of the built-in pack (``check: {compat: <change>}``), which gives
its id, severity and docs. A change that only touches versions that never shipped (the top
version of a request marked ``latestVersionUnstable``, or per ``--released``) is kept but
reported as ``info`` with ``released: false``: such versions are not frozen yet.
"""

from __future__ import annotations

from functools import lru_cache

from linter.compat.change import Change, version_ranges
from linter.compat.compare import CompatResult, PairResult
from linter.compat.kinds import ChangeKind
from linter.compat.revision import Revision
from linter.engine.config import Config
from linter.engine.context import FileContext
from linter.engine.finalize import finish, suppress_inline
from linter.engine.findings import Finding, Report
from linter.engine.rules import Rule, RuleSet, builtin_compat_rules
from linter.engine.runner import select_rules

INPUT_RULE = ChangeKind.COMPAT_INPUT_INVALID


class UnknownChange(RuntimeError):
    """A change of a kind no compat rule describes: a bug in krpc-lint, never dropped in silence."""


@lru_cache(maxsize=1)
def described_changes() -> frozenset[str]:
    """The change kinds the built-in compat rules describe (``check: {compat: KIND}``)."""
    return frozenset(rule.check["compat"] for rule in builtin_compat_rules())


def compat_ruleset(config: Config) -> tuple[RuleSet, dict[str, Rule]]:
    """The selected compat rules, by change name."""
    ruleset = select_rules(config)
    return ruleset, {rule.check["compat"]: rule for rule in ruleset.of_scope("compat")}


def to_report(result: CompatResult, config: Config | None = None,
              rules: tuple[RuleSet, dict[str, Rule]] | None = None) -> Report:
    """The findings of a comparison; ``rules`` is ``compat_ruleset(config)`` when a caller already has it
    (the audit compares a thousand pairs under one config)."""
    config = config or Config()
    ruleset, by_change = rules or compat_ruleset(config)
    findings: dict[str, list[Finding]] = {}
    contexts: dict[str, FileContext] = {}
    for side, revision in (("old", result.old), ("new", result.new)):
        for rel, problem in revision.unreadable().items():
            _add(findings, _input_finding(revision.display(rel), f"cannot read this spec: {problem}", by_change,
                                          ruleset))
        contexts.update({ctx.path: ctx for ctx in revision.contexts.values()})
    for pair in result.pairs:
        if pair.error is not None:
            revision, rel = _side(result, pair, "new" if pair.error_side == "new" else "old")
            _add(findings, _input_finding(revision.display(rel), f"cannot compare this spec: {pair.error} "
                                          "(run krpc-lint lint on it)", by_change, ruleset))
        for change in pair.changes:
            rule = by_change.get(change.rule)
            if rule is not None:
                _add(findings, _finding(result, pair, change, rule, ruleset))
            elif change.rule not in described_changes():  # deselected rules drop their changes; no rule is a bug
                raise UnknownChange(f"compat found a change of kind {change.rule!r} that no rule describes")
    report = Report(files=len(result.new.files))
    kept: list[Finding] = []
    for path, items in findings.items():
        ctx = contexts.get(path)
        kept += suppress_inline(ctx, items, report) if ctx is not None else items
    return finish(report, kept, config)


def _add(findings: dict[str, list[Finding]], finding: Finding | None) -> None:
    if finding is not None:
        findings.setdefault(finding.path, []).append(finding)


def _finding(result: CompatResult, pair: PairResult, change: Change, rule: Rule, ruleset: RuleSet) -> Finding:
    revision, rel = _side(result, pair, change.side)
    ctx = revision.contexts.get(rel)
    line, col = ctx.document.locate(change.json_path) if ctx is not None and ctx.document.text else (1, 1)
    severity = ruleset.severity_of(rule) if change.released else "info"
    versions = f" (v{_versions_text(change.versions)})" if change.versions else ""
    return Finding(revision.display(rel), line, col, rule.id, rule.name, severity, rule.category,
                   f"{change.message_name}{versions}: {change.message}", rule.hint,
                   message_name=change.message_name, versions=change.versions, released=change.released,
                   witness=change.witness.to_dict() if change.witness is not None else None)


def _side(result: CompatResult, pair: PairResult, side: str) -> tuple[Revision, str]:
    """The revision and file of ``side`` of a pair (the other side's when the message is not on that one)."""
    if (side == "old" or pair.new_file is None) and pair.old_file is not None:
        return result.old, pair.old_file
    assert pair.new_file is not None  # a pair has a file on at least one side
    return result.new, pair.new_file


def _input_finding(path: str, message: str, by_change: dict[str, Rule], ruleset: RuleSet) -> Finding | None:
    rule = by_change.get(INPUT_RULE)
    if rule is None:
        return None
    return Finding(path, 1, 1, rule.id, rule.name, ruleset.severity_of(rule), rule.category, message, rule.hint)


def _versions_text(versions: tuple[int, ...]) -> str:
    return version_ranges(list(versions))
