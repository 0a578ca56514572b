"""The spec history of a git repository, for ``krpc-lint audit``: revisions, pairs, blobs, releases.

Pure Python, no Spark: the audit job lints each distinct blob once and compares each pair.
Kafka's trunk has about 1,100 distinct spec blobs, so git runs a constant number of times,
never once per commit or file: ``git rev-parse`` per ref, one ``git for-each-ref`` for the
release tags, one ``git rev-list`` for their ancestry, one ``git diff-tree`` to find the spec
directories, one ``git log`` for every change, one ``git cat-file --batch`` for all blobs
(capped like ``krpc-lint compat`` does), and one ``git diff-tree`` per release whose specs are
asked for.

How history is read:

* Paths: DEFAULT_GLOBS are matched in the trees of the refs and the release tags, and the
  history of the directories found is read: a pathspec starting with ``**`` cannot prune
  git's tree walk, which makes ``git log`` take seconds per glob on Kafka's history instead of
  a fraction of one. A spec directory that existed only between two releases is therefore not
  followed. When DEFAULT_GLOBS match nothing, FALLBACK_GLOBS are read; ``paths`` given are
  used as they are.
* Commits: ``git log --topo-order --reverse --full-history`` over the refs (each commit once,
  parents before children) limited to the spec pathspecs, renames detected (``-M``) among
  them. A spec moved in from outside the pathspecs is an addition.
* Merges: a merge shows what it brings relative to its first parent
  (``--diff-merges=first-parent``), so an evil merge or a conflict resolution is a revision
  like any other. A merged branch's changes therefore appear twice: at their own commits and,
  summed up, at the merge. ``first_parent=True`` reads the first-parent chain only: each
  change once, at the commit that brought it to the branch.
* Pairs: a revision pairs with the revision that produced its old side (the same path and blob
  its commit's parent had), not merely with the previous revision in the list: across branches
  those differ. An addition (no old side) has no pair; a pair whose path and blob did not change
  (a mode change) is left out.
* ``since``: git parses the date, but the whole history is still read, so a lineage renamed
  before ``since`` keeps its name. Revisions before it are not listed; a listed revision still
  pairs with its older predecessor.
* Releases: tags matching ``release_pattern`` (``3.7.0``, ``v1.2``; not ``3.7.0-rc1``).
  ``release`` is the first one (in version order) whose commit contains the revision's commit.
  ``released_in`` is the highest version tagged before the new commit's time: Kafka tags
  its releases on release branches that are never merged back, so no release is an ancestor
  of a trunk commit and "reachable from the parent" would say nothing had shipped.
"""

from __future__ import annotations

import bisect
import os
import posixpath
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import NamedTuple

from linter.compat.releases import RELEASE_TAG, Release, release_tags
from linter.compat.sources import (
    Git,
    SourceError,
    check_ref,
    first_line,
    git_output,
    run_git,
)
from linter.errors import KrpcLintError
from linter.parse.discovery import SKIPPED_DIRS
from linter.parse.linear import linear

# Kafka's spec directories, in any module or at the top (``**/`` also matches no directory);
# ``storage`` keeps its specs in ``resources/message``, without ``common``.
DEFAULT_GLOBS = tuple(f"**/src/{tree}/resources/{kind}/*.json" for tree in ("main", "test")
                      for kind in ("common/message", "common/metadata", "message"))
# Used when no ref or release has a file matching DEFAULT_GLOBS (specs kept elsewhere); hidden, build and vendored
# directories are left out, as ``krpc-lint compat`` skips them on disk.
FALLBACK_GLOBS = ("**/*.json",)
_FALLBACK_EXCLUDES = tuple(f":(glob,exclude){pattern}" for pattern in
                           ("**/.*/**", *(f"**/{name}/**" for name in sorted(SKIPPED_DIRS))))

_GLOB_SPECIAL = r"[][*?\\]"  # run in RE2 (linear.py)
_EMPTY_TREES = {40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}


