"""Every kind of change compat can emit has a rule, of the same category (issue 16): a kind the rules do
not describe would be dropped from every report. The kinds are read from the source with ``ast`` (each
``record(kind, category, ...)`` and ``Change(kind, category, ...)`` call), so a new kind without its rule
fails here, and ``to_report`` refuses a change no rule describes instead of dropping it."""

from __future__ import annotations

import ast

import pytest
from conftest import REPO_ROOT

from linter.compat import diff
from linter.compat.compare import CompatResult, PairResult
from linter.compat.diff import Change
from linter.compat.report import UnknownChange, to_report
from linter.compat.revision import Revision
from linter.engine.rules import builtin_pack_dir, load_pack


def _emitted_kinds() -> set[tuple[str, str]]:
    """(kind, category) of every change the compat code records, categories resolved from diff's names."""
    found = set()
    for path in (REPO_ROOT / "linter" / "compat").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            kind, category = node.args[:2]
            if name not in ("record", "Change") or not isinstance(kind, ast.Constant):
                continue
            value = category.value if isinstance(category, ast.Constant) else getattr(diff, category.id)
            found.add((kind.value, value))
    return found


def test_every_kind_compat_emits_has_a_rule_of_its_category() -> None:
    rules = {rule.check["compat"]: rule for rule in load_pack(builtin_pack_dir()) if rule.scope == "compat"}
    emitted = _emitted_kinds()
    assert len(emitted) > 30  # the reading found the calls
    missing = sorted(kind for kind, _ in emitted if kind not in rules)
    assert missing == [], f"change kinds without a rule: {missing}"
    wrong = sorted((kind, category, rules[kind].category) for kind, category in emitted
                   if rules[kind].category != category)
    assert wrong == [], f"kinds whose rule has another category: {wrong}"


def test_a_change_no_rule_describes_is_refused_not_dropped() -> None:
    revision = Revision("r", {})
    change = Change("no-such-kind", "SAFE", "Widget", "something changed", (0,))
    result = CompatResult(revision, revision, [PairResult("Widget.json", "Widget.json", None, None, [change])])
    with pytest.raises(UnknownChange, match="no-such-kind"):
        to_report(result)
