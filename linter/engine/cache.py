"""A cache of findings across runs, as ruff keeps one: unchanged files are not checked again.

An entry is keyed by the file's path and the digest of its bytes; a directory's cross-file
findings by the digests of all its files. The whole cache belongs to one *fingerprint*: the
selected rules (ids, severities, checks, docs), and the linter's own code. Change any of
these and a new cache starts. Suppressions, per-path overrides and the baseline are applied
after the cache, so they never go stale. The cache lives in the user's cache directory, never
in the project.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.engine.findings import Edit, Finding
from linter.parse.bounded_json import load_json

if TYPE_CHECKING:  # the rules' loader imports this module for its cache directory and files
    from linter.engine.rules import RuleSet

CACHE_VERSION = 2
MAX_ENTRIES = 50_000
STALE_AFTER_SECONDS = 7 * 24 * 3600


def default_cache_dir() -> Path:
    """``$KRPC_LINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/krpc-lint``, else ``~/.cache/krpc-lint``."""
    explicit = os.environ.get("KRPC_LINT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "krpc-lint"


def read_json(path: Path) -> Any:
    """The JSON value ``path`` holds, or ``None`` when it is missing or unreadable: a cache miss, never an error."""
    try:
        return load_json(path.read_text(encoding="utf-8"))  # a hostile depth is a miss too
    except (OSError, ValueError):
        return None


def write_json(path: Path, data: Any) -> bool:
    """Write ``data`` atomically (a temporary sibling renamed over ``path``); ``False`` when it cannot be
    written, which is fine: a read-only home only means nothing is cached."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        return False
    return True


def _code_stamp() -> str:
    """Sizes and times of the linter's own modules: a changed check invalidates the cache."""
    root = Path(__file__).resolve().parent.parent
    parts = []
    for path in sorted(root.rglob("*.py")):
        stat = path.stat()
        parts.append(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)


def fingerprint(ruleset: RuleSet, target: str = "") -> str:
    digest = hashlib.sha256(f"{CACHE_VERSION}\n{target}\n{_code_stamp()}".encode())
    for rule in ruleset.rules:
        described = [rule.id, rule.name, ruleset.severity_of(rule), rule.category, rule.hint, rule.check, rule.fixable]
        digest.update(json.dumps(described, sort_keys=True).encode())
    return digest.hexdigest()


Row = list[Any]  # a finding as cached: its fields in order


def _findings(rows: Any) -> list[Finding] | None:
    """Findings from cached rows; anything malformed is a cache miss, never an error."""
    try:
        return [_finding(row) for row in rows]
    except TypeError:
        return None


def _finding(row: Row) -> Finding:
    """A cached row: the nine fields, then the edits of its fix when it has one."""
    finding = Finding(*row[:9])
    return replace(finding, fix=tuple(Edit(*edit) for edit in row[9])) if len(row) > 9 else finding


def _row(finding: Finding) -> Row:
    row = [finding.path, finding.line, finding.col, finding.rule, finding.name, finding.severity,
           finding.category, finding.message, finding.hint]
    if finding.fix:
        row.append([[edit.start, edit.end, edit.old, edit.new] for edit in finding.fix])
    return row


class ResultCache:
    """Findings by file (path + content digest) and by directory (digests of all its files)."""

    def __init__(self, directory: Path, ruleset: RuleSet, target: str = "") -> None:
        self.file = directory / f"results-{fingerprint(ruleset, target)[:32]}.json"
        self.files: dict[str, list[Any]] = {}  # path -> [digest, rows]
        self.dirs: dict[str, list[Row]] = {}
        self.dirty = False
        self._load()

    def _load(self) -> None:
        data = read_json(self.file)
        try:
            if data.get("version") == CACHE_VERSION:
                self.files, self.dirs = dict(data["files"]), dict(data["dirs"])
        except (ValueError, KeyError, TypeError, AttributeError):
            pass  # no cache, or an unreadable one: start afresh

    def file_findings(self, path: str, digest: str) -> list[Finding] | None:
        entry = self.files.get(path)
        if not isinstance(entry, list) or len(entry) != 2 or entry[0] != digest:
            return None
        return _findings(entry[1])

    def store_file(self, path: str, digest: str, findings: list[Finding]) -> None:
        self.files[path] = [digest, [_row(f) for f in findings]]
        self.dirty = True

    @staticmethod
    def directory_key(members: list[tuple[str, str]], complete: bool) -> str:
        text = json.dumps([sorted(members), complete])
        return hashlib.sha256(text.encode()).hexdigest()

    def dir_findings(self, key: str) -> list[Finding] | None:
        return _findings(self.dirs.get(key))

    def store_dir(self, key: str, findings: list[Finding]) -> None:
        self.dirs[key] = [_row(f) for f in findings]
        self.dirty = True

    def save(self) -> None:
        """Write atomically; a cache that cannot be written is simply not kept."""
        if not self.dirty:
            return
        files = dict(list(self.files.items())[-MAX_ENTRIES:])
        dirs = dict(list(self.dirs.items())[-MAX_ENTRIES:])
        if write_json(self.file, {"version": CACHE_VERSION, "files": files, "dirs": dirs}):
            self._drop_stale()

    def _drop_stale(self) -> None:
        cutoff = time.time() - STALE_AFTER_SECONDS
        for other in self.file.parent.glob("results-*.json"):
            try:
                if other != self.file and other.stat().st_mtime < cutoff:
                    other.unlink()
            except OSError:
                pass