class HistoryError(KrpcLintError, ValueError):
    """The history cannot be read (not a repository, an unknown ref); the message says what to do."""


@dataclass(frozen=True)
class SpecRevision:
    """One spec file as one commit left it: a row of ``schema.REVISIONS``."""

    commit: str
    parent: str | None  # the first parent; None for a root commit
    time: int  # committer time, unix seconds
    status: str  # A, M, R (old_path set) or D (blob None)
    path: str
    old_path: str | None
    blob: str | None
    lineage: str  # the path the file had when first seen; renames keep it
    release: str | None  # the first release tag containing the commit

    def to_row(self) -> dict[str, object]:
        """The row with the schema's columns, in order, ``time`` as an aware UTC datetime."""
        row = asdict(self)
        row["time"] = datetime.fromtimestamp(self.time, UTC)
        return row


@dataclass(frozen=True)
class RevisionPair:
    """A compat work unit: ``new`` (maybe a deletion) against the revision its parent had."""

    lineage: str
    old: SpecRevision
    new: SpecRevision
    released_in: str | None  # the highest release tagged by the new commit's time


@dataclass
class History:
    """What ``extract`` found; ``repo`` is where git runs (the top of the work tree, or a bare repository)."""

    repo: str
    refs: dict[str, str]  # each ref as given -> its commit
    revisions: list[SpecRevision]  # history order: parents before children
    pairs: list[RevisionPair]
    blobs: dict[str, str]  # distinct blob -> the first path it was seen at: what to lint
    releases: dict[str, str]  # release tag -> commit, in version order
    globs_used: tuple[str, ...]  # the spec globs; FALLBACK_GLOBS when DEFAULT_GLOBS matched nothing
    pathspecs: tuple[str, ...]  # the exact pathspecs given to git
    _release_specs: dict[str, dict[str, str]] = field(default_factory=dict, init=False, repr=False, compare=False)
    unreadable: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)  # blob -> why

    def read_blobs(self, ids: Iterable[str]) -> dict[str, bytes]:
        """Blob bytes by id through one ``git cat-file --batch``; a blob above the parser's limit
        is cut one byte past it, so linting reports it as too large instead of holding it all. A blob git
        cannot give (a corrupt or missing object) is left out and its reason kept in ``unreadable``."""
        with _history_errors():
            return Git(self.repo, "").read_blobs(ids, self.unreadable)

    def release_specs(self, tag: str) -> dict[str, str]:
        """The spec files (path -> blob) in release ``tag``'s tree: what had shipped, for compat."""
        if tag not in self.releases:
            raise HistoryError(f"{tag!r} is not a release tag of {self.repo}")
        if tag not in self._release_specs:
            commit = self.releases[tag]
            out = _git_output(self.repo, "diff-tree", "-r", "-z", "--raw", "--no-abbrev", "--no-renames",
                              _EMPTY_TREES[len(commit)], commit, "--", *self.pathspecs)
            self._release_specs[tag] = {change.path: change.new_blob for _, change in _parse_raw(out)
                                        if _regular(change.new_mode)}
        return self._release_specs[tag]


def branches(repo: str | os.PathLike[str]) -> list[str]:
    """Every branch of ``repo``: local ones, and remote-tracking ones (a clone's release branches), not HEAD."""
    with _history_errors():
        top = _top(os.fspath(repo))
        out = _git_output(top, "for-each-ref", "--format=%(refname:short)%00%(symref)", "refs/heads", "refs/remotes")
    return [name for name, symref in (line.split("\0") for line in out.decode("utf-8", "replace").splitlines())
            if not symref]


