"""The GitHub Action, run step by step in a shell as a runner would run it.

``action.yml``'s steps are read from the file; their ``${{ inputs.* }}`` expressions are filled in
from the inputs the test gives (else the action's defaults) and every other variable is one a
runner sets (``GITHUB_*``, ``RUNNER_TEMP``). The install step runs once per session (a real
virtual environment with krpc-lint installed from this checkout); each test then runs the
check step on a temporary repository with a base and a head commit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, require_shared
from ruamel.yaml import YAML
from support.gitrepo import commit, git, init_repo, isolate_git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SPEC_DIR = "clients/src/main/resources/common/message"
DEMO = REPO_ROOT / "fixtures" / "compat" / "demo"
BAD_SPEC = REPO_ROOT / "fixtures" / "invalid" / "KL301-field-name-pattern.json"
RETYPE = (f"::error file={SPEC_DIR}/WidgetFetchRequest.json,line=24,col=36,title=KL1003 [field-retyped]::"
          "WidgetFetchRequest (v0-3): MaxWaitMs: int32 -> int64")
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _action() -> dict[str, Any]:
    return YAML(typ="safe").load(REPO_ROOT / "action.yml")


def _fill(value: str, inputs: dict[str, str]) -> str:
    """``${{ inputs.NAME }}`` -> the input; any other expression fails the test (the steps must not need it)."""
    def one(match: re.Match[str]) -> str:
        expression = match[1]
        assert expression.startswith("inputs."), f"action.yml uses {expression!r}: the test cannot evaluate it"
        return inputs[expression.removeprefix("inputs.")]
    return EXPRESSION.sub(one, str(value))


def _run_step(step: dict[str, Any], inputs: dict[str, str], env: dict[str, str], cwd: Path):
    assert step["shell"] == "bash" and "uses" not in step
    defaults = {name: str(spec.get("default", "")) for name, spec in _action()["inputs"].items()}
    unknown = set(inputs) - set(defaults)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    step_env = {name: _fill(value, {**defaults, **inputs}) for name, value in (step.get("env") or {}).items()}
    assert not EXPRESSION.search(step["run"]), "inputs must reach the script through env, not the script text"
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                          env={**env, **step_env}, capture_output=True, check=False, text=True, timeout=900)


@pytest.fixture(scope="session")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RUNNER_TEMP after the install step: krpc-lint in its own virtual environment."""
    temp = tmp_path_factory.mktemp("runner-temp")
    install = _action()["runs"]["steps"][0]
    env = {**os.environ, "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(REPO_ROOT)}
    result = _run_step(install, {}, env, temp)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("krpc-lint "), result.stdout
    return temp


class Runner:
    """One job: a repository, the files a runner provides, and the check step's results."""

    def __init__(self, root: Path, runner_temp: Path) -> None:
        self.repo = root / "repo"
        self.files = root / "runner"
        self.files.mkdir()
        self.summary = self.files / "step_summary.md"
        self.output = self.files / "output.txt"
        self.event = self.files / "event.json"
        self.runner_temp = runner_temp

    def env(self, event_name: str, event: dict[str, Any]) -> dict[str, str]:
        self.event.write_text(json.dumps(event))
        return {
            **os.environ, "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(self.runner_temp),
            "GITHUB_ACTION_PATH": str(REPO_ROOT), "GITHUB_WORKSPACE": str(self.repo),
            "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(self.event),
            "GITHUB_SHA": git(self.repo, "rev-parse", "HEAD").strip(), "GITHUB_REPOSITORY": "acme/specs",
            "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_OUTPUT": str(self.output),
        }

    def check(self, event_name: str, event: dict[str, Any], **inputs: str) -> subprocess.CompletedProcess[str]:
        self.summary.write_text("")
        self.output.write_text("")
        check_step = _action()["runs"]["steps"][1]
        return _run_step(check_step, {k.replace("_", "-"): v for k, v in inputs.items()},
                         self.env(event_name, event), self.repo)

    def outputs(self) -> dict[str, str]:
        return dict(line.split("=", 1) for line in self.output.read_text().splitlines())


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner_temp: Path) -> Runner:
    isolate_git(monkeypatch, tmp_path)
    job = Runner(tmp_path, runner_temp)
    init_repo(job.repo)
    return job


