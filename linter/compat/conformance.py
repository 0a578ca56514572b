"""``krpc-lint conformance``: how a vendor's copy of the specs matches upstream's, per API and version.

The comparison is compat's (``compare.compare``) with upstream as the old revision and the vendor as the
new one, so messages pair by (type, apiKey), then by name, whatever the files are called, and every change
comes with compat's category and, for a wire break, its witness bytes (``old`` = upstream, ``new`` = vendor).
Each version the vendor declares then gets one verdict from the changes that touch it, the gravest first:

- ``diverges``: a wire break (``WIRE_BREAKING``), or nullability that differs (bytes one side may write, a
  null, the other cannot read);
- ``semantic``: the same layout, another default (``DEFAULT_CHANGED``);
- ``compatible``: a tagged field one side lacks (``tag-removed``, ``tagged-field-added``): each side reads the
  other's bytes, skipping an unknown tag;
- ``identical``: the same wire layout and defaults; source-only differences (names, about texts, listeners,
  stability markers) are listed as details;
- ``vendor-only``: a version (or a whole API) upstream lacks.

What the vendor leaves out (messages, versions below or above its range) is coverage, never a finding:
compat's ``message-removed``, ``version-dropped``, ``max-version-lowered`` become ``upstream_only_versions``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from linter.compat.change import Change
from linter.compat.changelog import Changelog
from linter.compat.compare import CompatResult, PairResult, compare
from linter.compat.kinds import ChangeKind
from linter.compat.revision import Revision
from linter.model.spec import MessageSpec
from linter.vocabulary import Category

IDENTICAL, COMPATIBLE, SEMANTIC, DIVERGES, VENDOR_ONLY = "identical", "compatible", "semantic", "diverges", "vendor-only"
#: Every verdict, in the order outputs list them (mildest first; ``vendor-only`` last, as it is coverage).
VERDICTS = (IDENTICAL, COMPATIBLE, SEMANTIC, DIVERGES, VENDOR_ONLY)
_GRAVITY = {IDENTICAL: 0, COMPATIBLE: 1, SEMANTIC: 2, DIVERGES: 3}

#: Kinds that say which versions or messages one side has: coverage (or a file name), not a verdict.
COVERAGE_KINDS = frozenset({
    ChangeKind.MESSAGE_ADDED, ChangeKind.MESSAGE_REMOVED, ChangeKind.API_REMOVED, ChangeKind.VERSION_ADDED,
    ChangeKind.VERSION_DROPPED, ChangeKind.MAX_VERSION_LOWERED, ChangeKind.HEADER_VERSIONS_CHANGED,
    ChangeKind.FILE_RENAMED,
})
_DIVERGING = frozenset({Category.WIRE_BREAKING, Category.NULLABILITY_WIDENED, Category.NULLABILITY_NARROWED})
_COMPATIBLE_KINDS = frozenset({ChangeKind.TAG_REMOVED, ChangeKind.TAGGED_FIELD_ADDED})


def verdict_of(change: Change) -> str | None:
    """The verdict one change gives the versions it touches; ``None`` for coverage."""
    if change.rule in COVERAGE_KINDS:
        return None
    if change.category in _DIVERGING:
        return DIVERGES
    if change.category == Category.DEFAULT_CHANGED:
        return SEMANTIC
    if change.rule in _COMPATIBLE_KINDS:
        return COMPATIBLE
    return IDENTICAL  # source-only, and the SAFE kinds that leave the bytes alone (stability, headerVersions)


@dataclass(frozen=True)
class VersionVerdict:
    version: int
    verdict: str
    details: tuple[Change, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "verdict": self.verdict, "details": [_detail(c) for c in self.details]}


def _detail(change: Change) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": change.rule.value, "category": change.category.value, "message": change.message}
    if change.witness is not None:
        out["witness"] = change.witness.to_dict()
    return out


@dataclass
class ApiConformance:
    """One message (a request, a response, a header or a record) as the vendor and upstream have it."""

    type: str | None
    api_key: int | None
    name: str
    vendor_file: str | None
    upstream_file: str | None
    versions: list[VersionVerdict] = field(default_factory=list)
    upstream_only_versions: list[int] = field(default_factory=list)  # newest first

    def counts(self) -> Counter[str]:
        return Counter(v.verdict for v in self.versions)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "api_key": self.api_key, "name": self.name, "vendor_file": self.vendor_file,
                "upstream_file": self.upstream_file, "versions": [v.to_dict() for v in self.versions],
                "upstream_only_versions": list(self.upstream_only_versions)}


@dataclass(frozen=True)
class ConformanceIssue:
    """A file or pair that could not be compared (lint says why in detail)."""

    file: str
    side: str  # "vendor" | "upstream"
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "side": self.side, "message": self.message}


@dataclass(frozen=True)
class Unclassified:
    """Upstream versions of an API that the manifest does not classify."""

    api: str
    api_key: int | None
    versions: tuple[int, ...]  # newest first
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"api": self.api, "api_key": self.api_key, "versions": list(self.versions), "reason": self.reason}


@dataclass
class Conformance:
    """The verdicts of a vendor's copy against upstream (``to_dict``: the stable JSON of docs/json-output.md)."""

    vendor: str
    upstream: str
    apis: list[ApiConformance]
    errors: list[ConformanceIssue] = field(default_factory=list)
    unclassified: list[Unclassified] = field(default_factory=list)
    since_upstream: Changelog | None = None

    def counts(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for api in self.apis:
            total.update(api.counts())
        return total

    def summary(self) -> dict[str, int]:
        counts = self.counts()
        return {"apis": len(self.apis),
                "vendor_only_apis": sum(1 for a in self.apis if a.upstream_file is None),
                "upstream_only_apis": sum(1 for a in self.apis if a.vendor_file is None),
                **{verdict: counts[verdict] for verdict in VERDICTS},
                "upstream_only_versions": sum(len(a.upstream_only_versions) for a in self.apis),
                "unclassified": sum(len(u.versions) for u in self.unclassified),
                "errors": len(self.errors)}

    def failures(self, fail_on: frozenset[str]) -> list[str]:
        """What makes the run fail under ``fail_on`` (verdicts, ``unclassified``, ``error``), said in words."""
        counts, found = self.counts(), []
        for verdict in VERDICTS:
            if verdict in fail_on and counts[verdict]:
                found.append(f"{counts[verdict]} {verdict} version(s)")
        if "unclassified" in fail_on and self.unclassified:
            found.append(f"{len(self.unclassified)} unclassified API(s)")
        if "error" in fail_on and self.errors:
            found.append(f"{len(self.errors)} file(s) that could not be compared")
        return found

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"vendor": self.vendor, "upstream": self.upstream,
                               "apis": [api.to_dict() for api in self.apis],
                               "unclassified": [u.to_dict() for u in self.unclassified],
                               "errors": [e.to_dict() for e in self.errors]}
        if self.since_upstream is not None:
            out["since_upstream"] = self.since_upstream.to_dict()
        out["summary"] = self.summary()
        return out


