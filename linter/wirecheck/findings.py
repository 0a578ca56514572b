"""The findings of ``frames check`` and the collector that builds its report, in this process or per Spark task.

A frame's deviations (``linter.wirecheck.reader.Deviation``) become findings through the rules selected for the run
(``check: {wire: NAME}``: id, name, severity after the config); a baseline leaves out the kinds of finding it
records; every finding is counted (the summary per sender and API, the exit code), and the first ``MAX_KEPT`` are
kept with their witness, so a capture of millions of frames with one systematic deviation stays a short report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from linter.engine.findings import SEVERITY_ORDER
from linter.frames.corpus import REQUEST
from linter.wirecheck.reader import Deviation

if TYPE_CHECKING:
    from linter.engine.config import Config
    from linter.engine.rules import RuleSet

MAX_KEPT = 10_000  # findings kept with their witness; the rest are counted
MAX_KINDS = 100_000  # kinds of finding remembered for --write-baseline (traffic from anywhere may hold many)
MAX_GROUPS = 10_000  # summary rows (sender x API x version); past them, one row (OTHERS) counts the rest
OTHERS = ("(other senders and APIs)", "?", -1, -1)  # the summary row of every frame past MAX_GROUPS rows
MAX_UNREADABLE = 20  # rows that are no frame, kept with their reason; the rest are counted


class RuleRef(NamedTuple):
    """What a finding says of its rule (a ``Rule`` less its docs: small, and shipped to Spark tasks)."""

    id: str
    name: str
    severity: str
    category: str


def selection(config: Config) -> dict[str, RuleRef]:
    """The wire rules the config selects, by the deviation each names, with their effective severity."""
    from linter.engine.runner import select_rules

    return wire_rules(select_rules(config))


def wire_rules(ruleset: RuleSet) -> dict[str, RuleRef]:
    """The wire rules of a selection, by the deviation each names, with their effective severity."""
    return {rule.check["wire"]: RuleRef(rule.id, rule.name, ruleset.severity_of(rule), rule.category)
            for rule in ruleset.of_scope("wire")}


@dataclass(frozen=True, slots=True)
class Seen:
    """A frame and where it was seen: its input, its 0-based row there, and what the capture says of it."""

    input: str
    frame: int
    direction: str | None = None
    api_key: int | None = None
    api_version: int | None = None
    correlation_id: int | None = None
    connection: str | None = None
    ts: float | None = None
    client_id: str | None = None
    software_name: str | None = None
    software_version: str | None = None
    offset: int | None = None  # of its row in a JSON Lines input

    @property
    def sender(self) -> str:
        """Who wrote the frame: a client by its software (ApiVersions v3+) or client id, a broker by its address.

        >>> Seen("c.pcap", 0, "request", software_name="kafka-python", software_version="3.0.12").sender
        'kafka-python 3.0.12'
        >>> Seen("c.pcap", 1, "response", connection="127.0.0.1:50000 > 127.0.0.1:9092").sender
        'broker 127.0.0.1:9092'
        """
        if self.direction == REQUEST:
            if self.software_name:
                return f"{self.software_name} {self.software_version or ''}".rstrip()
            return f'client id "{self.client_id}"' if self.client_id is not None else "client"
        broker = self.connection.rpartition(" > ")[2] if self.connection else ""
        return f"broker {broker}".rstrip()


@dataclass(frozen=True, slots=True)
class WireFinding:
    """One deviation of one frame, under its rule."""

    rule: RuleRef
    seen: Seen
    offset: int  # in the frame, its size prefix included
    field: str
    message: str
    found: bytes
    expected: bytes | None

    @property
    def baseline_key(self) -> tuple[Any, ...]:
        """What a baseline records of a finding: the kind of deviation, not the frame (traffic never repeats)."""
        seen = self.seen
        return (self.rule.id, seen.direction, seen.api_key, seen.api_version, without_indices(self.field),
                seen.software_name if seen.direction == REQUEST else None)


def without_indices(path: str) -> str:
    """A field path with its array indices dropped: one baseline entry for every element.

    >>> without_indices("body.Topics[12].Partitions[0].Index")
    'body.Topics[].Partitions[].Index'
    """
    out, skipping = [], False
    for char in path:
        if char == "[":
            skipping = True
            out.append("[]")
        elif char == "]":
            skipping = False
        elif not skipping:
            out.append(char)
    return "".join(out)


SummaryKey = tuple[str, str, int, int]  # sender, direction, API key, API version


@dataclass
class Group:
    """The frames of one sender and (direction, API, version): how many, how many clean, findings by rule."""

    frames: int = 0
    clean: int = 0
    rules: Counter[str] = field(default_factory=Counter)


@dataclass
class Collector:
    """A run's report, built frame by frame; collectors of several Spark tasks merge into one."""

    rules: dict[str, RuleRef]  # by deviation name: the selected rules
    baseline: frozenset[tuple[Any, ...]] = frozenset()
    findings: list[WireFinding] = field(default_factory=list)
    severities: Counter[str] = field(default_factory=Counter)  # every finding reported, by severity
    groups: dict[SummaryKey, Group] = field(default_factory=dict)
    frames: int = 0
    baselined: int = 0
    unreadable: list[tuple[str, int, str]] = field(default_factory=list)  # (input, row, reason), the first ones
    unreadable_count: int = 0
    names: dict[int, str] = field(default_factory=dict)  # API names by key, for the summary
    unexplained: int = 0  # frames not canonical that the walk found nothing in (a disagreement: should stay 0)
    unlisted: int = 0  # deviations past the first 100 of a frame (reader.MAX_NOTED): counted here only
    kinds: set[tuple[Any, ...]] = field(default_factory=set)  # baseline keys of the findings reported

    def add(self, seen: Seen, deviations: list[Deviation]) -> None:
        """One frame checked."""
        self.frames += 1
        reported = 0
        group = self._group(seen)
        for deviation in deviations:
            rule = self.rules.get(deviation.check)
            if rule is None:
                continue
            finding = WireFinding(rule, seen, deviation.offset, deviation.path, deviation.message, deviation.found,
                                  deviation.expected)
            key = finding.baseline_key
            if len(self.kinds) < MAX_KINDS:  # baselined or not: --write-baseline records every kind of the run
                self.kinds.add(key)
            if self.baseline and key in self.baseline:
                self.baselined += 1
                continue
            reported += 1
            self.severities[rule.severity] += 1
            if len(self.findings) < MAX_KEPT:
                self.findings.append(finding)
            group.rules[rule.id] += 1
        group.frames += 1
        group.clean += reported == 0

    def _group(self, seen: Seen) -> Group:
        key = (seen.sender, seen.direction or "?", -1 if seen.api_key is None else seen.api_key,
               -1 if seen.api_version is None else seen.api_version)
        group = self.groups.get(key)
        if group is None:
            if len(self.groups) >= MAX_GROUPS:  # client ids and keys come from the wire: one row for the rest
                key = OTHERS
                group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = Group()
        return group

    def not_a_frame(self, seen: Seen, reason: str) -> None:
        """A row that is no frame at all (a corrupt JSON line, a response row without its request's API)."""
        self.unreadable_count += 1
        if len(self.unreadable) < MAX_UNREADABLE:
            self.unreadable.append((seen.input, seen.frame, reason))

    def merge(self, other: Collector) -> None:
        """Another task's collector into this one (the driver of a Spark run)."""
        self.findings.extend(other.findings[:max(0, MAX_KEPT - len(self.findings))])
        self.severities.update(other.severities)
        for key, group in other.groups.items():
            if key not in self.groups and len(self.groups) >= MAX_GROUPS:
                key = OTHERS
            mine = self.groups.setdefault(key, Group())
            mine.frames += group.frames
            mine.clean += group.clean
            mine.rules.update(group.rules)
        self.frames += other.frames
        self.baselined += other.baselined
        self.unreadable.extend(other.unreadable[:max(0, MAX_UNREADABLE - len(self.unreadable))])
        self.unreadable_count += other.unreadable_count
        self.names.update(other.names)
        self.unexplained += other.unexplained
        self.unlisted += other.unlisted
        self.kinds.update(list(other.kinds)[:max(0, MAX_KINDS - len(self.kinds))])

    @property
    def reported(self) -> int:
        return sum(self.severities.values())

    def failed(self, level: str | None) -> bool:
        """Whether a finding reaches ``level`` (``none``/``None``: never)."""
        if level is None or level == "none":
            return False
        floor = SEVERITY_ORDER[level]
        return any(SEVERITY_ORDER[severity] >= floor and count for severity, count in self.severities.items())


__all__ = ["MAX_KEPT", "Collector", "Group", "RuleRef", "Seen", "WireFinding", "selection", "wire_rules",
           "without_indices"]
