"""A protocol changelog between two revisions: per API, what a client must implement.

For every API (request and response together, by apiKey) and every record type: the version
ranges before and after, what each *new* version changes relative to the one below it (fields
added or removed, tagged fields, nullability, flexible encoding), and every change to versions
both revisions share (wire breaks, nullability, defaults, renames), from ``compare``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from linter.compat.change import version_ranges
from linter.compat.compare import CompatResult, PairResult, compare
from linter.compat.diff import MessageDiff
from linter.compat.kinds import ChangeKind
from linter.compat.layout import LayoutBuilder, LayoutError
from linter.compat.revision import Revision
from linter.escape import guard_lines, json_safe, markdown_text
from linter.model.spec import COORDINATOR_TYPES, MessageSpec
from linter.vocabulary import Category

# How the evolution inside the new revision (version v-1 -> v) reads in a changelog.
_EVOLUTION = {
    ChangeKind.FIELD_INSERTED: "added", ChangeKind.FIELD_REMOVED: "removed", ChangeKind.FIELD_RETYPED: "retyped",
    ChangeKind.TAGGED_FIELD_ADDED: "new tagged field", ChangeKind.TAG_REMOVED: "tagged field removed",
    ChangeKind.TAGGED_FIELD_RETYPED: "tagged field retyped", ChangeKind.FIELD_MADE_TAGGED: "now tagged",
    ChangeKind.FIELD_MADE_REGULAR: "no longer tagged", ChangeKind.NULLABILITY_WIDENED: "now nullable",
    ChangeKind.NULLABILITY_NARROWED: "no longer nullable", ChangeKind.STRUCT_NULLABILITY_CHANGED: "struct nullability",
    ChangeKind.FLEXIBLE_VERSIONS_CHANGED: "encoding", ChangeKind.FIELDS_REORDERED: "reordered",
}
GroupKey = tuple[str | int | None, ...]  # ("api", apiKey), ("record", kind, name) or ("other", name)
_NEW_VERSIONS = (ChangeKind.VERSION_ADDED, ChangeKind.MESSAGE_ADDED)  # what brings versions the changelog lists


@dataclass
class MessageLog:
    """The changelog of one message (a request, a response or a record)."""

    name: str
    type: str | None
    old_versions: str | None
    new_versions: str | None
    new_version_notes: dict[int, list[str]] = field(default_factory=dict)
    changes: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: the version ranges, the notes per new version and the shared-version changes."""
        return {"name": self.name, "type": self.type, "old_versions": self.old_versions,
                "new_versions": self.new_versions,
                "new_versions_notes": {str(k): v for k, v in sorted(self.new_version_notes.items())},
                "changes": self.changes}


@dataclass
class ApiLog:
    """A request with its response (``key`` is the apiKey), or one record type."""

    title: str
    key: int | None
    kind: str  # "api" | "record" | "other"
    messages: list[MessageLog] = field(default_factory=list)
    key_label: str = "apiKey"  # what ``key`` is: coordinator records call it the record type

    @property
    def status(self) -> str:
        """added, removed, changed or unchanged (unchanged entries are left out of a changelog)."""
        if all(m.old_versions is None for m in self.messages):
            return "added"
        if all(m.new_versions in (None, "none") for m in self.messages) \
                and any(m.old_versions not in (None, "none") for m in self.messages):
            return "removed"
        return "changed" if any(m.changes or m.new_version_notes for m in self.messages) else "unchanged"


