"""``compat --suggest`` / ``--fix``: every released wire break gets an edit that keeps the released bytes and
gives the new top version the intended layout, or an explanation of why Kafka's format cannot carry it.

The edits are judged by compat itself run again (old against fixed: no released wire break) and by layouts
built from the fixed text, never by the suggester's own verification.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import require_shared
from hypothesis import assume, event, given, note
from hypothesis import strategies as st
from support.gitrepo import commit, git
from support.spec_strategies import lint_files, message_specs
from test_compat_properties import MUTATIONS, PROPERTY

from linter.cli.main import cli
from linter.compat.api import compare_result
from linter.compat.compare import CompatResult, compare
from linter.compat.kinds import ChangeKind
from linter.compat.layout import LayoutBuilder
from linter.compat.revision import Revision
from linter.compat.suggest import Suggestion, suggest
from linter.engine.config import Config
from linter.engine.context import FileContext
from linter.engine.runner import lint_texts
from linter.model.spec import MessageSpec
from linter.parse.document import read_document
from linter.vocabulary import Category

# Wire breaks Kafka's format cannot move into a new version: one type and one tag per field in all versions,
# one field order, open-ended taggedVersions and flexibleVersions, the apiKey naming the API, and headers.
CANNOT_CARRY = {ChangeKind.FIELD_RETYPED, ChangeKind.TAGGED_FIELD_RETYPED, ChangeKind.FIELDS_REORDERED,
                ChangeKind.TAG_REUSED, ChangeKind.TAG_RENUMBERED, ChangeKind.API_KEY_CHANGED,
                ChangeKind.FIELD_MADE_REGULAR, ChangeKind.HEADER_VERSION_CHANGED}


def _released_breaks(result: CompatResult) -> list[tuple[str, ChangeKind]]:
    return [(pair.message.name or "", change.rule) for pair, change in result.changes()
            if change.category == Category.WIRE_BREAKING and change.released]


def _message(name: str, text: str) -> MessageSpec:
    message = FileContext(read_document(name, text.encode())).message
    assert message is not None
    return message


def _fixed_revision(result: CompatResult, suggestions: list[Suggestion]) -> Revision:
    """The new revision with every fixable suggestion applied (by relative path)."""
    files = dict(result.new.files)
    by_display = {result.new.display(rel): rel for rel in files}
    for suggestion in suggestions:
        if suggestion.fixable:
            files[by_display[suggestion.file]] = suggestion.fixed.encode()
    return Revision("fixed", files, result.new.prefix)


def _top_layout(message: MessageSpec) -> tuple[object, ...]:
    assert message.versions is not None
    return LayoutBuilder(message).build(message.versions.highest).signature


def _check_fixed(result: CompatResult, suggestions: list[Suggestion]) -> None:
    """(a) compat old -> fixed finds no released wire break; (b) each fixed message's top version has the new
    revision's top layout; and the fixed files lint no worse (no new error)."""
    fixed = _fixed_revision(result, suggestions)
    again = compare(result.old, fixed, witnesses=False, cross_check=0)
    assert _released_breaks(again) == [], [s.fixed for s in suggestions]
    for suggestion in suggestions:
        if not suggestion.fixable:
            continue
        rel = next(r for r in result.new.files if result.new.display(r) == suggestion.file)
        before, after = result.new.messages[rel], _message(suggestion.file, suggestion.fixed)
        assert _top_layout(after) == _top_layout(before), suggestion.fixed
        assert after.versions is not None and before.versions is not None
        assert after.versions.highest >= before.versions.highest
        assert _errors({rel: suggestion.fixed}) <= _errors({rel: suggestion.text}) | _errors_ignoring(rel)


def _errors(files: dict[str, str]) -> set[str]:
    report = lint_texts(files, Config(select=("KL1", "KL2", "KL3", "KL4", "KL5", "KL6")))
    return {f.rule for f in report.findings if f.severity == "error"}


def _errors_ignoring(rel: str) -> set[str]:
    return {"KL703"}  # a lone request file has no response beside it: not the suggestion's doing


# -- ../shared/compat-cases ----------------------------------------------------------------------


def _cases() -> list[dict]:
    base = require_shared("compat-cases")
    return [json.loads(line) for line in (base / "expected.jsonl").read_text().splitlines() if line.strip()]


