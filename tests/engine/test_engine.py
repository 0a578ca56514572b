"""The rule engine: selection, suppressions, per-path overrides, custom rule packs, cross-file scope."""

from __future__ import annotations

import json
import textwrap

import pytest

from linter import Config, UsageError, lint, lint_texts
from linter.engine.config import ConfigError, PathOverride, load_config
from linter.engine.declarative import needed_facts
from linter.engine.rules import RuleError, load_pack, render, template_fields


def spec(fields: list[dict], **root) -> str:
    message = {"name": "Example", "type": "data", "validVersions": "0-2", "flexibleVersions": "0+", **root}
    message["fields"] = fields
    return json.dumps(message, indent=2)


def field(name: str, type_: str = "int32", **more) -> dict:
    return {"name": name, "type": type_, "versions": "0+", **more}


def rules_of(report) -> list[str]:
    return [f.rule for f in report.findings]


BAD_NAME_LINE = '  {"name": "member-id", "type": "string", "versions": "0+"}'


def with_line(line: str) -> str:
    return '{"name": "Example", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": [\n' \
        + line + "\n]}"


# --- selection --------------------------------------------------------------------------------


def test_profiles_nest_kafka_in_recommended_in_strict():
    from linter import all_rules

    rules = all_rules()
    kafka = {r.id for r in rules if "kafka" in r.profiles}
    recommended = {r.id for r in rules if "recommended" in r.profiles}
    strict = {r.id for r in rules if "strict" in r.profiles}
    assert kafka < recommended < strict


def test_select_and_ignore_by_id_prefix_name_and_category():
    text = {"Example.json": spec([field("member-id"), field("Ids", "[]int32", fields=[field("X")])])}
    assert set(rules_of(lint_texts(text))) == {"KL301", "KL351"}
    assert rules_of(lint_texts(text, Config(ignore=("KL3",)))) == []
    assert rules_of(lint_texts(text, Config(ignore=("field-name-pattern",)))) == ["KL351"]
    assert rules_of(lint_texts(text, Config(profile="kafka"))) == ["KL301"]
    assert "KL801" in rules_of(lint_texts(text, Config(profile="kafka", select=("style",))))


def test_unknown_selector_is_a_usage_error():
    with pytest.raises(UsageError, match="KL999"):
        lint_texts({"Example.json": spec([field("Id")])}, Config(select=("KL999",)))


def test_severity_override():
    report = lint_texts({"Example.json": spec([field("Ids", "[]int32", fields=[field("X")])])},
                        Config(severity={"fields-on-primitive-array": "error"}))
    assert [(f.rule, f.severity) for f in report.findings] == [("KL351", "error")]
    assert report.failed("error")


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        lint([tmp_path / "nope.json"])


def test_exclude_and_per_path_overrides(tmp_path):
    (tmp_path / "metadata").mkdir()
    (tmp_path / "metadata" / "Example.json").write_text(spec([field("member-id")]))
    (tmp_path / "Example.json").write_text(spec([field("member-id")]))
    downgraded = Config(per_path=(PathOverride(("metadata/**",), severity={"KL301": "warning"}),))
    severities = sorted((f.path.endswith("metadata/Example.json"), f.severity) for f in lint([tmp_path], downgraded).findings)
    assert severities == [(False, "error"), (True, "warning")]
    ignored = Config(per_path=(PathOverride(("metadata/**",), ignore=("fields",)),))
    assert [f.path.endswith("metadata/Example.json") for f in lint([tmp_path], ignored).findings] == [False]
    assert len(lint([tmp_path], Config(exclude=("metadata/*",))).findings) == 1


def test_config_file_keys_are_checked(tmp_path):
    config = tmp_path / ".krpc-lint.yaml"
    config.write_text("profile: strict\nselct: [KL1]\n")
    with pytest.raises(ConfigError, match="selct"):
        load_config(config)
    config.write_text("profile: paranoid\n")
    with pytest.raises(ConfigError, match="profile"):
        load_config(config)


# --- suppressions -----------------------------------------------------------------------------


def test_suppression_on_the_same_line():
    text = with_line(BAD_NAME_LINE + " // krpc-lint: ignore[KL301] wire name kept for old clients")
    report = lint_texts({"Example.json": text})
    assert rules_of(report) == [] and report.suppressed == 1


def test_suppression_by_name_on_the_line_before():
    text = with_line("  // krpc-lint: ignore[field-name-pattern] wire name kept for old clients\n" + BAD_NAME_LINE)
    assert rules_of(lint_texts({"Example.json": text})) == []


def test_suppression_does_not_reach_two_lines_down():
    text = with_line("  // krpc-lint: ignore[KL301] wire name kept\n\n" + BAD_NAME_LINE)
    assert sorted(rules_of(lint_texts({"Example.json": text}))) == ["KL301", "KL901"]


