"""``krpc-lint lint --fix`` / ``--diff``: the fixable rules' edits, applied at their positions only."""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from linter import Config, lint
from linter.cli.main import cli
from linter.engine.findings import Edit
from linter.engine.fixes import apply_edits, key_edit, member_removal
from linter.engine.runner import all_rules
from linter.parse.document import read_document

FIXABLE = [rule for rule in all_rules() if rule.fixable]
INVALID = Path(__file__).resolve().parents[2] / "fixtures" / "invalid"
CASES = {rule.id: next(INVALID.glob(f"{rule.id}-*.json")) for rule in FIXABLE}


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["lint", "--no-cache", "--profile", "strict", *args])
    return result.exit_code, result.stdout


def _hits(file: Path, rule: str) -> int:
    return len([f for f in lint(str(file), Config(profile="strict", cache_dir=None)).findings if f.rule == rule])


def _copy(tmp_path: Path, rule: str) -> Path:
    target = tmp_path / CASES[rule].name
    shutil.copyfile(CASES[rule], target)
    return target


def test_fixable_rules() -> None:
    assert {rule.id for rule in FIXABLE} >= {"KL256", "KL551"}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_fix_on_invalid_fixture(tmp_path: Path, rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    file = _copy(tmp_path, rule)
    before = file.read_text(encoding="utf-8")
    assert _hits(file, rule) >= 1
    code, diff = _run("--select", rule, "--diff", file.name)
    assert code == 1
    assert file.read_text(encoding="utf-8") == before  # --diff writes nothing
    code, _ = _run("--select", rule, "--fix", file.name)
    assert code == 0
    after = file.read_text(encoding="utf-8")
    assert _hits(file, rule) == 0
    # every byte but the edit is kept: the diff of the files is exactly what --diff showed
    expected = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                            fromfile=f"a/{file.name}", tofile=f"b/{file.name}"))
    assert diff == expected
    assert sum(line.startswith("-") and not line.startswith("---") for line in diff.splitlines()) == 1
    assert json.loads("\n".join(line for line in after.splitlines() if not line.lstrip().startswith("//")))
    # idempotent
    assert _run("--select", rule, "--diff", file.name) == (0, "")
    _run("--select", rule, "--fix", file.name)
    assert file.read_text(encoding="utf-8") == after


def test_fix_keeps_comments_mode_and_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = ('// head\n{"type": "data", "name": "Example", "validVersions": "0-2", "flexibleVersions": "0+",\n'
            ' "fields": [\n'
            '  {"name": "Id", "type": "int32", "versions": /* since 0 */ " 0+ ", // trailing\n'
            '   "default": "0" /* zero */, "about": "x"},\n'
            '  {"name": "On", "type": "bool", "versions": "0+", "default": "false"}\n'
            ' ]}\n')
    file = tmp_path / "Example.json"
    file.write_text(text, encoding="utf-8")
    os.chmod(file, 0o640)
    other = tmp_path / "Other.json"
    shutil.copyfile(CASES["KL256"], other)
    other_before = other.read_bytes()
    code, _ = _run("--fix", "Example.json")
    fixed = file.read_text(encoding="utf-8")
    assert fixed == text.replace('" 0+ "', '"0+"').replace(', "default": "false"', "")
    assert "/* since 0 */" in fixed and "// trailing" in fixed and "/* zero */" in fixed
    assert os.stat(file).st_mode & 0o777 == 0o640
    assert other.read_bytes() == other_before  # not named: never written
    assert code == 0
    assert sorted(os.listdir(tmp_path)) == ["Example.json", "Other.json"]  # no temporary file left behind


def test_no_write_without_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    file = _copy(tmp_path, "KL551")
    before = file.read_bytes()
    _, out = _run("--format", "json", file.name)
    assert file.read_bytes() == before
    finding = next(f for f in json.loads(out)["findings"] if f["rule"] == "KL551")
    assert list(finding)[-1] == "fix" and finding["fix"][0]["new"] == ""
    assert all("fix" not in f for f in json.loads(out)["findings"] if f["rule"] != "KL551")


def test_fix_and_diff_exclusive(tmp_path: Path) -> None:
    file = _copy(tmp_path, "KL551")
    code, _ = _run("--fix", "--diff", str(file))
    assert code == 2


@pytest.mark.parametrize(("member", "expected"), [
    ('{"a": "1", "default": "0", "b": "2"}', '{"a": "1", "b": "2"}'),
    ('{"default": "0", "b": "2"}', '{"b": "2"}'),
    ('{\n  "default": "0",\n  "b": "2"\n}', '{\n  "b": "2"\n}'),
    ('{"a": "1",\n "default": "0"\n}', '{"a": "1"\n}'),
    ('{ "default": "0" }', '{  }'),
    ('{"a": "1", // c\n "default": "0"}', None),  # the comma lies before a comment: no fix
    ('{"a": "1", "default" /* c */ : "0"}', None),
])
def test_member_removal(member: str, expected: str | None) -> None:
    edits = member_removal(read_document("A.json", member.encode()), ("default",))
    if expected is None:
        assert edits == ()
    else:
        assert apply_edits(member, edits) == (expected, 1)
        assert json.loads(expected) is not None