def test_every_wire_breaking_case_gets_an_edit_or_an_explanation() -> None:
    base = require_shared("compat-cases")
    wire = [case for case in _cases() if case["primary"] == "WIRE_BREAKING"]
    assert len(wire) >= 20
    fixed, explained = [], []
    for case in wire:
        folder = base / case["case"]
        result = compare_result(str(folder / "old.json"), str(folder / "new.json"), witnesses=False, cross_check=0)
        kinds = {kind for _, kind in _released_breaks(result)}
        assert kinds, case["case"]
        suggestions = suggest(result)
        assert suggestions, case["case"]
        header = any(pair.message.type == "header" for pair in result.pairs)
        if kinds & CANNOT_CARRY or header:
            assert all(s.blocked and not s.edits for s in suggestions), case["case"]
            assert all(len(why) > 40 for s in suggestions for why in s.blocked)
            explained.append(case["case"])
        else:
            _check_fixed(result, suggestions)
            fixed.append(case["case"])
    # the cases whose change a new version can carry are the removals, narrowed or moved versions, nullable
    # structs and flexibleVersions put back, and a regular field becoming tagged
    assert set(fixed) >= {"e4_remove_last_field", "e5_remove_middle_field_same_types", "e8_drop_field_from_existing_version",
                          "e11_untagged_to_tagged", "e18_nullable_struct_added", "n01_nullable_struct_added_nonflexible",
                          "n16_struct_wrap_flexible", "n25_nullable_struct_made_non_nullable"}, fixed
    assert set(explained) & set(fixed) == set()


def test_a_retype_is_explained_with_the_two_field_form() -> None:
    folder = require_shared("compat-cases") / "n11_int32_to_float64"
    result = compare_result(str(folder / "old.json"), str(folder / "new.json"), witnesses=False, cross_check=0)
    (suggestion,) = suggest(result)
    assert not suggestion.fixable
    (why,) = suggestion.blocked
    assert "int32 -> float64" in why and "two-field form" in why
    assert '"versions": "0"' in why and '"type": "float64", "versions": "1+"' in why


# -- a request and its response ------------------------------------------------------------------


def _api_dirs(tmp_path: Path) -> tuple[Path, Path]:
    source = require_shared("kafka-specs", "trunk-2024-10")
    found = {p.name: p for p in source.rglob("ListOffsets*.json")}
    old, new = tmp_path / "old", tmp_path / "new"
    for side in (old, new):
        side.mkdir()
        for name in ("ListOffsetsRequest.json", "ListOffsetsResponse.json"):
            shutil.copy(found[name], side / name)
    return old, new


def _drop_field(path: Path, name: str) -> None:
    text = path.read_text()
    start = text.index(f'{{ "name": "{name}"')
    end = text.index("}", text.index('"about"', start)) + 1
    end = text.index("{", end)  # up to the next field, whose indentation stays
    path.write_text(text[:start] + text[end:])


def test_request_and_response_move_to_the_new_version_together(tmp_path: Path) -> None:
    old, new = _api_dirs(tmp_path)
    _drop_field(new / "ListOffsetsRequest.json", "CurrentLeaderEpoch")
    result = compare_result(str(old), str(new), witnesses=False, cross_check=0)
    suggestions = suggest(result)
    assert sorted(Path(s.file).name for s in suggestions) == ["ListOffsetsRequest.json", "ListOffsetsResponse.json"]
    tops = {Path(s.file).name: _message(s.file, s.fixed).versions for s in suggestions}
    old_top = result.old.messages["ListOffsetsRequest.json"].versions
    assert old_top is not None
    assert {str(v) for v in tops.values()} == {f"0-{old_top.highest + 1}"}
    _check_fixed(result, suggestions)
    request = next(s for s in suggestions if s.file.endswith("Request.json"))
    assert '"CurrentLeaderEpoch", "type": "int32", "versions": "4-' in request.fixed
    # comments and every other line are kept: only the edited lines differ
    assert request.fixed.count("//") == request.text.count("//")


def test_fix_writes_the_files_then_nothing_is_left(tmp_path: Path) -> None:
    old, new = _api_dirs(tmp_path)
    _drop_field(new / "ListOffsetsRequest.json", "CurrentLeaderEpoch")
    runner = CliRunner()
    before = (new / "ListOffsetsResponse.json").read_text()
    shown = runner.invoke(cli, ["compat", "--suggest", str(old), str(new)])
    assert shown.exit_code == 1, shown.output
    assert f"+++ b/{str(new).lstrip('/')}/ListOffsetsResponse.json" in shown.stdout
    assert (new / "ListOffsetsResponse.json").read_text() == before  # --suggest writes nothing
    fixed = runner.invoke(cli, ["compat", "--fix", str(old), str(new)])
    assert fixed.exit_code == 0, fixed.output
    assert (new / "ListOffsetsResponse.json").read_text() != before
    again = runner.invoke(cli, ["compat", "--suggest", str(old), str(new)])
    assert again.exit_code == 0 and again.stdout == "", again.output
    assert "nothing to suggest" in again.stderr


