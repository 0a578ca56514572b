"""Compare two revisions of one message, version by version, on the wire layout.

Every difference becomes a ``Change`` of a ``ChangeKind`` (``linter.compat.kinds``), whose category is
named as in ``../shared/compat-cases/README.md``, with the versions it affects and, for wire breaks, a
witness from the codec. Changes are first recorded per version, then merged, so one retyped field is one
change listing every version it breaks. The message-level comparison is here; the field-by-field one is
``StructDiff`` (``linter.compat.struct_diff``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from functools import partial

from linter.compat.change import Change, Witness, primary, version_ranges
from linter.compat.kinds import ChangeKind
from linter.compat.layout import LayoutBuilder, LayoutError, same_wire
from linter.compat.struct_diff import StructDiff
from linter.model.spec import COORDINATOR_TYPES, MessageSpec
from linter.model.traits import header_version, segments
from linter.model.versions import NONE, Versions

# Importers of ``Change``, ``Witness``, ``primary`` and ``version_ranges`` from here predate ``change``.
__all__ = ["Change", "MessageDiff", "Witness", "compare_messages", "is_key_record", "is_record_conversion",
           "primary", "reuse_message", "version_ranges"]


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


class MessageDiff(StructDiff):
    """The changes between two revisions of one message (either may be ``None``: added or removed)."""

    def __init__(self, old: MessageSpec | None, new: MessageSpec | None) -> None:
        known = new or old
        super().__init__((known.name if known is not None else None) or "?")
        self.old, self.new = old, new
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

    # --- the comparison -------------------------------------------------------------------------

    def run(self) -> list[Change]:
        old, new = self.old, self.new
        if old is None or new is None:
            self._one_sided(old, new)
            return self.changes()
        old_v, new_v = old.versions, new.versions
        if old_v is None or new_v is None:
            raise LayoutError("validVersions is missing or invalid (krpc-lint lint says why)")
        if old.removed or new.removed:
            self._removal(old, new, old_v, new_v)
            return self.changes()
        if is_record_conversion(old, new):
            self._converted(old, new, old_v, new_v)
            if new.type == "coordinator-key":
                return self.changes()
        shared = old_v.intersect(new_v)
        self._message_level(old, new, shared, old_v, new_v)
        self._versions(old, new, old_v, new_v)
        self._layouts(old, new, shared)
        self._headers(old, new, shared)
        return self.changes()

    def _one_sided(self, old: MessageSpec | None, new: MessageSpec | None) -> None:
        """A message only one revision has: added, or removed (its file gone, or every version)."""
        if new is not None:
            self.record(ChangeKind.MESSAGE_ADDED, f"{self.name} added", new.versions or NONE)
        elif old is not None:
            gone = f"its file is gone, so apiKey {old.api_key} is no longer reserved" if old.removed \
                else "every version is gone"
            self.record(ChangeKind.MESSAGE_REMOVED, f"{old.type} {self.name} removed: {gone}",
                        old.versions or NONE, side="old")

    def _removal(self, old: MessageSpec, new: MessageSpec, old_v: Versions, new_v: Versions) -> None:
        """An API emptied to ``validVersions: none`` (KAFKA-14552), restored, or its reserved apiKey reused."""
        if not old.removed:
            self.record(ChangeKind.API_REMOVED,
                        f"{old.type} {old.name} removed (validVersions none): versions {old_v} dropped; "
                        f"apiKey {new.api_key} stays reserved", old_v, ("validVersions",))
        elif new.removed:
            return
        elif old.name == new.name:
            self.record(ChangeKind.VERSION_ADDED, f"removed {new.type} {new.name} restored with versions {new_v}",
                        new_v, ("validVersions",))
        else:
            self.record(ChangeKind.API_KEY_REUSED, reuse_message(old, new), new_v, ("apiKey",))

    def _converted(self, old: MessageSpec, new: MessageSpec, old_v: Versions, new_v: Versions) -> None:
        """KAFKA-18301: a ``data`` record became a coordinator record; bytes are compared, names are not."""
        record_type = new.api_key
        if new.type == "coordinator-value":
            self.record(ChangeKind.COORDINATOR_RECORD_CONVERTED,
                        f"data record -> coordinator-value with apiKey {record_type} (KAFKA-18301): its versions and "
                        "framing are unchanged", new_v, ("type",))
            return
        if record_type is None or not old_v.contains(record_type):
            self.record(ChangeKind.API_KEY_CHANGED,
                        f"data record (record types {old_v}) -> coordinator-key with apiKey {record_type}: "
                        "records of the old types are no longer recognised", [0], ("apiKey",))
            return
        others = [v for v in old_v if v != record_type]
        elsewhere = f"; record type(s) {version_ranges(others)} need their own coordinator-key" if others else ""
        self.record(ChangeKind.COORDINATOR_RECORD_CONVERTED,
                    f"data record of record type {record_type} -> coordinator-key with apiKey {record_type} "
                    "(KAFKA-18301): the type moved from the key's version to its apiKey, and a key's version never "
                    f"reaches the wire, so its bytes are unchanged{elsewhere}", [0], ("type",))
        self.version_map = {0: record_type}
        before, after = LayoutBuilder(old).build(record_type), LayoutBuilder(new).build(0)
        if before.flexible != after.flexible:
            self.record(ChangeKind.FLEXIBLE_VERSIONS_CHANGED, f"the key was {'' if before.flexible else 'not '}flexible "
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
                self.record(ChangeKind.HEADER_VERSION_CHANGED,
                            f"{old.type} header version {before} -> {after}: the framing of the version changes",
                            [version], ("headerVersions",) if new.header_versions is not None else ("flexibleVersions",))
            elif before == after:
                declared.append(version)
        if old.header_versions != new.header_versions and declared:
            what = "declared" if old.header_versions is None else "rewritten" if new.header_versions is not None \
                else "dropped for flexibleVersions"
            self.record(ChangeKind.HEADER_VERSIONS_DECLARED,
                        f"headerVersions {what}; these versions keep their header version", declared,
                        ("headerVersions",) if new.header_versions is not None else ())

    def _message_level(self, old: MessageSpec, new: MessageSpec, shared: Versions, old_v: Versions,
                       new_v: Versions) -> None:
        if old.name != new.name:
            self.record(ChangeKind.MESSAGE_RENAMED, f"message {old.name} renamed to {new.name}", shared, ("name",))
        if is_record_conversion(old, new):
            pass  # type and apiKey changed together: coordinator-record-converted says so
        elif old.api_key != new.api_key:
            self.record(ChangeKind.API_KEY_CHANGED,
                        f"apiKey {old.api_key} -> {new.api_key}: peers now see a different API or record type",
                        shared, ("apiKey",))
        if old.type != new.type and not is_record_conversion(old, new):
            self.record(ChangeKind.API_KEY_CHANGED, f"type {old.type} -> {new.type}", shared, ("type",))
        old_dep, new_dep = old.deprecated_versions.value or NONE, new.deprecated_versions.value or NONE
        if old_dep != new_dep:
            changed = [v for v in shared if old_dep.contains(v) != new_dep.contains(v)]
            self.record(ChangeKind.DEPRECATED_VERSIONS_CHANGED,
                        f"deprecatedVersions {old_dep} -> {new_dep}", changed, ("deprecatedVersions",))
        if set(old.listeners) != set(new.listeners):
            self.record(ChangeKind.LISTENERS_CHANGED,
                        f"listeners {sorted(old.listeners)} -> {sorted(new.listeners)}", shared, ("listeners",))
        if old.latest_version_unstable != new.latest_version_unstable:
            top = old_v.highest if old.latest_version_unstable else new_v.highest
            state = "stable" if old.latest_version_unstable else "unstable"
            if new_v.contains(top):
                self.record(ChangeKind.VERSION_STABILITY_CHANGED, f"version {top} marked {state}", [top],
                            ("latestVersionUnstable",) if new.latest_version_unstable else ("validVersions",))

    def _versions(self, old: MessageSpec, new: MessageSpec, old_v: Versions, new_v: Versions) -> None:
        gone = [v for v in old_v if not new_v.contains(v)]
        added = [v for v in new_v if not old_v.contains(v)]
        path = ("validVersions",)
        if old.type == "header" and new.type == "header":
            if gone or added:
                self.record(ChangeKind.HEADER_VERSIONS_CHANGED,
                            f"header versions {old_v} -> {new_v}: header versions follow from the APIs' "
                            "versions, whose own changes are reported", [*gone, *added], path)
            return
        if is_key_record(old):
            if gone:
                self.record(ChangeKind.VERSION_DROPPED,
                            f"record type id(s) {version_ranges(gone)} retired: for a *Key record validVersions is the "
                            "record type, so records written with it are no longer recognised", gone, path)
            if added:
                self.record(ChangeKind.VERSION_ADDED, f"record type id(s) {version_ranges(added)} added", added, path)
            return
        low = [v for v in gone if v < new_v.lowest]
        top = [v for v in gone if v > new_v.highest]
        if low:
            baseline = " (a KIP-896 baseline: Kafka 4.0 dropped every version older than the newest one Kafka 2.1 used)" \
                if old.type in ("request", "response") and old_v.lowest == 0 else ""
            self.record(ChangeKind.VERSION_DROPPED,
                        f"minimum version raised {old_v.lowest} -> {new_v.lowest}: versions {version_ranges(low)} "
                        f"dropped{baseline}", low, path)
        if top:
            self.record(ChangeKind.MAX_VERSION_LOWERED,
                        f"maximum version lowered {old_v.highest} -> {new_v.highest}: versions {version_ranges(top)} "
                        "retracted", top, path)
        if added:
            self.record(ChangeKind.VERSION_ADDED, f"version(s) {version_ranges(added)} added", added, path)

    def _layouts(self, old: MessageSpec, new: MessageSpec, shared: Versions) -> None:
        """Each segment of versions that both specs treat alike is compared once, at its first version, and what
        is found there holds for the whole segment: the cost follows the spec's text, not its version numbers."""
        old_layouts, new_layouts = LayoutBuilder(old), LayoutBuilder(new)
        self.segments = segments(shared, old_layouts.boundaries, new_layouts.boundaries)
        compare_at = partial(self._layout_at, old, new, old_layouts, new_layouts)
        for span in self.segments:
            self.spread(span, compare_at)
            for found in (self.skipped, self.same_wire):
                if span[0] in found:
                    found.update(span)

    def _layout_at(self, old: MessageSpec, new: MessageSpec, old_layouts: LayoutBuilder, new_layouts: LayoutBuilder,
                   version: int) -> None:
        if old_layouts.flexible(version) != new_layouts.flexible(version):
            became = "flexible" if new_layouts.flexible(version) else "non-flexible"
            self.record(ChangeKind.FLEXIBLE_VERSIONS_CHANGED,
                        f"flexibleVersions {old.flexible} -> {new.flexible}: the version became {became} "
                        "(compact lengths and tagged-field sections change every struct)",
                        [version], ("flexibleVersions",))
            self.skipped.add(version)
            return
        before, after = old_layouts.build(version), new_layouts.build(version)
        if same_wire(before, after):
            self.same_wire.add(version)
        self._struct(before, after, "", version)


def compare_messages(old: MessageSpec | None, new: MessageSpec | None) -> list[Change]:
    """Every change between two revisions of a message (either may be ``None``: added or removed)."""
    return MessageDiff(old, new).run()