def _specs(repo: Path, source: Path) -> None:
    for spec in source.glob("*.json"):
        write(repo, f"{SPEC_DIR}/{spec.name}", spec.read_text())


def _pull_request(repo: Path, head: Path) -> dict[str, Any]:
    """Base commit with the demo's old specs, head commit with ``head``'s: the event of that pull request."""
    _specs(repo, DEMO / "old")
    commit(repo, "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    _specs(repo, head)
    commit(repo, "head")
    return {"pull_request": {"number": 7, "base": {"sha": base, "ref": "main"},
                             "head": {"sha": git(repo, "rev-parse", "HEAD").strip()}}}


def _retype_reverted(tmp_path: Path) -> Path:
    safe = tmp_path / "safe"
    shutil.copytree(DEMO / "new", safe)
    spec = safe / "WidgetFetchRequest.json"
    spec.write_text(spec.read_text().replace('"MaxWaitMs", "type": "int64"', '"MaxWaitMs", "type": "int32"'))
    return safe


def test_a_wire_break_in_a_pull_request_fails_with_annotation_summary_and_sarif(runner: Runner,
                                                                               sarif_validator) -> None:
    event = _pull_request(runner.repo, DEMO / "new")
    result = runner.check("pull_request", event, sarif_file="results/krpc-lint.sarif")
    assert result.returncode == 1, result.stdout + result.stderr
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::") and " file=" in line]
    assert annotations == [RETYPE, f"::notice file={SPEC_DIR}/WidgetFetchRequest.json,line=26,col=5,"
                                   "title=KL1061 [field-renamed]::WidgetFetchRequest (v1-3): RackId renamed to ClientRackId"]
    assert "witness: v0 written by the old revision" in result.stdout

    summary = runner.summary.read_text()
    assert summary.startswith("## krpc-lint\n\n❌ Fails at `error`.")
    assert f"- **compat** with `{event['pull_request']['base']['sha'][:12]}` (the pull request's base)" in summary
    assert (f"| error | `{SPEC_DIR}/WidgetFetchRequest.json:24:36` | KL1003 [field-retyped] | "
            "WidgetFetchRequest (v0-3): MaxWaitMs: int32 -> int64 |") in summary
    assert "- **WidgetFetchRequest**: versions 0-3 → 0-4" in summary
    assert "*wire-breaking* (v0-3): MaxWaitMs: int32 -> int64" in summary
    assert "### Suggested fix of the released wire breaks" in summary  # compat --suggest: a retype is explained
    assert "MaxWaitMs changes type int32 -> int64" in summary and "two-field form" in summary

    assert runner.outputs() == {"findings": "2", "errors": "1", "warnings": "0", "failed": "true",
                                "sarif-file": "results/krpc-lint.sarif"}
    log = json.loads((runner.repo / "results" / "krpc-lint.sarif").read_text())
    sarif_validator.validate(log)
    (run,) = log["runs"]
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in run["results"]] == [("KL1003", "error", 24), ("KL1061", "note", 26)]
    rule_ids = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    assert {"KL301", "KL1003"} <= rule_ids


def test_the_summary_shows_the_edit_that_keeps_the_released_bytes(runner: Runner, tmp_path: Path) -> None:
    head = _retype_reverted(tmp_path)
    spec = head / "WidgetFetchRequest.json"
    text = spec.read_text()
    start = text.index('{ "name": "MaxWaitMs"')
    spec.write_text(text[:start] + text[text.index("{", text.index("}", start)):])  # MaxWaitMs removed
    result = runner.check("pull_request", _pull_request(runner.repo, head))
    assert result.returncode == 1, result.stdout + result.stderr
    summary = runner.summary.read_text()
    section = summary.split("### Suggested fix of the released wire breaks", 1)[1].split("### Protocol", 1)[0]
    assert f"<summary>{SPEC_DIR}/WidgetFetchRequest.json: WidgetFetchRequest</summary>" in section
    # the change already adds v4 to both messages, so v4 carries the removal: no bump, the response unchanged
    assert "WidgetFetchResponse" not in section and "validVersions" not in section
    assert '+    { "name": "MaxWaitMs", "type": "int32", "versions": "0-3"' in section