def test_suggest_as_json(tmp_path: Path) -> None:
    old, new = _api_dirs(tmp_path)
    _drop_field(new / "ListOffsetsRequest.json", "CurrentLeaderEpoch")
    shown = CliRunner().invoke(cli, ["compat", "--suggest", "--format", "json", str(old), str(new)])
    assert shown.exit_code == 1
    document = json.loads(shown.stdout)
    assert {s["fixable"] for s in document["suggestions"]} == {True}
    edits = [e for s in document["suggestions"] for e in s["edits"]]
    assert edits and all(set(e) == {"start", "end", "old", "new"} for e in edits)


def test_an_explanation_points_at_the_break_and_fails(tmp_path: Path) -> None:
    folder = require_shared("compat-cases") / "n31_reorder_different_types"
    shown = CliRunner().invoke(cli, ["compat", "--suggest", str(folder / "old.json"), str(folder / "new.json")])
    assert shown.exit_code == 1
    assert shown.stdout == ""
    first = shown.stderr.splitlines()[0]
    assert first.startswith(f"{folder / 'new.json'}:") and "changed places" in first
    line = int(first.split(":")[1])
    assert line > 1


@pytest.mark.parametrize("args", [["--suggest", "--fix"], ["--suggest", "--format", "sarif"],
                                  ["--suggest", "-o", "out.txt"]])
def test_bad_combinations_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    old, new = _api_dirs(tmp_path)
    shown = CliRunner().invoke(cli, ["compat", *args, str(old), str(new)])
    assert shown.exit_code == 2 and "--suggest" in shown.output


def test_fix_refuses_a_git_tree_as_the_new_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, new = _api_dirs(tmp_path)
    _drop_field(new / "ListOffsetsRequest.json", "CurrentLeaderEpoch")
    git(tmp_path, "init", "-q")
    commit(tmp_path)
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(cli, ["compat", "--fix", "old", "HEAD:new"])
    assert shown.exit_code == 2, shown.output
    assert "is not one" in shown.output and shown.exception is None or isinstance(shown.exception, SystemExit)


# -- property: random single mutations -----------------------------------------------------------


def _revision(label: str, spec: dict) -> Revision:
    return Revision(label, {name: text.encode() for name, text in lint_files(spec).items()})


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__)
@PROPERTY
@given(old=message_specs(), data=st.data())
def test_every_released_break_gets_a_verified_edit_or_a_reason(mutate, old, data) -> None:
    mutated = mutate(copy.deepcopy(old), data.draw)
    assume(mutated is not None)
    new, truth = mutated
    result = compare(_revision("old", old), _revision("new", new), witnesses=False, cross_check=0)
    breaks = _released_breaks(result)
    suggestions = suggest(result)
    event(f"mutation {truth.label}")
    note(f"old: {json.dumps(old)}\nnew: {json.dumps(new)}\nbreaks: {breaks}")
    if not breaks:
        assert suggestions == []
        return
    broken = {name for name, _ in breaks}
    covered = {s.message for s in suggestions}
    assert broken <= covered
    event("edit" if all(s.fixable for s in suggestions) else "explained")
    if any(s.blocked for s in suggestions):
        assert all(why for s in suggestions for why in s.blocked)
        return
    _check_fixed(result, suggestions)
    if truth.label in ("add-regular-field", "remove-field"):
        assert all(s.fixable for s in suggestions if s.message in broken)


def test_the_response_does_not_move_when_the_request_cannot(tmp_path: Path) -> None:
    old, new = _api_dirs(tmp_path)
    request = new / "ListOffsetsRequest.json"
    request.write_text(request.read_text().replace('"ReplicaId", "type": "int32"', '"ReplicaId", "type": "int64"'))
    _drop_field(request, "CurrentLeaderEpoch")
    suggestions = suggest(compare_result(str(old), str(new), witnesses=False, cross_check=0))
    assert [(Path(s.file).name, s.fixable) for s in suggestions] == [("ListOffsetsRequest.json", False)]
    assert "int32 -> int64" in suggestions[0].blocked[0]
    shown = CliRunner().invoke(cli, ["compat", "--fix", str(old), str(new)])
    assert shown.exit_code == 1 and "two-field form" in shown.stderr
    assert (new / "ListOffsetsResponse.json").read_bytes() == (old / "ListOffsetsResponse.json").read_bytes()


def test_flexible_versions_start_at_the_new_version_when_the_change_needs_them() -> None:
    """KIP-636's shape: tagged ErrorCode/ErrorMessage need a flexible version; OffsetDelete v0 was not one, so
    the new revision made v0 flexible (a break). The edit makes v1 the first flexible version instead."""
    result = compare_result("fixtures/compat/kip636/old", "fixtures/compat/kip636/new", witnesses=False,
                            cross_check=0)
    (fix,) = suggest(result)
    assert fix.fixable
    fixed = _message(fix.file, fix.fixed)
    assert (str(fixed.versions), str(fixed.flexible)) == ("0-1", "1+")
    assert all(str(spec.tagged_versions) == "1+" for spec, _ in fixed.all_fields() if spec.tag is not None)
    _check_fixed(result, [fix])


