"""A rule's lifecycle, as ruff and buf have it: ``status: stable|preview|deprecated|removed`` and
``replaced-by`` in its YAML. A preview rule runs only when ``select`` names it by id or name (or with
``preview = true``); a deprecated one runs, and naming it warns with its replacement; a removed one never
runs, and naming it is a usage error with its replacement. Listings, ``rules explain`` and the generated
docs show the status."""

from __future__ import annotations

import json
import logging

import pytest
from conftest import run_cli
from support.rulepack import SPEC, rule_yaml

from linter.engine import rules as rules_module
from linter.engine.config import Config, load_config
from linter.engine.rules import RuleError, load_pack
from linter.engine.runner import all_rules, lint
from linter.report.rules_doc import render_rules_markdown

CHECK = "function: name-suffix\noptions: {type: request}\n"
RULE_ID, RULE_NAME = "ACME101", "acme-request-suffix"


def lifecycle_rule(status: str | None, replaced_by: str | None = None) -> str:
    text = rule_yaml(CHECK, RULE_ID, RULE_NAME)
    text += f"status: {status}\n" if status else ""
    return text + (f"replaced-by: {replaced_by}\n" if replaced_by else "")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """``project(status, replaced_by, config)``: a directory with a spec, a pack of one rule (ACME101, in the
    recommended profile, flags the spec) and a config; returns the loaded config."""
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(rules_module, "_WARNED", set())
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "Example.json").write_text(SPEC)

    def make(status: str | None, replaced_by: str | None = None, config: str = "") -> Config:
        (tmp_path / "pack.yaml").write_text(lifecycle_rule(status, replaced_by))
        (tmp_path / ".krpc-lint.yaml").write_text("rule-packs: [pack.yaml]\n" + config)
        return load_config(start=tmp_path)

    return make


def acme_findings(config: Config, specs) -> list[str]:
    return [f.message for f in lint([specs], config).findings if f.rule == RULE_ID]


FLAGGED = ["request name Example does not end with Request"]


# --- the YAML ------------------------------------------------------------------------------------


def test_status_defaults_to_stable_and_every_built_in_rule_is_stable() -> None:
    rules = all_rules()
    assert {rule.status for rule in rules} == {"stable"}
    assert all(rule.replaced_by is None for rule in rules)


@pytest.mark.parametrize("status, replaced_by, error", [
    ("retired", None, "status must be one of stable, preview, deprecated, removed"),
    ("stable", "KL705", "replaced-by is only for a deprecated or removed rule (status: stable)"),
    ("preview", "KL705", "replaced-by is only for a deprecated or removed rule (status: preview)"),
    ("deprecated", "[KL705]", "replaced-by must be a rule id or name"),
])
def test_a_bad_status_or_replacement_is_refused(tmp_path, monkeypatch, status, replaced_by, error) -> None:
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "pack.yaml"
    path.write_text(lifecycle_rule(status, replaced_by))
    with pytest.raises(RuleError, match=error.replace("(", r"\(").replace(")", r"\)")) as raised:
        load_pack(path)
    assert str(raised.value).startswith(f"{path}: ")


