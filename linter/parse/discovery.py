"""Which files are specs: the one rule every command walks by (lint, compat, the Action, audit).

A file named on the command line is always read. Inside a directory a ``*.json`` file is a spec
when it lies in one of Kafka's spec locations (``[module/]src/{main,test}/resources/common/{message,
metadata}``, or ``resources/message`` as Kafka's storage module has it), or, anywhere else, when its
content looks like a message spec (a vendor's copy, a fixture). Other JSON in a repository (build
files, test workloads, native-image configs) is skipped and counted, never an error. Hidden,
virtual-env and build directories are never entered, and links are not followed.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from linter.parse.bounded_json import MAX_DEPTH
from linter.parse.files import InputError, read_regular

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", "build", ".tox"})
_SNIFF_BYTES = 64 * 1024  # enough to see the top-level keys of any real spec (Kafka's largest: ~30 KB)
_SPEC_KEYS = (b'"validVersions"', b'"apiKey"', b'"flexibleVersions"')


def skipped_dir(name: str) -> bool:
    """A directory no walk enters: hidden, version control, virtual envs, build output."""
    return name.startswith(".") or name in SKIPPED_DIRS


def in_spec_location(path: str) -> bool:
    """Whether ``path`` (a file) lies directly in one of Kafka's spec directories."""
    dirs = path.replace(os.sep, "/").split("/")[:-1]
    common = dirs[-5:]  # src/{main,test}/resources/common/{message,metadata}
    if len(common) == 5 and common[0] == "src" and common[2:4] == ["resources", "common"]:
        return common[1] in ("main", "test") and common[4] in ("message", "metadata")
    storage = dirs[-4:]  # src/{main,test}/resources/message
    return len(storage) == 4 and storage[0] == "src" and storage[1] in ("main", "test") \
        and storage[2:] == ["resources", "message"]


def looks_like_spec(data: bytes) -> bool:
    """A message spec by its content: a JSON object with a ``name`` and a spec key (``validVersions``,
    ``apiKey`` or ``flexibleVersions``). A cheap, linear sniff of its start, so that a broken spec is
    still linted and a workload or build file is not."""
    head = data[:_SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith((b"{", b"/")):  # an object, possibly after a licence comment
        return False
    return b'"name"' in head and any(key in head for key in _SPEC_KEYS)


def is_spec(path: str, read: Callable[[], bytes]) -> bool:
    """A ``*.json`` file found in a directory: by its location, else by its content (``read`` is only
    called then)."""
    return path.endswith(".json") and (in_spec_location(path) or looks_like_spec(read()))


def would_read(path: Path, top: Path) -> bool:
    """Whether walking ``top`` reads a file at ``path`` below it (an output written there would become an
    input): an existing spec, or any ``*.json`` in a spec location, outside the directories never entered."""
    relative = path.relative_to(top)
    if not path.name.endswith(".json") or any(skipped_dir(part) for part in relative.parts[:-1]):
        return False
    name = os.fspath(path)
    return in_spec_location(name) or (path.is_file() and is_spec(name, lambda: _head(name)))


@dataclass
class Walk:
    """The specs below a directory (paths joined to it, sorted) and the JSON files skipped as not specs."""

    specs: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)  # directories holding specs


def walk(top: str, onerror: Callable[[OSError], None] | None = None,
         include: Callable[[str], bool] = lambda path: False) -> Walk:
    """Every spec file below ``top`` (symlinks are not followed, as git trees do not); ``include`` names
    JSON files that are specs whatever they hold (the config's ``include`` globs)."""
    found = Walk()
    for dirpath, names, others in json_files(top, onerror):
        paths = [os.path.join(dirpath, n) for n in names]
        specs = _specs(paths, include)
        found.specs.extend(specs)
        chosen = set(specs)
        found.skipped.extend(path for path in paths if path not in chosen)
        found.skipped.extend(os.path.join(dirpath, n) for n in others)  # links, FIFOs, devices: never read
        if specs:
            found.dirs.append(dirpath)
    return found


