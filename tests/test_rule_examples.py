"""Every rule's documented examples: each bad one is flagged by the rule, no good one is."""

from __future__ import annotations

import pytest
from conftest import format_findings

from linter.engine.config import Config
from linter.engine.rules import Example, Rule
from linter.engine.runner import all_rules, lint_texts

RULES = all_rules()


def _own_findings(rule: Rule, example: Example):
    report = lint_texts(example.files, Config(profile="strict", select=(rule.id,)), complete=True)
    return report.findings, [f for f in report.findings if f.rule == rule.id]


def _show(example: Example) -> str:
    return "\n".join(f"--- {name}\n{text}" for name, text in example.files.items())


def test_rules_are_loaded() -> None:
    assert RULES, "no rules in the built-in pack"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_good_and_bad_examples(rule: Rule) -> None:
    kinds = {example.kind for example in rule.examples}
    assert kinds >= {"bad", "good"}, f"{rule.id} ({rule.source}) has examples of kind(s) {sorted(kinds)} only"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_bad_examples_are_flagged(rule: Rule) -> None:
    for index, example in enumerate(e for e in rule.examples if e.kind == "bad"):
        findings, own = _own_findings(rule, example)
        assert own, (f"{rule.id} bad example #{index} is not flagged by the rule; all findings:\n"
                     f"{format_findings(findings)}\n{_show(example)}")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_good_examples_are_accepted(rule: Rule) -> None:
    for index, example in enumerate(e for e in rule.examples if e.kind == "good"):
        _, own = _own_findings(rule, example)
        assert not own, f"{rule.id} good example #{index} is flagged:\n{format_findings(own)}\n{_show(example)}"
