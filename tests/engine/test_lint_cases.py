"""Every labelled lint case (``../shared/lint-cases``): we report errors exactly when Kafka's generator fails,
and for Kafka's failures at least one of our errors comes from a rule that explains Kafka's message.

The cases were labelled by the generator of trunk as of 2024-10, whose rules are 3.9's, so they are
checked with ``--kafka-version 3.9``. Under the default target (what any supported release accepts)
only the cases a newer generator accepts may differ; they are listed in ``NEWER_KAFKA_ACCEPTS`` and
in docs/kafka-versions.md.

Run as a script to write the failure report the rule authors work from::

    .venv/bin/python tests/engine/test_lint_cases.py [--out /tmp/lint_case_report.txt]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import LintCase, load_verdicts, rule_matches_kafka, shared_path

from linter.engine.config import Config
from linter.engine.findings import Finding
from linter.engine.runner import all_rules, lint

# case id -> why we knowingly disagree with Kafka's generator (the case is xfail)
DELIBERATE_DIFFERENCES: dict[str, str] = {}

DEFAULT_REPORT = "/tmp/lint_case_report.txt"
LABELLING_RELEASE = "3.9"  # the generator of trunk 2024-10, before 4.0 changed the format

# case id -> why a newer generator (and so the default target) accepts what 3.9's rejected.
NEWER_KAFKA_ACCEPTS: dict[str, str] = {
    "EnvelopeResponse-e79e44e6": "type coordinator-value is a message type since Kafka 4.1; linted alone, the "
                                 "missing coordinator-key of its apiKey is a directory check (KL708)",
    "AlterUserScramCredentialsRequest-11ff5b28": 'validVersions "1-0" is empty: since Kafka 4.0 a message without '
                                                 "versions is a removed API (no Data class is generated)",
    "SimpleRecordsMessage-fd198106": 'validVersions "none": since Kafka 4.0 a removed message (KAFKA-14552)',
}


@dataclass
class Outcome:
    case: LintCase
    findings: list[Finding] = field(default_factory=list)
    problem: str = ""  # empty when we agree with Kafka

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]


def evaluate(case: LintCase, shared: Path, rules_by_id: dict, kafka_version: str | None = LABELLING_RELEASE) -> Outcome:
    # the generator saw each case alone: the other cases in cases/ are no siblings of it
    report = lint([case.location(shared)], Config(profile="kafka", kafka_version=kafka_version, siblings=False))
    outcome = Outcome(case, list(report.findings))
    errors = outcome.errors
    if case.is_error and not errors:
        outcome.problem = "missed: Kafka fails, we report no error"
    elif not case.is_error and errors:
        outcome.problem = "false error: Kafka accepts, we report errors"
    elif case.is_error and not any(rule_matches_kafka(rules_by_id.get(f.rule), case.kafka_text()) for f in errors):
        outcome.problem = "wrong rule: none of our errors comes from a rule matching Kafka's message"
    return outcome


def _rules_by_id() -> dict:
    return {rule.id: rule for rule in all_rules()}


def _params():
    cases = load_verdicts()
    if not cases:  # the shared_dir fixture skips (or fails in CI) with the reason
        return [pytest.param(None, id="lint-cases-missing")]
    marks = {case.id: pytest.mark.xfail(reason=DELIBERATE_DIFFERENCES[case.id], strict=True)
             for case in cases if case.id in DELIBERATE_DIFFERENCES}
    return [pytest.param(case, id=case.id, marks=marks.get(case.id, ())) for case in cases]


@pytest.fixture(scope="module")
def rules_by_id() -> dict:
    return _rules_by_id()


def test_deliberate_differences_are_real_cases(shared_dir: Path) -> None:
    known = {case.id for case in load_verdicts(shared_dir)}
    assert known, "verdicts.jsonl has no cases"
    assert set(DELIBERATE_DIFFERENCES) <= known, sorted(set(DELIBERATE_DIFFERENCES) - known)


@pytest.mark.parametrize("case", _params())
def test_lint_case(case: LintCase | None, shared_dir: Path, rules_by_id: dict) -> None:
    assert case is not None, "verdicts.jsonl is missing although ../shared exists"
    outcome = evaluate(case, shared_dir, rules_by_id)
    assert not outcome.problem, describe(outcome)


def test_default_target_differs_only_where_newer_kafka_accepts(shared_dir: Path, rules_by_id: dict) -> None:
    """The default target accepts the union of the releases: it may miss an error only where a newer
    generator accepts the case, and never reports an error 3.9's generator did not."""
    cases = load_verdicts(shared_dir)
    assert cases, "verdicts.jsonl has no cases"
    differing = {}
    for case in cases:
        outcome = evaluate(case, shared_dir, rules_by_id, kafka_version=None)
        if outcome.problem:
            differing[case.id] = outcome.problem
    assert all(problem.startswith("missed") for problem in differing.values()), differing
    assert set(differing) == set(NEWER_KAFKA_ACCEPTS), differing


