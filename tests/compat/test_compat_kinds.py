"""Every kind of change compat can emit has a rule, of the same category (issue 16): a kind the rules do
not describe would be dropped from every report. Kinds are typed (``linter.compat.kinds.ChangeKind``, each
with its category); the compat code is read with ``ast`` for each ``record(kind, ...)``, ``Change.of(kind,
...)`` and ``Change(kind, ...)`` call, so a kind spelt as a bare string fails here, and ``to_report``
refuses a change no rule describes instead of dropping it."""

from __future__ import annotations

import ast

import pytest
from conftest import REPO_ROOT

from linter.compat.compare import CompatResult, PairResult
from linter.compat.diff import Change
from linter.compat.kinds import ChangeKind
from linter.compat.report import UnknownChange, to_report
from linter.compat.revision import Revision
from linter.engine.rules import Rule, builtin_pack_dir, load_pack
from linter.vocabulary import VERDICTS, Category

_RECORDING = ("record", "of", "Change")


def _recorded_kinds() -> tuple[set[tuple[str, str]], list[str]]:
    """(kind, category) of every kind the compat code records, and the calls that name a kind otherwise
    than as a ``ChangeKind`` member (a bare string, which no type ties to a rule)."""
    found, untyped = set(), []
    for path in (REPO_ROOT / "linter" / "compat").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            kind = node.args[0]
            if name not in _RECORDING:
                continue
            if isinstance(kind, ast.Constant):
                untyped.append(f"{path.name}:{node.lineno}: {ast.unparse(kind)}")
            elif isinstance(kind, ast.Attribute) and getattr(kind.value, "id", "") == "ChangeKind":
                member = ChangeKind[kind.attr]
                found.add((member.value, member.category.value))
    return found, untyped


def _compat_rules() -> dict[str, Rule]:
    return {rule.check["compat"]: rule for rule in load_pack(builtin_pack_dir()) if rule.scope == "compat"}


def test_every_kind_compat_emits_has_a_rule_of_its_category() -> None:
    rules = _compat_rules()
    emitted, untyped = _recorded_kinds()
    assert len(emitted) > 30  # the reading found the calls
    assert untyped == [], f"kinds recorded as bare strings: {untyped}"
    missing = sorted(kind for kind, _ in emitted if kind not in rules)
    assert missing == [], f"change kinds without a rule: {missing}"
    wrong = sorted((kind, category, rules[kind].category) for kind, category in emitted
                   if rules[kind].category != category)
    assert wrong == [], f"kinds whose rule has another category: {wrong}"


def test_the_kinds_and_the_compat_rules_are_the_same_set_with_the_same_categories() -> None:
    rules = _compat_rules()
    assert sorted(rules) == sorted(kind.value for kind in ChangeKind)
    assert {kind.value: kind.category.value for kind in ChangeKind} == \
        {name: rule.category for name, rule in rules.items()}


def test_the_category_table_covers_every_rule_category_and_names_each_once() -> None:
    categories = {rule.category for rule in _compat_rules().values()}
    assert categories <= {category.value for category in Category}
    assert VERDICTS[0] is Category.WIRE_BREAKING and VERDICTS[-1] is Category.SAFE
    for field in ("heading", "label", "colour"):
        values = [getattr(category, field) for category in Category if getattr(category, field)]
        assert len(values) == len(set(values)), field


def test_a_change_no_rule_describes_is_refused_not_dropped() -> None:
    revision = Revision("r", {})
    change = Change("no-such-kind", "SAFE", "Widget", "something changed", (0,))
    result = CompatResult(revision, revision, [PairResult("Widget.json", "Widget.json", None, None, [change])])
    with pytest.raises(UnknownChange, match="no-such-kind"):
        to_report(result)
