"""Command-line arguments to Revisions: a spec file, a directory, or a tree in git.

``REF:path`` follows ``git show``: the path is relative to the repository's top, or to the
current directory when it starts with ``./`` or ``../``. Git runs from argument lists only,
and all blobs come through one ``git cat-file --batch`` process, read by the sizes git reports,
so a large tree costs no process per file and a hostile blob no unbounded memory.
"""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from linter.compat.revision import Revision
from linter.errors import KrpcLintError
from linter.parse.discovery import is_spec, json_files, skipped_dir
from linter.parse.document import MAX_SPEC_BYTES
from linter.parse.files import InputError, read_regular
from linter.parse.linear import linear

if TYPE_CHECKING:
    from linter.engine.config import Config

# One byte past the parser's limit: enough for it to report the file as too large.
READ_LIMIT = MAX_SPEC_BYTES + 1
_CHUNK = 1 << 20
_SYMLINK_MODE = b"120000"
# git's answer, matched at one position (fullmatch) with bounded repeats; a size has at most 20 digits
_OBJECT = re.compile(rb"([0-9a-f]{40,64}) ([a-z]{1,16}) ([0-9]{1,20})\n?")
_SIMPLE_NAME = r"[\w.-]+(/[\w.-]+)*"  # a ref the user gave: run in RE2 (linear.py)


class SourceError(KrpcLintError, ValueError):
    """A bad revision argument; the message says what to do.

    >>> from linter import SourceError, compare
    >>> try:
    ...     compare("fixtures/no-such-dir", "fixtures/valid")
    ... except SourceError as exc:
    ...     print(exc)
    fixtures/no-such-dir: no such file or directory
    """


def read_revision(arg: str, *, cwd: str | os.PathLike[str] | None = None) -> Revision:
    """The revision ``arg`` names; a path on disk wins over ``REF:path`` when both could be meant."""
    if not arg:
        raise SourceError("a revision argument must not be empty")
    base = _base(cwd)
    path = os.path.join(base, arg)
    if os.path.exists(path):
        return _disk_revision(arg, path)
    if ":" not in arg:
        raise SourceError(f"{arg}: no such file or directory")
    ref, _, spec = arg.partition(":")
    if not ref:
        raise SourceError(f"{arg}: no such file or directory (a git revision is written REF:path, e.g. HEAD:{spec})")
    return _git_revision(arg, ref, spec, base)


def against(
    ref: str, paths: Sequence[str] = (), *, cwd: str | os.PathLike[str] | None = None
) -> tuple[Revision, Revision]:
    """``(REF, working tree)`` at the same ``paths``, keyed alike (relative to cwd) so files pair up.

    A path may be missing on one side (added or deleted since REF), not on both. Without
    ``paths``: ``.``, whose specs ``linter.parse.discovery`` tells from other JSON on both sides.
    """
    base = _base(cwd)
    check_ref(ref)
    git = Git.open(base, f"--against {ref}")
    tree = git.tree(ref)
    old: dict[str, str] = {}
    new: dict[str, bytes] = {}
    named: set[str] = set()  # files named one by one: read whatever they hold
    for arg in paths or (".",):
        key = _relative(arg, base)
        on_disk = _working_files(os.path.join(base, key), key)
        at_ref = git.entries(tree, git.repo_path(key, from_cwd=True), key)
        if on_disk is None and at_ref is None:
            raise SourceError(f"{arg}: no such file or directory, neither in the working tree nor at {ref}")
        if key in (on_disk or {}) or key in (at_ref or {}):
            named.add(key)
        new.update(on_disk or {})
        old.update(at_ref or {})
    old_specs, old_others = _split_walked(git.read_named(old), named)
    new_specs, new_others = _split_walked(new, named)
    # Keys are relative to cwd, so below the top the old side needs git's "./" to read back right.
    old_side = Revision(ref, old_specs, f"{ref}:./" if git.here else f"{ref}:", old_others)
    return old_side, Revision("working tree", new_specs, "", new_others)


