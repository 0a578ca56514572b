"""The field-by-field half of a diff: two struct layouts compared slot by slot, defaults and annotations too.

``StructDiff`` records what it finds per version; ``MessageDiff`` (``linter.compat.diff``) adds the
message-level comparison around it, and the changelog uses it alone to compare two versions of one message.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from linter.compat.change import Change
from linter.compat.kinds import ChangeKind
from linter.compat.layout import Slot, StructLayout
from linter.model.defaults import DefaultError, parse_default
from linter.model.spec import FieldSpec
from linter.model.types import FieldType
from linter.parse.jsonc import JsonPath

_ANNOTATIONS = (("about", "about"), ("entity_type", "entityType"), ("map_key", "mapKey"),
                ("ignorable", "ignorable"), ("zero_copy", "zeroCopy"))
Event = tuple[ChangeKind, str, str, JsonPath]  # kind, message, side, json path: one change, before its versions


class StructDiff:
    """The changes found between struct layouts, each recorded per version and merged by ``changes``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._events: dict[Event, set[int]] = defaultdict(set)
        self._defaults: dict[str, dict[str, Any]] = {}
        self.renames: dict[tuple[str, str], str] = {}  # (struct path, old name) -> new name, as in ``Slot.where``

    # --- recording ------------------------------------------------------------------------------

    def record(self, kind: ChangeKind, message: str, versions: Iterable[int], path: JsonPath = (),
               side: str = "new") -> None:
        self._events[(kind, message, side, tuple(path))].update(versions)

    def changes(self) -> list[Change]:
        """The changes recorded so far, one per kind, message and place, with every version it holds for."""
        self._flush_defaults()
        return [Change.of(kind, self.name, message, versions, side=side, json_path=path)
                for (kind, message, side, path), versions in self._events.items()]

    def spread(self, span: range, compare: Callable[[int], None]) -> None:
        """``compare(span[0])``, and what it records, defaults included, holds for every version of ``span``: a
        segment's versions share their layouts (``traits.segments``), so one comparison stands for them all."""
        outer, self._events = self._events, defaultdict(set)
        compare(span[0])
        for key in self._events:
            outer[key].update(span)
        self._events = outer
        for entry in self._defaults.values():
            for kind in ("absent", "tagged", "present"):
                if span[0] in entry[kind]:
                    entry[kind].update(span)

    # --- structs --------------------------------------------------------------------------------

    def compare_layouts(self, a: StructLayout, b: StructLayout, version: int) -> None:
        """Record the changes between two layouts (of two revisions, or of two versions of one)."""
        self._struct(a, b, "", version)

    def _struct(self, a: StructLayout, b: StructLayout, path: str, version: int) -> None:
        self._regular(a, b, path, version)
        self._tagged(a, b, path, version)
        self._absent(a, b, path, version)

    def _regular(self, a: StructLayout, b: StructLayout, path: str, version: int) -> None:
        old_slots, new_slots = list(a.regular), list(b.regular)
        if [s.signature for s in old_slots] == [s.signature for s in new_slots]:
            self._aligned(old_slots, new_slots, a, b, path, version)
            return
        old_by, new_by = {s.name: s for s in old_slots}, {s.name: s for s in new_slots}
        common_old = [s.name for s in old_slots if s.name in new_by]
        common_new = [s.name for s in new_slots if s.name in old_by]
        if common_old != common_new:
            self._reordered(common_old, common_new, path, version, new_by[common_new[0]].spec)
        removed = [s for s in old_slots if s.name not in new_by]
        inserted = [s for s in new_slots if s.name not in old_by]
        removed, inserted = self._wrapped_changes(removed, inserted, path, version)
        removed, inserted = self._renamed_in_place(old_slots, new_slots, removed, inserted, path, version)
        for slot in removed:
            tag = b.tag_of(slot.name)
            if tag is not None:
                self.record(ChangeKind.FIELD_MADE_TAGGED, f"{path}{slot.where} moved from the body to tag {tag}",
                            [version], b.tagged[tag].spec.path)
            else:
                self.record(ChangeKind.FIELD_REMOVED, f"{path}{slot.where} ({slot.describe()}) removed",
                            [version], slot.spec.path, side="old")
        for slot in inserted:
            if a.tag_of(slot.name) is not None:
                self.record(ChangeKind.FIELD_MADE_REGULAR, f"{path}{slot.where} moved from tag {a.tag_of(slot.name)} "
                            "into the body", [version], slot.spec.path)
            else:
                self.record(ChangeKind.FIELD_INSERTED, f"{path}{slot.where} ({slot.describe()}) inserted",
                            [version], slot.spec.path)
        for name in common_new:
            self._pair(old_by[name], new_by[name], path, version)

    def _aligned(self, old_slots: list[Slot], new_slots: list[Slot], a: StructLayout, b: StructLayout,
                 path: str, version: int) -> None:
        """Same encodings in the same order: either renames, or a swap of same-typed fields."""
        old_names, new_names = a.names(), b.names()
        swapped = [(x, y) for x, y in zip(old_slots, new_slots)
                   if x.name != y.name and (x.name in new_names or y.name in old_names)]
        if swapped:
            self._reordered([x.name for x, _ in swapped], [y.name for _, y in swapped], path, version,
                            swapped[0][1].spec)
        for x, y in zip(old_slots, new_slots):
            self._pair(x, y, path, version, moved=(x, y) in swapped)

    def _reordered(self, old_order: list[str], new_order: list[str], path: str, version: int,
                   spec: FieldSpec) -> None:
        self.record(ChangeKind.FIELDS_REORDERED, f"{path}fields reordered: {', '.join(old_order)} -> "
                    f"{', '.join(new_order)} (each position is read with the other revision's meaning)",
                    [version], spec.path)

    def _wrapped_changes(self, removed: list[Slot], inserted: list[Slot], path: str,
                         version: int) -> tuple[list[Slot], list[Slot]]:
        """A struct that gained or lost its presence byte, seen as inline fields on one side (linear: the inline
        fields are found by their qualified name's prefixes, not by scanning every slot for every struct)."""
        gone: set[int] = set()  # ids of the slots accounted for
        for structs, fields, gained in ((inserted, removed, True), (removed, inserted, False)):
            below = _under([s for s in fields if id(s) not in gone])
            for slot in structs:
                inline = [s for s in below.get(slot.where, ()) if id(s) not in gone] if slot.is_struct else []
                if not inline or id(slot) in gone:
                    continue
                words = (f"became a {slot.describe()}: KIP-893 adds an int8 presence byte" if gained
                         else f"is no longer a {slot.describe()}: its presence byte is gone")
                self.record(ChangeKind.STRUCT_NULLABILITY_CHANGED, f"{path}{slot.where} {words}", [version],
                            (slot if gained else inline[0]).spec.path)
                gone.update(map(id, inline))
                gone.add(id(slot))
        return [s for s in removed if id(s) not in gone], [s for s in inserted if id(s) not in gone]

    def _renamed_in_place(self, old_slots: list[Slot], new_slots: list[Slot], removed: list[Slot],
                          inserted: list[Slot], path: str, version: int) -> tuple[list[Slot], list[Slot]]:
        """An unmatched old and new field at the same position with the same encoding: a rename."""
        position = {id(slot): index for index, slot in enumerate(old_slots)}
        unmatched_new = {id(slot) for slot in inserted}
        paired: set[int] = set()
        for x in removed:
            index = position[id(x)]
            y = new_slots[index] if index < len(new_slots) else None
            if y is not None and id(y) in unmatched_new and y.signature == x.signature:
                unmatched_new.discard(id(y))
                paired.update((id(x), id(y)))
                self._pair(x, y, path, version)
        return [s for s in removed if id(s) not in paired], [s for s in inserted if id(s) not in paired]

    def _pair(self, x: Slot, y: Slot, path: str, version: int, moved: bool = False) -> None:
        """Two fields at the same place in the layout (same name, or renamed, or swapped)."""
        if x.where != y.where and not moved:
            self.renames[(path, x.where)] = y.where
        if x.name != y.name and not moved:
            self.record(ChangeKind.FIELD_RENAMED, f"{path}{x.where} renamed to {y.where}", [version], y.spec.path)
        elif x.where != y.where and not moved:
            self.record(ChangeKind.STRUCT_WRAPPING_CHANGED,
                        f"{path}{x.where} is now {path}{y.where}: a non-flexible struct is its fields inline, "
                        "so the bytes are identical", [version], y.spec.path)
        if x.signature != y.signature:
            self._retyped(x, y, path, version)
            return
        self._nullability(x, y, path, version)
        self._default(x.spec, y.spec, path + y.where, "tagged" if y.tag is not None else "present", version)
        self._source(x.spec, y.spec, path + y.where, version)
        if isinstance(x.element, StructLayout) and isinstance(y.element, StructLayout):
            self._struct(x.element, y.element, _nested(path, y), version)

    def _retyped(self, x: Slot, y: Slot, path: str, version: int) -> None:
        if x.wire == y.wire and isinstance(x.element, StructLayout) and isinstance(y.element, StructLayout):
            # the same shell: the change is inside the struct, so report it where it is
            self._nullability(x, y, path, version)
            self._source(x.spec, y.spec, path + y.where, version)
            self._struct(x.element, y.element, _nested(path, y), version)
            return
        if x.is_struct and y.is_struct:
            self.record(ChangeKind.STRUCT_NULLABILITY_CHANGED,
                        f"{path}{y.where}: {x.describe()} -> {y.describe()}", [version], y.spec.path)
            return
        kind = ChangeKind.TAGGED_FIELD_RETYPED if y.tag is not None else ChangeKind.FIELD_RETYPED
        self.record(kind, f"{path}{y.where}: {x.describe()} -> {y.describe()}", [version],
                    (*y.spec.path, "type"))

    def _nullability(self, x: Slot, y: Slot, path: str, version: int) -> None:
        if x.is_struct or x.nullable == y.nullable:
            return
        if y.nullable:
            self.record(ChangeKind.NULLABILITY_WIDENED,
                        f"{path}{y.where} may now be null: readers of the old spec reject a null", [version],
                        y.spec.path)
        else:
            self.record(ChangeKind.NULLABILITY_NARROWED,
                        f"{path}{y.where} may no longer be null: the new spec rejects a null old writers may send",
                        [version], y.spec.path)

    def _tagged(self, a: StructLayout, b: StructLayout, path: str, version: int) -> None:
        for tag in sorted(set(a.tagged) | set(b.tagged)):
            x, y = a.tagged.get(tag), b.tagged.get(tag)
            if x is not None and y is not None:
                self._same_tag(x, y, a, b, path, version)
            elif x is not None:
                self._tag_gone(x, b, path, version)
            elif y is not None and a.tag_of(y.name) is None and y.name not in {s.name for s in a.regular}:
                self.record(ChangeKind.TAGGED_FIELD_ADDED, f"{path}{y.where} added as tag {tag}", [version], y.spec.path)

    def _same_tag(self, x: Slot, y: Slot, a: StructLayout, b: StructLayout, path: str, version: int) -> None:
        if x.name != y.name and (x.name in b.names() or y.name in a.names()):
            self.record(ChangeKind.TAG_REUSED, f"{path}tag {x.tag} now carries {y.where} instead of {x.where}: "
                        "an old writer's value is read with another meaning", [version], (*y.spec.path, "tag"))
            return
        self._pair(x, y, path, version)

    def _tag_gone(self, x: Slot, b: StructLayout, path: str, version: int) -> None:
        moved_to = b.tag_of(x.name)
        if moved_to is not None:
            self.record(ChangeKind.TAG_RENUMBERED, f"{path}{x.where} moved from tag {x.tag} to tag {moved_to}: "
                        "old and new peers silently drop each other's value", [version],
                        (*b.tagged[moved_to].spec.path, "tag"))
        elif x.name not in {s.name for s in b.regular}:
            self.record(ChangeKind.TAG_REMOVED, f"{path}{x.where} (tag {x.tag}) removed: readers skip it, "
                        f"but tag {x.tag} must never be reused in this struct", [version], x.spec.path, side="old")

    def _absent(self, a: StructLayout, b: StructLayout, path: str, version: int) -> None:
        new_inlined = dict(b.inlined)
        for where, spec in a.inlined:  # wrapper structs with no bytes of their own: source changes only
            if where in new_inlined:
                self._source(spec, new_inlined[where], path + where, version)
        new_absent = dict(b.absent)
        for where, spec in a.absent:
            if where in new_absent:
                self._default(spec, new_absent[where], path + where, "absent", version)

    # --- defaults and source-level annotations -------------------------------------------------

    def _default(self, x: FieldSpec, y: FieldSpec, where: str, kind: str, version: int) -> None:
        old_value, new_value = effective_default(x), effective_default(y)
        if old_value == new_value and type(old_value) is type(new_value):
            if x.default_given != y.default_given or x.default != y.default:
                self.record(ChangeKind.DEFAULT_SPELLING_CHANGED, f'{where}: default "{x.default}" -> "{y.default}" '
                            "means the same value", [version], y.path)
            return
        entry = self._defaults.setdefault(where, {"old": x, "new": y, "absent": set(), "tagged": set(), "present": set()})
        entry[kind].add(version)

    def _flush_defaults(self) -> None:
        for where, entry in self._defaults.items():
            versions = entry["absent"] | entry["tagged"] or entry["present"]
            x, y = entry["old"], entry["new"]
            self.record(ChangeKind.DEFAULT_CHANGED,
                        f"{where}: default {_default_words(x)} -> {_default_words(y)}: {_default_effect(entry)}",
                        versions, (*y.path, "default") if y.default_given else y.path)
        self._defaults.clear()

    def _source(self, x: FieldSpec, y: FieldSpec, where: str, version: int) -> None:
        for attr, key in _ANNOTATIONS:
            if getattr(x, attr) != getattr(y, attr):
                self.record(ChangeKind.FIELD_ANNOTATION_CHANGED, f"{where}: {key} changed", [version], y.path)
        if x.type is not None and y.type is not None and x.type != y.type:
            self.record(ChangeKind.TYPE_SPELLING_CHANGED, f"{where}: type {x.type} -> {y.type} (same bytes)",
                        [version], (*y.path, "type"))
        elif x.has_fields != y.has_fields:
            to = "commonStructs" if y.has_fields is False else "an inline definition"
            self.record(ChangeKind.STRUCT_MOVED, f"{where}: struct {y.type} moved to {to}", [version], y.path)
        if x.flexible_versions.given != y.flexible_versions.given or x.flexible_versions.text != y.flexible_versions.text:
            self.record(ChangeKind.FLEXIBLE_OVERRIDE_CHANGED,
                        f"{where}: field-level flexibleVersions {x.flexible_versions.text or '(none)'} -> "
                        f"{y.flexible_versions.text or '(none)'} (same encoding at this version)", [version], y.path)



