"""Every rule's documented examples: each bad one is flagged by the rule, no good one is.

Lint rules lint their example files. Wire rules (``check: {wire: ...}``, KL2xxx) check the frames of
their example's ``frames.jsonl`` against its spec files (with Kafka's request and response headers).
Compat rules (``check: {compat: ...}``, KL1xxx) compare two revisions; their examples name the files
of each side:

* ``old.json`` / ``new.json``: one spec before and after the change (the same file on both
  sides). A pair with only ``old.json`` means the file was removed, only ``new.json`` that it
  was added.
* ``old/<path>`` / ``new/<path>``: a file at ``<path>`` in the old / new revision, to show
  renamed files or several files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import format_findings
from support.headers import REQUEST_HEADER, RESPONSE_HEADER

from linter.codec import Codec
from linter.compat.api import compare_texts
from linter.engine.config import Config
from linter.engine.rules import Example, Rule
from linter.engine.runner import all_rules, lint_texts
from linter.frames.inputs import Inputs
from linter.wirecheck.findings import selection
from linter.wirecheck.run import Run

RULES = all_rules()
COMPAT_FILE = "Example.json"  # what old.json and new.json are called in both revisions

# Rules that cannot have a bad example, and why.
NO_BAD_EXAMPLE = {
    # Reported only when the codec's cross-decoding contradicts the layout comparison, i.e. for a
    # mistake of the comparison itself: no known spec pair produces it.
    "cross-check-divergence": "guards against engine mistakes; no pair is known to trigger it",
}


def compat_sides(example: Example) -> tuple[dict[str, str | bytes], dict[str, str | bytes]]:
    """The old and new revision of a compat example, by the naming convention above."""
    old: dict[str, str | bytes] = {}
    new: dict[str, str | bytes] = {}
    for name, text in example.files.items():
        if name in ("old.json", "new.json"):
            side, path = name[:3], COMPAT_FILE
        elif name.startswith(("old/", "new/")) and len(name) > 4:
            side, path = name[:3], name[4:]
        else:
            raise AssertionError(f"compat example file {name!r}: expected old.json, new.json, old/<path> or new/<path>")
        (old if side == "old" else new)[path] = text
    return old, new


def wire_findings(rule: Rule, example: Example, tmp_path: Path) -> list[str]:
    """The rule ids a wire example's frames are found to break, every wire rule selected."""
    specs = {name: text.encode() if isinstance(text, str) else text for name, text in example.files.items()
             if name.endswith(".json")}
    specs |= {"RequestHeader.json": json.dumps(REQUEST_HEADER).encode(),
              "ResponseHeader.json": json.dumps(RESPONSE_HEADER).encode()}
    frames = tmp_path / f"{rule.id}-{example.kind}.jsonl"
    frames.write_text(str(example.files["frames.jsonl"]), encoding="utf-8")
    run = Run(Codec.from_files(specs), selection(Config(profile="strict")))
    collector = run.read(Inputs(corpora=[str(frames)]))
    assert not collector.unreadable_count, collector.unreadable
    return [finding.rule.id for finding in collector.findings]


def _own_findings(rule: Rule, example: Example):
    config = Config(profile="strict", select=(rule.id,), kafka_version=rule.example_release)
    if rule.scope == "compat":
        old, new = compat_sides(example)
        report = compare_texts(old, new, config)
    else:
        report = lint_texts(example.files, config, complete=True)
    return report.findings, [f for f in report.findings if f.rule == rule.id]


def _show(example: Example) -> str:
    return "\n".join(f"--- {name}\n{text}" for name, text in example.files.items())


def test_rules_are_loaded() -> None:
    assert RULES, "no rules in the built-in pack"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_good_and_bad_examples(rule: Rule) -> None:
    kinds = {example.kind for example in rule.examples}
    expected = {"good"} if rule.scope == "compat" and rule.check["compat"] in NO_BAD_EXAMPLE else {"bad", "good"}
    assert kinds >= expected, f"{rule.id} ({rule.source}) has examples of kind(s) {sorted(kinds)} only"


def test_rules_without_bad_examples_are_known() -> None:
    names = {rule.name: rule for rule in RULES}
    for name in NO_BAD_EXAMPLE:
        assert name in names and names[name].scope == "compat", f"NO_BAD_EXAMPLE names no compat rule {name!r}"
        assert not [e for e in names[name].examples if e.kind == "bad"], f"{name} has a bad example now: drop it here"


@pytest.mark.parametrize("rule", [r for r in RULES if r.scope == "compat"], ids=lambda r: r.id)
def test_compat_examples_follow_the_naming_convention(rule: Rule) -> None:
    for example in rule.examples:
        old, new = compat_sides(example)
        assert old or new, f"{rule.id} has an example with no files"


@pytest.mark.parametrize("rule", [r for r in RULES if r.scope == "wire"], ids=lambda r: r.id)
def test_wire_examples_are_flagged_by_their_rule_alone(rule: Rule, tmp_path: Path) -> None:
    """A bad example's frames break the rule and no other; a good example's break none."""
    for example in rule.examples:
        found = wire_findings(rule, example, tmp_path)
        assert found == ([rule.id] if example.kind == "bad" else []), f"{rule.id} {example.kind}: {found}\n{_show(example)}"


@pytest.mark.parametrize("rule", [r for r in RULES if r.scope != "wire"], ids=lambda r: r.id)
def test_bad_examples_are_flagged(rule: Rule) -> None:
    for index, example in enumerate(e for e in rule.examples if e.kind == "bad"):
        findings, own = _own_findings(rule, example)
        assert own, (f"{rule.id} bad example #{index} is not flagged by the rule; all findings:\n"
                     f"{format_findings(findings)}\n{_show(example)}")


@pytest.mark.parametrize("rule", [r for r in RULES if r.scope != "wire"], ids=lambda r: r.id)
def test_good_examples_are_accepted(rule: Rule) -> None:
    for index, example in enumerate(e for e in rule.examples if e.kind == "good"):
        _, own = _own_findings(rule, example)
        assert not own, f"{rule.id} good example #{index} is flagged:\n{format_findings(own)}\n{_show(example)}"