def test_a_safe_change_passes_unless_fail_on_is_lowered(runner: Runner, tmp_path: Path) -> None:
    event = _pull_request(runner.repo, _retype_reverted(tmp_path))
    result = runner.check("pull_request", event)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "::error" not in result.stdout
    assert runner.summary.read_text().startswith("## krpc-lint\n\n✅ Passes at `error`.")
    assert runner.outputs()["failed"] == "false"

    assert runner.check("pull_request", event, fail_on="info").returncode == 1
    assert runner.outputs()["failed"] == "true"


def test_a_bad_spec_pushed_fails_lint(runner: Runner) -> None:
    _specs(runner.repo, REPO_ROOT / "fixtures" / "valid")
    commit(runner.repo, "specs")
    before = git(runner.repo, "rev-parse", "HEAD").strip()
    write(runner.repo, f"{SPEC_DIR}/TenantQuota.json", BAD_SPEC.read_text())
    commit(runner.repo, "a bad spec")
    result = runner.check("push", {"before": before, "after": git(runner.repo, "rev-parse", "HEAD").strip()})
    assert result.returncode == 1
    assert (f"::error file={SPEC_DIR}/TenantQuota.json,line=11,col=15,title=KL301 [field-name-pattern]::"
            'invalid field name "Max_Partitions"') in result.stdout
    assert "(the commit before the push)" in runner.summary.read_text()


def test_without_a_base_only_lint_runs(runner: Runner) -> None:
    _specs(runner.repo, DEMO / "new")
    commit(runner.repo, "specs")
    result = runner.check("workflow_dispatch", {})
    assert result.returncode == 0, result.stdout
    assert "::notice title=krpc-lint::no base commit to compare against" in result.stdout
    assert "- **compat**: not run" in runner.summary.read_text()
    assert runner.check("workflow_dispatch", {}, against="HEAD~0").returncode == 0
    assert runner.check("workflow_dispatch", {}, against="main").returncode == 0


def test_a_shallow_checkout_fetches_the_base(runner: Runner, tmp_path: Path) -> None:
    """actions/checkout's default: depth 1, so the base commit is fetched from origin first."""
    event = _pull_request(runner.repo, DEMO / "new")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{runner.repo}", str(clone))
    assert git(clone, "rev-list", "--count", "HEAD").strip() == "1"
    runner.repo = clone
    result = runner.check("pull_request", event)
    assert result.returncode == 1, result.stdout + result.stderr
    assert RETYPE in result.stdout


def test_bad_inputs_are_errors_not_tracebacks(runner: Runner) -> None:
    _specs(runner.repo, DEMO / "old")
    commit(runner.repo, "specs")
    for inputs, message in [({"fail_on": "fatal"}, "fail-on must be one of error, warning, info"),
                            ({"against": "no-such-branch"}, "cannot find or fetch no-such-branch"),
                            ({"paths": "nope/"}, "nope"),
                            ({"config": "missing.yaml"}, "missing.yaml")]:
        result = runner.check("workflow_dispatch", {}, **inputs)
        assert result.returncode == 2, (inputs, result.stdout, result.stderr)
        assert result.stdout.startswith("::error title=krpc-lint::") and message in result.stdout, result.stdout
        assert "Traceback" not in result.stderr

    runner.event.write_text("{not json")
    result = _run_step(_action()["runs"]["steps"][1], {}, {**runner.env("pull_request", {}), "GITHUB_EVENT_PATH":
                                                           str(runner.files / "missing.json")}, runner.repo)
    assert result.returncode == 0, "no event file: lint only"
    env = runner.env("pull_request", {"pull_request": {}})
    result = _run_step(_action()["runs"]["steps"][1], {}, env, runner.repo)
    assert result.returncode == 2 and "cannot find the base commit in the pull_request event" in result.stdout
    result = runner.check("workflow_dispatch", {}, sarif_file=f"{SPEC_DIR}/WidgetFetchRequest.json/k.sarif")
    assert result.returncode == 2 and "::error title=krpc-lint::cannot write" in result.stdout, result.stdout
    spec = runner.repo / SPEC_DIR / "WidgetFetchRequest.json"
    before = spec.read_bytes()
    result = runner.check("workflow_dispatch", {}, sarif_file=f"{SPEC_DIR}/WidgetFetchRequest.json")
    assert result.returncode == 2 and "refusing to write there" in result.stdout, result.stdout
    assert spec.read_bytes() == before  # refused before the check, never half-written