def effective_default(spec: FieldSpec) -> Any:
    """What a reader substitutes when the field is absent; the text itself when Java would not parse it."""
    if spec.type is None or spec.type.is_struct:
        return ("struct", spec.default)
    field_type = spec.type
    if field_type.is_records:  # generated code defaults records to null, but the wire form is bytes
        field_type = FieldType("bytes")
    try:
        return parse_default(field_type, spec.default)
    except DefaultError:
        return ("unparsable", spec.default)


def _nested(path: str, slot: Slot) -> str:
    return f"{path}{slot.where}{'[]' if slot.is_array else ''}."


def _default_words(spec: FieldSpec) -> str:
    if not spec.default_given:
        return "(none)"
    return f'"{spec.default}"'


def _default_effect(entry: dict[str, Any]) -> str:
    if entry["absent"] or entry["tagged"]:
        return "a reader now substitutes another value where the field is absent or its tag omitted"
    return "code that leaves the field unset now sends another value"


def _under(slots: list[Slot]) -> dict[str, list[Slot]]:
    """The slots by each struct name their qualified name lies under (``A.B.c`` under ``A`` and ``A.B``)."""
    found: dict[str, list[Slot]] = {}
    for slot in slots:
        parts = slot.where.split(".")
        for depth in range(1, len(parts)):
            found.setdefault(".".join(parts[:depth]), []).append(slot)
    return found

