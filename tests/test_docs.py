"""The generated docs stay in step with the code."""

from pathlib import Path

from linter.report.rules_doc import render_rules_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_rules_md_is_generated_from_rules():
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_rules_markdown(), "docs/rules.md is stale: run `make docs`"


def test_every_rule_is_documented_once():
    text = render_rules_markdown()
    from linter.engine.runner import all_rules

    for rule in all_rules():
        assert text.count(f"### {rule.id} {rule.name}") == 1


def test_generated_schema_validator_matches_the_schema():
    from linter.model import _spec_validator
    from linter.model.schema import schema_digest

    assert _spec_validator.SCHEMA_SHA256 == schema_digest(), "run `python -m linter.model.schema`"
