"""Compare two revisions: pair their messages, diff each pair, prove wire breaks with bytes.

Messages are paired by (type, apiKey) for RPCs and metadata records, then by name (records
without an apiKey, headers, and messages whose apiKey changed), then by file path, and last, for
messages without an apiKey renamed with their file, by their bytes (``_wire_identity``). A pair
whose file or message name differs is reported as a source change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from linter.codec.errors import CodecError
from linter.compat.change import Change, Witness
from linter.compat.diff import MessageDiff, reuse_message
from linter.compat.kinds import ChangeKind
from linter.compat.layout import LayoutBuilder, LayoutError
from linter.compat.revision import Revision
from linter.compat.witness import HEADER_NAMES, CrossCodec, Headers, attribute
from linter.compat.witness_cause import cause_of
from linter.model.defaults import DefaultError, parse_default
from linter.model.registry import MAX_STRUCT_NESTING, StructRegistry
from linter.model.spec import MessageSpec
from linter.model.traits import version_boundaries
from linter.model.versions import NONE, shown
from linter.vocabulary import Category

DEFAULT_CROSS_CHECK = 4  # values per direction per changed version: enough to catch a slip, pre-commit fast
WITNESS_ATTEMPTS = 64  # values per direction tried before a wire break is declared unproven
_BREAKING_FOR_CROSS_CHECK = {Category.WIRE_BREAKING, Category.NULLABILITY_WIDENED, Category.NULLABILITY_NARROWED}


@dataclass
class PairResult:
    """The changes of one message between the revisions (``old_file``/``new_file`` are relative paths)."""

    old_file: str | None
    new_file: str | None
    old: MessageSpec | None
    new: MessageSpec | None
    changes: list[Change] = field(default_factory=list)
    error: str | None = None  # why this pair could not be compared
    error_side: str = "new"  # the revision whose file the error is about ("old" also when the new file is gone)

    @property
    def message(self) -> MessageSpec:
        """The new revision's message, or the old one's when it is gone: ``compare`` pairs at least one."""
        message = self.new or self.old
        if message is None:
            raise ValueError(f"a pair without a message: {self.old_file} -> {self.new_file}")
        return message


@dataclass
class CompatResult:
    old: Revision
    new: Revision
    pairs: list[PairResult]
    unreleased: Unreleased | None = None  # which old versions never shipped (``compat --suggest`` keeps the rest)

    def changes(self) -> Iterable[tuple[PairResult, Change]]:
        for pair in self.pairs:
            for change in pair.changes:
                yield pair, change


def pair_messages(old: dict[str, MessageSpec], new: dict[str, MessageSpec]) -> list[tuple[str | None, str | None]]:
    """(old file, new file) pairs; ``None`` on one side for added or removed messages."""
    pairs: list[tuple[str | None, str | None]] = []
    old_left, new_left = dict(old), dict(new)
    for key_of in (_api_key, _name, _file, _wire_identity):
        old_keys = {rel: key_of(rel, message) for rel, message in old_left.items()} if new_left else {}
        if all(key is None for key in old_keys.values()):
            continue  # nothing left to pair by this key: the other side's keys (layouts) are not worked out
        new_index: dict[object, list[str]] = {}
        for rel, message in new_left.items():
            key = key_of(rel, message)
            if key is not None:
                new_index.setdefault(key, []).append(rel)
        for rel, key in old_keys.items():
            candidates = new_index.get(key, []) if key is not None else []
            if len(candidates) == 1 and candidates[0] in new_left:
                pairs.append((rel, candidates[0]))
                del old_left[rel], new_left[candidates[0]]
    pairs += [(rel, None) for rel in old_left] + [(None, rel) for rel in new_left]
    return sorted(pairs, key=lambda p: p[1] or p[0] or "")


def _api_key(rel: str, message: MessageSpec) -> object:
    return None if message.api_key is None else (message.type, message.api_key)


def _name(rel: str, message: MessageSpec) -> object:
    return message.name


def _file(rel: str, message: MessageSpec) -> object:
    return rel


def _wire_identity(rel: str, message: MessageSpec) -> object:
    """A message without an apiKey (data, header) by its bytes: type, versions and the wire layout of each,
    names left out. A removed and an added message that agree on it were renamed (file and name), as buf
    treats a moved type; a rename that also adds versions pairs by its first version's layout."""
    if message.api_key is not None or message.versions is None or message.versions.empty or message.removed:
        return None
    try:
        return (message.type, message.versions.lowest, LayoutBuilder(message).build(message.versions.lowest).signature)
    except LayoutError:
        return None