@dataclass
class Changelog:
    """The changelog between two revisions: one entry per changed API or record type, APIs first.

    >>> from linter import changelog
    >>> log = changelog("fixtures/compat/demo/old", "fixtures/compat/demo/new")
    >>> print(log.to_markdown().splitlines()[0])
    # Kafka protocol changelog: fixtures/compat/demo/old → fixtures/compat/demo/new
    """

    old_label: str
    new_label: str
    entries: list[ApiLog]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: the labels and the entries with their status and messages."""
        return {"old": self.old_label, "new": self.new_label,
                "entries": [{"title": e.title, "key": e.key, "kind": e.kind, "status": e.status,
                             "messages": [m.to_dict() for m in e.messages]} for e in self.entries]}

    def to_json(self) -> str:
        """``to_dict()`` as indented JSON (``krpc-lint changelog --format json``; ``##[`` and DEL escaped)."""
        return json_safe(json.dumps(self.to_dict(), indent=2)) + "\n"

    def to_markdown(self) -> str:
        """The Markdown changelog (``krpc-lint changelog``): a summary table, then one section per entry. Every
        name, label and message from the specs is ``markdown_text``: one line, no Markdown or HTML of its own."""
        return guard_lines("\n".join(_markdown(self)) + "\n")


def changelog(old: Revision, new: Revision, result: CompatResult | None = None) -> Changelog:
    """The changelog from ``old`` to ``new`` (reusing a ``compare`` result when given)."""
    result = result or compare(old, new, witnesses=False, cross_check=0)
    groups: dict[GroupKey, ApiLog] = {}
    for pair in result.pairs:
        message = pair.message
        key, title, kind = _group(message)
        label = "record type" if key[:2] == ("record", "coordinator") else "apiKey"
        entry = groups.setdefault(key, ApiLog(title, message.api_key, kind, key_label=label))
        if entry.key is None:
            entry.key = message.api_key  # a pre-4.1 record has none; its converted form does
        entry.messages.append(_message_log(pair))
    ordered = sorted(groups.values(), key=lambda e: ({"api": 0, "record": 1}.get(e.kind, 2), e.key or 0, e.title))
    for entry in ordered:
        entry.messages.sort(key=lambda m: {"request": 0, "response": 1}.get(m.type or "", 2))
    return Changelog(old.label, new.label, [e for e in ordered if e.status != "unchanged"])


def _group(message: MessageSpec) -> tuple[GroupKey, str, str]:
    name = message.name or "?"
    if message.type in ("request", "response") and message.api_key is not None:
        base = name.removesuffix("Request").removesuffix("Response")
        return ("api", message.api_key), base, "api"
    stem = name.removesuffix("Key").removesuffix("Value")
    if message.type in COORDINATOR_TYPES or (message.type == "data" and stem != name):
        # a coordinator record's key and value together, in either format (KAFKA-18301)
        return ("record", "coordinator", stem), f"{stem} coordinator record", "record"
    if message.type in ("metadata", "data"):
        return ("record", message.type, name), name, "record"
    return ("other", name), name, "other"


def _message_log(pair: PairResult) -> MessageLog:
    message = pair.message
    log = MessageLog(message.name or "?", message.type,
                     str(pair.old.versions) if pair.old is not None and pair.old.versions else None,
                     str(pair.new.versions) if pair.new is not None and pair.new.versions else None)
    if pair.error:
        log.changes.append({"category": Category.ERROR, "rule": ChangeKind.COMPAT_INPUT_INVALID, "versions": [],
                            "message": pair.error})
        return log
    new_versions = {v for c in pair.changes if c.rule in _NEW_VERSIONS for v in c.versions}
    if pair.new is not None:
        log.new_version_notes = _evolution(pair.new, sorted(new_versions))
    for change in pair.changes:
        if change.category == Category.SAFE and change.rule in _NEW_VERSIONS:
            continue
        log.changes.append({"category": change.category, "rule": change.rule, "versions": list(change.versions),
                            "released": change.released, "message": change.message})
    return log


def _evolution(message: MessageSpec, versions: list[int]) -> dict[int, list[str]]:
    """What each new version changes relative to the version below it, within the new revision."""
    notes: dict[int, list[str]] = {}
    layouts = LayoutBuilder(message)
    for version in versions:
        below = version - 1
        if message.versions is None or not message.versions.contains(below):
            notes[version] = ["first version"]
            continue
        diff = MessageDiff(message, message)
        try:
            if layouts.flexible(below) != layouts.flexible(version):
                notes.setdefault(version, []).append("switches to the flexible encoding (KIP-482): compact "
                                                     "lengths and tagged fields")
            else:
                diff.compare_layouts(layouts.build(below), layouts.build(version), version)
        except LayoutError as exc:
            notes[version] = [f"cannot describe: {exc}"]
            continue
        for change in diff.changes():
            label = _EVOLUTION.get(change.rule)
            if change.rule in (ChangeKind.FIELD_INSERTED, ChangeKind.FIELD_REMOVED):
                notes.setdefault(version, []).append(f"{label} {change.message.rsplit(' ', 1)[0]}")
            elif label is not None:
                notes.setdefault(version, []).append(f"{label}: {change.message}")
        notes.setdefault(version, ["same fields as the version below (a semantic or behavioural bump)"])
    if message.latest_version_unstable and message.versions is not None and message.versions.highest in notes:
        notes[message.versions.highest].insert(0, "unstable (latestVersionUnstable): not offered by default")
    return notes


# --- markdown ---------------------------------------------------------------------------------------

def _markdown(log: Changelog) -> list[str]:
    out = [f"# Kafka protocol changelog: {markdown_text(log.old_label)} → {markdown_text(log.new_label)}", "",
           "Generated by `krpc-lint changelog`. Per API: the versions before and after, what each new "
           "version adds over the one below it, and every change to versions both revisions share "
           "(categories as in `krpc-lint compat`).", ""]
    out += _summary(log)
    for kind, heading in (("api", "APIs"), ("record", "Records"), ("other", "Other specs")):
        entries = [e for e in log.entries if e.kind == kind]
        if not entries:
            continue
        out += [f"## {heading}", ""]
        for entry in entries:
            out += _entry(entry)
    return out


def _summary(log: Changelog) -> list[str]:
    out = ["| | added | removed | changed |", "| --- | --- | --- | --- |"]
    for kind, label in (("api", "APIs"), ("record", "records")):
        entries = [e for e in log.entries if e.kind == kind]
        counts = [sum(e.status == s for e in entries) for s in ("added", "removed", "changed")]
        out.append(f"| {label} | {counts[0]} | {counts[1]} | {counts[2]} |")
    return [*out, ""]


def _entry(entry: ApiLog) -> list[str]:
    key = f" ({entry.key_label} {entry.key})" if entry.key is not None else ""
    out = [f"### {markdown_text(entry.title)}{key} — {entry.status}", ""]
    for message in entry.messages:
        out.append(f"- **{markdown_text(message.name)}**: {markdown_text(_range_words(message))}")
        for version, notes in sorted(message.new_version_notes.items()):
            out.append(f"  - v{version}: " + "; ".join(markdown_text(note) for note in notes))
        for change in message.changes:
            versions = f" (v{version_ranges(change['versions'])})" if change["versions"] else ""
            unreleased = ", unreleased" if change.get("released") is False else ""
            out.append(f"  - *{markdown_text(_label(change['category']))}{unreleased}*"
                       f"{versions}: {markdown_text(change['message'])}")
    return [*out, ""]


def _label(category: str) -> str:
    known = Category.known(category)
    return known.label if known is not None else category


def _range_words(message: MessageLog) -> str:
    if message.new_versions == "none" and message.old_versions not in (None, "none"):
        return f"removed with validVersions none (was versions {message.old_versions}); its apiKey stays reserved"
    if message.old_versions is None:
        return f"new, versions {message.new_versions}"
    if message.new_versions is None:
        return f"removed (was versions {message.old_versions})"
    if message.old_versions == message.new_versions:
        return f"versions {message.new_versions}"
    return f"versions {message.old_versions} → {message.new_versions}"