def test_file_level_suppression():
    text = "// krpc-lint: ignore-file[KL301] generated names\n" + with_line(BAD_NAME_LINE)
    assert rules_of(lint_texts({"Example.json": text})) == []


def test_suppression_needs_a_reason_and_a_match():
    no_reason = with_line(BAD_NAME_LINE + " // krpc-lint: ignore[KL301]")
    assert sorted(rules_of(lint_texts({"Example.json": no_reason}))) == ["KL301", "KL902"]
    unused = with_line('  {"name": "MemberId", "type": "string", "versions": "0+"} // krpc-lint: ignore[KL301] old')
    report = lint_texts({"Example.json": unused})
    assert [(f.rule, f.line) for f in report.findings] == [("KL901", 2)]


def test_suppression_text_inside_a_string_is_not_a_suppression():
    text = with_line('  {"name": "member-id", "type": "string", "versions": "0+", '
                     '"about": "// krpc-lint: ignore[KL301] not a comment"}')
    assert rules_of(lint_texts({"Example.json": text})) == ["KL301"]


# --- cross-file scope -------------------------------------------------------------------------


def pair(tmp_path, response: bool = True):
    request = spec([field("Id")], name="ExampleRequest", type="request", apiKey=1000, listeners=["broker"])
    (tmp_path / "ExampleRequest.json").write_text(request)
    if response:
        (tmp_path / "ExampleResponse.json").write_text(spec([field("Id")], name="ExampleResponse", type="response",
                                                            apiKey=1000, validVersions="0-1"))


def test_missing_partner_is_reported_only_for_a_whole_directory(tmp_path):
    pair(tmp_path, response=False)
    assert rules_of(lint([tmp_path])) == ["KL703"]
    assert rules_of(lint([tmp_path / "ExampleRequest.json"])) == []


def test_pair_disagreement_is_reported_on_the_response(tmp_path):
    pair(tmp_path)
    findings = lint([tmp_path]).findings
    assert [(f.rule, f.path.endswith("ExampleResponse.json")) for f in findings] == [("KL3001", True)]


# --- custom rule packs ------------------------------------------------------------------------

CUSTOM_RULE = textwrap.dedent('''\
    id: ACME001
    name: acme-field-prefix
    title: Extension fields start with Acme
    severity: error
    category: naming
    profiles: [recommended, strict]
    rationale: Extension fields must not collide with future Kafka fields.
    check:
      on: field
      schema: {properties: {name: {pattern: "^Acme"}}}
      message: 'field {name} must start with "Acme"'
      at: name
    examples:
      bad: ['{"name": "X", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": [{"name": "Id", "type": "int32", "versions": "0+"}]}']
      good: ['{"name": "X", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": [{"name": "AcmeId", "type": "int32", "versions": "0+"}]}']
    ''')


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_custom_pack_from_config(tmp_path, cache_dir):
    pack = tmp_path / "lint-rules"
    pack.mkdir()
    (pack / "ACME001.yaml").write_text(CUSTOM_RULE)
    (tmp_path / "pyproject.toml").write_text('[tool.krpc-lint]\nrule-packs = ["lint-rules"]\n')
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "Example.json").write_text(spec([field("Id"), field("AcmeName", "string")]))
    report = lint([specs], load_config(start=tmp_path))
    assert [(f.rule, f.line, f.message) for f in report.findings] == [("ACME001", 8, 'field Id must start with "Acme"')]
    assert list(cache_dir.glob("rules-*.json")), "the pack was cached"
    assert [f.rule for f in lint([specs], load_config(start=tmp_path)).findings] == ["ACME001"]


@pytest.mark.parametrize("change, error", [
    (("check:\n  on: field", "check:\n  on: fields"), "on: message|field|struct"),
    (("severity: error", "severity: fatal"), "severity"),
    (("profiles: [recommended, strict]", "profiles: [everything]"), "profiles"),
    (("message: 'field {name} must", "message: 'field {name.__class__} must"), "placeholders"),
    (("schema: {properties", "schema: {type: 12, properties"), "invalid schema"),
    (("title: Extension", "titel: Extension"), "unknown titel"),
])
def test_bad_rule_files_are_refused_with_file_and_reason(tmp_path, cache_dir, change, error):
    path = tmp_path / "rule.yaml"
    path.write_text(CUSTOM_RULE.replace(*change))
    with pytest.raises(RuleError, match=error) as raised:
        load_pack(path)
    assert str(path) in str(raised.value)


