"""Acceptance of ``lint --fix`` / ``--diff`` (issue 18, point 3): for every rule whose YAML says ``fixable: true``,
on its invalid fixture and its ``bad`` examples, the edits its findings carry are exactly what changes.

Each case is linted with that rule alone among the fixable ones (the others are ignored, so no other rule's edit
mixes in): ``--diff`` exits 1 and prints the diff of exactly the edits, ``--fix`` then leaves every byte outside
them as it was and the file passes the rule (a fixture wholly; an example may keep the findings that carried no
fix, such as KIP-482's draft ``optionalFields``), and a second run changes nothing. A fix never changes the wire:
the layout of every version is the same before and after.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from linter.cli.main import cli
from linter.codec.codec import Codec
from linter.codec.errors import EncodeError, SpecError
from linter.compat.layout import LayoutBuilder, LayoutError, same_wire
from linter.engine.rules import Rule, RuleError, load_pack
from linter.engine.runner import all_rules
from linter.model.spec import MessageSpec, build_message
from linter.parse.document import read_document

FIXABLE = [rule for rule in all_rules() if rule.fixable]
INVALID = Path(__file__).resolve().parents[2] / "fixtures" / "invalid"
# Fixable rules whose bad specs Kafka's generator always refuses, so have no bytes a fix could keep (their layouts
# are not compared either), and why.
NEVER_COMPILED = {
    "KL412": "Kafka rejects KIP-482's draft keys and hexadecimal tags; the fix gives the draft its final meaning",
}


@dataclass(frozen=True)
class Case:
    """One spec a fixable rule flags: its invalid fixture, or one of its bad examples."""

    rule: Rule
    name: str  # the file name the spec is written under
    text: str
    fixture: bool  # fixtures must be fixed wholly; an example may keep findings that carry no fix

    @property
    def id(self) -> str:
        return f"{self.rule.id}-{'fixture' if self.fixture else self.name}"


def _cases(rule: Rule) -> list[Case]:
    """The rule's invalid fixture (a file, or each file of a fixture directory) and its bad examples."""
    found = sorted(INVALID.glob(f"{rule.id}-*.json")) + sorted(INVALID.glob(f"{rule.id}-*/*.json"))
    out = [Case(rule, path.name, path.read_text(encoding="utf-8"), True) for path in found]
    bad = [example for example in rule.examples if example.kind == "bad" and len(example.files) == 1]
    for index, example in enumerate(bad):
        (text,) = example.files.values()
        if isinstance(text, str):
            out.append(Case(rule, f"Example{index}.json", text, False))
    return out


CASES = [case for rule in FIXABLE for case in _cases(rule)]


def _run(case: Case, file: Path, *args: str) -> tuple[int, str]:
    """``krpc-lint lint`` on ``file`` with the strict profile and no fixable rule but the case's."""
    others = [arg for rule in FIXABLE if rule.id != case.rule.id for arg in ("--ignore", rule.id)]
    version = ["--kafka-version", case.rule.example_release] if case.rule.example_release else []
    result = CliRunner().invoke(cli, ["lint", "--no-cache", "--no-siblings", "--profile", "strict", "--select",
                                      case.rule.id, *others, *version, *args, str(file)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout


def _own(case: Case, file: Path) -> list[dict[str, Any]]:
    """The case rule's findings on ``file`` (JSON form: with their edits under ``fix``)."""
    _, out = _run(case, file, "--format", "json")
    return [f for f in json.loads(out)["findings"] if f["rule"] == case.rule.id]


def _spliced(text: str, edits: list[dict[str, Any]]) -> str:
    """``text`` with ``edits`` applied, written here independently of ``linter.engine.fixes``."""
    out, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e["start"], e["end"])):
        assert edit["start"] >= cursor, f"overlapping edits {edits}"
        assert text[edit["start"]:edit["end"]] == edit["old"]
        out += [text[cursor:edit["start"]], edit["new"]]
        cursor = edit["end"]
    return "".join(out) + text[cursor:]


def _diff(name: str, old: str, new: str) -> str:
    """The unified diff of two texts, a last line without its newline marked as diff(1) marks it (an absolute
    path shown as git diff --no-index shows it: a/tmp/x.json)."""
    name = name.lstrip("/")
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in lines)


def _write(directory: Path, case: Case) -> Path:
    directory.mkdir(exist_ok=True)
    file = directory / case.name
    file.write_text(case.text, encoding="utf-8")
    return file