class Unreleased:
    """Which versions of the old revision's messages never shipped, worked out once per comparison.

    Without releases: a request marked ``latestVersionUnstable`` has not shipped its top version, and
    its response follows it. With release specs (``--released``, one or many): a version V shipped when
    some release has the message (paired as revisions are) at V **with the old revision's wire layout**
    and does not mark V unstable; a version whose layout changed since every release never shipped
    in that form, so a break of it breaks nothing that was released.
    """

    def __init__(self, old: Revision, releases: Sequence[Revision] | None = None) -> None:
        self.known = releases is not None  # releases were looked for (an empty list: none ships anything)
        self.releases = list(releases or ())
        self._tops = _unstable_tops(old)
        self._paired = [(_unstable_tops(release), {o: release.messages[r]
                         for o, r in pair_messages(old.messages, release.messages) if o is not None and r is not None})
                        for release in self.releases]
        self._layouts: dict[int, LayoutBuilder] = {}

    def unstable(self, message: MessageSpec, tops: dict[int | None, int] | None = None) -> frozenset[int]:
        tops = self._tops if tops is None else tops
        if message.type not in ("request", "response") or message.api_key not in tops:
            return frozenset()
        return frozenset({tops[message.api_key]})

    def of(self, old_file: str, message: MessageSpec, versions: Iterable[int] | None = None) -> frozenset[int]:
        """The versions (of ``versions``, default all) of the old revision's ``message`` that no release
        shipped as the old revision has them."""
        wanted = set(message.versions or NONE) if versions is None else set(versions)
        if not self.known:
            return frozenset(wanted & self.unstable(message))
        shipped: set[int] = set()
        for tops, paired in self._paired:
            release = paired.get(old_file)
            shipped |= {v for v in wanted - shipped if self._ships(release, tops, message, v)}
        return frozenset(wanted - shipped)

    def shipped_in(self, old_file: str, message: MessageSpec, version: int) -> str | None:
        """The first release (in the order given) that shipped ``version`` as the old revision has it."""
        return next((revision.label for revision, (tops, paired) in zip(self.releases, self._paired)
                     if self._ships(paired.get(old_file), tops, message, version)), None)

    def listed_in(self, old_file: str, version: int) -> str | None:
        """The first release whose copy of the message has ``version`` stable, in any layout: where
        ``shipped_in`` is ``None`` and this is not, the old revision changed bytes that shipped."""
        return next((revision.label for revision, (tops, paired) in zip(self.releases, self._paired)
                     if (release := paired.get(old_file)) is not None and release.versions is not None
                     and release.versions.contains(version) and version not in self.unstable(release, tops)), None)

    def _ships(self, release: MessageSpec | None, tops: dict[int | None, int], old: MessageSpec,
               version: int) -> bool:
        """Whether a release's copy of the message has ``version``, stable, with the old revision's layout
        (a version the old revision lacks never shipped as it has it)."""
        if release is None or release.versions is None or not release.versions.contains(version):
            return False
        if version in self.unstable(release, tops) or not (old.versions or NONE).contains(version):
            return False
        return release.raw == old.raw or self._same_layout(old, release, version)

    def _same_layout(self, old: MessageSpec, release: MessageSpec, version: int) -> bool:
        try:
            return self._layout(old).build(version).signature == self._layout(release).build(version).signature
        except LayoutError:
            return False

    def _layout(self, message: MessageSpec) -> LayoutBuilder:
        builder = self._layouts.get(id(message))
        if builder is None:
            builder = self._layouts[id(message)] = LayoutBuilder(message)
        return builder


def _unstable_tops(revision: Revision) -> dict[int | None, int]:
    return {m.api_key: m.versions.highest for m in revision.messages.values()
            if m.type == "request" and m.latest_version_unstable and m.versions is not None}


def compare(old: Revision, new: Revision, *, released: Revision | Sequence[Revision] | None = None,
            witnesses: bool = True, cross_check: int = DEFAULT_CROSS_CHECK, seed: int = 0) -> CompatResult:
    """Every change between two revisions, with witnesses for wire breaks and cross-checked verdicts;
    ``released``: the release(s) whose shipped layouts decide which changes touch released versions."""
    old, new = old.aligned_with(new), new.aligned_with(old)
    results = []
    unreleased = Unreleased(old, [released] if isinstance(released, Revision) else released)
    unreadable = {"old": old.unreadable(), "new": new.unreadable()}
    headers = Headers(_header_specs(old), _header_specs(new))
    reserved: dict[tuple[str | None, int | None], MessageSpec] = {
        (m.type, m.api_key): m for m in old.messages.values() if m.removed and m.api_key is not None}
    for old_file, new_file in pair_messages(old.messages, new.messages):
        if (new_file is None and old_file in unreadable["new"]) or (old_file is None and new_file in unreadable["old"]):
            continue  # the other side's file exists but cannot be read: KL1091 says so, not added/removed
        pair = PairResult(old_file, new_file, old.messages.get(old_file) if old_file is not None else None,
                          new.messages.get(new_file) if new_file is not None else None)
        defects = [(side, unbuildable(m)) for side, m in (("old", pair.old), ("new", pair.new)) if m is not None]
        pair.error_side, pair.error = next(((side, why) for side, why in defects if why),
                                           ("new" if new_file else "old", None))
        if pair.error is not None:
            results.append(pair)  # KL1091 names the file; the other pairs are still compared
            continue
        _compare_pair(pair, unreleased, witnesses, cross_check, seed, headers)
        if pair.old is None and pair.new is not None and not pair.new.removed:
            # added beside a removed API that kept its apiKey
            _reused(pair, pair.new, reserved.get((pair.new.type, pair.new.api_key)), witnesses)
        results.append(pair)
    return CompatResult(old, new, results, unreleased)