def _split_walked(files: dict[str, bytes], named: set[str]) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """``split_specs`` for the files found in directories; files named one by one are specs whatever they hold."""
    specs, others = split_specs({k: v for k, v in files.items() if k not in named})
    specs.update((k, v) for k, v in files.items() if k in named)
    return dict(sorted(specs.items())), others


# -- disk ---------------------------------------------------------------------------------


def _base(cwd: str | os.PathLike[str] | None) -> str:
    return os.fspath(cwd) if cwd is not None else os.getcwd()


def _disk_revision(arg: str, path: str) -> Revision:
    """A directory (every spec below it) or a single file, displayed as typed."""
    if os.path.isdir(path):
        specs, others = split_specs(_walk(path, ""))
        return Revision(arg, specs, arg if arg.endswith("/") else f"{arg}/", others)
    name = os.path.basename(arg)  # a FIFO or device: _read_file says what it is, without reading it
    return Revision(arg, {name: _read_file(path, arg)}, arg[: len(arg) - len(name)])


def _working_files(path: str, key: str) -> dict[str, bytes] | None:
    """The specs at ``path`` keyed below ``key``; ``None`` when nothing is there."""
    if os.path.isdir(path):
        return _walk(path, key)
    if os.path.isfile(path):
        return {key: _read_file(path, key)}
    return None


def _walk(top: str, under: str) -> dict[str, bytes]:
    """Every ``*.json`` below ``top``, outside skipped directories; symlinks are skipped, as in git trees,
    so both sides agree (``split_specs`` tells specs from other JSON)."""
    files: dict[str, bytes] = {}
    for dirpath, names, _ in json_files(top, _walk_error):
        rel_dir = os.path.relpath(dirpath, top).replace(os.sep, "/")
        for name in names:
            rel = _join(under, name if rel_dir == "." else f"{rel_dir}/{name}")
            files[rel] = _read_file(os.path.join(dirpath, name), rel)
    return dict(sorted(files.items()))


