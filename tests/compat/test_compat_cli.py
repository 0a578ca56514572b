"""``krpc-lint compat``, ``changelog`` and ``matrix`` as a user runs them: real files, real git repos."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import require_shared

from linter.cli.main import cli

OLD = '''{"apiKey": 1015, "type": "request", "name": "WidgetRequest", "validVersions": "0-1",
 "flexibleVersions": "1+",
 "fields": [
   {"name": "Id", "type": "int32", "versions": "0+", "about": "The id."},
   {"name": "Name", "type": "string", "versions": "0+", "about": "The name."}
 ]}
'''
RETYPED = OLD.replace('"Id", "type": "int32"', '"Id", "type": "int64"')
RENAMED = OLD.replace('"Name"', '"Label"')
GROWN = OLD.replace('"0-1"', '"0-2"').replace(
    ']}', ',\n   {"name": "Extra", "type": "int16", "versions": "2+", "about": "New."}\n ]}')


def _run(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    old_cwd = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = runner.invoke(cli, list(args))
    finally:
        os.chdir(old_cwd)
    return result.exit_code, result.stdout, result.stderr


def _specs(tmp_path: Path, name: str, text: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "WidgetRequest.json").write_text(text)
    return directory


def test_wire_break_fails_with_a_witness(tmp_path: Path) -> None:
    old, new = _specs(tmp_path, "old", OLD), _specs(tmp_path, "new", RETYPED)
    code, out, _ = _run("compat", str(old), str(new))
    assert code == 1
    assert "KL1003 [field-retyped] WidgetRequest (v0-1): Id: int32 -> int64" in out
    assert "witness: v0 written by the" in out
    assert f"{new}/WidgetRequest.json:4:" in out


def test_json_findings_carry_compat_keys(tmp_path: Path) -> None:
    old, new = _specs(tmp_path, "old", OLD), _specs(tmp_path, "new", RETYPED)
    code, out, _ = _run("compat", "--format", "json", str(old), str(new))
    finding = json.loads(out)["findings"][0]
    assert code == 1
    assert (finding["category"], finding["message_name"], finding["versions"], finding["released"]) == (
        "WIRE_BREAKING", "WidgetRequest", [0, 1], True)
    assert set(finding["witness"]) >= {"version", "hex", "decoded_old"}
    assert "error" in finding["witness"] or "decoded_new" in finding["witness"]


def test_rename_is_info_and_passes(tmp_path: Path) -> None:
    old, new = _specs(tmp_path, "old", OLD), _specs(tmp_path, "new", RENAMED)
    code, out, _ = _run("compat", str(old), str(new))
    assert code == 0
    assert "KL1061 [field-renamed]" in out and "Name renamed to Label" in out
    code, out, _ = _run("compat", "--ignore", "SOURCE_ONLY", str(old), str(new))
    assert (code, out.strip()) == (0, "All checks passed: 1 file.")


def test_new_version_is_safe_and_shown_by_strict(tmp_path: Path) -> None:
    old, new = _specs(tmp_path, "old", OLD), _specs(tmp_path, "new", GROWN)
    assert _run("compat", str(old), str(new))[0] == 0
    code, out, _ = _run("compat", "--profile", "strict", "--fail-on", "info", str(old), str(new))
    assert code == 1 and "KL1081 [version-added]" in out


def test_unstable_top_version_is_informational(tmp_path: Path) -> None:
    unstable = OLD.replace('"flexibleVersions"', '"latestVersionUnstable": true, "flexibleVersions"')
    old = _specs(tmp_path, "old", unstable)
    new = _specs(tmp_path, "new", unstable.replace(
        '"Name", "type": "string", "versions": "0+"', '"Name", "type": "string", "versions": "0"'))
    code, out, _ = _run("compat", "--format", "json", str(old), str(new))
    findings = json.loads(out)["findings"]
    assert code == 0
    assert [(f["rule"], f["severity"], f["released"], f["versions"]) for f in findings] == [
        ("KL1002", "info", False, [1])]


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True).stdout


def test_against_a_git_ref(tmp_path: Path) -> None:
    specs = _specs(tmp_path, "repo", OLD)
    _git(specs, "init", "-q")
    _git(specs, "add", ".")
    _git(specs, "commit", "-qm", "specs")
    (specs / "WidgetRequest.json").write_text(RETYPED)
    code, out, _ = _run("compat", "--against", "HEAD", cwd=specs)
    assert code == 1 and "KL1003 [field-retyped]" in out
    code, out, _ = _run("compat", "HEAD:WidgetRequest.json", "WidgetRequest.json", cwd=specs)
    assert code == 1 and "Id: int32 -> int64" in out
    code, _, err = _run("compat", "--against", "origin/trunk", cwd=specs)
    assert code == 2 and "unknown git revision 'origin/trunk'" in err and "fetch" in err


def test_usage_errors(tmp_path: Path) -> None:
    code, _, err = _run("compat", str(tmp_path / "nope"), str(tmp_path))
    assert code == 2 and "no such file or directory" in err
    assert _run("compat", str(tmp_path))[0] == 2


def test_unreadable_spec_is_a_finding(tmp_path: Path) -> None:
    old, new = _specs(tmp_path, "old", OLD), _specs(tmp_path, "new", "{ not json")
    code, out, _ = _run("compat", str(old), str(new))
    assert code == 1 and "KL1091" in out and "cannot read this spec" in out


def test_changelog_and_matrix_of_kafka_releases(tmp_path: Path) -> None:
    specs = require_shared("kafka-specs")
    code, out, _ = _run("changelog", str(specs / "3.7.0"), str(specs / "trunk-2024-10"))
    assert code == 0
    assert out.startswith("# Kafka protocol changelog: 3.7.0 → trunk-2024-10")
    assert "### ListOffsets (apiKey 2) — changed" in out and "v10: added TimeoutMs (int32)" in out
    code, out, _ = _run("changelog", "--format", "json", str(specs / "3.7.0"), str(specs / "trunk-2024-10"))
    entries = {e["title"]: e for e in json.loads(out)["entries"]}
    assert entries["DescribeTopicPartitions"]["status"] == "added"
    code, out, _ = _run("matrix", str(specs / "2.8.0"), str(specs / "3.7.0"), str(specs / "trunk-2024-10"))
    produce = next(line for line in out.splitlines() if line.startswith("Produce "))
    assert code == 0 and produce.split()[2:6] == ["0-9", "0-10", "0-11", "0-9"]


@pytest.mark.parametrize("fmt", ["sarif", "github", "junit"])
def test_other_formats(tmp_path: Path, fmt: str) -> None:
    old, new = _specs(tmp_path, "old", OLD), _specs(tmp_path, "new", RETYPED)
    code, out, _ = _run("compat", "--format", fmt, str(old), str(new))
    assert code == 1 and "KL1003" in out


def test_released_ref_decides_which_versions_are_frozen(tmp_path: Path) -> None:
    """v2 exists in OLD but not in the release tag: a break confined to v2 is informational."""
    repo = _specs(tmp_path, "repo", OLD)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "release")
    _git(repo, "tag", "v1.0")
    (repo / "WidgetRequest.json").write_text(GROWN)
    _git(repo, "commit", "-qam", "v2 in development")
    (repo / "WidgetRequest.json").write_text(GROWN.replace('"Extra", "type": "int16"', '"Extra", "type": "int32"'))
    code, out, _ = _run("compat", "--format", "json", "--against", "HEAD", "--released", "v1.0", cwd=repo)
    findings = json.loads(out)["findings"]
    assert code == 0
    assert [(f["rule"], f["versions"], f["released"], f["severity"]) for f in findings] == [
        ("KL1003", [2], False, "info")]
    code, out, _ = _run("compat", "--format", "json", "--against", "HEAD", cwd=repo)  # auto: the tag v1.0 found
    assert code == 0 and json.loads(out)["findings"][0]["released"] is False
    code, out, _ = _run("compat", "--format", "json", "--against", "HEAD", "--released", "none", cwd=repo)
    assert code == 1 and json.loads(out)["findings"][0]["released"] is True  # by version number alone


def test_released_auto_needs_release_tags_and_says_why(tmp_path: Path) -> None:
    repo = _specs(tmp_path, "repo", OLD)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "no release yet")
    code, _, err = _run("compat", "--against", "HEAD", "--released", "auto", cwd=repo)
    assert code == 2 and "--released auto: this repository has no release tags (like 3.7.0 or v1.2)" in err
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth=1", f"file://{repo}", str(shallow)], check=True)
    code, _, err = _run("compat", "--against", "HEAD", "--released", "auto", cwd=shallow)
    assert code == 2 and "this shallow checkout has no release tags" in err
    code, out, _ = _run("compat", "--against", "HEAD", cwd=shallow)  # the default: no tags, no error
    assert code == 0, out


def test_inline_suppression_in_the_new_file(tmp_path: Path) -> None:
    old = _specs(tmp_path, "old", OLD)
    suppressed = "// krpc-lint: ignore-file[KL1003] Id is widened on purpose; every client upgrades together\n" + RETYPED
    new = _specs(tmp_path, "new", suppressed)
    code, out, _ = _run("compat", str(old), str(new))
    assert (code, out.strip()) == (0, "All checks passed: 1 file (1 suppressed).")


def test_sarif_carries_the_witness(tmp_path: Path, sarif_validator) -> None:
    """Code scanning shows a result's message: a wire break's proof is in it, and its fields in the properties."""
    old, new = _specs(tmp_path, "old", OLD), _specs(tmp_path, "new", RETYPED)
    code, out, _ = _run("compat", "--format", "sarif", str(old), str(new))
    log = json.loads(out)
    sarif_validator.validate(log)
    result = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "KL1003")
    witness = result["properties"]["witness"]
    assert code == 1 and witness["hex"] and f"written by the {witness['writer']} revision" in result["message"]["text"]
    assert witness["cause"] in result["message"]["text"]
