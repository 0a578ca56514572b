"""The version matrix of spec revisions: what each release offers of every API, and what peers agree on.

Two Kafka peers of different releases talk when, for each API, their version ranges overlap: the
client learns the broker's range from ApiVersions (KIP-35) and uses the highest version both
support. During a rolling upgrade old and new nodes run side by side, so an API whose ranges do
not overlap breaks the cluster; an API one side lacks is simply not offered (shown, not an error).
KRaft controllers of different releases also replay each other's metadata records, so those get
the same table.

Revisions are given oldest first (the order of an upgrade): names come from the newest revision,
and the pairwise columns follow adjacent revisions (A->B, B->C). A ``latestVersionUnstable``
version is only advertised when ``unstable.api.versions.enable`` is set, so it is left out of the
ranges unless ``include_unstable`` is given.

``Matrix.to_dict()`` is JSON-able, with camelCase keys like the specs' own (``apiKey``)::

    revisions        labels, oldest first
    includeUnstable  whether unstable top versions count as offered
    apis, records    rows (records: type "metadata"; an empty list when not asked for)
    coordinatorRecords  rows of coordinator records by record type (kind "coordinator", the value's
                     versions; pre-4.1 ``data`` records are keyed by their key's version, KAFKA-18301)
    problems         [{kind: "api"|"record", apiKey, name, group}]: rows with no common version
    skipped          [{revision, path, reason}]: files left out (unreadable, bad validVersions,
                     duplicate apiKey), whose API may wrongly look missing because of it

    a row: apiKey, name, kind ("api"|"record"), group (records: the spec's directory, one apiKey
    space per directory; APIs: null), versions ({label: null when absent, else {name, path,
    versions, lowest, highest, unstable, removed}}), overlap (the common range of the revisions that offer
    it, "none" when disjoint, null when fewer than two offer it), negotiated (the highest common
    version or null), noCommon, missing (labels without it), leftOut (those of ``missing`` where a
    skipped file bears its name: missing only because the file was left out), notOffered (labels that have it but
    advertise nothing, e.g. only an unstable version), steps ([{from, to, overlap, negotiated}]
    per adjacent pair), flags (the texts of the flag column)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from linter.compat.diff import is_key_record
from linter.compat.revision import Revision
from linter.escape import (
    guard_lines,
    json_text,
    markdown_code,
    markdown_text,
    printable,
)
from linter.model.spec import MessageSpec
from linter.model.versions import NONE, Versions

NO_COMMON = "NO COMMON VERSION"
_ABSENT = "-"


@dataclass(frozen=True)
class Support:
    """What one revision offers of one API or record: the versions a default peer advertises."""

    name: str
    path: str
    versions: Versions  # offered; empty when nothing is (e.g. an unstable-only version left out)
    unstable: int | None = None  # the version marked ``latestVersionUnstable``, if any
    removed: bool = False  # ``"validVersions": "none"``: the API was removed, its apiKey stays reserved

    @property
    def offered(self) -> bool:
        """Whether a default peer advertises any version of it."""
        return not self.versions.empty

    @property
    def unstable_excluded(self) -> bool:
        """Whether its ``latestVersionUnstable`` version was left out of the offered range."""
        return self.unstable is not None and not self.versions.contains(self.unstable)

    def __str__(self) -> str:
        """``0-11 (+12 unstable)`` when left out, ``0-12 (12 unstable)`` when kept, ``removed``, else the range."""
        if self.removed:
            return "removed"
        if self.unstable is None:
            return str(self.versions)
        if self.unstable_excluded:
            return f"{self.versions} (+{self.unstable} unstable)"
        return f"{self.versions} ({self.unstable} unstable)"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: name, path, offered range, lowest and highest, the unstable version."""
        offered = self.offered
        return {
            "name": self.name,
            "path": self.path,
            "versions": str(self.versions),
            "lowest": self.versions.lowest if offered else None,
            "highest": self.versions.highest if offered else None,
            "unstable": self.unstable,
            "removed": self.removed,
        }


