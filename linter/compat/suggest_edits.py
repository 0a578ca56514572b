"""The edits ``compat --suggest`` plans for one message: its ``validVersions`` and ``flexibleVersions``, then
each field's ranges, struct by struct (the old revision's fields paired with the new one's by name or as
renamed), with the fields the new revision removed from released versions put back; what Kafka's format cannot
say raises ``_Blocked`` with the explanation. The text of each edit is ``suggest_text``'s.
"""

from __future__ import annotations

from linter.compat.diff import is_key_record
from linter.compat.suggest_plan import Plan, Span, _Blocked
from linter.compat.suggest_text import (
    copied_value,
    element_removal,
    field_insertion,
    set_member,
)
from linter.engine.findings import Edit
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.versions import NONE, Versions
from linter.parse.jsonc import JsonPath


def planned_edits(plan: Plan) -> list[Edit]:
    """Every edit of ``plan``'s new file, in order: the message, its fields, its common structs."""
    _message_blockers(plan)
    _message_level(plan)
    _struct(plan, plan.old.fields, plan.new.fields, plan.scope, ("fields",), plan.new.name or "?")
    _common_structs(plan)
    return _all_edits(plan)


# -- the message -------------------------------------------------------------------------------


def _message_blockers(plan: Plan) -> None:
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


def _message_level(plan: Plan) -> None:
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
    if Span.of(new.flexible).within(plan.scope) != flexible:
        plan.edits += set_member(plan.new_doc, (), "flexibleVersions", str(ranged), after=("validVersions",))
        plan.notes.append(f"flexibleVersions {new.flexible} -> {ranged}")


def _common_structs(plan: Plan) -> None:
    old_structs = {s.name: s for s in plan.old.common_structs if s.name}
    for struct in plan.new.common_structs:
        before = old_structs.get(struct.name) if struct.name else None
        if before is not None and struct.name:
            _struct(plan, before.fields, struct.fields, plan.scope, struct.fields_path, struct.name)


# -- fields ------------------------------------------------------------------------------------


def _struct(plan: Plan, old_fields: tuple[FieldSpec, ...], new_fields: tuple[FieldSpec, ...],
            scope: Span, fields_path: JsonPath, where: str) -> None:
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


def _kept(plan: Plan, old: FieldSpec, new: FieldSpec, old_tags: dict[int, FieldSpec], scope: Span,
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


def _two_field_form(plan: Plan, old: FieldSpec, new: FieldSpec, label: str) -> str:
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


def _added(plan: Plan, new: FieldSpec, old_tags: dict[int, FieldSpec], scope: Span, where: str) -> None:
    label = f"{where}.{new.name}"
    if new.tag is not None and new.tag in old_tags:
        raise _Blocked(_reused_tag(new, old_tags[new.tag], label, old_tags))
    tagged_everywhere = new.tag is not None and new.tagged_versions is not None \
        and new.versions is not None and new.tagged_versions.contains(new.versions)
    # a tagged field with a new tag is safe in existing versions, where they are flexible
    released = _present(new).intersect(plan.old.flexible) if tagged_everywhere else NONE
    present = plan.wanted(released, _present(new), scope)
    if not present and Span.of(_present(new)).within(scope):
        cut = element_removal(plan.new_doc, new.path)
        if cut is None:
            raise _Blocked(f"{label} is new but only in released versions; remove it")
        plan.edits.append(cut)
        plan.notes.append(f"{label}: removed (the new revision adds it to released versions only, and a new field "
                          "can only start in a new version)")
        return
    _ranges(plan, new, present, plan.wanted(released.intersect(_tagged(new)), _tagged(new), present),
            plan.wanted(_nullable(new), _nullable(new), present), scope, label)


def _ranges(plan: Plan, new: FieldSpec, present: Span, tagged: Span, nullable: Span, scope: Span,
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
        if Span.of(current or NONE).within(scope) == versions:
            continue
        value = None if wanted.empty and key != "versions" else str(wanted)
        plan.edits += set_member(plan.new_doc, new.path, key, value)
        plan.notes.append(f"{label}: {key} {current or 'none'} -> {value or 'none'}")
    if new.default_given and new.default.strip() == "null" and nullable != present:
        plan.edits += set_member(plan.new_doc, new.path, "default", None)
        plan.notes.append(f"{label}: default null dropped, as the field is no longer nullable in all its versions "
                          "(KL503); the default only fills a field the code leaves unset")


def _nested(plan: Plan, old: FieldSpec, new: FieldSpec, present: Span, label: str) -> None:
    """An inline struct's fields, against the old revision's fields of that struct (inline or common)."""
    if not new.fields:
        return
    old_fields = old.fields or _common_fields(plan.old, old)
    _struct(plan, old_fields, new.fields, present, (*new.path, "fields"), label)


def _common_fields(message: MessageSpec, spec: FieldSpec) -> tuple[FieldSpec, ...]:
    name = spec.type.struct_name if spec.type is not None else None
    return next((s.fields for s in message.common_structs if name and s.name == name), ())


def _removed(plan: Plan, pairs: list[tuple[FieldSpec | None, FieldSpec | None]], new_fields: tuple[FieldSpec, ...],
             scope: Span, fields_path: JsonPath, where: str) -> None:
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


def _restored(plan: Plan, old: FieldSpec, scope: Span, label: str) -> str | None:
    """The old field's text with its ranges cut to the released versions, or ``None`` when it need not return
    (it had no released version, or it was tagged in all of them: a removed tag breaks no byte)."""
    present = plan.wanted(_present(old), NONE, scope)
    if not present:
        return None
    tagged = Span.of(_tagged(old)).within(present)
    if tagged == present:
        return None
    if tagged:
        raise _Blocked(f"{label} was tagged in {tagged}: taggedVersions is open-ended, so the field "
                       "cannot stop in a new version; keep it")
    nullable = Span.of(_nullable(old)).within(present)
    edits = set_member(plan.old_doc, old.path, "versions", str(plan.as_range(present, label)))
    if old.nullable_versions is not None and not old.nullable_versions.empty:
        nullable_range = plan.as_range(nullable, label)
        edits += set_member(plan.old_doc, old.path, "nullableVersions",
                            None if nullable_range.empty else str(nullable_range))
    plan.notes.append(f"{label}: put back for v{present} (the new revision removed it from released "
                      "versions)")
    return copied_value(plan.old_doc, old.path, edits)


def _all_edits(plan: Plan) -> list[Edit]:
    edits = list(plan.edits)
    for (fields_path, index), texts in plan.inserts.items():
        edit = field_insertion(plan.new_doc, fields_path, index, texts)
        if edit is None:
            raise _Blocked(f"no place to put back {len(texts)} field(s) in {'.'.join(map(str, fields_path))}")
        edits.append(edit)
    return sorted(edits)