def extract(
    repo: str | os.PathLike[str],
    refs: Sequence[str] | None = None,
    paths: Sequence[str] | None = None,
    since: str | None = None,
    release_pattern: str = RELEASE_TAG,
    *,
    first_parent: bool = False,
) -> History:
    """The spec history of ``refs`` (default: HEAD) in ``repo``.

    ``paths``: git pathspec globs (``specs/**/*.json``), used as given; default DEFAULT_GLOBS,
    or FALLBACK_GLOBS when no ref or release has a file matching them. ``since``: any date git
    understands (``2024-01-31``, ``"2 weeks ago"``).
    """
    with _history_errors():
        top = _top(os.fspath(repo))
        heads = {ref: _commit(top, ref) for ref in dict.fromkeys(refs or ["HEAD"])}
        since_time = _since(top, since) if since else None
        releases = _release_tags(top, release_pattern)
        globs = tuple(paths) if paths else DEFAULT_GLOBS
        pathspecs = _pathspecs(globs) if paths else _spec_dirs(top, [*(r.commit for r in releases), *heads.values()])
        if not pathspecs:
            globs, pathspecs = FALLBACK_GLOBS, _pathspecs(FALLBACK_GLOBS) + _FALLBACK_EXCLUDES
        changes = _log(top, heads.values(), pathspecs, first_parent)
        revisions, pairs = _lineages(changes, _first_releases(top, releases), ReleasedBy(releases))
    listed = [rev for rev in revisions if since_time is None or rev.time >= since_time]
    blobs: dict[str, str] = {}
    for rev in listed:
        if rev.blob is not None:
            blobs.setdefault(rev.blob, rev.path)
    return History(
        repo=top, refs=heads, revisions=listed,
        pairs=[pair for pair in pairs if since_time is None or pair.new.time >= since_time],
        blobs=blobs, releases={release.name: release.commit for release in releases},
        globs_used=globs, pathspecs=pathspecs,
    )


# -- git ----------------------------------------------------------------------------------


@contextmanager
def _history_errors() -> Iterator[None]:
    """The git helpers shared with ``krpc-lint compat`` raise SourceError; audit callers expect HistoryError."""
    try:
        yield
    except SourceError as exc:
        raise HistoryError(str(exc)) from exc


def _git_output(cwd: str, *args: str, stdin: bytes | None = None) -> bytes:
    """``sources.git_output``, its failure a HistoryError."""
    try:
        return git_output(cwd, *args, stdin=stdin)
    except SourceError as exc:
        raise HistoryError(str(exc)) from None


def _top(repo: str) -> str:
    """The directory git runs in: the work tree's top (pathspecs and paths are relative to it), or a bare repository."""
    done = run_git(repo, "rev-parse", "--is-bare-repository", "--show-cdup")
    if done.returncode:
        reason = first_line(done.stderr) or "git rev-parse failed"
        raise HistoryError(f"{repo} is not a git repository ({reason}): pass the directory of a git checkout")
    bare, *cdup = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    return os.path.abspath(repo if bare == "true" or not cdup else os.path.join(repo, cdup[0]))


def _commit(top: str, ref: str) -> str:
    """REF's commit; an unknown REF says how to fetch it."""
    check_ref(ref)
    done = run_git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if done.returncode == 0:
        return done.stdout.decode().strip()
    Git(top, "").tree(ref)  # raises the unknown-ref message with its fetch hint
    if ref == "HEAD":
        raise HistoryError(f"{top} has no commits yet: commit the specs first, or pass a ref with --refs")
    raise HistoryError(f"{ref!r} is not a commit: pass a branch, tag or commit")


def _since(top: str, since: str) -> int:
    """``since`` as unix seconds, parsed by git itself (``2024-01-31``, ``"2 weeks ago"``)."""
    out = _git_output(top, "rev-parse", f"--since={since}").decode().strip()
    if not out.startswith("--max-age="):
        raise HistoryError(f"--since {since!r}: git did not read it as a date")
    return int(out.removeprefix("--max-age="))


def _pathspecs(globs: Iterable[str]) -> tuple[str, ...]:
    """Globs as git pathspecs (git runs at the top); one that already has magic (``:(exclude)x``) is kept."""
    return tuple(glob if glob.startswith(":") else f":(glob){glob}" for glob in globs)


