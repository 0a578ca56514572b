"""The one finishing step of a report, for ``lint`` and ``compat`` alike.

Checks (and compat's comparison) produce raw findings per file; what a user sees is what is left after
the file's inline suppressions, the config's per-path overrides and the baseline, in a stable order.
Both commands finish here so a suppression, an override or a baseline means the same in each.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from linter.engine.config import Config
from linter.engine.context import FileContext
from linter.engine.findings import Finding, Report
from linter.engine.rules import builtin_compat_rules
from linter.engine.suppress import apply_baseline, parse_suppressions, read_baseline


@lru_cache(maxsize=1)
def compat_rule_keys() -> frozenset[str]:
    """Ids and names of the built-in compat rules (``check: {compat: ...}``)."""
    return frozenset(key for rule in builtin_compat_rules() for key in (rule.id, rule.name))


def suppress_inline(ctx: FileContext, findings: list[Finding], report: Report) -> list[Finding]:
    """``findings`` of ``ctx``'s file less those its ``krpc-lint: disable`` comments cover (counted in
    ``report.suppressed``); marks the suppressions used, for the meta rules that run afterwards."""
    document = ctx.document
    suppressions = parse_suppressions(document.text, document.line_col) if document.text else []
    ctx.suppressions = suppressions  # read by the meta rules
    ctx.compat_rules = compat_rule_keys()  # a suppression of a compat rule is for krpc-lint compat, not unused
    if not suppressions:
        return list(findings)
    kept = []
    for finding in findings:
        matched = [s for s in suppressions if s.covers(finding, {})]
        for item in matched:
            item.used = True
        if matched:
            report.suppressed += 1
        else:
            kept.append(finding)
    return kept


def finish(report: Report, findings: list[Finding], config: Config) -> Report:
    """``report`` holding ``findings`` (already past inline suppressions) after the per-path overrides and
    the baseline, sorted."""
    findings = apply_path_overrides(findings, config)
    if config.baseline:
        findings, report.baselined = apply_baseline(findings, read_baseline(config.baseline))
    report.findings = sorted(findings)
    return report


def apply_path_overrides(findings: list[Finding], config: Config) -> list[Finding]:
    """The config's ``[[per-path]]`` tables: findings ignored or given another severity below a path."""
    if not config.per_path:
        return findings
    out = []
    for finding in findings:
        keep, severity = True, finding.severity
        for override in config.per_path:
            if not override.applies(finding.path):
                continue
            if any(s in (finding.rule, finding.name, finding.category, "ALL") or finding.rule.startswith(s)
                   for s in override.ignore):
                keep = False
            for key, level in override.severity.items():
                if key in (finding.rule, finding.name, finding.category) or finding.rule.startswith(key):
                    severity = level
        if keep:
            out.append(finding if severity == finding.severity else replace(finding, severity=severity))
    return out