def conformance(vendor: Revision, upstream: Revision, *, witnesses: bool = True, seed: int = 0) -> Conformance:
    """Every version the vendor declares, judged against upstream; what upstream has beyond it, as coverage."""
    result = compare(upstream, vendor, witnesses=witnesses, seed=seed)
    return from_result(result)


def from_result(result: CompatResult) -> Conformance:
    """The conformance verdicts of a ``compare(upstream, vendor)`` result."""
    upstream, vendor = result.old, result.new
    apis, errors = [], _unreadable(vendor, upstream)
    for pair in result.pairs:
        if pair.error is not None:
            side, rel = ("vendor", pair.new_file) if pair.error_side == "new" else ("upstream", pair.old_file)
            shown = (vendor if side == "vendor" else upstream).display(rel or "?")
            errors.append(ConformanceIssue(shown, side, pair.error))
            continue
        api = _api(pair, vendor, upstream)
        if api.versions or api.upstream_only_versions:
            apis.append(api)
    apis.sort(key=lambda a: (a.api_key is None, a.api_key or 0, _TYPE_ORDER.get(a.type or "", 9), a.type or "",
                             a.name))
    return Conformance(vendor.label, upstream.label, apis, errors)


_TYPE_ORDER = {"request": 0, "response": 1}


def _unreadable(vendor: Revision, upstream: Revision) -> list[ConformanceIssue]:
    return [ConformanceIssue(revision.display(rel), side, why)
            for side, revision in (("vendor", vendor), ("upstream", upstream))
            for rel, why in revision.unreadable().items()]


def _versions(message: MessageSpec | None) -> list[int]:
    return [] if message is None or message.versions is None else list(message.versions)


def _api(pair: PairResult, vendor: Revision, upstream: Revision) -> ApiConformance:
    theirs, ours = pair.old, pair.new
    known = ours or theirs
    assert known is not None  # a pair has at least one message
    upstream_versions, vendor_versions = set(_versions(theirs)), _versions(ours)
    touching: dict[int, list[tuple[str, Change]]] = {}
    for change in pair.changes:
        verdict = verdict_of(change)
        if verdict is not None:
            for version in change.versions:
                touching.setdefault(version, []).append((verdict, change))
    judged = []
    for version in vendor_versions:
        found = touching.get(version, [])
        if version not in upstream_versions:
            breaks = tuple(c for v, c in found if v == DIVERGES)  # a vendor version reusing what upstream reserves
            judged.append(VersionVerdict(version, DIVERGES if breaks else VENDOR_ONLY, breaks))
            continue
        verdict = max((v for v, _ in found), key=_GRAVITY.__getitem__, default=IDENTICAL)
        judged.append(VersionVerdict(version, verdict, tuple(c for _, c in found)))
    return ApiConformance(
        known.type, known.api_key, known.name or "?",
        vendor.display(pair.new_file) if pair.new_file is not None and ours is not None else None,
        upstream.display(pair.old_file) if pair.old_file is not None and theirs is not None else None,
        judged, sorted(upstream_versions - set(vendor_versions), reverse=True))