def test_a_deleted_spec_is_annotated_at_its_path_not_at_the_base_ref(runner: Runner, tmp_path: Path) -> None:
    safe = _retype_reverted(tmp_path)
    (safe / "WidgetRegistrationRecord.json").unlink()
    event = _pull_request(runner.repo, safe)
    git(runner.repo, "rm", "-q", f"{SPEC_DIR}/WidgetRegistrationRecord.json")
    commit(runner.repo, "record removed")
    result = runner.check("pull_request", event, sarif_file="k.sarif")
    base = event["pull_request"]["base"]["sha"]
    assert (f"::warning file={SPEC_DIR}/WidgetRegistrationRecord.json,line=2,col=1,title=KL1042 [message-removed]::"
            in result.stdout), result.stdout
    assert f"`{base}:{SPEC_DIR}/WidgetRegistrationRecord.json:2:1`" in runner.summary.read_text()
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads((runner.repo / "k.sarif").read_text())["runs"][0]["results"]]
    assert f"{SPEC_DIR}/WidgetRegistrationRecord.json" in uris


def _released_then_unreleased_version(repo: Path) -> dict[str, Any]:
    """Release 1.0.0 ships WidgetFetchRequest v0-2; the base adds v3 (not marked unstable); the head retypes
    WidgetCursor.Position, a v3-only field: a wire break of a version no release shipped."""
    for name in ("WidgetFetchRequest.json", "WidgetFetchResponse.json"):
        text = (DEMO / "old" / name).read_text()
        assert '"validVersions": "0-3"' in text
        write(repo, f"{SPEC_DIR}/{name}", text.replace('"validVersions": "0-3"', '"validVersions": "0-2"'))
    commit(repo, "release 1.0.0")
    git(repo, "tag", "1.0.0")
    _specs(repo, DEMO / "old")
    commit(repo, "base: v3")
    base = git(repo, "rev-parse", "HEAD").strip()
    spec = f"{SPEC_DIR}/WidgetFetchRequest.json"
    text = (repo / spec).read_text()
    write(repo, spec, text.replace('"Position", "type": "int64"', '"Position", "type": "int32"'))
    commit(repo, "head: Position retyped")
    return {"pull_request": {"number": 8, "base": {"sha": base, "ref": "main"},
                             "head": {"sha": git(repo, "rev-parse", "HEAD").strip()}}}


def test_release_tags_decide_what_shipped(runner: Runner, tmp_path: Path) -> None:
    """With the checkout's release tags, a break of a version no release shipped is informational; a shallow
    checkout has no tags, so the break counts as released and the summary says why."""
    event = _released_then_unreleased_version(runner.repo)
    result = runner.check("pull_request", event)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = runner.summary.read_text()
    assert "- **released versions** known from: release tag 1.0.0" in summary
    assert "KL1003 [field-retyped]" in summary and "Position: int64 -> int32" in summary

    assert runner.check("pull_request", event, released="none").returncode == 1
    assert "known from: none (--released none)" in runner.summary.read_text()

    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", "--no-tags", f"file://{runner.repo}", str(clone))
    runner.repo = clone
    result = runner.check("pull_request", event)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "this shallow checkout has no release tags" in runner.summary.read_text()
    assert runner.check("pull_request", event, released="auto").returncode == 2  # auto requires tags


def _bad_spec_in_the_base_then_a_safe_change(runner: Runner, tmp_path: Path) -> dict[str, Any]:
    """The base already holds a bad spec (KL301, an error); the pull request only reverts a retype elsewhere."""
    _specs(runner.repo, DEMO / "old")
    write(runner.repo, f"{SPEC_DIR}/TenantQuota.json", BAD_SPEC.read_text())
    commit(runner.repo, "base")
    base = git(runner.repo, "rev-parse", "HEAD").strip()
    _specs(runner.repo, _retype_reverted(tmp_path))
    commit(runner.repo, "head")
    return {"pull_request": {"number": 9, "base": {"sha": base, "ref": "main"},
                             "head": {"sha": git(runner.repo, "rev-parse", "HEAD").strip()}}}


