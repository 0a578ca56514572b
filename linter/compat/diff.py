"""Compare two revisions of one message, version by version, on the wire layout.

Every difference becomes a ``Change`` with a category (the names of
``../shared/compat-cases/README.md``), the versions it affects and, for wire breaks, a witness
from the codec. Changes are first recorded per version, then merged, so one retyped field
is one change listing every version it breaks.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from linter.compat.layout import (
    LayoutBuilder,
    LayoutError,
    Slot,
    StructLayout,
    same_wire,
)
from linter.model.defaults import DefaultError, parse_default
from linter.model.spec import COORDINATOR_TYPES, FieldSpec, MessageSpec
from linter.model.traits import header_version, segments
from linter.model.types import FieldType
from linter.model.versions import NONE, Versions

CATEGORIES = ("WIRE_BREAKING", "NULLABILITY_WIDENED", "NULLABILITY_NARROWED", "DEFAULT_CHANGED",
              "VERSION_DROPPED", "MAX_VERSION_LOWERED", "TAG_REMOVED", "SOURCE_ONLY", "SAFE")
WIRE = "WIRE_BREAKING"
SOURCE = "SOURCE_ONLY"
SAFE = "SAFE"
_ANNOTATIONS = (("about", "about"), ("entity_type", "entityType"), ("map_key", "mapKey"),
                ("ignorable", "ignorable"), ("zero_copy", "zeroCopy"))


@dataclass(frozen=True)
class Witness:
    """Bytes that prove a wire break: written by one revision, read by the other."""

    version: int
    writer: str  # "old" | "new"
    hex: str
    decoded_old: Any
    decoded_new: Any = None
    error: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {"version": self.version, "writer": self.writer, "hex": self.hex, "decoded_old": self.decoded_old}
        if self.error is not None:
            out["error"] = self.error
        else:
            out["decoded_new"] = self.decoded_new
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Change:
    """One difference between the revisions of a message.

    ``json_path`` points into the new file (``side="new"``) or, for things that only the old
    file has, into the old one; the report turns it into ``line:col``.
    """

    rule: str
    category: str
    message_name: str
    message: str
    versions: tuple[int, ...]
    side: str = "new"
    json_path: tuple = ()
    released: bool = True
    witness: Witness | None = None


def primary(changes: list[Change]) -> tuple[str, list[int]]:
    """The first category (in README order) that applies, and the versions it affects."""
    for category in CATEGORIES:
        chosen = [c for c in changes if c.category == category]
        if chosen:
            return category, sorted({v for c in chosen for v in c.versions})
    return SAFE, []


def is_key_record(message: MessageSpec) -> bool:
    """Group/transaction coordinator ``*Key`` records: their ``validVersions`` is the record type id."""
    return message.type == "data" and message.api_key is None and (message.name or "").endswith("Key")


def is_record_conversion(old: MessageSpec, new: MessageSpec) -> bool:
    """A pre-4.1 ``data`` coordinator record that became a ``coordinator-key``/``-value`` (KAFKA-18301)."""
    return old.type == "data" and old.api_key is None and new.type in COORDINATOR_TYPES


def reuse_message(removed: MessageSpec, new: MessageSpec) -> str:
    """Why taking the apiKey a removed API reserves breaks peers (KAFKA-14552)."""
    return (f"apiKey {new.api_key} was reserved by removed {removed.type} {removed.name}; {new.name} reuses it, so "
            f"a peer that still sends {removed.name} is read as {new.name}")


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


class MessageDiff:
    """The changes between two revisions of one message (either may be ``None``: added or removed)."""

    def __init__(self, old: MessageSpec | None, new: MessageSpec | None) -> None:
        self.old, self.new = old, new
        self.name = (new or old).name or "?"
        self._events: dict[tuple, set[int]] = defaultdict(set)
        self._defaults: dict[str, dict[str, Any]] = {}
        self.renames: dict[tuple[str, str], str] = {}  # (struct path, old name) -> new name, as in ``Slot.where``
        self.skipped: set[int] = set()  # shared versions whose layout was not compared field by field
        self.version_map: dict[int, int] = {}  # new version -> the old version it is compared with (default: same)
        self.same_wire: set[int] = set()  # shared versions whose layouts are the same, names included (layout.same_wire)
        self.segments: list[range] = []  # the shared versions in runs that both specs treat alike (traits.segments)

    def one_per_segment(self, versions: Iterable[int]) -> list[int]:
        """The first of ``versions`` in each segment (all of them when no segments were worked out): the
        versions that stand for the rest in per-version work such as a witness search."""
        if not self.segments:
            return list(versions)
        starts = [span[0] for span in self.segments]
        chosen: dict[int, int] = {}
        for version in versions:
            chosen.setdefault(bisect_right(starts, version), version)
        return list(chosen.values())

    def old_version(self, version: int) -> int:
        """The old revision's version that the new revision's ``version`` is compared with."""
        return self.version_map.get(version, version)

    def compared_versions(self) -> list[int]:
        """The new revision's versions compared with the old one's, field by field and by cross-decoding."""
        if self.version_map:
            return sorted(self.version_map)
        if self.old is None or self.new is None or self.old.versions is None or self.new.versions is None:
            return []
        return list(self.old.versions.intersect(self.new.versions))

    # --- recording ------------------------------------------------------------------------------

    def record(self, rule: str, category: str, message: str, versions, path: tuple = (), side: str = "new") -> None:
        self._events[(rule, category, message, side, tuple(path))].update(versions)

    def changes(self) -> list[Change]:
        self._flush_defaults()
        out = [Change(rule, category, self.name, message, tuple(sorted(versions)), side, path)
               for (rule, category, message, side, path), versions in self._events.items()]
        return out

    # --- the comparison -------------------------------------------------------------------------

    def run(self) -> list[Change]:
        old, new = self.old, self.new
        if old is None:
            self.record("message-added", SAFE, f"{self.name} added", new.versions or NONE)
            return self.changes()
        if new is None:
            gone = f"its file is gone, so apiKey {old.api_key} is no longer reserved" if old.removed \
                else "every version is gone"
            self.record("message-removed", "VERSION_DROPPED", f"{old.type} {self.name} removed: {gone}",
                        old.versions or NONE, side="old")
            return self.changes()
        if old.versions is None or new.versions is None:
            raise LayoutError("validVersions is missing or invalid (krpc-lint lint says why)")
        if old.removed or new.removed:
            self._removal(old, new)
            return self.changes()
        if is_record_conversion(old, new):
            self._converted(old, new)
            if new.type == "coordinator-key":
                return self.changes()
        shared = old.versions.intersect(new.versions)
        self._message_level(old, new, shared)
        self._versions(old, new)
        self._layouts(old, new, shared)
        self._headers(old, new, shared)
        return self.changes()

    def _removal(self, old: MessageSpec, new: MessageSpec) -> None:
        """An API emptied to ``validVersions: none`` (KAFKA-14552), restored, or its reserved apiKey reused."""
        if not old.removed:
            self.record("api-removed", "VERSION_DROPPED",
                        f"{old.type} {old.name} removed (validVersions none): versions {old.versions} dropped; "
                        f"apiKey {new.api_key} stays reserved", old.versions, ("validVersions",))
        elif new.removed:
            return
        elif old.name == new.name:
            self.record("version-added", SAFE, f"removed {new.type} {new.name} restored with versions {new.versions}",
                        new.versions, ("validVersions",))
        else:
            self.record("api-key-reused", WIRE, reuse_message(old, new), new.versions, ("apiKey",))

    def _converted(self, old: MessageSpec, new: MessageSpec) -> None:
        """KAFKA-18301: a ``data`` record became a coordinator record; bytes are compared, names are not."""
        record_type = new.api_key
        if new.type == "coordinator-value":
            self.record("coordinator-record-converted", SOURCE,
                        f"data record -> coordinator-value with apiKey {record_type} (KAFKA-18301): its versions and "
                        "framing are unchanged", new.versions, ("type",))
            return
        if record_type is None or not old.versions.contains(record_type):
            self.record("api-key-changed", WIRE,
                        f"data record (record types {old.versions}) -> coordinator-key with apiKey {record_type}: "
                        "records of the old types are no longer recognised", [0], ("apiKey",))
            return
        others = [v for v in old.versions if v != record_type]
        elsewhere = f"; record type(s) {version_ranges(others)} need their own coordinator-key" if others else ""
        self.record("coordinator-record-converted", SOURCE,
                    f"data record of record type {record_type} -> coordinator-key with apiKey {record_type} "
                    "(KAFKA-18301): the type moved from the key's version to its apiKey, and a key's version never "
                    f"reaches the wire, so its bytes are unchanged{elsewhere}", [0], ("type",))
        self.version_map = {0: record_type}
        before, after = LayoutBuilder(old).build(record_type), LayoutBuilder(new).build(0)
        if before.flexible != after.flexible:
            self.record("flexible-versions-changed", WIRE, f"the key was {'' if before.flexible else 'not '}flexible "
                        f"at record type {record_type} and is {'' if after.flexible else 'not '}flexible now",
                        [0], ("flexibleVersions",))
            self.skipped.add(0)
            return
        self._struct(before, after, "", 0)

    def _headers(self, old: MessageSpec, new: MessageSpec, shared: Versions) -> None:
        """The header version of each shared version (KIP-1313): a change reframes every message."""
        if old.type not in ("request", "response") or new.type != old.type:
            return
        declared = []
        for version in shared:
            before, after = header_version(old, version), header_version(new, version)
            if before != after and version not in self.skipped:
                self.record("header-version-changed", WIRE,
                            f"{old.type} header version {before} -> {after}: the framing of the version changes",
                            [version], ("headerVersions",) if new.header_versions is not None else ("flexibleVersions",))
            elif before == after:
                declared.append(version)
        if old.header_versions != new.header_versions and declared:
            what = "declared" if old.header_versions is None else "rewritten" if new.header_versions is not None \
                else "dropped for flexibleVersions"
            self.record("header-versions-declared", SAFE,
                        f"headerVersions {what}; these versions keep their header version", declared,
                        ("headerVersions",) if new.header_versions is not None else ())

    def _message_level(self, old: MessageSpec, new: MessageSpec, shared: Versions) -> None:
        if old.name != new.name:
            self.record("message-renamed", SOURCE, f"message {old.name} renamed to {new.name}", shared, ("name",))
        if is_record_conversion(old, new):
            pass  # type and apiKey changed together: coordinator-record-converted says so
        elif old.api_key != new.api_key:
            self.record("api-key-changed", WIRE,
                        f"apiKey {old.api_key} -> {new.api_key}: peers now see a different API or record type",
                        shared, ("apiKey",))
        if old.type != new.type and not is_record_conversion(old, new):
            self.record("api-key-changed", WIRE, f"type {old.type} -> {new.type}", shared, ("type",))
        old_dep, new_dep = old.deprecated_versions.value or NONE, new.deprecated_versions.value or NONE
        if old_dep != new_dep:
            changed = [v for v in shared if old_dep.contains(v) != new_dep.contains(v)]
            self.record("deprecated-versions-changed", SOURCE,
                        f"deprecatedVersions {old_dep} -> {new_dep}", changed, ("deprecatedVersions",))
        if set(old.listeners) != set(new.listeners):
            self.record("listeners-changed", SOURCE,
                        f"listeners {sorted(old.listeners)} -> {sorted(new.listeners)}", shared, ("listeners",))
        if old.latest_version_unstable != new.latest_version_unstable:
            top = old.versions.highest if old.latest_version_unstable else new.versions.highest
            state = "stable" if old.latest_version_unstable else "unstable"
            if new.versions.contains(top):
                self.record("version-stability-changed", SAFE, f"version {top} marked {state}", [top],
                            ("latestVersionUnstable",) if new.latest_version_unstable else ("validVersions",))

    def _versions(self, old: MessageSpec, new: MessageSpec) -> None:
        old_v, new_v = old.versions, new.versions
        gone = [v for v in old_v if not new_v.contains(v)]
        added = [v for v in new_v if not old_v.contains(v)]
        path = ("validVersions",)
        if old.type == "header" and new.type == "header":
            if gone or added:
                self.record("header-versions-changed", SAFE,
                            f"header versions {old_v} -> {new_v}: header versions follow from the APIs' "
                            "versions, whose own changes are reported", [*gone, *added], path)
            return
        if is_key_record(old):
            if gone:
                self.record("version-dropped", "VERSION_DROPPED",
                            f"record type id(s) {version_ranges(gone)} retired: for a *Key record validVersions is the "
                            "record type, so records written with it are no longer recognised", gone, path)
            if added:
                self.record("version-added", SAFE, f"record type id(s) {version_ranges(added)} added", added, path)
            return
        low = [v for v in gone if v < new_v.lowest]
        top = [v for v in gone if v > new_v.highest]
        if low:
            baseline = " (a KIP-896 baseline: Kafka 4.0 dropped every version older than the newest one Kafka 2.1 used)" \
                if old.type in ("request", "response") and old_v.lowest == 0 else ""
            self.record("version-dropped", "VERSION_DROPPED",
                        f"minimum version raised {old_v.lowest} -> {new_v.lowest}: versions {version_ranges(low)} "
                        f"dropped{baseline}", low, path)
        if top:
            self.record("max-version-lowered", "MAX_VERSION_LOWERED",
                        f"maximum version lowered {old_v.highest} -> {new_v.highest}: versions {version_ranges(top)} "
                        "retracted", top, path)
        if added:
            self.record("version-added", SAFE, f"version(s) {version_ranges(added)} added", added, path)

    def _layouts(self, old: MessageSpec, new: MessageSpec, shared: Versions) -> None:
        """Each segment of versions that both specs treat alike is compared once, at its first version, and what
        is found there holds for the whole segment: the cost follows the spec's text, not its version numbers."""
        old_layouts, new_layouts = LayoutBuilder(old), LayoutBuilder(new)
        self.segments = segments(shared, old_layouts.boundaries, new_layouts.boundaries)
        for span in self.segments:
            outer, self._events = self._events, defaultdict(set)
            self._layout_at(old, new, old_layouts, new_layouts, span[0])
            for key in self._events:
                outer[key].update(span)
            self._events = outer
            found_in = [self.skipped, self.same_wire]
            found_in += [entry[kind] for entry in self._defaults.values() for kind in ("absent", "tagged", "present")]
            for found in found_in:
                if span[0] in found:
                    found.update(span)

    def _layout_at(self, old: MessageSpec, new: MessageSpec, old_layouts: LayoutBuilder, new_layouts: LayoutBuilder,
                   version: int) -> None:
        if old_layouts.flexible(version) != new_layouts.flexible(version):
            became = "flexible" if new_layouts.flexible(version) else "non-flexible"
            self.record("flexible-versions-changed", WIRE,
                        f"flexibleVersions {old.flexible} -> {new.flexible}: the version became {became} "
                        "(compact lengths and tagged-field sections change every struct)",
                        [version], ("flexibleVersions",))
            self.skipped.add(version)
            return
        before, after = old_layouts.build(version), new_layouts.build(version)
        if same_wire(before, after):
            self.same_wire.add(version)
        self._struct(before, after, "", version)

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
            if b.tag_of(slot.name) is not None:
                self.record("field-made-tagged", WIRE, f"{path}{slot.where} moved from the body to tag "
                            f"{b.tag_of(slot.name)}", [version], b.tagged[b.tag_of(slot.name)].spec.path)
            else:
                self.record("field-removed", WIRE, f"{path}{slot.where} ({slot.describe()}) removed",
                            [version], slot.spec.path, side="old")
        for slot in inserted:
            if a.tag_of(slot.name) is not None:
                self.record("field-made-regular", WIRE, f"{path}{slot.where} moved from tag {a.tag_of(slot.name)} "
                            "into the body", [version], slot.spec.path)
            else:
                self.record("field-inserted", WIRE, f"{path}{slot.where} ({slot.describe()}) inserted",
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
        self.record("fields-reordered", WIRE, f"{path}fields reordered: {', '.join(old_order)} -> "
                    f"{', '.join(new_order)} (each position is read with the other revision's meaning)",
                    [version], spec.path)

    def _wrapped_changes(self, removed: list[Slot], inserted: list[Slot], path: str, version: int):
        """A struct that gained or lost its presence byte, seen as inline fields on one side (linear: the inline
        fields are found by their qualified name's prefixes, not by scanning every slot for every struct)."""
        gone: set[int] = set()  # ids of the slots accounted for
        below = _under(removed)
        for slot in inserted:
            inline = [s for s in below.get(slot.where, ()) if id(s) not in gone] if slot.is_struct else []
            if inline:
                self.record("struct-nullability-changed", WIRE,
                            f"{path}{slot.where} became a {slot.describe()}: KIP-893 adds an int8 presence byte",
                            [version], slot.spec.path)
                gone.update(map(id, inline))
                gone.add(id(slot))
        removed = [s for s in removed if id(s) not in gone]
        inserted = [s for s in inserted if id(s) not in gone]
        below = _under(inserted)
        for slot in removed:
            inline = [s for s in below.get(slot.where, ()) if id(s) not in gone] if slot.is_struct else []
            if inline:
                self.record("struct-nullability-changed", WIRE,
                            f"{path}{slot.where} is no longer a {slot.describe()}: its presence byte is gone",
                            [version], inline[0].spec.path)
                gone.update(map(id, inline))
                gone.add(id(slot))
        return [s for s in removed if id(s) not in gone], [s for s in inserted if id(s) not in gone]

    def _renamed_in_place(self, old_slots, new_slots, removed, inserted, path, version):
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
            self.record("field-renamed", SOURCE, f"{path}{x.where} renamed to {y.where}", [version], y.spec.path)
        elif x.where != y.where and not moved:
            self.record("struct-wrapping-changed", SOURCE,
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
        same_shell = x.wire == y.wire and isinstance(x.element, StructLayout) and isinstance(y.element, StructLayout)
        if same_shell:  # the change is inside the struct: report it where it is
            self._nullability(x, y, path, version)
            self._source(x.spec, y.spec, path + y.where, version)
            self._struct(x.element, y.element, _nested(path, y), version)
            return
        if x.is_struct and y.is_struct:
            self.record("struct-nullability-changed", WIRE,
                        f"{path}{y.where}: {x.describe()} -> {y.describe()}", [version], y.spec.path)
            return
        rule = "tagged-field-retyped" if y.tag is not None else "field-retyped"
        self.record(rule, WIRE, f"{path}{y.where}: {x.describe()} -> {y.describe()}", [version],
                    (*y.spec.path, "type"))

    def _nullability(self, x: Slot, y: Slot, path: str, version: int) -> None:
        if x.is_struct or x.nullable == y.nullable:
            return
        if y.nullable:
            self.record("nullability-widened", "NULLABILITY_WIDENED",
                        f"{path}{y.where} may now be null: readers of the old spec reject a null", [version],
                        y.spec.path)
        else:
            self.record("nullability-narrowed", "NULLABILITY_NARROWED",
                        f"{path}{y.where} may no longer be null: the new spec rejects a null old writers may send",
                        [version], y.spec.path)

    def _tagged(self, a: StructLayout, b: StructLayout, path: str, version: int) -> None:
        for tag in sorted(set(a.tagged) | set(b.tagged)):
            x, y = a.tagged.get(tag), b.tagged.get(tag)
            if x is not None and y is not None:
                self._same_tag(x, y, a, b, path, version)
            elif x is not None:
                self._tag_gone(x, b, path, version)
            elif a.tag_of(y.name) is None and y.name not in {s.name for s in a.regular}:
                self.record("tagged-field-added", SAFE, f"{path}{y.where} added as tag {tag}", [version], y.spec.path)

    def _same_tag(self, x: Slot, y: Slot, a: StructLayout, b: StructLayout, path: str, version: int) -> None:
        if x.name != y.name and (x.name in b.names() or y.name in a.names()):
            self.record("tag-reused", WIRE, f"{path}tag {x.tag} now carries {y.where} instead of {x.where}: "
                        "an old writer's value is read with another meaning", [version], (*y.spec.path, "tag"))
            return
        self._pair(x, y, path, version)

    def _tag_gone(self, x: Slot, b: StructLayout, path: str, version: int) -> None:
        moved_to = b.tag_of(x.name)
        if moved_to is not None:
            self.record("tag-renumbered", WIRE, f"{path}{x.where} moved from tag {x.tag} to tag {moved_to}: "
                        "old and new peers silently drop each other's value", [version],
                        (*b.tagged[moved_to].spec.path, "tag"))
        elif x.name not in {s.name for s in b.regular}:
            self.record("tag-removed", "TAG_REMOVED", f"{path}{x.where} (tag {x.tag}) removed: readers skip it, "
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
                self.record("default-spelling-changed", SOURCE, f'{where}: default "{x.default}" -> "{y.default}" '
                            "means the same value", [version], y.path)
            return
        entry = self._defaults.setdefault(where, {"old": x, "new": y, "absent": set(), "tagged": set(), "present": set()})
        entry[kind].add(version)

    def _flush_defaults(self) -> None:
        for where, entry in self._defaults.items():
            versions = entry["absent"] | entry["tagged"] or entry["present"]
            x, y = entry["old"], entry["new"]
            self.record("default-changed", "DEFAULT_CHANGED",
                        f"{where}: default {_default_words(x)} -> {_default_words(y)}: {_default_effect(entry)}",
                        versions, (*y.path, "default") if y.default_given else y.path)
        self._defaults.clear()

    def _source(self, x: FieldSpec, y: FieldSpec, where: str, version: int) -> None:
        for attr, key in _ANNOTATIONS:
            if getattr(x, attr) != getattr(y, attr):
                self.record("field-annotation-changed", SOURCE, f"{where}: {key} changed", [version], y.path)
        if x.type is not None and y.type is not None and x.type != y.type:
            self.record("type-spelling-changed", SOURCE, f"{where}: type {x.type} -> {y.type} (same bytes)",
                        [version], (*y.path, "type"))
        elif x.has_fields != y.has_fields:
            to = "commonStructs" if y.has_fields is False else "an inline definition"
            self.record("struct-moved", SOURCE, f"{where}: struct {y.type} moved to {to}", [version], y.path)
        if x.flexible_versions.given != y.flexible_versions.given or x.flexible_versions.text != y.flexible_versions.text:
            self.record("flexible-override-changed", SOURCE,
                        f"{where}: field-level flexibleVersions {x.flexible_versions.text or '(none)'} -> "
                        f"{y.flexible_versions.text or '(none)'} (same encoding at this version)", [version], y.path)


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


def version_ranges(versions: list[int], separator: str = ", ") -> str:
    """``[0, 1, 2, 5]`` (sorted, distinct) as ``0-2, 5``."""
    out, start = [], None
    for index, version in enumerate(versions):
        if start is None:
            start = version
        if index + 1 == len(versions) or versions[index + 1] != version + 1:
            out.append(str(start) if start == version else f"{start}-{version}")
            start = None
    return separator.join(out)


def compare_messages(old: MessageSpec | None, new: MessageSpec | None) -> list[Change]:
    """Every change between two revisions of a message (either may be ``None``: added or removed)."""
    return MessageDiff(old, new).run()