_UNBUILDABLE_ISSUES = ("version-syntax", "type-syntax", "array-of-arrays", "header-versions-syntax")
# Layouts are built and compared once per segment of versions (``traits.version_boundaries``), each the
# size of the spec: a spec whose every field starts at its own version would make that quadratic. Kafka's
# own specs have at most 14 segments (FetchRequest, trunk 2024-10), so this bound keeps compat linear in
# its input without refusing any real spec.
MAX_SEGMENTS = 512


def unbuildable(message: MessageSpec) -> str | None:
    """Why the comparison cannot build a message's layouts and codecs (lint explains it in detail), or
    ``None``: what every later step may then take for granted. Iterative and depth-bounded, so a hostile
    nesting costs no stack."""
    if message.versions is None:
        return "its validVersions is missing or invalid"
    syntax = next((issue for issue in message.issues if issue.check in _UNBUILDABLE_ISSUES), None)
    if syntax is not None:
        return shown(syntax.message, 200)
    segments = len(version_boundaries(message))
    if segments > MAX_SEGMENTS:
        return (f"its version ranges cut its versions into {segments} segments, more than the {MAX_SEGMENTS} "
                "compat compares one by one (Kafka's specs have at most 14)")
    stack = [(spec, 1) for struct in (message.struct, *message.common_structs) for spec in struct.fields]
    while stack:
        spec, depth = stack.pop()
        if depth > MAX_STRUCT_NESTING:
            return f"its structs nest more than {MAX_STRUCT_NESTING} levels"
        if not spec.name:
            return f"a field at {'.'.join(map(str, spec.path))} has no name"
        if spec.type is None:
            return f"field {spec.name} has no valid type ({shown(spec.type_text or '', 60)!r})"
        if spec.default_given:
            try:
                parse_default(spec.type, spec.default)
            except DefaultError as exc:
                return f"field {spec.name}: {exc}"
        stack.extend((child, depth + 1) for child in spec.fields)
    too_deep = StructRegistry(message).too_deep  # common structs naming the next one: no JSON depth bounds it
    return None if too_deep is None else f"its {too_deep}"


def _reused(pair: PairResult, new: MessageSpec, removed: MessageSpec | None, witnesses: bool) -> None:
    if removed is None or removed.name == new.name or new.versions is None:
        return
    change = Change.of(ChangeKind.API_KEY_REUSED, new.name or "?", reuse_message(removed, new), new.versions,
                       json_path=("apiKey",))
    if witnesses and change.versions:
        witness = _reuse_witness(removed, new, change.versions[0])
        change = replace(change, witness=attribute(witness, cause_of(change, removed, new)))
    pair.changes.append(change)


def _reuse_witness(removed: MessageSpec, new: MessageSpec, version: int) -> Witness:
    """The apiKey bytes a peer of the new revision writes, which the old revision reserves for ``removed``."""
    return Witness(version, "new", (new.api_key or 0).to_bytes(2, "big", signed=True).hex(), None,
                   {"apiKey": new.api_key, "message": new.name},
                   error=f"the old revision reserves apiKey {new.api_key} for removed {removed.name}, which has no "
                         "version to read it with")


def _compare_pair(pair: PairResult, unreleased: Unreleased, witnesses: bool, cross_check: int, seed: int,
                  headers: Headers) -> None:
    old, new = pair.old, pair.new
    diff = MessageDiff(old, new)
    try:
        changes = diff.run()
        if old is not None and new is not None and pair.old_file != pair.new_file:
            shared = (old.versions or NONE).intersect(new.versions or NONE)  # both valid: ``run`` checked them
            changes.append(Change.of(ChangeKind.FILE_RENAMED, diff.name,
                                     f"file {pair.old_file} renamed to {pair.new_file}", shared))
        if old is not None and new is not None and (witnesses or cross_check):
            changes = _prove(old, new, changes, diff, witnesses, cross_check, seed, headers)
    except (LayoutError, CodecError) as exc:
        pair.error = str(exc)
        return
    if old is not None and pair.old_file is not None:
        touched = {v for change in changes for v in change.versions}
        changes = _split_released(changes, unreleased.of(pair.old_file, old, touched))
        if unreleased.releases:
            changes = [_name_release(change, unreleased, pair.old_file, old) for change in changes]
    pair.changes = changes


