"""``compat --suggest`` / ``--fix``: the spec edit that keeps every released version's bytes and moves a change
into a new version, as Kafka's contributors do it by hand.

For a message whose new revision breaks a released version, the fixed revision F is defined version by version:
up to the highest released version N, F has the old revision's layout; from the new top version T on (N + 1, or
the new revision's own top when it already added versions), F has the new revision's layout at its top. Every
attribute that varies by version (a field's ``versions``, ``taggedVersions`` and ``nullableVersions``, the
message's ``flexibleVersions`` and ``validVersions``) is worked out as that set of versions and written back as
one range; fields the new revision removed from released versions are put back (copied from the old text) for
those versions only. A request and its response get the same new top version.

Kafka's format cannot say everything that way: a field has one type and one tag in all its versions, one order
of fields serves every version, ``taggedVersions`` and ``flexibleVersions`` are open-ended, and a new apiKey is a
new API. Such a change gets an explanation (the two-field form for a retyped field) instead of an edit. Every
edit is checked before it is offered: the fixed text is parsed again and its layouts compared with the old
revision's at each released version and with the new revision's at its top.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from linter.compat.compare import CompatResult, PairResult, unbuildable
from linter.compat.diff import compare_messages
from linter.compat.layout import LayoutBuilder, LayoutError
from linter.compat.suggest_edits import planned_edits
from linter.compat.suggest_plan import Plan, _Blocked
from linter.engine.context import FileContext
from linter.engine.findings import Edit
from linter.engine.fixes import apply_edits
from linter.parse.document import read_document
from linter.parse.jsonc import JsonPath
from linter.vocabulary import Category

__all__ = ["Suggestion", "suggest"]


@dataclass(frozen=True)
class Suggestion:
    """The edit of one new-revision file (``edits`` of ``text``, giving ``fixed``), or why there is none."""

    file: str  # as compat shows it (the new revision's display path)
    message: str
    text: str
    edits: tuple[Edit, ...] = ()
    fixed: str = ""
    notes: tuple[str, ...] = ()  # what the edit does, one line per change
    blocked: tuple[str, ...] = ()  # why no edit of Kafka's format keeps the released bytes
    line: int = 1  # where a blocked suggestion points: the first wire break in the new file
    col: int = 1

    @property
    def fixable(self) -> bool:
        return not self.blocked and bool(self.edits)




def suggest(result: CompatResult) -> list[Suggestion]:
    """One suggestion per new-revision file that needs an edit: the messages with a released wire break, and
    the other half of their API (request and response move to the new version together).

    >>> from linter.compat.api import compare_result
    >>> from linter.compat.revision import Revision
    >>> old = b'''{"name": "Example", "type": "data", "validVersions": "0-1", "flexibleVersions": "0+",
    ...   "fields": [{"name": "A", "type": "int32", "versions": "0+"}, {"name": "B", "type": "int64", "versions": "0+"}]}'''
    >>> new = old.replace(b', {"name": "B", "type": "int64", "versions": "0+"}', b"")
    >>> result = compare_result(Revision("old", {"Example.json": old}), Revision("new", {"Example.json": new}))
    >>> (fix,) = suggest(result)
    >>> fix.notes
    ('validVersions 0-1 -> 0-2 (v2 carries the change)', 'Example.B: put back for v0-1 (the new revision removed it from released versions)')
    >>> print(fix.fixed)
    {"name": "Example", "type": "data", "validVersions": "0-2", "flexibleVersions": "0+",
      "fields": [{"name": "A", "type": "int32", "versions": "0+"}, {"name": "B", "type": "int64", "versions": "0-1"}]}
    """
    broken = [pair for pair in result.pairs if _released_break(pair)]
    if not broken:
        return []
    tops: dict[object, int] = {}
    for pair in broken:
        tops[_api(pair)] = max(tops.get(_api(pair), -1), _own_top(result, pair))
    chosen = [pair for pair in result.pairs if _api(pair) in tops and pair.old is not None and pair.new is not None
              and pair.old_file is not None and pair.new_file is not None and pair.error is None]
    made = [(pair, _suggest_pair(result, pair, max(tops[_api(pair)], _own_top(result, pair)), pair in broken))
            for pair in chosen]
    stuck = {_api(pair) for pair, suggestion in made if suggestion is not None and suggestion.blocked}
    return [_held_back(suggestion) if _api(pair) in stuck else suggestion
            for pair, suggestion in made if suggestion is not None and (_api(pair) not in stuck or pair in broken)]


def _held_back(suggestion: Suggestion) -> Suggestion:
    """A message of an API whose other half cannot move to a new version does not move either: its own edit
    would leave request and response on different versions."""
    if suggestion.blocked:
        return suggestion
    return replace(suggestion, edits=(), fixed="",
                   blocked=("the other message of its API cannot carry its change in a new version (explained "
                            "there), so this one keeps its versions too",))


def _released_break(pair: PairResult) -> bool:
    return pair.error is None and any(c.category == Category.WIRE_BREAKING and c.released for c in pair.changes)


def _api(pair: PairResult) -> object:
    """Request and response of one API share the new version; any other message moves alone."""
    message = pair.message
    if message.type in ("request", "response") and message.api_key is not None:
        return ("api", message.api_key)
    return ("file", pair.new_file or pair.old_file)


def _frozen(result: CompatResult, pair: PairResult) -> int:
    """The highest version of the old message that shipped (-1: none did)."""
    old = pair.old
    assert old is not None and old.versions is not None and pair.old_file is not None
    pending = result.unreleased.of(pair.old_file, old) if result.unreleased is not None else frozenset()
    shipped = [v for v in old.versions if v not in pending]
    return max(shipped, default=-1)


def _own_top(result: CompatResult, pair: PairResult) -> int:
    """The message's own new top version: past the released ones, and at least the new revision's top."""
    new = pair.new
    new_top = new.versions.highest if new is not None and new.versions is not None else -1
    return max(_frozen(result, pair) + 1, new_top) if pair.old is not None else new_top


def _suggest_pair(result: CompatResult, pair: PairResult, top: int, broken: bool) -> Suggestion | None:
    assert pair.old is not None and pair.new is not None and pair.old_file is not None and pair.new_file is not None
    file = result.new.display(pair.new_file)
    new_doc = result.new.contexts[pair.new_file].document
    plan = Plan(pair.old, pair.new, result.old.contexts[pair.old_file].document, new_doc,
                _frozen(result, pair), top)
    name = pair.new.name or "?"
    try:
        edits = planned_edits(plan)
        fixed = apply_edits(new_doc.text, edits)[0]
        _verify(plan, file, fixed)
    except _Blocked as why:
        if not broken:
            return None
        line, col = new_doc.locate(_first_break(pair))
        return Suggestion(file, name, new_doc.text, blocked=(str(why),), line=line, col=col)
    if not edits:
        return None
    return Suggestion(file, name, new_doc.text, tuple(edits), fixed, tuple(plan.notes))


def _first_break(pair: PairResult) -> JsonPath:
    return next((c.json_path for c in pair.changes if c.category == Category.WIRE_BREAKING and c.side == "new"), ())


# -- checking the result -----------------------------------------------------------------------


def _verify(plan: Plan, file: str, fixed: str) -> None:
    """The fixed text, parsed again, breaks no released version (compat's own comparison says so: tagged
    fields added with new tags stay allowed) and has the new revision's top layout at its new top version;
    else no edit is offered."""
    message = FileContext(read_document(file, fixed.encode("utf-8"))).message
    why = "the edited spec cannot be read" if message is None else unbuildable(message)
    if why is not None or message is None:
        raise _Blocked(f"no edit found that keeps the released bytes ({why})")
    try:
        breaks = [change for change in compare_messages(plan.old, message)
                  if change.category == Category.WIRE_BREAKING and any(v <= plan.frozen for v in change.versions)]
        if breaks:
            raise _Blocked(f"no edit of this spec keeps the released bytes and carries the change ({breaks[0].message})")
        if LayoutBuilder(message).build(plan.top).signature != LayoutBuilder(plan.new).build(plan.new_top).signature:
            raise _Blocked(f"no edit of this spec gives v{plan.top} the new layout while keeping the released bytes")
    except LayoutError as exc:
        raise _Blocked(f"no edit found that keeps the released bytes ({exc})") from exc


