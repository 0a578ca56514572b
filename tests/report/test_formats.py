"""The output formats of ``linter.report``: text, json, sarif (validated against the official
SARIF 2.1.0 schema), github workflow commands and JUnit XML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from linter.engine.config import Config
from linter.engine.findings import Finding, Report
from linter.engine.runner import all_rules, lint, lint_texts, select_rules
from linter.report import FORMATS, render

BAD_SPEC = ('{"name": "Example", "type": "data", "validVersions": "0", "flexibleVersions": "0+", '
            '"fields": [{"name": "member-id", "type": "string", "versions": "0+"}]}')

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def finding(path="specs/A.json", line=3, col=7, rule="KL301", name="field-name-pattern", severity="error",
            category="fields", message="invalid field name", hint="Rename the field.") -> Finding:
    return Finding(path, line, col, rule, name, severity, category, message, hint)


def report_of(*findings: Finding, files: int = 3) -> Report:
    return Report(findings=sorted(findings), files=files)


@pytest.fixture
def mixed() -> Report:
    return report_of(
        finding(),
        finding(path="specs/B.json", line=1, col=1, rule="KL752", name="file-name-matches", severity="warning",
                category="messages", message="message B is in B.json", hint=""),
        finding(path="specs/C.json", line=2, col=4, rule="KL551", name="redundant-default", severity="info",
                category="defaults", message="default equals the implicit one", hint=""),
    )


def test_unknown_format_is_refused(mixed):
    with pytest.raises(ValueError, match="unknown output format"):
        render(mixed, "xml")
    assert FORMATS == ("text", "json", "sarif", "github", "junit")


# --- text ----------------------------------------------------------------------------------


def test_text_lines_hints_and_summary(mixed):
    assert render(mixed, "text").splitlines() == [
        "specs/A.json:3:7: KL301 [field-name-pattern] invalid field name",
        "  hint: Rename the field.",
        "specs/B.json:1:1: KL752 [file-name-matches] message B is in B.json",
        "specs/C.json:2:4: KL551 [redundant-default] default equals the implicit one",
        "Found 1 error, 1 warning, 1 info in 3 files.",
    ]


@pytest.mark.parametrize(("report", "summary"), [
    (report_of(files=258), "All checks passed: 258 files."),
    (report_of(files=1), "All checks passed: 1 file."),
    (report_of(finding(), finding(line=9), finding(severity="warning"), files=258),
     "Found 2 errors, 1 warning in 258 files."),
    (Report(files=2, suppressed=1, baselined=4), "All checks passed: 2 files (1 suppressed, 4 baselined)."),
])
def test_text_summary(report, summary):
    assert render(report, "text").splitlines()[-1] == summary


def test_text_colour_only_when_asked(mixed):
    plain = render(mixed, "text")
    coloured = render(mixed, "text", color=True)
    assert "\x1b[" not in plain
    assert "\x1b[" in coloured
    assert ANSI.sub("", coloured) == plain
    assert "\x1b[1;31mKL301 [field-name-pattern]" in coloured  # errors in bold red


def test_text_colour_keeps_brackets_literal():
    report = report_of(finding(message="[bold]not markup[/bold] :smile:"))
    assert "[bold]not markup[/bold] :smile:" in ANSI.sub("", render(report, "text", color=True))


# --- json ----------------------------------------------------------------------------------


def test_json_shape(mixed):
    data = json.loads(render(mixed, "json"))
    assert list(data) == ["findings", "summary"]
    assert [list(item) for item in data["findings"]] == [
        ["rule", "name", "severity", "category", "path", "line", "col", "message", "hint"]] * 3
    assert data["findings"][0] == {
        "rule": "KL301", "name": "field-name-pattern", "severity": "error", "category": "fields",
        "path": "specs/A.json", "line": 3, "col": 7, "message": "invalid field name", "hint": "Rename the field.",
    }
    assert data["summary"] == {"files": 3, "findings": 3, "errors": 1, "warnings": 1, "infos": 1,
                               "suppressed": 0, "baselined": 0, "skipped": 0}


def test_json_keeps_unicode():
    assert "Größe" in render(report_of(finding(message="Größe")), "json")


# --- sarif ---------------------------------------------------------------------------------


def test_sarif_is_valid_and_complete(mixed, sarif_validator):
    log = json.loads(render(mixed, "sarif"))
    sarif_validator.validate(log)
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "krpc-lint"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", driver["version"])
    assert driver["informationUri"].startswith("https://")
    assert [r["level"] for r in run["results"]] == ["error", "warning", "note"]
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    first = run["results"][0]
    assert first["message"]["text"] == "invalid field name"
    location = first["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "specs/A.json"}, "region": {"startLine": 3, "startColumn": 7}}


def test_sarif_rules_come_from_the_rule_definitions(sarif_validator):
    ruleset = select_rules(Config())
    rules = {rule.id: rule for rule in ruleset.rules}
    log = json.loads(render(report_of(finding()), "sarif", rules=rules))
    sarif_validator.validate(log)
    descriptors = log["runs"][0]["tool"]["driver"]["rules"]
    assert [d["id"] for d in descriptors] == sorted(rules)
    kl301 = next(d for d in descriptors if d["id"] == "KL301")
    rule = rules["KL301"]
    assert kl301["name"] == rule.name
    assert kl301["shortDescription"] == {"text": rule.title}
    assert kl301["fullDescription"] == {"text": rule.rationale}
    assert kl301["help"] == {"text": rule.hint}
    assert kl301["defaultConfiguration"] == {"level": "error"}
    assert log["runs"][0]["results"][0]["ruleIndex"] == descriptors.index(kl301)


def test_sarif_of_a_real_run_validates(tmp_path, monkeypatch, sarif_validator):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "Example.json").write_text(BAD_SPEC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report = lint(["specs"])
    assert any(f.rule == "KL301" for f in report.findings)
    rules = {rule.id: rule for rule in select_rules(Config()).rules}
    log = json.loads(render(report, "sarif", rules=rules))
    sarif_validator.validate(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"specs/Example.json"}


def test_sarif_of_every_rules_bad_examples_validates(sarif_validator):
    """Every rule's own bad examples (all severities, all message shapes) make a valid SARIF log."""
    config = Config(profile="strict", select=("ALL",))
    combined = Report()
    for rule in all_rules():
        for example in rule.examples:
            if example.kind == "bad":
                report = lint_texts({f"{rule.id}/{name}": text for name, text in example.files.items()}, config)
                combined.findings.extend(report.findings)
                combined.files += report.files
    assert combined.findings
    rules = {rule.id: rule for rule in select_rules(config).rules}
    log = json.loads(render(combined, "sarif", rules=rules))
    sarif_validator.validate(log)
    assert len(log["runs"][0]["results"]) == len(combined.findings)
    ET.fromstring(render(combined, "junit"))