def split_specs(files: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The files of a walked directory or tree: (specs, other JSON), by ``linter.parse.discovery``'s rule."""
    specs = {rel: data for rel, data in files.items() if is_spec(rel, _reader(data))}
    return specs, {rel: data for rel, data in files.items() if rel not in specs}


def _reader(data: bytes) -> Callable[[], bytes]:
    """``data`` as the lazy read ``is_spec`` takes (bound here, not to a loop's variable)."""
    return lambda: data


def _walk_error(exc: OSError) -> None:
    """A directory that cannot be listed is an error, not silently fewer specs."""
    raise SourceError(f"{exc.filename}: cannot list directory: {exc.strerror or exc}") from exc


def _read_file(path: str, shown: str) -> bytes:
    """The file's bytes, at most READ_LIMIT of them; a FIFO or device is an error, never read."""
    try:
        return read_regular(path, MAX_SPEC_BYTES, shown)
    except InputError as exc:
        raise SourceError(str(exc)) from exc


def _wanted(rel: str) -> bool:
    """A spec file, not below a hidden or generated directory (the same rule as ``_walk``)."""
    *dirs, name = rel.split("/")
    return name.endswith(".json") and not any(skipped_dir(d) for d in dirs)


def _join(under: str, rel: str) -> str:
    return f"{under}/{rel}" if under else rel


def _relative(arg: str, base: str) -> str:
    """``arg`` relative to ``base``, POSIX and normalised; ``""`` for ``base`` itself."""
    rel = os.path.relpath(os.path.join(base, arg), base).replace(os.sep, "/")
    return "" if rel == "." else rel


# -- git ----------------------------------------------------------------------------------


def _git_revision(arg: str, ref: str, spec: str, base: str) -> Revision:
    """``REF:path``: a blob or every spec of a tree, displayed as ``REF:path/X``."""
    check_ref(ref)
    git = Git.open(base, f"{arg}: no such file or directory; reading it as REF:path")
    tree = git.tree(ref)
    # git's rule: "REF:path" is relative to the top, "REF:./path" to the current directory.
    from_cwd = spec in (".", "..") or spec.startswith(("./", "../"))
    found = git.lookup(tree, git.repo_path(spec, from_cwd=from_cwd))
    if found is None:
        raise SourceError(f"{spec} does not exist at {ref}")
    oid, kind = found
    shown = spec.rstrip("/")
    if kind == "tree":
        specs, others = split_specs(git.read_named(git.list_specs(oid)))
        return Revision(arg, specs, f"{ref}:{shown}/" if shown else f"{ref}:", others)
    if kind == "blob":
        name = posixpath.basename(shown)
        return Revision(arg, git.read_named({name: oid}), f"{ref}:{shown[: len(shown) - len(name)]}")
    raise SourceError(f"{spec} at {ref} is a {kind}, not a file or directory")


def check_ref(ref: str) -> None:
    """REF goes on git's command line: it must never be read as an option."""
    if not ref:
        raise SourceError("the git revision must not be empty")
    if ref.startswith("-"):
        raise SourceError(f"invalid git revision {ref!r}: a revision cannot start with '-'")


def changed_files(ref: str, *, cwd: str | os.PathLike[str] | None = None, purpose: str = "") -> set[str]:
    """Real paths of the files in the working tree that differ from REF: edited (staged or not), added,
    renamed (the new name) or untracked and not ignored. Deleted files are not listed: nothing is there to read.

    What a change touches, for ``lint --changed-since`` and the Action's ``lint-scope: changed``; the caller's
    discovery decides which of them are specs.
    """
    check_ref(ref)
    git = Git.open(_base(cwd), purpose or f"comparing with {ref}")
    tree = git.tree(ref)
    top = git_output(git.cwd, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape").strip()
    diff = git_output(top, "diff", "--name-only", "-z", "-M", "--diff-filter=d", "--no-ext-diff", tree, "--")
    untracked = git_output(top, "ls-files", "-z", "--others", "--exclude-standard")
    names = filter(None, (diff + untracked).split(b"\0"))
    return {os.path.realpath(os.path.join(top, os.fsdecode(name))) for name in names}


def changed_specs(ref: str, paths: Sequence[str], config: Config, purpose: str) -> list[str]:
    """The spec files below ``paths`` that differ from REF: git says what changed, discovery what is a spec
    (a changed Trogdor workload is not one). Shared by ``lint --changed-since`` and ``lint-scope: changed``."""
    from linter.engine.runner import (
        collect_files,  # the linter's engine, only for this question
    )

    changed = changed_files(ref, purpose=purpose)
    return [str(file) for file in collect_files(paths, config).files if os.path.realpath(file) in changed]


def read_specs(path: str | os.PathLike[str]) -> Revision:
    """Exactly the spec files ``Codec.load(path)`` reads (a directory is searched as lint searches it), keyed
    by their path below it (a file: its name), for ``Codec.from_files`` where the disk is not (a Spark worker).
    ``SpecError`` when there is no spec to read, in ``Codec.load``'s words.

    >>> sorted(read_specs("fixtures/valid").files)[:2]
    ['BlobPushRequest.json', 'BlobPushResponse.json']
    """
    from linter.codec.errors import SpecError
    from linter.engine.config import Config
    from linter.engine.runner import UsageError, collect_files

    root = Path(path)
    try:
        found = collect_files([root], Config(profile="kafka")).files
    except UsageError as exc:
        raise SpecError(str(exc)) from None
    # regular files only, each read to one byte past the spec limit (as lint reads it): a FIFO named as SPECS
    # is refused, never read
    return Revision(str(path), {file.relative_to(root).as_posix() if root.is_dir() else file.name:
                                read_regular(file, MAX_SPEC_BYTES) for file in found})


def git_output(cwd: str, *args: str, stdin: bytes | None = None) -> bytes:
    """``run_git``'s stdout; a failure is a SourceError with git's first line."""
    done = run_git(cwd, *args, stdin=stdin)
    if done.returncode:
        raise SourceError(f"git {args[0]} failed in {cwd}: {first_line(done.stderr) or 'no message'}")
    return done.stdout


def run_git(cwd: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``git -C cwd ARGS`` without a shell; git missing is a SourceError that says to install it."""
    try:
        return subprocess.run(["git", "-C", cwd, *args], input=stdin, capture_output=True, check=False)
    except OSError as exc:
        raise SourceError(f"cannot run git ({exc.strerror or exc}): install git, or put it on PATH") from exc


def first_line(data: bytes) -> str:
    """The first line of git's stderr: the part worth showing in a one-line error."""
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else ""


@dataclass(frozen=True)
class Git:
    """The repository around ``cwd``; ``here`` is cwd relative to its top (``""`` or ``"a/b/"``): its trees
    and blobs, read with one ``git cat-file --batch`` process for any number of blobs."""

    cwd: str
    here: str

    @classmethod
    def open(cls, cwd: str, purpose: str) -> Git:
        done = run_git(cwd, "rev-parse", "--show-prefix")
        if done.returncode:
            reason = first_line(done.stderr) or "git rev-parse failed"
            raise SourceError(f"{purpose} needs a git repository, but {cwd} is not inside one ({reason})")
        return cls(cwd, done.stdout.decode("utf-8", "surrogateescape").strip())

    def tree(self, ref: str) -> str:
        """The id of REF's tree; an unknown REF says how to fetch it.

        HEAD before the first commit is the empty tree: the first commit only adds specs, so a
        pre-commit hook comparing with HEAD passes it instead of failing on a missing ref.
        """
        done = run_git(self.cwd, "rev-parse", "--verify", "--quiet", f"{ref}^{{tree}}")
        if done.returncode == 0:
            return done.stdout.decode().strip()
        if ref == "HEAD" and run_git(self.cwd, "rev-parse", "--verify", "--quiet", "HEAD").returncode \
                and run_git(self.cwd, "symbolic-ref", "--quiet", "HEAD").returncode == 0:
            return run_git(self.cwd, "hash-object", "-t", "tree", "/dev/null").stdout.decode().strip()
        raise SourceError(self._unknown_ref(ref))

    def _unknown_ref(self, ref: str) -> str:
        shallow = run_git(self.cwd, "rev-parse", "--is-shallow-repository").stdout.strip() == b"true"
        fetch = self._fetch_hint(ref)
        if shallow:
            return (
                f"unknown git revision {ref!r}: this is a shallow clone, so older history is missing; "
                f'fetch it first, e.g. "git fetch --unshallow" or "git fetch --deepen=100" (or "{fetch}"), '
                'or check out with "fetch-depth: 0" in CI'
            )
        return (
            f'unknown git revision {ref!r}: check the name, or fetch it first, e.g. "{fetch}" '
            '(a shallow CI checkout needs "fetch-depth: 0" or "git fetch --deepen"/"--unshallow")'
        )

    def _fetch_hint(self, ref: str) -> str:
        """``git fetch REMOTE BRANCH`` for a remote-tracking name, else a fetch of a remote's branches and tags."""
        listed = run_git(self.cwd, "remote").stdout.decode("utf-8", "replace").split()
        name = ref.removeprefix("refs/remotes/")
        for remote in sorted({*listed, "origin"}, key=len, reverse=True):
            branch = name.removeprefix(f"{remote}/")
            if branch != name and linear(_SIMPLE_NAME).fullmatch(branch):
                return f"git fetch {remote} {branch}"
        return f"git fetch --tags {'origin' if 'origin' in listed or not listed else listed[0]}"

    def repo_path(self, spec: str, *, from_cwd: bool) -> str:
        """``spec`` relative to the top (``""`` for the top itself); it may not leave the repository."""
        if "\n" in spec:
            raise SourceError(f"{spec!r}: a path cannot contain a newline")
        norm = posixpath.normpath(self.here + spec if from_cwd else spec.lstrip("/"))
        if norm == ".." or norm.startswith("../"):
            raise SourceError(f"{spec}: outside the git repository")
        return "" if norm == "." else norm

    def lookup(self, tree: str, path: str) -> tuple[str, str] | None:
        """``(id, type)`` of ``path`` in ``tree``, or ``None`` when it is not there."""
        done = run_git(self.cwd, "cat-file", "--batch-check", stdin=f"{tree}:{path}\n".encode())
        found = _OBJECT.fullmatch(done.stdout)
        return (found[1].decode(), found[2].decode()) if found and not done.returncode else None

    def entries(self, tree: str, path: str, key: str) -> dict[str, str] | None:
        """Blob ids of the specs at ``path``, keyed below ``key``; ``None`` when nothing is there."""
        found = self.lookup(tree, path)
        if found is None:
            return None
        oid, kind = found
        if kind == "blob":
            return {key: oid}
        if kind == "tree":
            return {_join(key, rel): blob for rel, blob in self.list_specs(oid).items()}
        return {}  # a submodule: no specs of this repository

    def list_specs(self, tree: str) -> dict[str, str]:
        """Every wanted spec blob below ``tree`` (symlinks, whose blob is a path, are skipped)."""
        # --full-tree: from a subdirectory, ls-tree would otherwise list only what lies below cwd.
        done = run_git(self.cwd, "ls-tree", "-r", "-z", "--full-tree", tree)
        if done.returncode:
            raise SourceError(f"git ls-tree failed: {first_line(done.stderr)}")
        found = {}
        for record in filter(None, done.stdout.split(b"\0")):
            meta, _, raw = record.partition(b"\t")
            mode, kind, oid = meta.split()
            rel = os.fsdecode(raw)
            if kind == b"blob" and mode != _SYMLINK_MODE and _wanted(rel):
                found[rel] = oid.decode()
        return found

    def read_named(self, entries: dict[str, str]) -> dict[str, bytes]:
        """``entries`` (key to blob id) with each blob's bytes instead, keys sorted."""
        blobs = self.read_blobs(entries[key] for key in sorted(entries))
        return {key: blobs[entries[key]] for key in sorted(entries)}

    def read_blobs(self, oids: Iterable[str], unreadable: dict[str, str] | None = None) -> dict[str, bytes]:
        """Blob bytes by id, in the order given, through one ``git cat-file --batch`` process. A blob git cannot
        give (missing, corrupt) raises ``SourceError``, or, with ``unreadable``, is left out and recorded there
        with why (the audit makes it an error row and goes on)."""
        wanted = list(dict.fromkeys(oids))
        if not wanted:
            return {}
        command = ["git", "-C", self.cwd, "cat-file", "--batch"]
        pipe = subprocess.PIPE
        found: dict[str, bytes] = {}
        with subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=subprocess.DEVNULL) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            try:
                for oid in wanted:
                    try:
                        found[oid] = _cat(proc.stdin, proc.stdout, oid)
                    except _Unreadable as exc:
                        if unreadable is None:
                            raise SourceError(str(exc)) from None
                        unreadable[oid] = str(exc)
                return found
            except BaseException:
                proc.kill()
                raise


class _Unreadable(Exception):
    """A blob git answered for but cannot give: the batch process goes on."""


def _cat(stdin: IO[bytes], stdout: IO[bytes], oid: str) -> bytes:
    """One request and answer: git flushes each object, so no pipe fills up and blocks."""
    try:
        stdin.write(f"{oid}\n".encode())
        stdin.flush()
    except OSError as exc:
        raise SourceError(f"git cat-file stopped before reading {oid}") from exc
    line = stdout.readline()
    found = _OBJECT.fullmatch(line)
    if found is None or found[2] != b"blob":
        if line.rstrip(b"\n").endswith((b" missing", b" ambiguous")):  # git answers and goes on
            raise _Unreadable(f"git cannot read blob {oid} (missing or corrupt)")
        raise SourceError(f"git cat-file could not read blob {oid}")
    data = _read_capped(stdout, int(found[3]))
    stdout.read(1)  # the newline after every object
    return data


def _read_capped(stream: IO[bytes], size: int) -> bytes:
    """``size`` bytes from ``stream``, keeping at most READ_LIMIT and skipping the rest in chunks."""
    keep = min(size, READ_LIMIT)
    kept = stream.read(keep)
    skip = size - keep
    while skip > 0 and len(kept) == keep:
        chunk = stream.read(min(skip, _CHUNK))
        if not chunk:
            break
        skip -= len(chunk)
    if len(kept) != keep or skip > 0:
        raise SourceError("git cat-file output ended early")
    return kept