class _Change(NamedTuple):
    """One line of ``--raw`` output."""

    status: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    old_path: str | None  # renames only
    path: str


class _CommitInfo(NamedTuple):
    commit: str
    parent: str | None
    time: int


def _spec_dirs(top: str, commits: Iterable[str]) -> tuple[str, ...]:
    """Pathspecs for the directories where DEFAULT_GLOBS match in the trees of ``commits``.

    A glob starting with ``**`` cannot prune git's tree walk: on a Kafka-sized history each one
    costs ``git log`` seconds, a literal directory a fraction of one. So one ``git diff-tree``
    finds the spec directories of the releases and ref tips (a directory that existed only
    between two releases is not followed), and the history is read for those. Each tree is
    diffed against the one before, so subtrees they share are not walked again: every file
    of every tree is in the first tree or added (or changed) by some diff.
    """
    wanted = list(dict.fromkeys(commits))
    trees = _git_output(top, "rev-parse", *(f"{commit}^{{tree}}" for commit in wanted)).decode().split()
    steps = list(zip([_EMPTY_TREES[len(wanted[0])], *trees], trees))
    stdin = "".join(f"{old} {new}\n" for old, new in steps if old != new).encode()
    out = _git_output(top, "diff-tree", "--stdin", "-r", "-z", "--raw", "--no-abbrev", "--no-renames",
                      "--", *_pathspecs(DEFAULT_GLOBS), stdin=stdin)
    dirs = sorted({posixpath.dirname(change.path) for _, change in _parse_raw(out) if _regular(change.new_mode)})
    return tuple(f":(glob){_glob_escape(name)}/*.json" for name in dirs)


def _glob_escape(text: str) -> str:
    """``text`` matched literally inside a ``:(glob)`` pathspec."""
    return linear(_GLOB_SPECIAL).sub(lambda found: "\\" + found[0], text)


def _log(
    top: str, commits: Iterable[str], pathspecs: Sequence[str], first_parent: bool
) -> Iterator[tuple[_CommitInfo, _Change]]:
    """Every change to the pathspecs in history order, with its commit: one ``git log``."""
    args = ["log", "--topo-order", "--reverse", "--full-history", "--raw", "-z", "--no-abbrev", "-M",
            "--diff-merges=first-parent", "--no-color", "--no-show-signature", "--format=%H %ct %P"]
    if first_parent:
        args.append("--first-parent")
    out = _git_output(top, *args, "--end-of-options", *commits, "--", *pathspecs)
    infos: dict[bytes, _CommitInfo] = {}
    for header, change in _parse_raw(out):
        if header not in infos:
            commit, time, *parents = header.decode().split()
            infos[header] = _CommitInfo(commit, parents[0] if parents else None, int(time))
        yield infos[header], change


def _parse_raw(out: bytes) -> Iterator[tuple[bytes, _Change]]:
    """``-z --raw`` changes with the line before them (a commit's format, or two tree ids).

    Fields are NUL-separated and paths counted out, so any byte in a path is fine.
    """
    tokens = out.split(b"\0")
    header = b""
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip(b"\n")
        index += 1
        if not token.startswith(b":"):
            # A header ends with NUL (git log -z) or a newline (diff-tree --stdin) before its changes.
            head, _, token = token.partition(b"\n")
            header = head or header
            if not token.startswith(b":"):
                continue
        old_mode, new_mode, old_blob, new_blob, status = token[1:].decode().split()
        count = 2 if status[0] in "RC" else 1
        paths = [_path(raw) for raw in tokens[index:index + count]]
        index += count
        yield header, _Change(status[0], old_mode, new_mode, old_blob, new_blob,
                              paths[0] if count == 2 else None, paths[-1])


def _path(raw: bytes) -> str:
    """A git path as text; bytes that are not UTF-8 stay visible (and writable to Parquet) as escapes."""
    return raw.decode("utf-8", "backslashreplace")


