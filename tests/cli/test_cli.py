"""The ``krpc-lint`` command line: exit codes, config discovery and overrides, baselines,
output files and formats, ``rules``, ``rules explain``, ``schema`` and ``--version``.

A few tests run the installed console script in a subprocess (the real entry point, exit
codes and start-up imports); the rest use click's CliRunner in a temporary directory.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.gitrepo import commit, git, init_repo, isolate_git

from linter.cli.main import cli

BAD_SPEC = ('{"name": "Example", "type": "data", "validVersions": "0", "flexibleVersions": "0+", '
            '"fields": [{"name": "member-id", "type": "string", "versions": "0+"}]}')
GOOD_SPEC = BAD_SPEC.replace("member-id", "MemberId")


def _command() -> list[str]:
    script = Path(sys.executable).parent / "krpc-lint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "linter.cli.main"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "KRPC_LINT_DEBUG", "FORCE_COLOR")}
    env.update(extra)
    return env


def krpc(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_command(), *args], cwd=cwd, env=_env(**env), capture_output=True, check=False, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture
def run(tmp_path, monkeypatch):
    """``run(*args)`` invokes the CLI in-process with ``tmp_path`` as the working directory."""
    monkeypatch.chdir(tmp_path)
    for name in ("NO_COLOR", "KRPC_LINT_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return invoke


def write_spec(directory: Path, text: str = BAD_SPEC, name: str = "Example.json") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def bad(tmp_path) -> Path:
    return write_spec(tmp_path / "specs")


@pytest.fixture
def good(tmp_path) -> Path:
    return write_spec(tmp_path / "good", GOOD_SPEC)


def findings_of(result) -> list[dict]:
    return json.loads(result.stdout)["findings"]


# --- the real entry point ------------------------------------------------------------------


def test_exit_codes_of_the_console_script(tmp_path, bad, good):
    clean = krpc(tmp_path, "lint", "good")
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout == "All checks passed: 1 file.\n"

    failing = krpc(tmp_path, "lint", "specs")
    assert failing.returncode == 1, failing.stderr
    lines = failing.stdout.splitlines()
    kl301 = next(line for line in lines if "KL301" in line)
    assert kl301.startswith(f"{Path('specs', 'Example.json')}:1:")
    assert " KL301 [field-name-pattern] invalid field name \"member-id\"" in kl301
    assert lines[lines.index(kl301) + 1].startswith("  hint: ")
    assert lines[-1].startswith("Found ") and lines[-1].endswith(" in 1 file.")
    assert "\x1b[" not in failing.stdout  # not a terminal: no colour

    missing = krpc(tmp_path, "lint", "nowhere")
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert "krpc-lint: error: nowhere: no such file or directory" in missing.stderr


def test_startup_imports_no_heavy_modules(tmp_path):
    code = ("import sys, linter.cli.main\n"
            "heavy = [m for m in ('rich', 'jsonschema', 'networkx', 'fastjsonschema') "
            "if m in sys.modules]\n"
            "assert not heavy, heavy")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, check=False, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def _loaded_by(cwd: Path, *args: str, **env: str) -> tuple[int, set[str]]:
    """The exit code of ``krpc-lint ARGS`` and the modules its process holds when it ends (the real entry point,
    in a child)."""
    code = ("import json, sys\nfrom linter.cli.main import main\n"
            f"sys.argv = ['krpc-lint', *{list(args)!r}]\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    status = exc.code\n"
            "print(json.dumps([status, sorted(sys.modules)]))")
    result = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=_env(**env), capture_output=True, check=False,
                            text=True, timeout=60)
    status, modules = json.loads(result.stdout.splitlines()[-1])
    return status, set(modules)


def test_a_config_is_checked_by_the_shipped_validator(tmp_path):
    # The generated validator of config.schema.json answers: no schema compiled (that would load RE2 for its
    # patterns), no jsonschema (it only explains a refused config).
    write_spec(tmp_path / "specs", GOOD_SPEC)
    (tmp_path / "pyproject.toml").write_text('[tool.krpc-lint]\nignore = ["missing-about"]\n', encoding="utf-8")
    cache = str(tmp_path / "cache")
    assert krpc(tmp_path, "lint", "specs", KRPC_LINT_CACHE_DIR=cache).returncode == 0  # the lint cache warmed
    status, loaded = _loaded_by(tmp_path, "lint", "specs", KRPC_LINT_CACHE_DIR=cache)
    assert status == 0
    assert "linter.engine._config_validator" in loaded
    assert not loaded & {"re2", "jsonschema", "rich", "networkx"}


def test_version(tmp_path):
    result = krpc(tmp_path, "--version")
    assert result.returncode == 0
    assert result.stdout.startswith("krpc-lint ")
    assert result.stdout.split()[1][0].isdigit()


def test_internal_error_without_and_with_debug(tmp_path, bad):
    # Any unexpected exception inside a command is an internal error: exit 2, one line, no traceback.
    boom = "import linter.engine.runner as r\n" \
           "def explode(*a, **k):\n    raise RuntimeError('boom')\n" \
           "r.lint = explode\n" \
           "from linter.cli.main import main\nmain()\n"
    for debug, traceback_expected in (("0", False), ("1", True)):
        result = subprocess.run([sys.executable, "-c", boom, "lint", "specs"], cwd=tmp_path, capture_output=True, check=False,
                                text=True, timeout=60, env=_env(KRPC_LINT_DEBUG=debug))
        assert result.returncode == 2
        assert "krpc-lint: internal error: RuntimeError: boom" in result.stderr
        assert ("Traceback" in result.stderr) is traceback_expected


# --- exit codes and usage errors -----------------------------------------------------------


def test_unknown_selector_is_a_usage_error(run, bad):
    result = run("lint", "specs", "--select", "KL999999")
    assert result.exit_code == 2
    assert "krpc-lint: error: unknown rule selector 'KL999999'" in result.stderr


def test_an_unknown_selector_in_the_config_names_the_config(run, tmp_path, bad):
    """Issue 15: the error did not say which file held the selector."""
    (tmp_path / ".krpc-lint.yaml").write_text("ignore: [KL999999]\n")
    result = run("lint", "specs")
    assert result.exit_code == 2
    assert f"{tmp_path / '.krpc-lint.yaml'}: unknown rule selector 'KL999999'" in result.stderr


def test_bad_config_is_a_usage_error(run, tmp_path, bad):
    (tmp_path / ".krpc-lint.yaml").write_text("profile: nope\n", encoding="utf-8")
    result = run("lint", "specs")
    assert result.exit_code == 2
    assert "profile must be one of" in result.stderr
    missing = run("lint", "specs", "--config", "absent.yaml")
    assert missing.exit_code == 2
    assert "config file not found" in missing.stderr


def test_bad_baseline_is_a_usage_error(run, tmp_path, bad):
    (tmp_path / "baseline.json").write_text("[1, 2]", encoding="utf-8")
    result = run("lint", "specs", "--baseline", "baseline.json")
    assert result.exit_code == 2
    assert "not a krpc-lint baseline" in result.stderr
    assert run("lint", "specs", "--baseline", "absent.json").exit_code == 2


def test_bad_choice_is_a_usage_error(run, bad):
    assert run("lint", "specs", "--format", "xml").exit_code == 2
    assert run("lint", "specs", "--fail-on", "never").exit_code == 2
    assert run("lint").exit_code == 2  # PATHS is required


def test_fail_on_warning(run, tmp_path, bad):
    (tmp_path / ".krpc-lint.yaml").write_text("severity: {KL301: warning}\nignore: [KL752]\n", encoding="utf-8")
    default = run("lint", "specs", "--format", "json")
    assert {f["rule"]: f["severity"] for f in findings_of(default)}.get("KL301") == "warning"
    assert default.exit_code == 0
    assert run("lint", "specs", "--fail-on", "warning").exit_code == 1
    assert run("lint", "specs", "--fail-on", "error").exit_code == 0


# --- configuration -------------------------------------------------------------------------


def test_config_discovered_from_pyproject(run, tmp_path, bad):
    assert run("lint", "specs").exit_code == 1
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.krpc-lint]\nignore = ["KL301"]\n',
                                             encoding="utf-8")
    result = run("lint", "specs", "--format", "json")
    assert "KL301" not in {f["rule"] for f in findings_of(result)}


def test_config_discovered_from_a_parent_directory(tmp_path, bad):
    assert krpc(bad.parent, "lint", "Example.json").returncode == 1
    (tmp_path / "pyproject.toml").write_text('[tool.krpc-lint]\nignore = ["KL301"]\n', encoding="utf-8")
    result = krpc(bad.parent, "lint", "--format", "json", "Example.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["findings"] == []


def test_pyproject_without_our_table_is_not_a_config(run, tmp_path, bad):
    (tmp_path / "pyproject.toml").write_text('[tool.other]\nignore = ["KL301"]\n', encoding="utf-8")
    assert "KL301" in {f["rule"] for f in findings_of(run("lint", "specs", "--format", "json"))}


def test_config_discovered_from_krpc_lint_yaml(run, tmp_path, bad):
    (tmp_path / ".krpc-lint.yaml").write_text("ignore:\n  - field-name-pattern\n", encoding="utf-8")
    result = run("lint", "specs", "--format", "json")
    assert "KL301" not in {f["rule"] for f in findings_of(result)}


def test_explicit_config_file(run, tmp_path, bad):
    (tmp_path / "ci.yaml").write_text("fail-on: info\nseverity: {KL301: info}\nignore: [KL752]\n", encoding="utf-8")
    assert run("lint", "specs", "--config", "ci.yaml").exit_code == 1
    assert run("lint", "specs", "--config", "ci.yaml", "--fail-on", "warning").exit_code == 0


def test_cli_flags_override_the_config(run, tmp_path, bad):
    (tmp_path / ".krpc-lint.yaml").write_text("fail-on: info\nprofile: strict\n", encoding="utf-8")
    assert run("lint", "specs").exit_code == 1
    (tmp_path / ".krpc-lint.yaml").write_text("severity: {KL301: warning}\nfail-on: warning\n", encoding="utf-8")
    assert run("lint", "specs").exit_code == 1
    assert run("lint", "specs", "--fail-on", "error").exit_code == 0


def test_ignore_flags_add_to_the_configured_ones(run, tmp_path, bad):
    (tmp_path / ".krpc-lint.yaml").write_text("ignore: [KL301]\n", encoding="utf-8")
    result = run("lint", "specs", "--ignore", "KL001", "--format", "json")
    assert "KL301" not in {f["rule"] for f in findings_of(result)}  # the config's ignore still holds
    result = run("lint", "specs", "--ignore", "fields", "--format", "json")
    assert not [f for f in findings_of(result) if f["category"] == "fields"]


def test_select_flags_add_to_the_configured_ones(run, tmp_path):
    # misnamed and undocumented: only rules outside the kafka profile complain
    write_spec(tmp_path / "specs", GOOD_SPEC, "Other.json")

    def rules(*args: str) -> set[str]:
        return {f["rule"] for f in findings_of(run("lint", "specs", "--format", "json", *args))}

    extra = sorted(rules("--profile", "strict") - rules("--profile", "kafka"))
    assert len(extra) >= 2, "the spec should break at least two rules outside the kafka profile"
    (tmp_path / ".krpc-lint.yaml").write_text(f"profile: kafka\nselect: [{extra[0]}]\n", encoding="utf-8")
    assert rules() == {extra[0]}
    assert rules("--select", extra[1]) == {extra[0], extra[1]}


# --- baseline ------------------------------------------------------------------------------


def test_write_then_read_baseline(run, tmp_path, bad):
    before = run("lint", "specs", "--format", "json")
    assert before.exit_code == 1
    count = len(findings_of(before))

    written = run("lint", "specs", "--write-baseline", "baseline.json")
    assert written.exit_code == 0
    assert written.stdout == ""
    assert f"recorded {count} finding" in written.stderr
    entries = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))["findings"]
    assert any(e["rule"] == "KL301" and e["path"] == "specs/Example.json" for e in entries)

    after = run("lint", "specs", "--baseline", "baseline.json", "--format", "json")
    assert after.exit_code == 0
    summary = json.loads(after.stdout)["summary"]
    assert summary["findings"] == 0
    assert summary["baselined"] == count

    # rewriting the baseline from the config's own baseline starts from every finding again
    (tmp_path / ".krpc-lint.yaml").write_text("baseline: baseline.json\n", encoding="utf-8")
    assert run("lint", "specs").exit_code == 0
    rewritten = run("lint", "specs", "--write-baseline", "baseline.json")
    assert f"recorded {count} finding" in rewritten.stderr


def test_new_finding_is_not_hidden_by_the_baseline(run, tmp_path, bad):
    run("lint", "specs", "--write-baseline", "baseline.json")
    write_spec(tmp_path / "specs", BAD_SPEC.replace("Example", "Other").replace("member-id", "other-id"), "Other.json")
    result = run("lint", "specs", "--baseline", "baseline.json", "--format", "json")
    assert result.exit_code == 1
    assert {f["path"] for f in findings_of(result)} == {str(Path("specs/Other.json"))}


# --- output --------------------------------------------------------------------------------


def test_output_file(run, tmp_path, bad):
    result = run("lint", "specs", "--format", "json", "--output", "report.json")
    assert result.exit_code == 1
    assert result.stdout == ""
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert "KL301" in {f["rule"] for f in data["findings"]}


def test_output_never_overwrites_a_linted_spec_or_the_baseline(run, tmp_path, bad):
    result = run("lint", "specs", "--output", "specs/Example.json")
    assert result.exit_code == 2
    assert "specs/Example.json: refusing to write there: it lies inside specs" in result.stderr
    assert bad.read_text(encoding="utf-8") == BAD_SPEC

    run("lint", "specs", "--write-baseline", "baseline.json")
    baseline = (tmp_path / "baseline.json").read_text(encoding="utf-8")
    result = run("lint", "specs", "--baseline", "baseline.json", "--output", "baseline.json")
    assert result.exit_code == 2
    assert (tmp_path / "baseline.json").read_text(encoding="utf-8") == baseline

    assert run("lint", "specs", "--write-baseline", "specs/Example.json").exit_code == 2
    assert bad.read_text(encoding="utf-8") == BAD_SPEC


def test_output_to_a_missing_directory_is_a_usage_error(run, bad):
    result = run("lint", "specs", "--output", "no/such/dir/report.txt")
    assert result.exit_code == 2
    assert "cannot write" in result.stderr


def test_output_file_prints_the_summary_line_to_stderr(run, tmp_path, bad, good):
    result = run("lint", "specs", "--format", "sarif", "-o", "report.sarif")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Found 1 error in 1 file; wrote report.sarif\n"
    assert json.loads((tmp_path / "report.sarif").read_text(encoding="utf-8"))["runs"]
    result = run("lint", "good", "-o", "report.txt")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "All checks passed: 1 file; wrote report.txt\n")


def test_colour(run, bad):
    assert "\x1b[" not in run("lint", "specs").stdout  # auto: not a terminal
    coloured = run("lint", "specs", "--color").stdout
    assert "\x1b[" in coloured
    assert "\x1b[" not in run("lint", "specs", "--color", "--format", "json").stdout
    assert "\x1b[" not in run("lint", "specs", "--no-color").stdout


# --- formats through the CLI ---------------------------------------------------------------


def test_json_format(run, bad):
    result = run("lint", "specs", "--format", "json")
    data = json.loads(result.stdout)
    assert list(data) == ["findings", "summary"]
    assert all(list(f) == ["rule", "name", "severity", "category", "path", "line", "col", "message", "hint"]
               for f in data["findings"])
    kl301 = next(f for f in data["findings"] if f["rule"] == "KL301")
    assert kl301["path"] == str(Path("specs/Example.json"))
    assert kl301["severity"] == "error" and kl301["line"] == 1 and kl301["hint"]
    assert data["summary"]["files"] == 1
    assert data["summary"]["errors"] >= 1


def test_github_format(run, bad):
    lines = run("lint", "specs", "--format", "github").stdout.splitlines()
    kl301 = next(line for line in lines if "KL301" in line)
    # ':' is escaped in properties only, so the message keeps its colon
    assert re.match(r'::error file=specs/Example\.json,line=1,col=\d+,title=KL301 \[field-name-pattern\]'
                    r'::invalid field name "member-id": use a letter', kl301), kl301


def test_junit_format_lists_every_linted_file(run, tmp_path, bad):
    write_spec(tmp_path / "specs", GOOD_SPEC.replace("Example", "Clean"), "Clean.json")
    result = run("lint", "specs", "--format", "junit")
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert set(cases) == {str(Path("specs/Clean.json")), str(Path("specs/Example.json"))}
    messages = [f.get("message") for f in cases[str(Path("specs/Example.json"))].findall("failure")]
    assert any(m.startswith("KL301 [field-name-pattern] ") for m in messages)


def test_sarif_format_through_the_cli(run, bad):
    log = json.loads(run("lint", "specs", "--format", "sarif").stdout)
    driver = log["runs"][0]["tool"]["driver"]
    assert "KL301" in {rule["id"] for rule in driver["rules"]}
    results = log["runs"][0]["results"]
    assert any(r["ruleId"] == "KL301" and driver["rules"][r["ruleIndex"]]["id"] == "KL301" for r in results)


# --- rules, explain, schema ----------------------------------------------------------------


def test_rules_table(run):
    result = run("rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "SEVERITY", "CATEGORY", "PROFILES", "TITLE"]
    kl301 = next(line for line in lines if line.startswith("KL301 "))
    assert kl301.split()[:5] == ["KL301", "field-name-pattern", "error", "fields", "kafka,recommended,strict"]
    assert "Field names are" in kl301


def test_rules_json_and_profile_filter(run):
    every = json.loads(run("rules", "--format", "json").stdout)
    kafka = json.loads(run("rules", "--profile", "kafka", "--format", "json").stdout)
    kl301 = next(rule for rule in every if rule["id"] == "KL301")
    assert {"id", "name", "severity", "category", "profiles", "title"} <= set(kl301)
    assert kl301["profiles"] == ["kafka", "recommended", "strict"]
    assert kafka and all("kafka" in rule["profiles"] for rule in kafka)
    assert len(kafka) <= len(every)


@pytest.mark.parametrize("ref", ["KL301", "kl301", "field-name-pattern"])
def test_rules_explain(run, ref):
    from linter.engine.runner import all_rules

    rule = next(r for r in all_rules() if r.id == "KL301")
    result = run("rules", "explain", ref)
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith(rule.title + "\n")
    for expected in ("Id:        KL301", "Name:      field-name-pattern", "Severity:  error", "Category:  fields",
                     "Profiles:  kafka, recommended, strict", "Rationale:", "How to fix:", "References:",
                     "Bad example", "Good example", "member-id", "MemberId", rule.hint):
        assert expected in text
    assert " ".join(rule.rationale.split()) in " ".join(text.split())


def test_rules_explain_unknown(run):
    result = run("rules", "explain", "field-name-patern")
    assert result.exit_code == 2
    assert "unknown rule 'field-name-patern'" in result.stderr
    assert "field-name-pattern" in result.stderr  # the suggestion


def test_schema_prints_the_json_schema(run):
    from linter.model.schema import schema_text

    result = run("schema")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema == json.loads(schema_text())
    assert "$schema" in schema


# --- lint --changed-since ------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path, monkeypatch, run) -> Path:
    """A repository whose last commit holds a good spec (Example.json) and a bad one (Other.json)."""
    isolate_git(monkeypatch, tmp_path)
    top = init_repo(tmp_path / "repo")
    write_spec(top / "specs", GOOD_SPEC)
    write_spec(top / "specs", BAD_SPEC.replace("Example", "Other"), "Other.json")
    commit(top, "specs")
    monkeypatch.chdir(top)
    return top


def _paths(result) -> set[str]:
    return {Path(f["path"]).as_posix() for f in findings_of(result)}


def test_changed_since_lints_the_changed_specs_only(run, repo):
    assert _paths(run("lint", "--changed-since", "HEAD", "--format", "json")) == set()
    write_spec(repo / "specs", BAD_SPEC)  # an uncommitted edit
    write_spec(repo / "specs", BAD_SPEC.replace("Example", "New"), "New.json")  # untracked
    result = run("lint", "--changed-since", "HEAD", "--format", "json")
    assert result.exit_code == 1
    assert _paths(result) == {"specs/Example.json", "specs/New.json"}  # not Other.json, unchanged and bad
    assert json.loads(result.stdout)["summary"]["files"] == 2
    assert _paths(run("lint", "specs/Other.json", "--changed-since", "HEAD", "--format", "json")) == set()
    commit(repo, "edits")
    assert _paths(run("lint", "--changed-since", "HEAD~1", "specs", "--format", "json")) == {
        "specs/Example.json", "specs/New.json"}


def test_changed_since_does_not_load_the_codec(repo):
    # The pre-commit path asks git and lints: the codec (Codec, its compiler, _speedups) has no part in it.
    write_spec(repo / "specs", BAD_SPEC)
    status, loaded = _loaded_by(repo, "lint", "--changed-since", "HEAD")
    assert status == 1  # Example.json linted, its finding reported
    assert "linter.compat.sources" in loaded and "linter.codec.codec" not in loaded


def _request(name: str, api_key: int) -> str:
    return (f'{{"apiKey": {api_key}, "type": "request", "listeners": ["broker"], "name": "{name}", '
            '"validVersions": "0", "flexibleVersions": "0+", "fields": []}')


def test_changed_since_follows_renames_and_reads_the_directory_as_context(run, repo):
    git(repo, "mv", "specs/Example.json", "specs/Renamed.json")  # staged, and edited after
    write_spec(repo / "specs", BAD_SPEC.replace("Example", "Renamed"), "Renamed.json")
    assert _paths(run("lint", "--changed-since", "HEAD", "--format", "json")) == {"specs/Renamed.json"}

    write_spec(repo / "specs", _request("FooRequest", 900), "FooRequest.json")
    commit(repo, "FooRequest")
    write_spec(repo / "specs", _request("BarRequest", 900), "BarRequest.json")  # reuses Foo's apiKey
    rules = {f["rule"] for f in findings_of(run("lint", "--changed-since", "HEAD", "--format", "json"))}
    alone = {f["rule"] for f in findings_of(run("lint", "--changed-since", "HEAD", "--no-siblings",
                                                "--format", "json"))}
    assert "KL702" in rules and "KL702" not in alone


def test_changed_since_a_bad_ref_or_no_repository_is_a_one_line_usage_error(run, repo, tmp_path, monkeypatch):
    result = run("lint", "--changed-since", "no-such-branch", "specs")
    assert result.exit_code == 2
    assert result.stderr.startswith("krpc-lint: error: unknown git revision 'no-such-branch'")
    assert result.stderr.count("\n") == 1
    outside = tmp_path / "outside"
    write_spec(outside)
    monkeypatch.chdir(outside)
    result = run("lint", "--changed-since", "HEAD", ".")
    assert result.exit_code == 2
    assert "needs a git repository" in result.stderr and result.stderr.count("\n") == 1
    assert run("lint").exit_code == 2  # PATHS are needed without --changed-since