@dataclass(frozen=True)
class Step:
    """Peers of two adjacent revisions side by side, as during one rolling upgrade."""

    old: str
    new: str
    overlap: Versions | None  # None when either side does not offer the API

    @property
    def negotiated(self) -> int | None:
        """The highest version both sides offer, or None."""
        return _highest(self.overlap)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: from, to, overlap, negotiated."""
        return {"from": self.old, "to": self.new, "overlap": _range(self.overlap), "negotiated": self.negotiated}


@dataclass(frozen=True)
class Row:
    """One API (request apiKey) or metadata record across every revision."""

    api_key: int
    name: str
    cells: tuple[tuple[str, Support | None], ...]  # (label, support) per revision, oldest first
    kind: str = "api"  # "api" | "record" (metadata) | "coordinator" (coordinator records)
    group: str | None = None  # records: the spec's directory (its own apiKey space)
    left_out: tuple[str, ...] = ()  # of ``missing``: where a file of its name was skipped (``Matrix.skipped``)

    def support(self, label: str) -> Support | None:
        """What the revision labelled ``label`` offers; None when it lacks the API."""
        return dict(self.cells)[label]

    @property
    def missing(self) -> tuple[str, ...]:
        """Revisions without it: their peers never offer it (not an error)."""
        return tuple(label for label, support in self.cells if support is None)

    @property
    def not_offered(self) -> tuple[str, ...]:
        """Revisions that define it but advertise no version (only an unstable one, by default)."""
        return tuple(label for label, support in self.cells if support is not None and not support.offered)

    @property
    def overlap(self) -> Versions | None:
        """Common range of the revisions that offer it: only those can negotiate. None with fewer than two."""
        offered = [support.versions for _, support in self.cells if support is not None and support.offered]
        if len(offered) < 2:
            return None
        common = offered[0]
        for versions in offered[1:]:
            common = common.intersect(versions)
        return common

    @property
    def negotiated(self) -> int | None:
        """The highest common version: what ApiVersions negotiation picks."""
        return _highest(self.overlap)

    @property
    def no_common(self) -> bool:
        """Offered by two or more revisions whose ranges do not meet: mixed peers cannot talk."""
        overlap = self.overlap
        return overlap is not None and overlap.empty

    @property
    def steps(self) -> tuple[Step, ...]:
        """Each adjacent pair (A->B, B->C): the path a rolling upgrade goes through."""
        return tuple(_step(a, b) for a, b in zip(self.cells, self.cells[1:]))

    @property
    def flags(self) -> tuple[str, ...]:
        """The flag column: no common version, then where it is missing or not offered."""
        flags = [NO_COMMON] if self.no_common else []
        missing = [label for label in self.missing if label not in self.left_out]
        if missing:
            flags.append(f"missing in {', '.join(missing)}")
        if self.left_out:
            flags.append(f"missing in {', '.join(self.left_out)} (its file was left out)")
        unstable = [label for label, s in self.cells if s is not None and not s.offered and s.unstable_excluded]
        if unstable:
            flags.append(f"unstable only in {', '.join(unstable)}")
        removed = [label for label, s in self.cells if s is not None and s.removed]
        if removed:
            flags.append(f"removed in {', '.join(removed)} (apiKey reserved)")
        empty = [label for label in self.not_offered if label not in unstable and label not in removed]
        if empty:
            flags.append(f"no versions in {', '.join(empty)}")
        return tuple(flags)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able; the keys are documented in the module docstring."""
        return {
            "apiKey": self.api_key,
            "name": self.name,
            "kind": self.kind,
            "group": self.group,
            "versions": {label: None if s is None else s.to_dict() for label, s in self.cells},
            "overlap": _range(self.overlap),
            "negotiated": self.negotiated,
            "noCommon": self.no_common,
            "missing": list(self.missing),
            "leftOut": list(self.left_out),
            "notOffered": list(self.not_offered),
            "steps": [step.to_dict() for step in self.steps],
            "flags": list(self.flags),
        }