def test_every_fixable_rule_has_a_fixable_fixture() -> None:
    assert {rule.id for rule in FIXABLE} >= {"KL256", "KL257", "KL412", "KL551"}
    for rule in FIXABLE:
        assert rule.fix_note, f"{rule.id}: a fixable rule says what its fix does and why it keeps the bytes (fix:)"
        fixtures = [case for case in CASES if case.rule is rule and case.fixture]
        assert fixtures, f"fixable rule {rule.id} has no invalid fixture"
        assert any(case.rule is rule and not case.fixture for case in CASES), f"{rule.id} has no bad example"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_fix_changes_exactly_the_edits(tmp_path: Path, case: Case) -> None:
    file = _write(tmp_path, case)
    findings = _own(case, file)
    edits = [edit for finding in findings for edit in finding.get("fix", [])]
    assert edits or not case.fixture, f"{case.id}: no finding of {case.rule.id} carries a fix"
    if not edits:
        return
    expected = _spliced(case.text, edits)
    code, diff = _run(case, file, "--diff")
    assert (code, diff) == (1, _diff(str(file), case.text, expected))
    assert file.read_text(encoding="utf-8") == case.text  # --diff writes nothing
    _run(case, file, "--fix")
    after = file.read_text(encoding="utf-8")
    assert after == expected
    _assert_only_edits_differ(case.text, after, edits)
    unfixed = sorted(f["message"] for f in findings if not f.get("fix"))
    assert sorted(f["message"] for f in _own(case, file)) == ([] if case.fixture else unfixed)
    assert _run(case, file, "--diff")[1] == ""  # idempotent: nothing left to fix
    _run(case, file, "--fix")
    assert file.read_text(encoding="utf-8") == after


def _assert_only_edits_differ(before: str, after: str, edits: list[dict[str, Any]]) -> None:
    """difflib's view: every changed run of characters touches an edit (difflib may slide a run along equal
    characters next to it), and no more characters went or came than the edits' old and new texts hold."""
    spans = [(e["start"], e["end"]) for e in edits]
    changed = [op for op in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
               if op[0] != "equal"]
    assert changed
    for _, i1, i2, _, _ in changed:
        assert any(start <= i2 and i1 <= end for start, end in spans), f"characters {i1}-{i2} changed outside edits"
    assert sum(i2 - i1 for _, i1, i2, _, _ in changed) <= sum(len(e["old"]) for e in edits)
    assert sum(j2 - j1 for _, _, _, j1, j2 in changed) <= sum(len(e["new"]) for e in edits)


def _message(text: str, name: str) -> MessageSpec | None:
    document = read_document(name, text.encode("utf-8"))
    return build_message(document.value, name) if isinstance(document.value, dict) else None


def _layouts_differ(before: MessageSpec, after: MessageSpec) -> list[int]:
    """The versions whose wire layout differs (a version either side cannot lay out is not compared)."""
    if before.versions is None or after.versions is None or before.versions.empty:
        return []
    differ = []
    old, new = LayoutBuilder(before), LayoutBuilder(after)
    for version in range(before.versions.lowest, before.versions.highest + 1):
        try:
            if not same_wire(old.build(version), new.build(version)):
                differ.append(version)
        except LayoutError:
            continue
    return differ


def _default_bytes(file: Path) -> dict[int, bytes | str] | None:
    """What the codec (byte-exact with Kafka's classes) writes for the default message at each version, defaults
    of tagged fields and all (or the error it refuses it with); ``None`` when Kafka's generator refuses the spec,
    which then has no bytes."""
    try:
        codec = Codec.load(file)
    except SpecError:
        return None
    (name,) = codec.names
    versions = codec.spec(name).versions
    assert versions is not None
    out: dict[int, bytes | str] = {}
    for version in range(versions.lowest, versions.highest + 1):
        try:
            out[version] = codec.encode(name, version, codec.default(name, version))
        except EncodeError as exc:
            out[version] = str(exc)
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_fix_keeps_the_wire(tmp_path: Path, case: Case) -> None:
    file, fixed = _write(tmp_path / "before", case), _write(tmp_path / "after", case)
    _run(case, fixed, "--fix")
    old_bytes, new_bytes = _default_bytes(file), _default_bytes(fixed)
    if case.rule.id in NEVER_COMPILED:
        assert old_bytes is None, f"{case.id}: Kafka's generator accepts the spec, so its bytes must be kept"
        return
    if old_bytes is not None:
        assert new_bytes == old_bytes
    before, after = _message(case.text, case.name), _message(fixed.read_text(encoding="utf-8"), case.name)
    assert before is not None and after is not None
    assert not _layouts_differ(before, after), f"{case.id}: the fix changes the wire layout"


def test_fix_text_only_on_fixable_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))
    source = Path(FIXABLE[0].source).read_text(encoding="utf-8")
    path = tmp_path / "rule.yaml"
    path.write_text(source.replace("fixable: true\n", ""), encoding="utf-8")
    with pytest.raises(RuleError, match="fix must be text, on a rule with fixable: true"):
        load_pack(path)