def test_newer_kafka_differences_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "kafka-versions.md").read_text(encoding="utf-8")
    missing = [case for case in NEWER_KAFKA_ACCEPTS if case not in doc]
    assert not missing, f"docs/kafka-versions.md does not list {missing}"


def describe(outcome: Outcome) -> str:
    case = outcome.case
    lines = [
        f"{case.id}  [{case.operator}]  kafka={case.kafka_verdict}  -> {outcome.problem}",
        f"  path: {case.path}",
        f"  detail: {case.raw.get('detail', '')}",
    ]
    if case.is_error:
        lines.append(f"  kafka: {case.kafka_message[:200]}")
    if outcome.findings:
        lines.append("  ours:")
        lines.extend(f"    {f.severity:7} {f.rule} {Path(f.path).name}:{f.line}:{f.col} {f.message}"
                     for f in outcome.findings)
    else:
        lines.append("  ours: (no findings)")
    return "\n".join(lines)


def write_report(out: Path) -> tuple[int, int]:
    """Evaluate every case; write the failing ones grouped by operator. Returns (failing, total)."""
    shared = shared_path()
    cases = load_verdicts(shared)
    if not cases:
        raise SystemExit(f"no lint cases under {shared}")
    rules_by_id = _rules_by_id()
    outcomes = [evaluate(c, shared, rules_by_id) for c in cases]
    failing = [o for o in outcomes if o.problem and o.case.id not in DELIBERATE_DIFFERENCES]
    # Agreeing ERROR cases where some of our errors come from rules that do not explain Kafka's message
    # (Kafka stops at its first error, so these may be right; worth a look for double reporting).
    extra = [o for o in outcomes if not o.problem and o.case.is_error
             and any(not rule_matches_kafka(rules_by_id.get(f.rule), o.case.kafka_text()) for f in o.errors)]
    by_operator: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in failing:
        by_operator[outcome.case.operator].append(outcome)
    kinds = Counter(o.problem.split(":")[0] for o in failing)
    header = [
        f"lint cases: {len(cases)} total, {len(cases) - len(failing)} agree with Kafka, {len(failing)} failing "
        f"({', '.join(f'{k}: {n}' for k, n in sorted(kinds.items()))})",
        f"rules loaded: {', '.join(sorted(rules_by_id))}",
        "",
        "failing cases per operator:",
        *(f"  {op:48} {len(items):3}  ({', '.join(sorted({o.problem.split(':')[0] for o in items}))})"
          for op, items in sorted(by_operator.items())),
        *([] if by_operator else ["  (none)"]),
        "",
    ]
    body = []
    for operator, items in sorted(by_operator.items()):
        body.append(f"=== {operator} ({len(items)})")
        body.extend(describe(o) + "\n" for o in items)
    if extra:
        body.append(f"=== notes: {len(extra)} agreeing ERROR case(s) with additional errors from non-matching rules")
        body.extend(describe(o) + "\n" for o in extra)
    out.write_text("\n".join(header + body) + "\n", encoding="utf-8")
    return len(failing), len(cases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_REPORT)
    args = parser.parse_args(argv)
    failing, total = write_report(Path(args.out))
    print(f"{failing} of {total} cases failing; report written to {args.out}")
    return 0


if __name__ == "__main__":  # run as a script, tests/ is on sys.path, so conftest imports
    sys.exit(main())