def test_sarif_uris_are_uri_references(sarif_validator):
    report = report_of(finding(path="my specs/A b.json"), finding(path="/abs/dir/C.json"))
    log = json.loads(render(report, "sarif"))
    sarif_validator.validate(log)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["file:///abs/dir/C.json", "my%20specs/A%20b.json"]


def test_sarif_schema_check_is_effective(mixed, sarif_validator):
    log = json.loads(render(mixed, "sarif"))
    log["runs"][0]["results"][0]["level"] = "info"  # not a SARIF level
    assert not sarif_validator.is_valid(log)


def test_sarif_empty_report_validates(sarif_validator):
    log = json.loads(render(report_of(), "sarif"))
    sarif_validator.validate(log)
    assert log["runs"][0]["results"] == []


# --- github --------------------------------------------------------------------------------


def test_github_commands(mixed):
    assert render(mixed, "github").splitlines() == [
        "::error file=specs/A.json,line=3,col=7,title=KL301 [field-name-pattern]::invalid field name",
        "::warning file=specs/B.json,line=1,col=1,title=KL752 [file-name-matches]::message B is in B.json",
        "::notice file=specs/C.json,line=2,col=4,title=KL551 [redundant-default]::default equals the implicit one",
    ]


def test_github_escaping():
    """GitHub's rules (``%`` as ``%25``, and in properties ``:`` and ``,``), over the printable text: a line break
    of the input shows as ``\\r\\n`` in the annotation, so the command stays one line whatever the runner does."""
    report = report_of(finding(path="dir,x/a:b%.json", message="100% wrong:\r\nsee, here\x1b]0;t\x07"))
    (line,) = render(report, "github").splitlines()
    assert line == ("::error file=dir%2Cx/a%3Ab%25.json,line=3,col=7,title=KL301 [field-name-pattern]"
                    "::100%25 wrong:\\r\\nsee, here\\x1b]0;t\\x07")


def test_github_nothing_for_a_clean_report():
    assert render(report_of(), "github") == ""


# --- junit ---------------------------------------------------------------------------------


def test_junit_one_case_per_file(mixed):
    files = ["specs/A.json", "specs/B.json", "specs/C.json", "specs/D.json"]
    root = ET.fromstring(render(mixed, "junit", files=files))
    (suite,) = root.iter("testsuite")
    assert suite.get("name") == "krpc-lint"
    assert suite.get("tests") == "4"
    assert suite.get("failures") == "2"
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == files
    (failure,) = cases["specs/A.json"].findall("failure")
    assert failure.get("message") == "KL301 [field-name-pattern] invalid field name"
    assert failure.text == "specs/A.json:3:7"
    assert len(cases["specs/B.json"].findall("failure")) == 1  # warnings fail too
    assert cases["specs/C.json"].findall("failure") == []  # info does not
    assert cases["specs/D.json"].findall("failure") == []


def test_junit_without_a_file_list_uses_the_findings():
    root = ET.fromstring(render(report_of(finding(), finding(line=8)), "junit"))
    (case,) = root.iter("testcase")
    assert len(case.findall("failure")) == 2


def test_junit_survives_characters_xml_cannot_carry():
    text = render(report_of(finding(message='bad \x01 "name" <&>')), "junit")
    (failure,) = ET.fromstring(text).iter("failure")
    assert failure.get("message") == 'KL301 [field-name-pattern] bad \\x01 "name" <&>'
    text = render(report_of(finding(message="not XML: \ufffe")), "junit")
    (failure,) = ET.fromstring(text).iter("failure")
    assert failure.get("message") == "KL301 [field-name-pattern] not XML: \ufffd"