def test_lint_scope_changed_shows_and_fails_on_the_changed_files_only(runner: Runner, tmp_path: Path) -> None:
    event = _bad_spec_in_the_base_then_a_safe_change(runner, tmp_path)
    result = runner.check("pull_request", event, sarif_file="k.sarif")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "TenantQuota.json" not in result.stdout
    assert "1 more lint finding in files this change does not touch (lint-scope: all shows them)." in result.stdout
    summary = runner.summary.read_text()
    assert summary.startswith("## krpc-lint\n\n✅ Passes at `error`.")
    base = event["pull_request"]["base"]["sha"][:12]
    assert f"- **lint** of the files changed since `{base}`: All checks passed: 2 files.\n" in summary
    assert ("- 1 more lint finding in files this change does not touch (lint-scope: all shows them).\n"
            in summary)
    assert "TenantQuota.json" not in summary + (runner.repo / "k.sarif").read_text()
    assert runner.outputs()["failed"] == "false"

    result = runner.check("pull_request", event, lint_scope="all")
    assert result.returncode == 1, result.stdout + result.stderr
    summary = runner.summary.read_text()
    assert "KL301 [field-name-pattern]" in summary and "does not touch" not in summary
    assert runner.check("pull_request", event, lint_scope="some").returncode == 2
    assert "lint-scope must be one of changed, all, not 'some'" in runner.check(
        "pull_request", event, lint_scope="some").stdout


def test_lint_scope_changed_lints_everything_without_a_base(runner: Runner) -> None:
    _specs(runner.repo, DEMO / "new")
    write(runner.repo, f"{SPEC_DIR}/TenantQuota.json", BAD_SPEC.read_text())
    commit(runner.repo, "specs")
    assert runner.check("workflow_dispatch", {}).returncode == 1
    summary = runner.summary.read_text()
    assert "KL301 [field-name-pattern]" in summary and "does not touch" not in summary


def test_an_about_edit_in_a_clone_of_kafkas_history_shows_only_its_finding(runner: Runner, tmp_path: Path) -> None:
    """Acceptance (issue 15): a pull request that edits an `about` of FetchRequest.json (and leaves the key
    repeated, one warning) lists only that file's finding; the summary counts the rest of Kafka's tree."""
    bundle = require_shared("kafka-history", "kafka-json.bundle")
    runner.repo = tmp_path / "kafka"
    git(tmp_path, "clone", "-q", str(bundle), str(runner.repo))
    base = git(runner.repo, "rev-parse", "HEAD").strip()
    git(runner.repo, "checkout", "-q", "-b", "reword-max-wait")
    fetch = runner.repo / SPEC_DIR / "FetchRequest.json"
    about = '"about": "The maximum time in milliseconds to wait for the response."'
    assert about in fetch.read_text()
    fetch.write_text(fetch.read_text().replace(about, f'{about},\n      "about": "How long the broker may wait."'))
    commit(runner.repo, "reword the MaxWaitMs about")
    event = {"pull_request": {"number": 17000, "base": {"sha": base, "ref": "trunk"},
                              "head": {"sha": git(runner.repo, "rev-parse", "HEAD").strip()}}}

    result = runner.check("pull_request", event)
    assert result.returncode == 0, result.stdout + result.stderr
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::") and " file=" in line]
    assert {line.split(",")[0] for line in annotations} == {f"::warning file={SPEC_DIR}/FetchRequest.json",
                                                            f"::notice file={SPEC_DIR}/FetchRequest.json"}
    summary = runner.summary.read_text()
    table = summary.split("| Severity | Location | Rule | Message |\n| --- | --- | --- | --- |\n")[1].split("\n\n")[0]
    assert {row.split(" | ")[1].split(":")[0] for row in table.splitlines()} == {f"`{SPEC_DIR}/FetchRequest.json"}
    assert [row for row in table.splitlines() if "KL1069" not in row] == [
        f"| warning | `{SPEC_DIR}/FetchRequest.json:77:7` | KL005 [duplicate-key] | "
        'key "about" repeats the one on line 76; only this last value is used |']  # and compat's about notices
    assert (f"- **lint** of the files changed since `{base[:12]}`: Found 1 warning in 1 file.\n"
            "- 4 more lint findings in files this change does not touch (lint-scope: all shows them).\n") in summary
    assert f"- **compat** with `{base[:12]}` (the pull request's base): Found 2 infos in 258 files." in summary
    assert runner.outputs()["findings"] == "3"

    assert runner.check("pull_request", event, lint_scope="all").returncode == 0
    assert "Found 5 warnings in 258 files" in runner.summary.read_text()