def test_apply_edits_skips_overlaps_and_stale() -> None:
    text = "abcdef"
    edits = [Edit(0, 2, "ab", "X"), Edit(1, 3, "bc", "Y"), Edit(4, 5, "zz", "Z"), Edit(5, 6, "f", "F")]
    assert apply_edits(text, edits) == ("XcdeF", 2)


@pytest.mark.parametrize(("member", "expected"), [
    ('{"a": "1", "zeroCopy": true}', '{"a": "1"}'),
    ('{"headerVersions": {"0+": "1"}, "b": "2"}', '{"b": "2"}'),
    ('{"a": "1", "headerVersions": {"0+": /* h */ "1"}}', None),  # a comment inside the value: kept, no fix
])
def test_member_removal_of_any_value(member: str, expected: str | None) -> None:
    key = "zeroCopy" if "zeroCopy" in member else "headerVersions"
    edits = member_removal(read_document("A.json", member.encode()), (key,))
    assert (apply_edits(member, edits)[0] if edits else None) == expected


def test_key_edit_renames_only_the_key() -> None:
    text = '{"a": 1, /* x */ "versionsWithOptional" : "2+"}'
    edits = key_edit(read_document("A.json", text.encode()), ("versionsWithOptional",), "flexibleVersions")
    assert apply_edits(text, edits) == ('{"a": 1, /* x */ "flexibleVersions" : "2+"}', 1)
    assert key_edit(read_document("A.json", text.encode()), ("a",), "a") == ()


DRAFT = ('{"name": "Example", "type": "data", "validVersions": "0-2", %s'
         '"fields": [{"name": "Id", "type": "int32", "versions": "0+", "about": "x", %s}]}')


def _draft(tmp_path: Path, message: str, field: str) -> list[tuple[str, str, bool]]:
    file = tmp_path / "Example.json"
    file.write_text(DRAFT % (message, field), encoding="utf-8")
    report = lint(str(file), Config(profile="strict", cache_dir=None))
    return [(f.rule, f.message, bool(f.fix)) for f in report.findings]


def test_draft_keys_are_reported_once_with_their_final_form(tmp_path: Path) -> None:
    found = _draft(tmp_path, '"versionsWithOptional": "1+", "optionalFields": [], ',
                   '"versionsWithOptional": "1+", "tag": "0x1F"')
    assert {rule for rule, _, _ in found} <= {"KL412", "KL204"}  # no unknown-key, value-kind or lenient-scalar
    assert sorted((message.split(": the final form")[1], fix) for rule, message, fix in found if rule == "KL412") == [
        (' is flexibleVersions', True),
        (' is taggedVersions', True),
        (' is the integer "tag": 31', True),
        (' lists each optional field in "fields" with an integer "tag" and "taggedVersions" (and '
         '"nullableVersions" for "nullable")', False),
    ]


def test_draft_key_beside_its_final_form_has_no_fix(tmp_path: Path) -> None:
    found = _draft(tmp_path, '"flexibleVersions": "0+", "versionsWithOptional": "1+", ',
                   '"taggedVersions": "0+", "versionsWithOptional": "1+", "tag": 0')
    assert [(rule, fix) for rule, _, fix in found] == [("KL412", False), ("KL412", False)]


def test_tag_beyond_int32_is_no_draft_tag(tmp_path: Path) -> None:
    found = _draft(tmp_path, '"flexibleVersions": "0+", ', '"taggedVersions": "0+", "tag": "0x80000000"')
    assert "KL412" not in {rule for rule, _, _ in found} and "KL102" in {rule for rule, _, _ in found}


def test_the_text_report_counts_what_fix_would_fix(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from linter.cli.main import cli

    spec = tmp_path / "Example.json"
    spec.write_text('{"name": "Example", "type": "data", "validVersions": "0-2", "flexibleVersions": "0+", '
                    '"fields": [{"name": "Id", "type": "int32", "versions": "0+", "default": "0"}]}')
    shown = CliRunner().invoke(cli, ["lint", "--profile", "strict", "--select", "KL551", str(tmp_path)])
    assert shown.stderr.splitlines()[-1] == "[*] 1 fixable with `krpc-lint lint --fix` (`--diff` shows the edits)"
    fixed = CliRunner().invoke(cli, ["lint", "--profile", "strict", "--select", "KL551", "--fix", str(tmp_path)])
    assert fixed.exit_code == 0 and "[*]" not in fixed.stderr
