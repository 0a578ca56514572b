"""The bundled fixtures: ``fixtures/valid`` lints clean, and ``fixtures/invalid`` shows every rule at work.

``fixtures/invalid`` holds one fixture per rule, named ``<id>-<name>.json`` (or a directory
``<id>-<name>/`` for rules that compare several files). Linted alone with the strict profile,
each fixture must trigger its own rule, and any other rule it triggers must be listed in
``ALLOWED_EXTRAS`` with the reason it cannot be avoided.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT, format_findings

from linter.engine.config import Config
from linter.engine.rules import Rule
from linter.engine.runner import all_rules, lint
from linter.parse.document import load_document

FIXTURES = REPO_ROOT / "fixtures"
VALID = FIXTURES / "valid"
INVALID = FIXTURES / "invalid"
STRICT = Config(profile="strict")
RULES = [rule for rule in all_rules() if rule.scope not in ("compat", "wire")]  # compat: fixtures/compat below;
# wire rules (frames check) have frames, not spec files: their examples and tests/wirecheck/test_seeded_faults.py
COMPAT = FIXTURES / "compat"
COMPAT_RULES = [rule for rule in all_rules() if rule.scope == "compat"]
# Compat rules without a fixture pair, and why.
COMPAT_WITHOUT_FIXTURE = {
    "cross-check-divergence": "reported only when the codec contradicts the layout comparison (an engine mistake)",
}
HEADER = b"// krpc-lint fixture:"

# A single-file fixture is named after its rule, not after its message, so KL752
# file-name-matches fires on every one of them.
SINGLE_FILE_EXTRAS = frozenset({"KL752"})

# Other rules a fixture necessarily triggers besides its own, and why.
ALLOWED_EXTRAS: dict[str, frozenset[str]] = {
    # An "about" that is not a string cannot be bound, so the field counts as undocumented.
    "KL102": frozenset({"KL801"}),
    # "2-" cannot be parsed, so it is not written canonically either.
    "KL201": frozenset({"KL256"}),
    # A struct with no version in common with its parent is also a field that is never sent.
    "KL206": frozenset({"KL251"}),
    # "Int32" is read as a struct named Int32 that nothing defines.
    "KL353": frozenset({"KL652"}),
    # "[]segmentRef" cannot be parsed as a type: lower-case struct names are not types.
    "KL601": frozenset({"KL302"}),
    # Two messages with one name: one of them is not in the file named after it.
    "KL3003": frozenset({"KL752"}),
    # A suppression without a reason suppresses nothing: the finding it targets stays.
    "KL902": frozenset({"KL802"}),
}

# Rules that do not fire on their fixture because of a known linter bug: id -> reason.
KNOWN_BUGS: dict[str, str] = {}


def _config(rule: Rule) -> Config:
    """Strict, under the release whose generator introduced the rule (its ``kafka.since``)."""
    return Config(profile="strict", kafka_version=rule.example_release, siblings=False)  # each fixture stands alone


def fixture_name(rule: Rule) -> str:
    return f"{rule.id}-{rule.name}"


def fixture_for(rule: Rule) -> Path:
    """The fixture of a rule: ``<id>-<name>.json`` or the directory ``<id>-<name>/``."""
    file, directory = INVALID / f"{fixture_name(rule)}.json", INVALID / fixture_name(rule)
    assert not (file.exists() and directory.exists()), f"{rule.id} has both {file.name} and {directory.name}/"
    if directory.is_dir():
        return directory
    assert file.is_file(), f"no fixture for {rule.id}: expected {file} or {directory}/"
    return file


def _rule_params(bugs: dict[str, str]) -> list:
    return [pytest.param(rule, id=rule.id,
                         marks=[pytest.mark.xfail(strict=True, reason=bugs[rule.id])] if rule.id in bugs else [])
            for rule in RULES]


NOT_SPECS = (FIXTURES / "wire-bugs",)  # frames and their manifest (tests/wirecheck), no spec among them


def _spec_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json") if p.is_file() and not any(p.is_relative_to(d) for d in NOT_SPECS))


# --- fixtures/valid ------------------------------------------------------------------------


def test_valid_fixtures_are_clean_under_strict() -> None:
    report = lint([VALID], STRICT)
    assert report.files >= 6, f"expected at least 6 spec files in {VALID}, linted {report.files}"
    assert not report.findings, f"{VALID} should have no findings:\n{format_findings(report.findings)}"


def test_valid_fixtures_cover_every_message_type() -> None:
    types = set()
    for path in _spec_files(VALID):
        document = load_document(path)
        assert document.problem is None, f"{path}: {document.problem}"
        types.add(document.value.get("type"))
    assert types >= {"request", "response", "data", "metadata", "header"}, f"message types covered: {sorted(types)}"


# --- fixtures/invalid ------------------------------------------------------------------------


def test_invalid_fixtures_match_the_rules_exactly() -> None:
    expected = {fixture_name(rule) for rule in RULES}
    present = {p.name[: -len(".json")] if p.is_file() and p.name.endswith(".json") else p.name
               for p in INVALID.iterdir() if not p.name.startswith(".")}
    assert not expected - present, f"rules without a fixture: {sorted(expected - present)}"
    assert not present - expected, f"fixtures for no rule (stale or misnamed): {sorted(present - expected)}"


@pytest.mark.parametrize("rule", _rule_params(KNOWN_BUGS))
def test_fixture_triggers_its_rule(rule: Rule) -> None:
    path = fixture_for(rule)
    report = lint([path], _config(rule))
    own = [f for f in report.findings if f.rule == rule.id]
    assert own, f"{path} does not trigger {rule.id} ({rule.name}); all findings:\n{format_findings(report.findings)}"
    assert all(f.line >= 1 and f.col >= 1 for f in own), f"{rule.id} findings without a position:\n{format_findings(own)}"


@pytest.mark.parametrize("rule", _rule_params({}))
def test_fixture_triggers_few_other_rules(rule: Rule) -> None:
    path = fixture_for(rule)
    allowed = ALLOWED_EXTRAS.get(rule.id, frozenset()) | (SINGLE_FILE_EXTRAS if path.is_file() else frozenset())
    report = lint([path], _config(rule))
    extra = [f for f in report.findings if f.rule != rule.id and f.rule not in allowed]
    assert not extra, (f"{path} triggers rules other than {rule.id} that are not in ALLOWED_EXTRAS:\n"
                       f"{format_findings(extra)}")


def test_allowed_extras_name_known_rules() -> None:
    ids = {rule.id for rule in RULES}
    named = set(ALLOWED_EXTRAS) | set(KNOWN_BUGS) | SINGLE_FILE_EXTRAS
    for extras in ALLOWED_EXTRAS.values():
        named |= extras
    assert named <= ids, f"unknown rule ids in the fixture tables: {sorted(named - ids)}"


def test_every_fixture_file_says_what_it_demonstrates() -> None:
    for path in _spec_files(FIXTURES):
        data = path.read_bytes()
        assert data.startswith(HEADER), f"{path} does not start with {HEADER.decode()!r}"
        for parent in (INVALID, COMPAT):
            if not path.is_relative_to(parent):
                continue
            rule_id = path.relative_to(parent).parts[0].split("-", 1)[0]
            assert rule_id.encode() in data.splitlines()[0], f"{path}: the header does not name {rule_id}"


# --- fixtures/compat ---------------------------------------------------------------------------
# One directory per compat rule, ``<id>-<name>/old/`` and ``<id>-<name>/new/``: two revisions whose
# comparison shows the rule at work (``krpc-lint compat DIR/old DIR/new``).


def test_compat_fixtures_match_the_rules_exactly() -> None:
    expected = {fixture_name(rule) for rule in COMPAT_RULES if rule.name not in COMPAT_WITHOUT_FIXTURE}
    present = {p.name for p in COMPAT.iterdir() if p.is_dir() and p.name.startswith("KL")}
    assert expected == present, f"missing: {sorted(expected - present)}; stale: {sorted(present - expected)}"


@pytest.mark.parametrize("rule", [r for r in COMPAT_RULES if r.name not in COMPAT_WITHOUT_FIXTURE],
                         ids=lambda r: r.id)
def test_compat_fixture_triggers_its_rule(rule: Rule) -> None:
    from linter.compat.api import compare

    pair = COMPAT / fixture_name(rule)
    report = compare(pair / "old", pair / "new", STRICT)
    own = [f for f in report.findings if f.rule == rule.id]
    assert own, f"{pair} does not trigger {rule.id} ({rule.name}); all findings:\n{format_findings(report.findings)}"
    assert all(f.line >= 1 and f.col >= 1 and f.versions is not None for f in own)