@dataclass(frozen=True)
class Skipped:
    """A spec file left out of the matrix and why: its API may look missing because of it."""

    revision: str
    path: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: revision, path, reason."""
        return {"revision": self.revision, "path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class Matrix:
    """Every API (and optionally metadata record) of the revisions, with overlaps and flags."""

    labels: tuple[str, ...]
    apis: tuple[Row, ...]
    records: tuple[Row, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    include_unstable: bool = False
    coordinator: tuple[Row, ...] = ()  # coordinator records by record type, with their value versions

    @property
    def problems(self) -> tuple[Row, ...]:
        """Rows with no common version (APIs, then records): a CLI exits 1 when there are any."""
        return tuple(row for row in (*self.apis, *self.records, *self.coordinator) if row.no_common)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able; the keys are documented in the module docstring."""
        return {
            "revisions": list(self.labels),
            "includeUnstable": self.include_unstable,
            "apis": [row.to_dict() for row in self.apis],
            "records": [row.to_dict() for row in self.records],
            "coordinatorRecords": [row.to_dict() for row in self.coordinator],
            "problems": [
                {"kind": row.kind, "apiKey": row.api_key, "name": row.name, "group": row.group}
                for row in self.problems
            ],
            "skipped": [skip.to_dict() for skip in self.skipped],
        }

    def to_json(self) -> str:
        """``to_dict()`` as indented JSON (``krpc-lint matrix --format json``), escaped as ``json_text``."""
        return json_text(self.to_dict())

    def to_markdown(self) -> str:
        """Markdown: one table for the APIs, one per record directory, then problems and skipped files. Names,
        labels, directories and paths are ``markdown_text`` (or code spans): none breaks a table or adds Markdown."""
        parts = []
        for title, header, rows in self._sections("→"):
            parts.append(f"## {markdown_text(title)}\n\n{_markdown_table(header, [self._cells(row) for row in rows])}")
        parts.append(self._summary(markdown_code, "- ", "\n\n", markdown_text))
        return guard_lines("\n\n".join(parts) + "\n")

    def to_text(self) -> str:
        """Plain aligned columns for a terminal: deterministic, no colours, no wrapping.

        >>> from linter import matrix
        >>> table = matrix(["fixtures/compat/KL1042-message-removed/old", "fixtures/compat/KL1042-message-removed/new"])
        >>> table.to_text().splitlines()[-1]
        '1 APIs, 0 metadata records, 0 without a common version'
        >>> table.apis[0].flags
        ('missing in fixtures/compat/KL1042-message-removed/new',)
        """
        parts = []
        for title, header, rows in self._sections("->"):
            cells = [[printable(cell) for cell in self._cells(row)] for row in rows]
            parts.append(f"{printable(title)}\n{_text_table([printable(cell) for cell in header], cells)}")
        parts.append(self._summary(printable, "  ", "\n", printable))
        return guard_lines("\n\n".join(parts) + "\n")

    def _sections(self, arrow: str) -> list[tuple[str, list[str], tuple[Row, ...]]]:
        """(title, header, rows): the APIs, then the records of each directory."""
        sections = [("APIs", self._header("API", "negotiated", arrow), self.apis)]
        for group in dict.fromkeys(row.group for row in self.records):
            rows = tuple(row for row in self.records if row.group == group)
            sections.append((f"Metadata records ({group})", self._header("record", "highest common", arrow), rows))
        for group in dict.fromkeys(row.group for row in self.coordinator):
            rows = tuple(row for row in self.coordinator if row.group == group)
            sections.append((f"Coordinator records ({group}): value versions by record type",
                             self._header("record", "highest common", arrow), rows))
        return sections

    def _header(self, what: str, negotiated: str, arrow: str) -> list[str]:
        return [what, "apiKey", *self.labels, "overlap", negotiated, *self._step_names(arrow), "flags"]

    @property
    def _pairwise(self) -> bool:
        """Pairwise columns only with three or more revisions: with two they repeat the overlap."""
        return len(self.labels) >= 3

    def _step_names(self, arrow: str) -> list[str]:
        if not self._pairwise:
            return []
        return [f"{a}{arrow}{b}" for a, b in zip(self.labels, self.labels[1:])]

    def _cells(self, row: Row) -> list[str]:
        steps = [_version(step.overlap, step.negotiated) for step in row.steps] if self._pairwise else []
        return [
            row.name,
            str(row.api_key),
            *(_ABSENT if support is None else str(support) for _, support in row.cells),
            _range(row.overlap) or _ABSENT,
            _version(row.overlap, row.negotiated),
            *steps,
            "; ".join(row.flags),
        ]

    def _summary(self, code: Callable[[str], str], bullet: str, gap: str, text: Callable[[str], str]) -> str:
        """Counts, then the files left out (so a 'missing' caused by an unreadable file is explained); ``code`` and
        ``text`` escape a path and other text from the input for the format."""
        counts = f"{len(self.apis)} APIs, {len(self.records)} metadata records"
        if self.coordinator:
            counts += f", {len(self.coordinator)} coordinator records"
        summary = f"{counts}, {len(self.problems)} without a common version"
        if not self.skipped:
            return summary
        files = [f"{bullet}{text(skip.revision)}: {code(skip.path)}: {text(skip.reason)}" for skip in self.skipped]
        return f"{summary}{gap}Files left out of the matrix:{gap}" + "\n".join(files)