def json_files(top: str, onerror: Callable[[OSError], None] | None = None
               ) -> Iterator[tuple[str, list[str], list[str]]]:
    """Each directory below ``top`` (top-down, sorted, skipped ones left out, links not entered) with its
    regular ``*.json`` files and the other ``*.json`` entries (links, FIFOs, devices, sockets), which are
    never opened (``files_below``, keeping the JSON names)."""
    for directory, regular, others in files_below(top, onerror, enter=lambda name: not skipped_dir(name)):
        names = [name for name in regular if name.endswith(".json")]
        other = [name for name in others if name.endswith(".json")]
        if names or other:
            yield directory, names, other


MAX_DIR_DEPTH = MAX_DEPTH  # the one nesting limit: directories below a walked one, as JSON values in a document


class TooDeep(InputError):
    """A directory nested deeper than ``MAX_DIR_DEPTH`` below the one walked."""


def files_below(top: str, onerror: Callable[[OSError], None] | None = None,
                enter: Callable[[str], bool] = lambda name: True) -> Iterator[tuple[str, list[str], list[str]]]:
    """The one directory walker (specs, rule packs, frames): each directory below ``top``, top-down and
    sorted, with the names of its regular files and of its other entries that are no directories (links,
    FIFOs, devices, sockets), both sorted. Subdirectories whose name ``enter`` refuses are left out, and
    links to directories are never entered, so there is no loop to follow. File types come from the
    directory listing (no stat per file); the walk keeps its own stack, so a hostile depth costs no
    recursion, and a directory more than ``MAX_DIR_DEPTH`` levels below ``top`` is ``TooDeep`` (one line
    naming ``top``) before its path outgrows what the system can open."""
    pending = [(top, 0)]
    while pending:
        directory, depth = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        subdirs: list[str] = []
        names: list[str] = []
        others: list[str] = []
        for entry in entries:
            if _is_dir(entry):
                if enter(entry.name):
                    subdirs.append(entry.path)
            else:
                (names if _is_regular(entry) else others).append(entry.name)
        if subdirs and depth >= MAX_DIR_DEPTH:
            raise TooDeep(f"{top}: directories nested more than {MAX_DIR_DEPTH} levels below it; krpc-lint walks "
                          f"at most {MAX_DIR_DEPTH}")
        yield directory, sorted(names), sorted(others)
        pending.extend((subdir, depth + 1) for subdir in sorted(subdirs, reverse=True))


def regular_files(top: str | os.PathLike[str]) -> list[str]:
    """The path of every regular file below a directory (``files_below``: links never entered, depth bounded),
    sorted: the inputs of frames commands (captures, logs, corpora) that are no specs."""
    return sorted(os.path.join(directory, name) for directory, names, _ in files_below(os.fspath(top))
                  for name in names)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def siblings(file: str) -> list[str]:
    """The other specs in ``file``'s directory (by the same rule), which a file named alone is checked with."""
    directory = os.path.dirname(file) or "."
    try:
        names = _regular_json(directory, os.listdir(directory))
    except OSError:
        return []
    return _specs([path for path in (os.path.join(directory, n) for n in names) if path != file])


def _regular_json(directory: str, names: list[str]) -> list[str]:
    """The ``*.json`` names of ``directory`` that are regular files, not links, sorted."""
    return sorted(n for n in names if n.endswith(".json") and os.path.isfile(os.path.join(directory, n))
                  and not os.path.islink(os.path.join(directory, n)))


def _specs(paths: list[str], include: Callable[[str], bool] = lambda path: False) -> list[str]:
    """The specs among JSON files on disk: ``include``d, else by location, else by their first bytes."""
    return [path for path in paths if include(path) or is_spec(path, functools.partial(_head, path))]


def _head(path: str) -> bytes:
    try:
        return read_regular(path, _SNIFF_BYTES)[:_SNIFF_BYTES]
    except InputError:
        return b"{}"  # unreadable: not provably a spec; reading it as one reports the error (when named)