VENDOR_DIR = "kafka/protocol/schemas"


def _vendor_copy(repo: Path, upstream: Path, names: tuple[str, ...]) -> None:
    """A vendor's copy of some of upstream's specs, in snake_case as kafka-python and Redpanda name them."""
    for name in names:
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
        write(repo, f"{VENDOR_DIR}/{snake}.json", (upstream / f"{name}.json").read_text())


def test_conformance_mode_annotates_a_diverging_version_and_writes_the_markdown_summary(runner: Runner) -> None:
    upstream_specs = require_shared() / "kafka-specs" / "trunk-2024-10" / SPEC_DIR
    _vendor_copy(runner.repo, upstream_specs, ("FetchRequest", "FetchResponse", "ApiVersionsRequest"))
    for spec in upstream_specs.glob("*.json"):  # upstream beside the copy, inside the checkout
        write(runner.repo, f"upstream/{SPEC_DIR}/{spec.name}", spec.read_text())
    commit(runner.repo, "vendored")
    push = {"before": "0" * 40}
    same = runner.check("push", push, mode="conformance", paths=VENDOR_DIR, upstream=f"upstream/{SPEC_DIR}")
    assert same.returncode == 0, same.stdout + same.stderr
    assert runner.outputs()["failed"] == "false"
    assert "| identical |" in runner.summary.read_text()

    fetch = runner.repo / VENDOR_DIR / "fetch_request.json"
    fetch.write_text(fetch.read_text().replace('"name": "ReplicaId", "type": "int32"',
                                               '"name": "ReplicaId", "type": "int64"', 1))
    broken = runner.check("push", push, mode="conformance", paths=VENDOR_DIR, upstream=f"upstream/{SPEC_DIR}")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    errors = [line for line in broken.stdout.splitlines() if line.startswith("::error ")]
    assert errors and all(line.startswith(f"::error file={VENDOR_DIR}/fetch_request.json,title=krpc-lint conformance::"
                                          "FetchRequest v") for line in errors)
    assert "diverges from upstream" in errors[0]
    assert runner.outputs()["failed"] == "true"
    assert "**diverges**" in runner.summary.read_text()


@pytest.mark.parametrize(("inputs", "message"), [
    ({"mode": "conformance", "paths": VENDOR_DIR}, "mode conformance needs upstream"),
    ({"mode": "conformance", "paths": "a b", "upstream": "u"}, "needs exactly one path"),
    ({"mode": "conformance", "paths": VENDOR_DIR, "upstream": "u", "fail-on": "error,bogus"}, "fail-on: 'bogus'"),
    ({"mode": "vendor"}, "mode must be one of lint, conformance, not 'vendor'"),
])
def test_conformance_mode_refuses_bad_inputs_in_one_line(runner: Runner, inputs: dict[str, str], message: str) -> None:
    write(runner.repo, "README", "x")
    commit(runner.repo, "first")
    result = runner.check("push", {"before": "0" * 40}, **{k.replace("-", "_"): v for k, v in inputs.items()})
    assert result.returncode == 2
    assert message in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr


# --- hostile names: the log, the summary and the outputs (issue 25) ---------------------------------------

HOSTILE_FIELD = r"Max\n::error file=README.md,line=1::pwned\u001b]0;t\u0007\r|`<b>[x](u)##[error]l\u2028\u202e"
HOSTILE_FILE = "::warning::x\n::error::y|`.json"


