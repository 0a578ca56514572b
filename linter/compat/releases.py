"""A repository's releases, for deciding what shipped: its release tags and the specs each one holds.

Release tags are ``3.7.0`` or ``v1.2`` (release candidates such as ``3.7.0-rc1`` are not releases),
on any branch, listed with one ``git for-each-ref``. A tag holding a number of more than
``MAX_RELEASE_DIGITS`` digits (``v<5000 digits>.0``) is no release: it is left out, and no number of a tag
is ever converted with ``int()`` (versions are ordered as digit strings). ``release_revisions`` reads every release's
specs with one ``git ls-tree`` per release and one ``git cat-file --batch`` for all their distinct
blobs, and parses each distinct blob once: Kafka's 54 release tags share about 1,100 blobs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from linter.compat.compare import Unreleased
from linter.compat.revision import Revision, parsed_once
from linter.compat.sources import (
    Git,
    SourceError,
    first_line,
    read_revision,
    run_git,
    split_specs,
)
from linter.model.spec import MessageSpec
from linter.parse.linear import NotLinearError, linear

RELEASE_TAG = r"^v?\d+\.\d+(\.\d+)?$"
# Kafka's release numbers have one or two digits; a date (20241031) has eight. A tag with a longer number is
# no release (junk or hostile), so what is compared stays small whatever a repository holds.
MAX_RELEASE_DIGITS = 18
_DIGITS = r"[0-9]+"


class Release(NamedTuple):
    """A release tag and the commit it names."""

    name: str
    commit: str
    date: int  # the tag's date (annotated) or its commit's (lightweight)

    def order(self) -> tuple[tuple[tuple[int, str], ...], int, str]:
        """Version order (3.10.0 after 3.9.1), then date: what "first" and "highest" release mean."""
        return version_key(self.name), self.date, self.name


def version_key(name: str) -> tuple[tuple[int, str], ...]:
    """The numbers of ``name`` in numeric order, for any length and without ``int()``: each as (its number of
    digits without leading zeros, those digits), so 10 sorts after 9 and 0010 equals 10."""
    parts = (part.lstrip("0") for part in linear(_DIGITS).findall(name))
    return tuple((len(part), part) for part in parts)


def longest_number(name: str) -> int:
    """How many digits the longest number in ``name`` has (leading zeros included); one linear pass."""
    return max((len(part) for part in linear(_DIGITS).findall(name)), default=0)


def release_tags(top: str, pattern: str = RELEASE_TAG) -> list[Release]:
    """The release tags on commits, in version order: one ``git for-each-ref``. ``pattern`` runs in RE2
    (linear time in a tag's length); a tag with a number longer than ``MAX_RELEASE_DIGITS`` is left out."""
    try:
        wanted = linear(pattern)
    except NotLinearError as exc:
        raise SourceError(f"release tag pattern {pattern!r} is not a regular expression RE2 runs: {exc}") from exc
    done = run_git(top, "for-each-ref", "--format=%(refname)%00%(objecttype)%00%(objectname)%00"
                   "%(*objecttype)%00%(*objectname)%00%(creatordate:unix)", "refs/tags")
    if done.returncode:
        raise SourceError(f"git for-each-ref failed in {top}: {first_line(done.stderr) or 'no message'}")
    found = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        ref, kind, oid, peeled_kind, peeled, date = line.split("\0")
        name = ref.removeprefix("refs/tags/")
        commit = oid if kind == "commit" else peeled if peeled_kind == "commit" else None
        if commit and wanted.search(name) and longest_number(name) <= MAX_RELEASE_DIGITS:
            found.append(Release(name, commit, _unix_time(date)))
    return sorted(found, key=Release.order)


def _unix_time(text: str) -> int:
    """git's ``creatordate:unix`` (decimal seconds; empty for a tag without a date): at most 20 digits read."""
    digits = text.strip()
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 20 else 0


def release_revisions(cwd: str, releases: Sequence[Release]) -> list[Revision]:
    """Each release's specs as a ``Revision`` (by ``linter.parse.discovery``'s rule), parsed once per blob."""
    git = Git.open(cwd, "--released needs a git repository")
    trees = {release.name: git.list_specs(git.tree(release.commit)) for release in releases}
    blobs = git.read_blobs(oid for entries in trees.values() for oid in entries.values())
    parsed: dict[bytes, MessageSpec | None] = {}
    out = []
    for release in releases:
        entries = trees[release.name]
        specs, others = split_specs({rel: blobs[oid] for rel, oid in entries.items()})
        out.append(parsed_once(Revision(release.name, specs, f"{release.name}:", others), parsed))
    return out


@dataclass(frozen=True)
class Released:
    """What ``--released`` resolved to: the release revisions (``None``: no release knowledge, so only
    ``latestVersionUnstable`` marks a version unreleased) and, for people, where they came from."""

    revisions: list[Revision] | None
    source: str


def resolve_released(values: Sequence[str], cwd: str) -> Released:
    """``--released`` values: none given (``auto`` where ``cwd`` is a repository with release tags, else no
    knowledge), ``auto`` (every release tag; an error without any), ``none``, or refs and directories."""
    if tuple(values) == ("none",):
        return Released(None, "none (--released none)")
    if not values or "auto" in values:
        tags = _tags_here(cwd, required=bool(values))
        if not tags:
            return Released(None, f"none: {_why_no_tags(cwd)}")
        named = f"release tag {tags[0].name}" if len(tags) == 1 else \
            f"{len(tags)} release tags ({tags[0].name} … {tags[-1].name})"
        return Released(release_revisions(cwd, tags), named)
    revisions = [read_revision(ref if ":" in ref or os.path.exists(os.path.join(cwd, ref)) else f"{ref}:", cwd=cwd)
                 for ref in values]
    return Released(revisions, ", ".join(values))


def _tags_here(cwd: str, required: bool) -> list[Release]:
    try:
        tags = release_tags(cwd)
    except SourceError:  # not a git repository: no releases to know of
        if required:
            raise
        return []
    if required and not tags:
        raise SourceError(f"--released auto: {_why_no_tags(cwd)}")
    return tags


def _why_no_tags(cwd: str) -> str:
    shallow = run_git(cwd, "rev-parse", "--is-shallow-repository")
    if shallow.returncode:
        return "not a git repository, so no release tags"
    if shallow.stdout.strip() == b"true":
        return ("this shallow checkout has no release tags (like 3.7.0 or v1.2); fetch them, e.g. "
                "actions/checkout with fetch-depth: 0")
    return "this repository has no release tags (like 3.7.0 or v1.2)"


@dataclass(frozen=True)
class FileReleases:
    """One spec file at every release tag of its repository (the same path in each; ``why`` says why there are
    none), for saying which versions of the message shipped without reading the releases' other specs."""

    path: str  # relative to the repository's top
    revisions: tuple[Revision, ...]
    tags: int
    why: str = ""

    @property
    def first_with_file(self) -> str | None:
        """The first release holding this file: a version it shipped may be older (Kafka's specs became JSON in
        2.2.0; its earlier releases defined the same bytes in Java)."""
        return self.revisions[0].label if self.revisions else None

    def versions(self, data: bytes) -> list[tuple[int, str]]:
        """Per version of the message in ``data`` (this file's text now): ``shipped in R`` (the first release
        with these bytes), ``changed since R shipped it``, or ``in no release``."""
        now = Revision("now", {self.path: data})
        message = now.messages.get(self.path)
        if message is None or message.versions is None or message.versions.empty:
            return []
        unreleased = Unreleased(now, self.revisions)
        out = []
        for version in range(message.versions.lowest, min(message.versions.highest, message.versions.lowest + 1000) + 1):
            first = unreleased.shipped_in(self.path, message, version)
            listed = None if first else unreleased.listed_in(self.path, version)
            if first is not None and first == self.first_with_file:
                first = f"{first}, the first release with this file"
            out.append((version, f"shipped in {first}" if first else
                        f"changed since {listed} shipped it" if listed else "in no release"))
        return out


def file_releases(path: str | os.PathLike[str], cache: dict[bytes, MessageSpec | None] | None = None) -> FileReleases:
    """``path`` at each release tag: one ``git for-each-ref`` and one ``git cat-file --batch`` (a tag without
    the file is skipped). Outside a repository, or in one without release tags, no revisions and why."""
    where = os.path.dirname(os.path.abspath(path))
    try:
        git = Git.open(where, "release knowledge")
        rel = git.repo_path(os.path.basename(path), from_cwd=True)
        tags = release_tags(where)
    except SourceError:
        return FileReleases("", (), 0, _why_no_tags(where))
    if not tags:
        return FileReleases(rel, (), 0, _why_no_tags(where))
    names = {release.name: f"{release.commit}:{rel}" for release in tags}
    blobs = git.read_blobs(names.values(), unreadable={})
    shared: dict[bytes, MessageSpec | None] = {} if cache is None else cache
    revisions = tuple(parsed_once(Revision(name, {rel: blobs[key]}, f"{name}:"), shared)
                      for name, key in names.items() if key in blobs)
    return FileReleases(rel, revisions, len(tags))