def test_a_rename_and_a_safe_tagged_field_beside_a_removal_are_left_as_they_are(tmp_path: Path) -> None:
    """The demo's new revision renames RackId and adds a tagged field to existing versions (both fine); with
    MaxWaitMs removed too, only MaxWaitMs comes back, for the released versions."""
    new = tmp_path / "new"
    shutil.copytree("fixtures/compat/demo/new", new)
    spec = new / "WidgetFetchRequest.json"
    text = spec.read_text().replace('"MaxWaitMs", "type": "int64"', '"MaxWaitMs", "type": "int32"')
    start = text.index('{ "name": "MaxWaitMs"')
    spec.write_text(text[:start] + text[text.index("{", text.index("}", start)):])
    result = compare_result("fixtures/compat/demo/old", str(new), witnesses=False, cross_check=0)
    (fix,) = suggest(result)
    assert fix.notes == ("WidgetFetchRequest.MaxWaitMs: put back for v0-3 (the new revision removed it from "
                         "released versions)",)
    assert '"ClientRackId"' in fix.fixed and '"RackId"' not in fix.fixed
    _check_fixed(result, [fix])


def test_the_text_report_says_when_fix_can_move_a_break() -> None:
    shown = CliRunner().invoke(cli, ["compat", "fixtures/compat/kip636/old", "fixtures/compat/kip636/new"])
    assert shown.exit_code == 1
    assert shown.stderr.splitlines()[-1].startswith("[*] 1 file can keep the released bytes")
    retype = CliRunner().invoke(cli, ["compat", "fixtures/compat/demo/old", "fixtures/compat/demo/new"])
    assert retype.exit_code == 1 and "[*]" not in retype.stderr  # a retype has no edit, only an explanation
    as_json = CliRunner().invoke(cli, ["compat", "--format", "json", "fixtures/compat/kip636/old",
                                       "fixtures/compat/kip636/new"])
    assert "[*]" not in as_json.stderr


def test_fix_on_every_wire_breaking_case_through_the_command_line(tmp_path: Path) -> None:
    """``krpc-lint compat --fix OLD NEW`` as a user runs it on each case: exit 0 afterwards exactly when an edit
    was written (no released wire break is left), the file untouched otherwise."""
    base = require_shared("compat-cases")
    written = 0
    for case in (c for c in _cases() if c["primary"] == "WIRE_BREAKING"):
        folder = tmp_path / case["case"]
        shutil.copytree(base / case["case"], folder)
        before = (folder / "new.json").read_bytes()
        fixable = any(s.fixable for s in suggest(compare_result(str(folder / "old.json"), str(folder / "new.json"),
                                                                witnesses=False, cross_check=0)))
        shown = CliRunner().invoke(cli, ["compat", "--fix", str(folder / "old.json"), str(folder / "new.json")])
        changed = (folder / "new.json").read_bytes() != before
        assert changed == fixable, (case["case"], shown.output)
        assert shown.exit_code == (0 if fixable else 1), (case["case"], shown.output)
        again = CliRunner().invoke(cli, ["compat", "--suggest", str(folder / "old.json"), str(folder / "new.json")])
        assert again.stdout == "", case["case"]  # nothing left to edit
        written += changed
    assert written >= 8


def test_a_crlf_file_keeps_its_line_ends(tmp_path: Path) -> None:
    folder = require_shared("compat-cases") / "e4_remove_last_field"
    for name in ("old.json", "new.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes().replace(b"\n", b"\r\n"))
    (fix,) = suggest(compare_result(str(tmp_path / "old.json"), str(tmp_path / "new.json"), witnesses=False,
                                    cross_check=0))
    assert fix.fixable and "\r\n" in fix.fixed
    assert "\n" not in fix.fixed.replace("\r\n", "")  # no bare LF inserted


def test_an_explanation_points_at_the_break_in_a_git_tree_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The line comes from the revision compat read, not from a file on disk (a REF:path has none)."""
    folder = require_shared("compat-cases") / "n31_reorder_different_types"
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        shutil.copy(folder / f"{side}.json", tmp_path / side / "spec.json")
    git(tmp_path, "init", "-q")
    commit(tmp_path)
    monkeypatch.chdir(tmp_path)
    on_disk = CliRunner().invoke(cli, ["compat", "--suggest", "old/spec.json", "new/spec.json"])
    in_git = CliRunner().invoke(cli, ["compat", "--suggest", "HEAD:old/spec.json", "HEAD:new/spec.json"])
    where = on_disk.stderr.splitlines()[0].split(": ", 1)[0]
    assert int(where.split(":")[1]) > 1
    assert in_git.stderr.splitlines()[0].startswith(f"HEAD:new/spec.json:{where.split(':', 1)[1]}:")
