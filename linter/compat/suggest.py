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

from dataclasses import dataclass, field, replace

from linter.compat.compare import CompatResult, PairResult, unbuildable
from linter.compat.diff import compare_messages, is_key_record
from linter.compat.layout import LayoutBuilder, LayoutError
from linter.compat.suggest_text import (
    copied_value,
    element_removal,
    field_insertion,
    set_member,
)
from linter.engine.context import FileContext
from linter.engine.findings import Edit
from linter.engine.fixes import apply_edits
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.versions import NONE, SHORT_MAX, Versions
from linter.parse.document import SpecDocument, read_document
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


class _Blocked(Exception):
    """A change Kafka's format cannot carry in a new version."""


@dataclass
class _Plan:
    """The edits under way for one message: its old and new specs, released top ``frozen``, new top ``top``."""

    old: MessageSpec
    new: MessageSpec
    old_doc: SpecDocument
    new_doc: SpecDocument
    frozen: int
    top: int
    edits: list[Edit] = field(default_factory=list)
    inserts: dict[tuple[JsonPath, int], list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def new_top(self) -> int:
        assert self.new.versions is not None  # compare built it
        return self.new.versions.highest

    @property
    def scope(self) -> _Span:
        assert self.new.versions is not None
        return _Span.of(Versions(self.new.versions.lowest, self.top))

    def wanted(self, old: Versions, new: Versions, scope: _Span) -> _Span:
        """The versions of ``scope`` where F has an attribute the old revision has in ``old`` and the new one in
        ``new``: the old answer up to the released top, the new answer above it (for versions past the new
        revision's top, its answer at its top). Range arithmetic: no work per version number."""
        above = Versions(max(self.new_top, self.frozen) + 1, self.top) if new.contains(self.new_top) else NONE
        parts = (old.intersect(Versions(0, self.frozen)), new.intersect(Versions(self.frozen + 1, self.new_top)), above)
        return _Span.of(*parts).within(scope)

    def as_range(self, versions: _Span, what: str) -> Versions:
        """``versions`` written as one range (open-ended when it reaches the new top)."""
        if not versions:
            return NONE
        if len(versions.parts) > 1:
            raise _Blocked(f"{what} would need versions {versions}, which is not one range")
        low, high = versions.parts[0]
        return Versions(low, SHORT_MAX if high == self.top else high)


@dataclass(frozen=True)
class _Span:
    """A set of versions as sorted, disjoint, non-adjacent ranges: what a wanted attribute may come to before it
    is known to be one range."""

    parts: tuple[tuple[int, int], ...] = ()

    @staticmethod
    def of(*ranges: Versions) -> _Span:
        merged: list[tuple[int, int]] = []
        for low, high in sorted((r.lowest, r.highest) for r in ranges if not r.empty):
            if merged and low <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
            else:
                merged.append((low, high))
        return _Span(tuple(merged))

    def within(self, other: _Span) -> _Span:
        return _Span.of(*(Versions(a, b).intersect(Versions(c, d)) for a, b in self.parts for c, d in other.parts))

    def reaches(self, version: int) -> bool:
        """Whether some version of the set is at or below ``version``."""
        return bool(self.parts) and self.parts[0][0] <= version

    def __bool__(self) -> bool:
        return bool(self.parts)

    def __str__(self) -> str:
        return ", ".join(str(Versions(low, high)) for low, high in self.parts) or "none"


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
    plan = _Plan(pair.old, pair.new, result.old.contexts[pair.old_file].document, new_doc,
                 _frozen(result, pair), top)
    name = pair.new.name or "?"
    try:
        _message_blockers(plan)
        _message_level(plan)
        _struct(plan, pair.old.fields, pair.new.fields, plan.scope, ("fields",), name)
        _common_structs(plan)
        edits = _all_edits(plan)
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


# -- the message -------------------------------------------------------------------------------


def _message_blockers(plan: _Plan) -> None:
    old, new = plan.old, plan.new
    if old.api_key != new.api_key:
        raise _Blocked(f"apiKey {old.api_key} -> {new.api_key}: the apiKey names the API, so a new apiKey is a new "
                       f"API, not a new version; keep apiKey {old.api_key} (and add the other API as a new file)")
    if new.type == "header":
        raise _Blocked(f"{new.name} is a header: its version follows each API's headerVersions, so a header "
                       "change is made by a new header version that the APIs' new versions select")
    if is_key_record(new):
        raise _Blocked(f"{new.name} is a coordinator key record: its validVersions is the record type id, which "
                       "cannot take a new version; define a new record type instead")


def _message_level(plan: _Plan) -> None:
    new, old = plan.new, plan.old
    assert new.versions is not None
    if new.versions.highest < plan.top:
        wanted = f"{new.versions.lowest}-{plan.top}"
        plan.edits += set_member(plan.new_doc, (), "validVersions", wanted)
        plan.notes.append(f"validVersions {new.versions} -> {wanted} (v{plan.top} carries the change)")
    flexible = plan.wanted(old.flexible, new.flexible, plan.scope)
    ranged = plan.as_range(flexible, "flexibleVersions")
    if flexible and not ranged.open_ended:
        raise _Blocked("flexibleVersions is open-ended: once a version is flexible every later one is, so a new "
                       "version cannot go back to the classic encoding")
    if _Span.of(new.flexible).within(plan.scope) != flexible:
        plan.edits += set_member(plan.new_doc, (), "flexibleVersions", str(ranged), after=("validVersions",))
        plan.notes.append(f"flexibleVersions {new.flexible} -> {ranged}")


def _common_structs(plan: _Plan) -> None:
    old_structs = {s.name: s for s in plan.old.common_structs if s.name}
    for struct in plan.new.common_structs:
        before = old_structs.get(struct.name) if struct.name else None
        if before is not None and struct.name:
            _struct(plan, before.fields, struct.fields, plan.scope, struct.fields_path, struct.name)


# -- fields ------------------------------------------------------------------------------------


def _struct(plan: _Plan, old_fields: tuple[FieldSpec, ...], new_fields: tuple[FieldSpec, ...],
            scope: _Span, fields_path: JsonPath, where: str) -> None:
    """Plan the fields of one struct, the old revision's and the new one's paired by name (or as renamed)."""
    pairs = _paired(old_fields, new_fields)
    _check_order(pairs, where)
    old_tags = {spec.tag: spec for spec in old_fields if spec.tag is not None}
    for old, new in pairs:
        if new is None:
            continue
        if old is None:
            _added(plan, new, old_tags, scope, where)
        else:
            _kept(plan, old, new, old_tags, scope, where)
    _removed(plan, pairs, new_fields, scope, fields_path, where)


def _paired(old_fields: tuple[FieldSpec, ...],
            new_fields: tuple[FieldSpec, ...]) -> list[tuple[FieldSpec | None, FieldSpec | None]]:
    """(old, new) in the old order with the new-only fields last; a removed and an added field of the same type,
    versions and tag, in the same place of the leftovers, are one renamed field (a source change)."""
    new_by = {spec.name: spec for spec in new_fields if spec.name}
    old_by = {spec.name: spec for spec in old_fields if spec.name}
    gone = [spec for spec in old_fields if spec.name not in new_by]
    added = [spec for spec in new_fields if spec.name not in old_by]
    renamed: dict[int, FieldSpec] = {}
    taken: set[int] = set()
    for before in gone:  # each removed field takes the first added one that looks the same, in order
        after = next((b for b in added if id(b) not in taken and _same_shape(before, b)), None)
        if after is not None:
            renamed[id(before)] = after
            taken.add(id(after))
    out: list[tuple[FieldSpec | None, FieldSpec | None]] = [
        (spec, new_by.get(spec.name) if spec.name in new_by else renamed.get(id(spec))) for spec in old_fields]
    out += [(None, spec) for spec in added if id(spec) not in taken]
    return out


def _same_shape(a: FieldSpec, b: FieldSpec) -> bool:
    return (a.type_text, a.raw.get("versions"), a.tag) == (b.type_text, b.raw.get("versions"), b.tag)


def _check_order(pairs: list[tuple[FieldSpec | None, FieldSpec | None]], where: str) -> None:
    in_old_order = [new for old, new in pairs if old is not None and new is not None]
    in_new_order = sorted(in_old_order, key=_index)
    moved = next((f"{a.name} and {b.name}" for a, b in zip(in_old_order, in_new_order) if a is not b), None)
    if moved is not None:
        raise _Blocked(f"in {where}, fields {moved} changed places: one list of fields serves every version, so a "
                       "new version cannot reorder them; keep the order (a field meant to move is removed in the "
                       "new version and added again under a new name)")


def _index(spec: FieldSpec) -> int:
    return int(spec.path[-1]) if spec.path and isinstance(spec.path[-1], int) else 0


def _present(spec: FieldSpec) -> Versions:
    return spec.versions or NONE


def _tagged(spec: FieldSpec) -> Versions:
    tagged = spec.tagged_versions if spec.tag is not None and spec.tagged_versions is not None else NONE
    return tagged.intersect(_present(spec))


def _nullable(spec: FieldSpec) -> Versions:
    return spec.nullable_versions or NONE


def _kept(plan: _Plan, old: FieldSpec, new: FieldSpec, old_tags: dict[int, FieldSpec], scope: _Span,
          where: str) -> None:
    label = f"{where}.{new.name}"
    present = plan.wanted(_present(old), _present(new), scope)
    released = present.reaches(plan.frozen)
    if released and _retyped(old, new):
        raise _Blocked(_two_field_form(plan, old, new, label))
    if old.tag is not None and new.tag is not None and old.tag != new.tag:
        raise _Blocked(f"{label} moved from tag {old.tag} to tag {new.tag}: a field keeps its tag in every version; "
                       f"keep tag {old.tag}")
    if new.tag is not None and old.tag is None and new.tag in old_tags:
        raise _Blocked(_reused_tag(new, old_tags[new.tag], label, old_tags))
    if old.flexible_versions.value != new.flexible_versions.value and released:
        raise _Blocked(f"{label}: its flexibleVersions override holds for every version and is open-ended, so a "
                       "new version cannot change the encoding of released ones; keep the override as it was")
    _ranges(plan, new, present, plan.wanted(_tagged(old), _tagged(new), present),
            plan.wanted(_nullable(old), _nullable(new), present), scope, label)
    _nested(plan, old, new, present, label)


def _retyped(old: FieldSpec, new: FieldSpec) -> bool:
    """A type change that is more than a struct's name (structs are compared field by field)."""
    if old.type is None or new.type is None:
        return old.type_text != new.type_text
    if old.type.is_array != new.type.is_array:
        return True
    both_structs = old.type.primitive is None and new.type.primitive is None
    return not both_structs and old.type_text != new.type_text


def _two_field_form(plan: _Plan, old: FieldSpec, new: FieldSpec, label: str) -> str:
    kept = plan.wanted(_present(old), NONE, plan.scope)
    old_range = str(Versions(kept.parts[0][0], kept.parts[-1][1])) if kept else "none"
    return (f"{label} changes type {old.type_text} -> {new.type_text}: Kafka's format gives a field one type in "
            f"every version, so a new version cannot retype it. Use the two-field form: keep "
            f'{{"name": "{old.name}", "type": "{old.type_text}", "versions": "{old_range}"}} and add '
            f'{{"name": "<new name>", "type": "{new.type_text}", "versions": "{plan.top}+"}}')


def _reused_tag(new: FieldSpec, owner: FieldSpec, label: str, old_tags: dict[int, FieldSpec]) -> str:
    fresh = max(old_tags) + 1
    return (f"{label} takes tag {new.tag}, which {owner.name} had: a tag number is never reused, since peers of "
            f"the released versions read it as {owner.name}; give {new.name} a fresh tag such as {fresh}")


def _added(plan: _Plan, new: FieldSpec, old_tags: dict[int, FieldSpec], scope: _Span, where: str) -> None:
    label = f"{where}.{new.name}"
    if new.tag is not None and new.tag in old_tags:
        raise _Blocked(_reused_tag(new, old_tags[new.tag], label, old_tags))
    tagged_everywhere = new.tag is not None and new.tagged_versions is not None \
        and new.versions is not None and new.tagged_versions.contains(new.versions)
    # a tagged field with a new tag is safe in existing versions, where they are flexible
    released = _present(new).intersect(plan.old.flexible) if tagged_everywhere else NONE
    present = plan.wanted(released, _present(new), scope)
    if not present and _Span.of(_present(new)).within(scope):
        cut = element_removal(plan.new_doc, new.path)
        if cut is None:
            raise _Blocked(f"{label} is new but only in released versions; remove it")
        plan.edits.append(cut)
        plan.notes.append(f"{label}: removed (the new revision adds it to released versions only, and a new field "
                          "can only start in a new version)")
        return
    _ranges(plan, new, present, plan.wanted(released.intersect(_tagged(new)), _tagged(new), present),
            plan.wanted(_nullable(new), _nullable(new), present), scope, label)


def _ranges(plan: _Plan, new: FieldSpec, present: _Span, tagged: _Span, nullable: _Span, scope: _Span,
            label: str) -> None:
    """Edit the field's three ranges where F's differ from the new revision's within ``scope``."""
    wanted_tagged = plan.as_range(tagged, f"{label} taggedVersions")
    if tagged and not wanted_tagged.open_ended:
        raise _Blocked(f"{label} would be tagged in {tagged} only: taggedVersions is open-ended (a field "
                       "tagged in a version stays tagged in every later one), so it cannot become a regular field "
                       "in a new version; keep it tagged")
    for key, versions, wanted, current in (
            ("versions", present, plan.as_range(present, f"{label} versions"), new.versions),
            ("taggedVersions", tagged, wanted_tagged, new.tagged_versions if new.tag is not None else None),
            ("nullableVersions", nullable, plan.as_range(nullable, f"{label} nullableVersions"),
             new.nullable_versions)):
        if _Span.of(current or NONE).within(scope) == versions:
            continue
        value = None if wanted.empty and key != "versions" else str(wanted)
        plan.edits += set_member(plan.new_doc, new.path, key, value)
        plan.notes.append(f"{label}: {key} {current or 'none'} -> {value or 'none'}")
    if new.default_given and new.default.strip() == "null" and nullable != present:
        plan.edits += set_member(plan.new_doc, new.path, "default", None)
        plan.notes.append(f"{label}: default null dropped, as the field is no longer nullable in all its versions "
                          "(KL503); the default only fills a field the code leaves unset")


def _nested(plan: _Plan, old: FieldSpec, new: FieldSpec, present: _Span, label: str) -> None:
    """An inline struct's fields, against the old revision's fields of that struct (inline or common)."""
    if not new.fields:
        return
    old_fields = old.fields or _common_fields(plan.old, old)
    _struct(plan, old_fields, new.fields, present, (*new.path, "fields"), label)


def _common_fields(message: MessageSpec, spec: FieldSpec) -> tuple[FieldSpec, ...]:
    name = spec.type.struct_name if spec.type is not None else None
    return next((s.fields for s in message.common_structs if name and s.name == name), ())


def _removed(plan: _Plan, pairs: list[tuple[FieldSpec | None, FieldSpec | None]], new_fields: tuple[FieldSpec, ...],
             scope: _Span, fields_path: JsonPath, where: str) -> None:
    """Put back, for the released versions only, the fields the new revision dropped from them."""
    anchor = 0  # the new list's index the next put-back field goes before
    for old, new in pairs:
        if old is None:
            continue
        if new is not None:
            anchor = _index(new) + 1
            continue
        restored = _restored(plan, old, scope, f"{where}.{old.name}")
        if restored is not None:
            plan.inserts.setdefault((fields_path, min(anchor, len(new_fields))), []).append(restored)


def _restored(plan: _Plan, old: FieldSpec, scope: _Span, label: str) -> str | None:
    """The old field's text with its ranges cut to the released versions, or ``None`` when it need not return
    (it had no released version, or it was tagged in all of them: a removed tag breaks no byte)."""
    present = plan.wanted(_present(old), NONE, scope)
    if not present:
        return None
    tagged = _Span.of(_tagged(old)).within(present)
    if tagged == present:
        return None
    if tagged:
        raise _Blocked(f"{label} was tagged in {tagged}: taggedVersions is open-ended, so the field "
                       "cannot stop in a new version; keep it")
    nullable = _Span.of(_nullable(old)).within(present)
    edits = set_member(plan.old_doc, old.path, "versions", str(plan.as_range(present, label)))
    if old.nullable_versions is not None and not old.nullable_versions.empty:
        nullable_range = plan.as_range(nullable, label)
        edits += set_member(plan.old_doc, old.path, "nullableVersions",
                            None if nullable_range.empty else str(nullable_range))
    plan.notes.append(f"{label}: put back for v{present} (the new revision removed it from released "
                      "versions)")
    return copied_value(plan.old_doc, old.path, edits)


def _all_edits(plan: _Plan) -> list[Edit]:
    edits = list(plan.edits)
    for (fields_path, index), texts in plan.inserts.items():
        edit = field_insertion(plan.new_doc, fields_path, index, texts)
        if edit is None:
            raise _Blocked(f"no place to put back {len(texts)} field(s) in {'.'.join(map(str, fields_path))}")
        edits.append(edit)
    return sorted(edits)


# -- checking the result -----------------------------------------------------------------------


def _verify(plan: _Plan, file: str, fixed: str) -> None:
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