def test_the_status_and_replacement_are_loaded(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "pack.yaml"
    path.write_text(lifecycle_rule("deprecated", "request-name-suffix"))
    for _ in range(2):  # read from the YAML, then from the cache
        (rule,) = load_pack(path)
        assert (rule.status, rule.replaced_by) == ("deprecated", "request-name-suffix")
        assert rule.status_text == "deprecated; use request-name-suffix instead"


# --- what runs -----------------------------------------------------------------------------------


def test_a_stable_rule_runs_by_profile(project, tmp_path) -> None:
    assert acme_findings(project(None), tmp_path / "specs") == FLAGGED


def test_a_preview_rule_runs_only_when_named_or_with_preview_on(project, tmp_path) -> None:
    specs = tmp_path / "specs"
    assert acme_findings(project("preview"), specs) == []
    assert acme_findings(project("preview", config="select: [ACME]\n"), specs) == []  # a prefix names no rule
    assert acme_findings(project("preview", config="select: [naming]\n"), specs) == []  # nor does a category
    assert acme_findings(project("preview", config=f"select: [{RULE_ID}]\n"), specs) == FLAGGED
    assert acme_findings(project("preview", config=f"select: [{RULE_NAME}]\n"), specs) == FLAGGED
    assert acme_findings(project("preview", config="preview: true\n"), specs) == FLAGGED
    named_but_ignored = f"select: [{RULE_ID}]\nignore: [{RULE_ID}]\n"
    assert acme_findings(project("preview", config=named_but_ignored), specs) == []


def test_a_deprecated_rule_runs_and_naming_it_warns_once(project, tmp_path, caplog) -> None:
    specs = tmp_path / "specs"
    caplog.set_level(logging.WARNING, logger="linter")
    assert acme_findings(project("deprecated", "KL705"), specs) == FLAGGED
    assert caplog.messages == []  # selected by its profile only: no warning
    config = project("deprecated", "KL705", config=f"select: [{RULE_NAME}]\n")
    assert acme_findings(config, specs) == FLAGGED
    assert acme_findings(config, specs) == FLAGGED
    assert caplog.messages == [f"krpc-lint: warning: {config.source}: rule {RULE_ID} ({RULE_NAME}) is deprecated; "
                               "use KL705 instead"]


def test_a_removed_rule_never_runs_and_naming_it_is_a_usage_error(project, tmp_path) -> None:
    specs = tmp_path / "specs"
    assert acme_findings(project("removed", "KL705"), specs) == []
    assert acme_findings(project("removed", "KL705", config="select: [ACME]\n"), specs) == []
    config = project("removed", "KL705", config=f"select: [{RULE_ID}]\n")
    with pytest.raises(RuleError, match=rf"rule {RULE_ID} \({RULE_NAME}\) was removed; use KL705 instead"):
        lint([specs], config)


def test_the_cli_warns_in_one_line_and_refuses_a_removed_rule(project, tmp_path) -> None:
    project("deprecated", "KL705", config=f"select: [{RULE_ID}]\n")
    warned = run_cli("lint", "specs", cwd=tmp_path)
    assert warned.returncode == 1, warned.stderr  # the lint ran: the request has no response (KL703)
    assert warned.stderr.splitlines()[0] == (f"krpc-lint: warning: {tmp_path / '.krpc-lint.yaml'}: rule {RULE_ID} "
                                             f"({RULE_NAME}) is deprecated; use KL705 instead")
    assert "does not end with Request" in warned.stdout
    project("removed", "KL705")
    refused = run_cli("lint", "--select", RULE_NAME, "specs", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr == f"krpc-lint: error: rule {RULE_ID} ({RULE_NAME}) was removed; use KL705 instead\n"


# --- where the status shows ----------------------------------------------------------------------


def test_rules_list_and_explain_show_the_status(project, tmp_path) -> None:
    project("deprecated", "KL705")
    listed = run_cli("rules", cwd=tmp_path)
    row = next(line for line in listed.stdout.splitlines() if line.startswith(RULE_ID))
    assert row.endswith("Requests end in Request (deprecated; use KL705 instead)")
    as_json = json.loads(run_cli("rules", "--format", "json", cwd=tmp_path).stdout)
    acme = next(rule for rule in as_json if rule["id"] == RULE_ID)
    assert (acme["status"], acme["replaced-by"]) == ("deprecated", "KL705")
    assert next(rule for rule in as_json if rule["id"] == "KL301")["status"] == "stable"
    explained = run_cli("rules", "explain", RULE_ID, cwd=tmp_path)
    assert "Status:    deprecated; use KL705 instead\n" in explained.stdout


@pytest.mark.parametrize("status", ["preview", "removed"])
def test_the_generated_docs_show_the_status(tmp_path, monkeypatch, status) -> None:
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "pack.yaml"
    path.write_text(lifecycle_rule(status, "KL705" if status == "removed" else None))
    markdown = render_rules_markdown(load_pack(path))
    shown = f"{status}; use KL705 instead" if status == "removed" else status
    assert f"| {RULE_ID}" not in markdown  # the table links the id
    assert f"| Requests end in Request ({shown}) |" in markdown
    assert f"\nStatus: {shown}.\n" in markdown
    assert "Status:" not in render_rules_markdown([r for r in all_rules() if r.id == "KL301"])


def test_the_preview_flag_runs_preview_rules_in_lint_and_compat_alike(project, tmp_path) -> None:
    """``--preview`` is ``preview = true`` for one run, and a flag of both commands (shared options)."""
    project("preview")
    without = run_cli("lint", "specs", cwd=tmp_path)
    with_flag = run_cli("lint", "--preview", "specs", cwd=tmp_path)
    assert RULE_ID not in without.stdout
    assert f"{RULE_ID} [{RULE_NAME}]" in with_flag.stdout, with_flag.stderr
    for command in ("lint", "compat"):
        assert "--preview" in run_cli(command, "--help", cwd=tmp_path).stdout