def _runner_reads(log: str) -> tuple[list[str], list[str]]:
    """The commands GitHub's runner would act on in ``log`` (``::`` after leading blanks, or the legacy ``##[``
    anywhere), honouring ``::stop-commands::TOKEN`` ... ``::TOKEN::``: (annotations, every other command)."""
    annotations, others, stopped = [], [], None
    for line in log.split("\n"):
        trimmed = line.lstrip()
        if stopped is not None:
            if trimmed == f"::{stopped}::":
                stopped = None
            continue
        if "##[" in line:
            others.append(line)
        elif trimmed.startswith("::"):
            name = trimmed[2:].split("::", 1)[0].split(" ", 1)[0]
            if name == "stop-commands":
                stopped = trimmed.split("::", 2)[2]
            elif name in ("error", "warning", "notice") and " file=" in trimmed:
                annotations.append(trimmed)
            else:
                others.append(trimmed)
    assert stopped is None, "commands left stopped"
    return annotations, others


def _outputs(text: str) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` as the runner reads it: ``key=value`` lines and ``key<<DELIMITER`` blocks."""
    values, lines = {}, iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            values[line[:equals]] = line[equals + 1:]
            continue
        key, delimiter = line[:heredoc], line[heredoc + 2:]
        body = []
        for part in lines:
            if part == delimiter:
                break
            body.append(part)
        values[key] = "\n".join(body)
    return values


def test_hostile_names_cannot_forge_commands_break_the_summary_or_add_outputs(runner: Runner, tmp_path: Path) -> None:
    """A pull request renames a field to a forged command (with a terminal title, CR, table and HTML breakers,
    a link, the legacy ``##[`` marker, U+2028, a bidi override) and adds a spec whose file name is a command;
    the ``sarif-file`` input holds a newline and ``failed=false``. The runner would act on the annotations alone
    (one per finding), the summary table keeps four cells a row, and the outputs keep their keys."""
    head = tmp_path / "head"
    shutil.copytree(DEMO / "new", head)
    spec = head / "WidgetFetchRequest.json"
    spec.write_text(spec.read_text().replace('"name": "MaxWaitMs"', f'"name": "{HOSTILE_FIELD}"'))
    (head / HOSTILE_FILE).write_text(BAD_SPEC.read_text())
    event = _pull_request(runner.repo, head)
    sarif_file = "k.sarif\nfailed=false"
    result = runner.check("pull_request", event, sarif_file=sarif_file)
    assert result.returncode == 1, result.stdout + result.stderr
    log = result.stdout

    outputs = _outputs(runner.output.read_text())
    assert outputs["failed"] == "true" and outputs["sarif-file"] == sarif_file
    assert set(outputs) == {"findings", "errors", "warnings", "sarif-file", "failed"}
    findings = int(outputs["findings"])
    annotations, others = _runner_reads(log)
    assert len(annotations) == findings >= 3, annotations
    assert [line for line in others if not line.startswith(("::group::krpc-lint ", "::endgroup::"))] == [], others
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", log + result.stderr)
    assert "pwned" in log and "./::warning::x" not in log  # the path starts with the spec directory
    assert log.count("::stop-commands::") == 2  # the lint and the compat report, each paused

    summary = runner.summary.read_text()
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", summary)
    assert "##[" not in summary and "pwned" in summary
    table = summary.split("| Severity | Location | Rule | Message |\n| --- | --- | --- | --- |\n")[1].split("\n\n")[0]
    rows = table.split("\n")
    assert len(rows) == findings
    pipes = [len(re.findall(r"(?<!\\)\|", row.replace("\\\\", ""))) for row in rows]
    assert pipes == [5] * findings, rows
    prose = re.sub(r"(?ms)^(`{3,})diff\n.*?^\1$", "", summary)  # a fenced diff shows the spec's text as it is
    assert prose != summary and not re.search(r"(?<![\\`])<b>|(?<!\\)\]\(", prose)  # no tag, no link
    json.loads((runner.repo / sarif_file).read_text())