def _regular(mode: str) -> bool:
    """A file's content; symlinks (whose blob is a path) and submodules are no specs."""
    return mode.startswith("100")


def _normalize(change: _Change) -> tuple[str, str | None, str, str | None, str | None] | None:
    """``(status, old_path, path, old_blob, blob)`` in A/M/R/D terms, or None when no side is a regular file.

    A type change (file to symlink) is a deletion or addition; so is a rename whose other side is not a file.
    """
    old_ok, new_ok = _regular(change.old_mode), _regular(change.new_mode)
    old_path = change.old_path or change.path
    if old_ok and new_ok:
        if change.status == "R":
            return "R", old_path, change.path, change.old_blob, change.new_blob
        return "M", None, change.path, change.old_blob, change.new_blob
    if new_ok:
        return "A", None, change.path, None, change.new_blob
    if old_ok:
        return "D", None, old_path, change.old_blob, None
    return None


# -- releases -----------------------------------------------------------------------------


def _first_releases(top: str, releases: Sequence[Release]) -> dict[str, str]:
    """Commit -> the first release containing it: one ``git rev-list`` of the releases' ancestry.

    Releases are walked first to last, each stopping at commits an earlier one claimed: their
    ancestors are claimed already, so every commit is visited once.
    """
    if not releases:
        return {}
    stdin = "".join(f"{release.commit}\n" for release in releases).encode()
    parents = {}
    for line in _git_output(top, "rev-list", "--parents", "--stdin", stdin=stdin).decode().splitlines():
        commit, *rest = line.split()
        parents[commit] = rest
    first: dict[str, str] = {}
    for release in releases:
        stack = [release.commit]
        while stack:
            commit = stack.pop()
            if commit not in first:
                first[commit] = release.name
                stack.extend(parents.get(commit, ()))
    return first


class ReleasedBy:
    """The highest release (in version order) tagged before a time."""

    def __init__(self, releases: Sequence[Release]) -> None:
        by_date = sorted(releases, key=lambda release: release.date)
        self._dates = [release.date for release in by_date]
        self._best: list[str] = []
        best: Release | None = None
        for release in by_date:
            best = release if best is None or release.order() > best.order() else best
            self._best.append(best.name)

    def __call__(self, time: int) -> str | None:
        index = bisect.bisect_left(self._dates, time)  # strictly before: a tagged commit is not its own past
        return self._best[index - 1] if index else None


# -- lineages -----------------------------------------------------------------------------


def _lineages(
    changes: Iterable[tuple[_CommitInfo, _Change]], first_release: dict[str, str], released_by: ReleasedBy
) -> tuple[list[SpecRevision], list[RevisionPair]]:
    """Revisions with their lineage, and each paired with the revision its old side came from."""
    revisions: list[SpecRevision] = []
    pairs: list[RevisionPair] = []
    producer: dict[tuple[str, str], SpecRevision] = {}  # (path, blob) -> the latest revision leaving it
    lineage_of: dict[str, str] = {}  # path -> lineage of the file last at that path
    for info, change in changes:
        normal = _normalize(change)
        if normal is None:
            continue
        status, old_path, path, old_blob, blob = normal
        source = old_path or path
        old = producer.get((source, old_blob)) if old_blob else None
        lineage = old.lineage if old else lineage_of.get(source, source)
        rev = SpecRevision(info.commit, info.parent, info.time, status, path, old_path, blob, lineage,
                           first_release.get(info.commit))
        revisions.append(rev)
        if blob is not None:
            producer[(path, blob)] = rev
            lineage_of[path] = lineage
        if old is not None and (old.blob, old.path) != (rev.blob, rev.path):
            pairs.append(RevisionPair(lineage, old, rev, released_by(rev.time)))
    return revisions, pairs


def _release_tags(top: str, pattern: str) -> list[Release]:
    try:
        return release_tags(top, pattern)
    except SourceError as exc:
        raise HistoryError(str(exc)) from exc
