"""The check library (``linter/engine/checks/``): one module per family, a registry whose entries carry the
JSON Schema of their options, checks named after their one rule, and options validated when a pack loads
(a misspelt option is an error naming the rule file and the option, not a rule that silently finds nothing).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_cli
from jsonschema import Draft202012Validator
from support.rulepack import SPEC, rule_yaml

from linter.engine.checks import ALIASES, CHECKS, FAMILIES
from linter.engine.config import load_config
from linter.engine.rules import RuleError, builtin_pack_dir, load_pack
from linter.engine.runner import all_rules, lint
from linter.errors import KrpcLintError


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def load(tmp_path: Path, check: str) -> list:
    path = tmp_path / "rule.yaml"
    path.write_text(rule_yaml(check))
    return load_pack(path)


# --- the registry ------------------------------------------------------------------------------


def test_every_check_lives_in_one_family_module_of_at_most_500_lines() -> None:
    modules = {family.__name__ for family in FAMILIES}
    assert {definition.fn.__module__ for definition in CHECKS.values()} == modules
    for family in FAMILIES:
        assert family.__file__ is not None
        lines = Path(family.__file__).read_text(encoding="utf-8").count("\n")
        assert lines <= 500, f"{family.__name__} has {lines} lines"
    assert not (REPO_ROOT / "linter" / "engine" / "checks.py").exists()


def test_every_options_schema_is_a_json_schema_of_a_closed_object() -> None:
    for definition in CHECKS.values():
        Draft202012Validator.check_schema(definition.options_schema)
        assert definition.options_schema["type"] == "object"
        assert definition.options_schema["additionalProperties"] is False, definition.name
        assert definition.doc, f"{definition.name} has no docstring for `rules explain`"


def test_a_check_of_one_rule_is_named_after_it_and_every_check_is_used() -> None:
    rules = load_pack(builtin_pack_dir())
    calls = Counter(rule.check["function"] for rule in rules if "function" in rule.check)
    assert set(calls) == set(CHECKS)
    misnamed = [(rule.id, rule.name, rule.check["function"]) for rule in rules
                if "function" in rule.check and calls[rule.check["function"]] == 1
                and rule.check["function"] != rule.name]
    assert not misnamed
    assert not set(ALIASES) & set(CHECKS)
    assert set(ALIASES.values()) <= set(CHECKS)


def test_the_built_in_pack_validates_against_the_options_schemas(tmp_path, cache_dir) -> None:
    """No cache yet: every rule file is validated, options included."""
    assert len(load_pack(builtin_pack_dir())) == len(list(builtin_pack_dir().glob("*.yaml")))
    assert list(cache_dir.glob("rules-*.json"))


# --- options validated when a pack loads -------------------------------------------------------


@pytest.mark.parametrize("check, error", [
    ("function: name-suffix\noptions: {typ: response}\n", "check name-suffix has no option 'typ' (its options: type)"),
    ("function: name-suffix\noptions: {type: reponse}\n", "check name-suffix: option type: 'reponse' is not one of"),
    ("function: read-problem\noptions: {kinds: [syntx]}\n", "check read-problem: option kinds.0: 'syntx' is not one of"),
    ("function: read-problem\noptions: {kind: [syntax]}\n", "check read-problem has no option 'kind' (its options: kinds)"),
    ("function: read-problem\n", "check read-problem needs option(s) 'kinds'"),
    ("function: field-convention\noptions: {type: int16}\n", "check field-convention needs option(s) 'name'"),
    ("function: field-convention\noptions: {name: 'Code$', nullable: true}\n", "has no option 'nullable'"),
    ("function: field-convention\noptions: {name: '(unclosed'}\n", "option name: '(unclosed' is not a 'regex'"),
    ("function: unique-field-names\noptions: {ignore_case: 'yes'}\n", "option ignore_case: 'yes' is not of type 'boolean'"),
    ("function: duplicate-key\noptions: {strict: true}\n", "check duplicate-key has no option 'strict' (its options: none)"),
    ("function: name-suffix\noption: {type: response}\n", "a check is {function, options}; unknown option"),
    ("function: name-suffix\noptions: [type]\n", "check options must be a mapping"),
])
def test_a_misspelt_option_is_an_error_naming_the_file_and_the_option(tmp_path, cache_dir, check, error) -> None:
    with pytest.raises(RuleError) as raised:
        load(tmp_path, check)
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'rule.yaml'}: ") and error in message
    assert "\n" not in message
    assert isinstance(raised.value, KrpcLintError)
    assert not list(cache_dir.glob("rules-*.json")), "an invalid pack is never cached"


def test_valid_options_load_and_run(tmp_path, cache_dir) -> None:
    (rule,) = load(tmp_path, "function: name-suffix\noptions: {type: request}\n")
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "Example.json").write_text(SPEC)
    (tmp_path / ".krpc-lint.yaml").write_text("rule-packs: [rule.yaml]\n")
    findings = lint([specs], load_config(start=tmp_path)).findings
    assert [f.message for f in findings if f.rule == rule.id] == ["request name Example does not end with Request"]


def test_a_misspelt_option_in_a_configured_pack_is_a_usage_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "rule.yaml").write_text(rule_yaml("function: name-suffix\noptions: {typ: request}\n"))
    (tmp_path / ".krpc-lint.yaml").write_text("rule-packs: [rule.yaml]\n")
    (tmp_path / "Example.json").write_text(SPEC)
    result = run_cli("lint", "Example.json", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert "rule.yaml: check name-suffix has no option 'typ' (its options: type)" in result.stderr


def test_a_former_check_name_still_loads(tmp_path, cache_dir) -> None:
    """The four checks renamed after their rule keep their old names for users' packs (``ALIASES``)."""
    (rule,) = load(tmp_path, "function: pair-agrees\n")
    assert rule.check["function"] == "request-response-agree" and rule.scope == "directory"
    (cached,) = load(tmp_path, "function: pair-agrees\n")
    assert cached.check == rule.check


# --- `rules explain` shows the check's docs ----------------------------------------------------


def test_rules_explain_shows_the_check_and_its_docs() -> None:
    result = run_cli("rules", "explain", "KL355")
    assert result.returncode == 0, result.stderr
    assert 'Check:\n  field-convention {"name": "ErrorMessage$", "type": "string", "nullable_everywhere": true}\n' \
        in result.stdout
    assert "Fields whose name matches ``name``" in result.stdout
    assert "Status:    stable\n" in result.stdout


def test_rules_explain_of_a_rule_with_a_bytes_example() -> None:
    rule = next(r for r in all_rules() if r.id == "KL004")
    assert any(isinstance(text, bytes) for example in rule.examples for text in example.files.values())
    result = run_cli("rules", "explain", "KL004")
    assert result.returncode == 0, result.stderr
    assert "Bad example:\n  (bytes) 7b22" in result.stdout
    assert "Check:\n  read-problem" in result.stdout


@pytest.mark.parametrize("pattern", ["(a)\\1", "Code(?=s)", "(?<!Error)Code$"])
def test_a_convention_pattern_must_run_in_linear_time(tmp_path, cache_dir, pattern) -> None:
    """A back-reference or a look-around (which need backtracking) is refused when the pack loads: the pattern
    runs on field names from pull requests (RE2, as the declarative schemas' patterns)."""
    with pytest.raises(RuleError) as raised:
        load(tmp_path, f"function: field-convention\noptions: {{name: '{pattern}'}}\n")
    assert "option name:" in str(raised.value) and "RE2 (linear time) cannot run it" in str(raised.value)