def test_a_label_on_the_pull_request_lets_its_wire_breaks_pass_and_says_so(runner: Runner) -> None:
    event = _pull_request(runner.repo, DEMO / "new")
    unlabelled = runner.check("pull_request", event, allow_breaking_label="wire-break-approved")
    assert unlabelled.returncode == 1, unlabelled.stdout  # the input alone allows nothing
    event["pull_request"]["labels"] = [{"name": "documentation"}, {"name": "wire-break-approved"}]
    labelled = runner.check("pull_request", event, allow_breaking_label="wire-break-approved")
    assert labelled.returncode == 0, labelled.stdout + labelled.stderr
    assert RETYPE in labelled.stdout.splitlines()  # still annotated
    assert "::notice title=krpc-lint::1 wire break(s) allowed by the pull request's label wire-break-approved" \
        in labelled.stdout
    summary = runner.summary.read_text()
    assert summary.startswith("## krpc-lint\n\n✅ Passes at `error`.\n\n1 wire break allowed by the pull request's "
                              "label `wire-break-approved`: reported below, not failing.")
    assert "KL1003 [field-retyped]" in summary and runner.outputs()["failed"] == "false"
    other = runner.check("pull_request", event, allow_breaking_label="another-label")
    assert other.returncode == 1


class GitHubStub:
    """The GitHub API's issue-comment endpoints, on loopback: what the action asked, and the comments it left."""

    def __init__(self) -> None:
        import http.server
        import threading

        stub = self
        self.requests: list[tuple[str, str, str, dict[str, Any] | None]] = []
        self.comments: dict[int, str] = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _answer(self, data: Any, status: int = 200) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _record(self) -> dict[str, Any] | None:
                size = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(size)) if size else None
                stub.requests.append((self.command, self.path, self.headers.get("Authorization", ""), payload))
                return payload

            def do_GET(self) -> None:
                self._record()
                self._answer([{"id": key, "body": body} for key, body in stub.comments.items()])

            def do_POST(self) -> None:
                payload = self._record() or {}
                key = 100 + len(stub.comments)
                stub.comments[key] = payload["body"]
                self._answer({"id": key}, 201)

            def do_PATCH(self) -> None:
                payload = self._record() or {}
                stub.comments[int(self.path.rsplit("/", 1)[1])] = payload["body"]
                self._answer({"id": int(self.path.rsplit("/", 1)[1])})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_comment_posts_the_summary_once_then_updates_it(runner: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    stub = GitHubStub()
    monkeypatch.setenv("GITHUB_API_URL", stub.url)
    try:
        event = _pull_request(runner.repo, DEMO / "new")
        stub.comments[1] = "an unrelated review comment"
        first = runner.check("pull_request", event, comment="true", github_token="t0k3n")
        assert first.returncode == 1 and "krpc-lint: posted the krpc-lint comment" in first.stdout, first.stdout
        second = runner.check("pull_request", event, comment="true", github_token="t0k3n")
        assert "krpc-lint: updated the pull request's krpc-lint comment 101" in second.stdout, second.stdout
    finally:
        stub.server.shutdown()
    assert [(method, path.split("?")[0]) for method, path, _, _ in stub.requests] == [
        ("GET", "/repos/acme/specs/issues/7/comments"), ("POST", "/repos/acme/specs/issues/7/comments"),
        ("GET", "/repos/acme/specs/issues/7/comments"), ("PATCH", "/repos/acme/specs/issues/comments/101")]
    assert all(auth == "Bearer t0k3n" for _, _, auth, _ in stub.requests)
    assert stub.comments[1] == "an unrelated review comment" and len(stub.comments) == 2
    assert stub.comments[101].startswith("<!-- krpc-lint: pull-request comment -->\n## krpc-lint\n\n❌ Fails")
    assert stub.comments[101].split("\n", 1)[1] == runner.summary.read_text()


def test_comment_without_a_token_or_an_api_warns_and_keeps_the_verdict(runner: Runner,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    event = _pull_request(runner.repo, DEMO / "new")
    no_token = runner.check("pull_request", event, comment="true")
    assert no_token.returncode == 1 and "::warning title=krpc-lint::comment: true needs github-token" in no_token.stdout
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # nothing listens: refused at once
    unreachable = runner.check("pull_request", event, comment="true", github_token="t0k3n")
    assert unreachable.returncode == 1
    assert "::warning title=krpc-lint::cannot comment on the pull request: GET" in unreachable.stdout
    bad = runner.check("pull_request", event, comment="yes")
    assert bad.returncode == 2 and "comment must be true or false" in bad.stdout