def matrix(revisions: Sequence[Revision], *, include_unstable: bool = False, records: bool = True) -> Matrix:
    """The version matrix of ``revisions`` (oldest first); ``records`` adds the metadata records."""
    labels = _labels(revisions)
    skipped = [Skipped(rev.label, path, reason) for rev in revisions for path, reason in rev.unreadable().items()]
    api_rows = _rows(revisions, "request", include_unstable, skipped)
    record_rows = _rows(revisions, "metadata", include_unstable, skipped) if records else ()
    coordinator_rows = _rows(revisions, "coordinator-value", include_unstable, skipped) if records else ()
    return Matrix(labels, api_rows, record_rows, tuple(skipped), include_unstable, coordinator_rows)


def _labels(revisions: Sequence[Revision]) -> tuple[str, ...]:
    """The column names; they key the JSON, so they must be distinct."""
    labels = tuple(rev.label for rev in revisions)
    if not labels:
        raise ValueError("a matrix needs at least one revision")
    if len(set(labels)) != len(labels):
        raise ValueError(f"revision labels must be distinct: {', '.join(labels)}")
    return labels


_Key = tuple[str, int]  # (group, apiKey); the group is "" for APIs (one global apiKey space)


def _rows(revisions: Sequence[Revision], kind: str, include_unstable: bool, skipped: list[Skipped]) -> tuple[Row, ...]:
    """One row per key found in any revision, sorted by group then apiKey."""
    indexes = [_index(rev, kind, include_unstable, skipped) for rev in revisions]
    keys = sorted({key for index in indexes for key in index})
    rows = []
    for key in keys:
        cells = [(rev.label, index.get(key)) for rev, index in zip(revisions, indexes)]
        rows.append(_row(key, kind, cells, _left_out(key, kind, cells, skipped)))
    return tuple(rows)


def _row(key: _Key, kind: str, cells: list[tuple[str, Support | None]], left_out: tuple[str, ...]) -> Row:
    """Named by the newest revision that has it, so a renamed API shows its current name."""
    newest = next(support for _, support in reversed(cells) if support is not None)
    if kind == "request":
        return Row(key[1], _api_name(newest.name), tuple(cells), left_out=left_out)
    if kind == "coordinator-value":
        return Row(key[1], newest.name.removesuffix("Value") or newest.name, tuple(cells), kind="coordinator",
                   group=key[0], left_out=left_out)
    return Row(key[1], newest.name, tuple(cells), kind="record", group=key[0], left_out=left_out)


def _left_out(key: _Key, kind: str, cells: list[tuple[str, Support | None]], skipped: list[Skipped]) -> tuple[str, ...]:
    """Revisions lacking the row where a skipped file bears its name (Kafka names files after messages).

    This is why it looks missing there, e.g. 2.8.0's DescribeProducersRequest.json, which has a
    stray ``]`` after its object.
    """
    names = {support.name for _, support in cells if support is not None}
    absent = {label for label, support in cells if support is None}
    found = []
    for skip in skipped:
        path = PurePosixPath(skip.path)
        in_group = kind == "request" or str(path.parent) == key[0]
        if skip.revision in absent and path.stem in names and in_group and skip.revision not in found:
            found.append(skip.revision)
    return tuple(label for label, _ in cells if label in found)