def test_unknown_check_function_is_refused(tmp_path, cache_dir):
    path = tmp_path / "rule.yaml"
    path.write_text(CUSTOM_RULE.split("check:")[0] + "check:\n  function: no-such-check\n")
    with pytest.raises(RuleError, match="unknown check function 'no-such-check'"):
        load_pack(path)


def test_templates_accept_plain_names_only():
    assert template_fields("field {name} of {type}") == ["name", "type"]
    for hostile in ("{name.__class__}", "{name[0]}", "{name!r}", "{name:>10}"):
        with pytest.raises(RuleError):
            template_fields(hostile)
    assert render("field {name} {missing}", {"name": "{0.__class__}"}) == "field {0.__class__} "


def test_needed_facts_projection():
    assert needed_facts({"properties": {"name": {"pattern": "x"}}}, "{name}") == {"name"}
    assert needed_facts({"if": {"required": ["tag"]}, "then": {"properties": {"type": {}}}}, "{about}") == \
        {"tag", "type", "about"}
    assert needed_facts({"additionalProperties": False}, "") is None


# --- result cache -----------------------------------------------------------------------------


def test_cache_reuses_findings_of_unchanged_files_only(tmp_path, monkeypatch):
    from linter.engine import runner

    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "A.json").write_text(spec([field("member-id")], name="A"))
    (specs / "B.json").write_text(spec([field("Id")], name="B"))
    config = Config(cache_dir=str(tmp_path / "cache"))
    first = lint([specs], config)
    assert [f.rule for f in first.findings] == ["KL301"]

    real_run = runner._run

    def must_not_run(rule, target):
        assert rule.scope == "meta", f"{rule.id} ran on an unchanged input"
        return real_run(rule, target)

    monkeypatch.setattr(runner, "_run", must_not_run)
    assert lint([specs], config).findings == first.findings
    monkeypatch.undo()

    (specs / "B.json").write_text(spec([field("bad_name")], name="B"))
    checked = []
    monkeypatch.setattr(runner, "_run", lambda rule, target: checked.append((rule.scope, target)) or real_run(rule, target))
    again = lint([specs], config)
    assert sorted(f.path.rsplit("/", 1)[-1] for f in again.findings) == ["A.json", "B.json"]
    file_targets = {t.path for scope, t in checked if scope == "file"}
    assert any(p.endswith("B.json") for p in file_targets)
    assert not any(p.endswith("A.json") for p in file_targets), "A.json was unchanged"


def test_cache_is_keyed_by_the_rule_selection(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "A.json").write_text(spec([field("member-id")], name="A"))
    cache = str(tmp_path / "cache")
    assert [f.rule for f in lint([specs], Config(cache_dir=cache)).findings] == ["KL301"]
    assert lint([specs], Config(cache_dir=cache, ignore=("KL301",))).findings == []
    downgraded = lint([specs], Config(cache_dir=cache, severity={"KL301": "warning"})).findings
    assert [(f.rule, f.severity) for f in downgraded] == [("KL301", "warning")]


def test_suppressions_apply_after_the_cache(tmp_path):
    path = tmp_path / "Example.json"
    path.write_text(with_line(BAD_NAME_LINE))
    cache = str(tmp_path / "cache")
    assert [f.rule for f in lint([path], Config(cache_dir=cache)).findings] == ["KL301"]
    path.write_text(with_line(BAD_NAME_LINE + " // krpc-lint: ignore[KL301] kept for old clients"))
    assert lint([path], Config(cache_dir=cache)).findings == []


def test_a_corrupt_cache_is_ignored(tmp_path):
    (tmp_path / "A.json").write_text(spec([field("member-id")], name="A"))
    cache = tmp_path / "cache"
    lint([tmp_path / "A.json"], Config(cache_dir=str(cache)))
    for file in cache.glob("results-*.json"):
        entries = json.loads(file.read_text())["files"]
        file.write_text(json.dumps({"version": 1, "dirs": {}, "files": {
            name: [digest, [["truncated row"]]] for name, (digest, _) in entries.items()}}))
    assert [f.rule for f in lint([tmp_path / "A.json"], Config(cache_dir=str(cache))).findings] == ["KL301"]


def test_a_suppression_of_a_compat_rule_is_never_unused_for_lint():
    # lint never runs the compat rules (KL1xxx): only `krpc-lint compat` can tell whether it is used
    for name in ("KL1003", "field-retyped"):
        text = with_line('  {"name": "MemberId", "type": "int64", "versions": "0+"} '
                         f"// krpc-lint: ignore[{name}] int32 -> int64 before any client used it")
        assert rules_of(lint_texts({"Example.json": text})) == []
    lint_rule = with_line('  {"name": "MemberId", "type": "int64", "versions": "0+"} // krpc-lint: ignore[KL301] old')
    assert rules_of(lint_texts({"Example.json": lint_rule})) == ["KL901"]