def _name_release(change: Change, unreleased: Unreleased, old_file: str, old: MessageSpec) -> Change:
    """A released wire break says which release shipped the bytes it breaks (its witness is of that layout)."""
    if change.category != Category.WIRE_BREAKING or not change.released or not change.versions:
        return change
    version = change.versions[0]
    release = unreleased.shipped_in(old_file, old, version)
    return replace(change, message=f"{change.message} (v{version} as shipped in {release})") if release else change


def _prove(old: MessageSpec, new: MessageSpec, changes: list[Change], diff: MessageDiff, witnesses: bool,
           cross_check: int, seed: int, headers: Headers) -> list[Change]:
    """Witnesses for wire breaks; a cross-check of the versions judged compatible."""
    if old.raw == new.raw and old.name == new.name:
        return changes  # the same spec: nothing to prove
    cross = CrossCodec(old, new, diff.renames, diff.old_version, headers)
    found: dict[int, Witness | None] = {}  # one search per version, shared by the changes there
    out = []
    for change in changes:
        if witnesses and change.category == Category.WIRE_BREAKING and change.versions:
            witness = _witness_for(change, cross, old, new, diff, seed, found)  # shared by the changes at its version
            change = replace(change, witness=attribute(witness, cause_of(change, old, new)))
        out.append(change)
    if cross_check:
        out.extend(_cross_check(changes, diff, cross, cross_check, seed))
    return out


def _header_specs(revision: Revision) -> tuple[MessageSpec, ...]:
    """The revision's RequestHeader and ResponseHeader, which frame witnesses need."""
    return tuple(m for m in revision.messages.values() if m.type == "header" and m.name in HEADER_NAMES)


def _witness_for(change: Change, cross: CrossCodec, old: MessageSpec, new: MessageSpec, diff: MessageDiff, seed: int,
                 found: dict[int, Witness | None]) -> Witness | None:
    if change.rule == ChangeKind.HEADER_VERSION_CHANGED:
        return cross.frame_witness(change.versions[0])
    if change.rule == ChangeKind.API_KEY_REUSED:
        return _reuse_witness(old, new, change.versions[0])
    if change.rule == ChangeKind.API_KEY_CHANGED:
        old_key, new_key = old.api_key, new.api_key
        return Witness(change.versions[0], "old", (old_key or 0).to_bytes(2, "big", signed=True).hex(),
                       {"apiKey": old_key, "message": old.name}, None,
                       error=f"the new revision has no {old.type} with apiKey {old_key} "
                             f"({new.name} now uses {new_key})")
    for version in diff.one_per_segment(change.versions):  # a segment's versions share one layout
        if version not in found:
            found[version] = cross.search(version, WITNESS_ATTEMPTS, seed)
        if found[version] is not None:
            return found[version]
    return None


def _cross_check(changes: list[Change], diff: MessageDiff, cross: CrossCodec, values: int,
                 seed: int) -> list[Change]:
    broken = {v for c in changes if c.category in _BREAKING_FOR_CROSS_CHECK for v in c.versions}
    found = []
    for span in diff.segments or [range(version, version + 1) for version in diff.compared_versions()]:
        # not already a wire break, compared slot by slot, and not read back as written by construction
        versions = tuple(v for v in span if v not in broken and v not in diff.skipped and v not in diff.same_wire)
        if not versions:
            continue
        witness = cross.search(versions[0], values, seed)  # the segment's versions share one layout
        if witness is not None:
            found.append(Change.of(ChangeKind.CROSS_CHECK_DIVERGENCE, diff.name,
                                   f"values written by the {witness.writer} revision read differently: "
                                   f"{witness.reason or witness.error}", versions, witness=witness))
    return found


def _split_released(changes: list[Change], unreleased: frozenset[int]) -> list[Change]:
    """Changes touching versions that never shipped are split off and marked ``released=False``."""
    if not unreleased:
        return changes
    out = []
    for change in changes:
        shipped = tuple(v for v in change.versions if v not in unreleased)
        pending = tuple(v for v in change.versions if v in unreleased)
        if shipped or not pending:
            out.append(replace(change, versions=shipped))
        if pending:
            out.append(replace(change, versions=pending, released=False))
    return out