def _index(revision: Revision, kind: str, include_unstable: bool, skipped: list[Skipped]) -> dict[_Key, Support]:
    """The messages of ``kind`` by key; unusable ones go to ``skipped`` rather than vanish silently."""
    index: dict[_Key, Support] = {}
    types = record_types(revision) if kind == "coordinator-value" else {}
    for path, message in revision.messages.items():
        api_keys = types.get(path, (message.api_key,) if message.type == kind and message.api_key is not None else ())
        for api_key in api_keys:
            key = (str(PurePosixPath(path).parent) if kind != "request" else "", api_key)
            if message.versions is None:
                skipped.append(Skipped(revision.label, path, "validVersions is missing or invalid"))
            elif key in index and path in types:
                continue  # two pre-4.1 coordinator logs shared a directory (2.8's core/): the first keeps the type
            elif key in index:
                skipped.append(Skipped(revision.label, path, f"apiKey {key[1]} is also used by {index[key].path}"))
            else:
                index[key] = _support(path, message, include_unstable)
    return index


def _support(path: str, message: MessageSpec, include_unstable: bool) -> Support:
    """The advertised range: without its unstable top version unless asked (as a default Kafka peer)."""
    declared = message.versions or NONE
    unstable = declared.highest if message.latest_version_unstable and not declared.empty else None
    offered = declared if include_unstable or unstable is None else Versions(declared.lowest, declared.highest - 1)
    return Support(message.name or "", path, NONE if offered.empty else offered, unstable, message.removed)


_MAX_TYPES = 16  # record types one pre-4.1 key may stand for (Kafka's most: OffsetCommitKey, 2); more is no key record


def record_types(revision: Revision) -> dict[str, tuple[int, ...]]:
    """Pre-4.1 coordinator records (``data`` specs): value file -> record types, which were the versions
    of the ``*Key`` of the same name in the same directory (``OffsetCommitKey`` "0-1": types 0 and 1)."""
    values = {(str(PurePosixPath(path).parent), m.name): path for path, m in revision.messages.items()
              if m.type == "data" and m.api_key is None and (m.name or "").endswith("Value")}
    types = {}
    for path, message in revision.messages.items():
        if is_key_record(message) and message.versions is not None \
                and 0 < len(range(message.versions.lowest, message.versions.highest + 1)) <= _MAX_TYPES:
            value = values.get((str(PurePosixPath(path).parent), (message.name or "")[:-3] + "Value"))
            if value is not None:
                types[value] = tuple(message.versions)
    return types


def _api_name(name: str) -> str:
    return name.removesuffix("Request") or name


def _step(a: tuple[str, Support | None], b: tuple[str, Support | None]) -> Step:
    (old, sa), (new, sb) = a, b
    if sa is None or sb is None or not sa.offered or not sb.offered:
        return Step(old, new, None)
    return Step(old, new, sa.versions.intersect(sb.versions))


def _highest(overlap: Versions | None) -> int | None:
    return None if overlap is None or overlap.empty else overlap.highest


def _range(versions: Versions | None) -> str | None:
    return None if versions is None else str(versions)


def _version(overlap: Versions | None, negotiated: int | None) -> str:
    """A negotiated version for a table: the number, ``none`` when disjoint, ``-`` when not applicable."""
    if overlap is None:
        return _ABSENT
    return "none" if negotiated is None else str(negotiated)


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = [_markdown_line(header), "|" + "|".join(" --- " for _ in header) + "|"]
    return "\n".join(lines + [_markdown_line(row) for row in rows])


def _markdown_line(cells: list[str]) -> str:
    return "| " + " | ".join(markdown_text(cell) for cell in cells) + " |"


def _text_table(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns two spaces apart, apiKey (column 2) right-aligned; no trailing spaces."""
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    rule = ["-" * width for width in widths]
    out = []
    for line in [header, rule, *rows]:
        cells = [cell.rjust(w) if i == 1 else cell.ljust(w) for i, (cell, w) in enumerate(zip(line, widths))]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)
