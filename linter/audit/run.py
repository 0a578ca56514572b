"""``krpc-lint audit``: lint every distinct spec blob of a history and compare every consecutive
revision pair of every spec lineage, on Spark.

The driver extracts the history with git (``history.py``: one ``git log``, one ``cat-file``
process) and ships self-contained work units to the executors: ``(blob, path, bytes)`` to lint,
``(pair, old bytes, new bytes, each release's distinct copy)`` to compare. Executors run this package's own
``lint_texts`` and ``compare`` — the same functions as the CLI — so a unit needs nothing but its
bytes, and results do not depend on where they ran. A unit that fails is a row with ``error``
set, never a failed job. Results go to Parquet (``revisions/``, ``findings/``, ``changes/``) and
``report.html``, all written into a temporary directory renamed into place at the end.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

from linter.audit.history import (
    History,
    RevisionPair,
    SpecRevision,
    branches,
    extract,
)
from linter.parse.discovery import is_spec
from linter.spark import schema
from linter.spark.output import atomic_directory, write_parquet
from linter.spark.session import IN_PROCESS as IN_PROCESS  # noqa: PLC0414 - audit_cmd imports it from here
from linter.vocabulary import tool_version

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Compat in the strict profile: the audit reports every change, SAFE ones included, so the
# charts show all the protocol's evolution, not only what fails a build.
COMPAT_PROFILE = "strict"
# How compat pairs a release's copy of a message: ("api", type, apiKey), ("name", name) or ("path", path).
PairKey = tuple[str | int | None, ...]


@dataclass(frozen=True)
class BlobUnit:
    """One distinct blob to lint."""

    blob: str
    path: str
    data: bytes
    error: str | None = None  # why git could not give the blob: the unit is an error row


@dataclass(frozen=True)
class PairUnit:
    """One consecutive revision pair to compare, with the bytes of both sides and of the release."""

    pair: dict[str, Any]
    old: bytes
    new: bytes | None
    released: list[tuple[str, dict[str, bytes]]] | None  # (release tag, its copies of the file and partner);
    # None: the repository has no release at all
    error: str | None = None  # why a side could not be read: the unit is an error row


# --- work units: what runs on the executors (also in-process, for tests) ----------------------


def lint_blob(unit: BlobUnit) -> list[dict[str, Any]]:
    """The lint findings of one blob, linted as a file of a larger directory (no cross-file rules)."""
    from linter.engine.runner import lint_texts

    if unit.error is not None:
        return [_error_row(schema.FINDINGS, {"blob": unit.blob, "path": unit.path}, unit.error)]
    try:
        name = PurePosixPath(unit.path).name
        report = lint_texts({name: unit.data}, complete=False, ruleset=_lint_rules())
        return [{"blob": unit.blob, "path": unit.path, "rule": f.rule, "name": f.name, "severity": f.severity,
                 "category": f.category, "line": f.line, "col": f.col, "message": f.message, "error": None}
                for f in report.findings]
    except Exception as exc:  # noqa: BLE001 - a bad unit is a row, never a failed job
        return [_error_row(schema.FINDINGS, {"blob": unit.blob, "path": unit.path}, exc)]


@lru_cache(maxsize=1)
def _lint_rules() -> Any:
    """The default profile's rules, selected once per process (as ``lint_texts`` would per blob)."""
    from linter.engine.config import Config
    from linter.engine.runner import select_rules

    return select_rules(Config())


def compare_pair(unit: PairUnit) -> list[dict[str, Any]]:
    """The compat changes between the two sides of one pair, each a CHANGES row (as ``krpc-lint compat``
    reports them in the strict profile)."""
    from linter.compat.compare import compare
    from linter.compat.report import to_report
    from linter.compat.revision import Revision

    pair = unit.pair
    if unit.error is not None:
        return [_error_row(schema.CHANGES, pair, unit.error)]
    try:
        old = Revision("old", {pair["old_path"]: unit.old})
        new = Revision("new", {pair["new_path"]: unit.new} if unit.new is not None else {})
        released = None if unit.released is None else [_release(tag, files) for tag, files in unit.released]
        config, rules = _compat_rules()
        report = to_report(compare(old, new, released=released), config, rules)
        return [{**pair, **_change_columns(f)} for f in report.findings]
    except Exception as exc:  # noqa: BLE001 - a bad unit is a row, never a failed job
        return [_error_row(schema.CHANGES, pair, exc)]


@lru_cache(maxsize=1)
def _compat_rules() -> tuple[Any, Any]:
    """The config and compat rules every pair is reported with, selected once per process."""
    from linter.compat.report import compat_ruleset
    from linter.engine.config import Config

    config = Config(profile=COMPAT_PROFILE)
    return config, compat_ruleset(config)


_RELEASE_MESSAGES: dict[bytes, Any] = {}  # a release file's bytes -> its message: releases share most blobs


def _release(tag: str, files: dict[str, bytes]) -> Any:
    """A release's copy of a pair's files as a revision, each distinct file parsed once per process."""
    from linter.compat.revision import Revision, parsed_once

    return parsed_once(Revision(tag, files, f"{tag}:"), _RELEASE_MESSAGES)


def _change_columns(finding: Any) -> dict[str, Any]:
    witness = finding.witness or {}
    return {"rule": finding.rule, "name": finding.name, "category": finding.category, "severity": finding.severity,
            "message_name": finding.message_name, "versions": list(finding.versions), "released": finding.released,
            "line": finding.line, "col": finding.col, "message": finding.message,
            "witness_version": witness.get("version"), "witness_writer": witness.get("writer"),
            "witness_hex": witness.get("hex"), "witness_reading": witness_reading(witness), "error": None}


def witness_reading(witness: dict[str, Any]) -> str | None:
    """What the other revision does with a witness's bytes, as ``krpc-lint compat`` words it, so the report
    shows the proof and not only the bytes."""
    from linter.report.formats import witness_outcome

    return witness_outcome(witness) if witness else None


def _error_row(ddl: str, known: dict[str, Any], problem: Exception | str) -> dict[str, Any]:
    """A row saying why a unit failed, in one line: the exception and where it was raised, never a traceback."""
    row = dict.fromkeys(schema.columns(ddl))
    row.update(known)
    if isinstance(problem, Exception):
        where = traceback.extract_tb(problem.__traceback__)[-1:] if problem.__traceback__ else []
        at = f" (at {PurePosixPath(where[0].filename).name}:{where[0].lineno})" if where else ""
        problem = f"{type(problem).__name__}: {str(problem).splitlines()[0] if str(problem) else ''}{at}"
    row["error"] = problem
    return row


# --- units from a history ----------------------------------------------------------------------


def pair_columns(pair: RevisionPair) -> dict[str, Any]:
    """The CHANGES columns that say which pair a change belongs to."""
    return {"lineage": pair.lineage, "old_commit": pair.old.commit, "new_commit": pair.new.commit,
            "time": datetime.fromtimestamp(pair.new.time, UTC), "release": pair.new.release,
            "old_path": pair.old.path, "new_path": pair.new.path or pair.old.path, "old_blob": pair.old.blob,
            "new_blob": pair.new.blob, "released_in": pair.released_in}


@dataclass
class Units:
    """The work of one audit: blobs to lint and pairs to compare, and the spec revisions they come from."""

    blobs: list[BlobUnit] = field(default_factory=list)
    pairs: list[PairUnit] = field(default_factory=list)
    revisions: list[SpecRevision] = field(default_factory=list)
    skipped: int = 0  # paths of other JSON that git listed but no revision of which is a spec


def units(history: History) -> Units:
    """Every work unit, each distinct blob read once (the releases' files included).

    Specs are told from other JSON as every command does (``parse.discovery.is_spec``: Kafka's spec
    locations, else spec-like content): a file whose lineage never held a spec is skipped and counted,
    one that held a spec at any revision stays a spec (broken or not).

    A pair is judged against every release (``krpc-lint compat --released auto`` does the same): each
    release's copy of the pair's file, with the request of a response (its ``latestVersionUnstable``
    covers the response). Releases whose copies are the same bytes give the same verdict, so only the
    first of them (in version order) is shipped with the unit."""
    release_files = {tag: history.release_specs(tag) for tag in history.releases}
    wanted = set(history.blobs) | {p.old.blob for p in history.pairs if p.old.blob}  # with --since, an old
    wanted |= {b for files in release_files.values() for b in files.values()}  # side may predate the listed blobs
    contents = history.read_blobs(sorted(wanted))

    def spec(path: str, blob: str | None) -> bool:
        return blob is not None and is_spec(path, lambda: contents.get(blob, b""))

    lineages = {r.lineage for r in history.revisions if spec(r.path, r.blob)}
    lineages |= {p.lineage for p in history.pairs if spec(p.old.path, p.old.blob)}
    revisions = [r for r in history.revisions if r.lineage in lineages]
    skipped = len({r.path for r in history.revisions if r.lineage not in lineages})
    linted = {r.blob for r in revisions}
    unreadable = history.unreadable
    blobs = [BlobUnit(blob, path, contents.get(blob, b""), unreadable.get(blob)) for blob, path in history.blobs.items()
             if blob in linted]
    release_files = {tag: {path: blob for path, blob in files.items() if blob in contents and spec(path, blob)}
                     for tag, files in release_files.items()}
    keys_of = _Keys(contents)
    releases = _release_index(release_files, keys_of)
    pairs = []
    for pair in history.pairs:
        if pair.lineage not in lineages:
            continue
        problem = next((f"{side.path}: {unreadable[side.blob]}" for side in (pair.old, pair.new)
                        if side.blob in unreadable), None)
        if problem is not None:
            pairs.append(PairUnit(pair_columns(pair), b"", None, None, problem))
            continue
        released = _releases_of(pair, releases, contents, keys_of) if release_files else None
        new = contents[pair.new.blob] if pair.new.blob else None
        assert pair.old.blob is not None  # the old side of a pair is the revision that wrote a blob
        pairs.append(PairUnit(pair_columns(pair), contents[pair.old.blob], new, released))
    return Units(blobs, pairs, revisions, skipped)


def _releases_of(pair: RevisionPair, releases: dict[str, dict[PairKey, tuple[str, str]]], contents: dict[str, bytes],
                 keys_of: Callable[[str, str], tuple[PairKey, ...]]) -> list[tuple[str, dict[str, bytes]]]:
    """The distinct release copies of the pair's message and of its request partner, found as compat pairs
    messages across whole trees: by (type, apiKey), by name, by path (Kafka renamed and moved specs)."""
    wanted = [key for blob, path in ((pair.old.blob, pair.old.path), (pair.new.blob, pair.new.path)) if blob
              for key in keys_of(blob, path)]
    partners = [("api", "request", key[2]) for key in wanted if key[0] == "api" and key[1] == "response"]
    out, seen = [], set()
    for tag, index in releases.items():
        found = next((index[key] for key in wanted if key in index), None)
        if found is None:
            continue  # the release does not have the message (a partner alone says nothing)
        chosen = {found[0]: found[1]}
        chosen.update(index[key] for key in partners if key in index)
        signature = tuple(sorted(chosen.items()))
        if signature not in seen:
            seen.add(signature)
            out.append((tag, {path: contents[blob] for path, blob in chosen.items()}))
    return out


def _release_index(release_files: dict[str, dict[str, str]], keys_of: Callable[[str, str], tuple[PairKey, ...]]
                   ) -> dict[str, dict[PairKey, tuple[str, str]]]:
    """Per release: each spec's (path, blob) by the keys it is paired with; a key two files share (metadata
    records of two directories with one apiKey) pairs nothing, as in ``compare.pair_messages``."""
    out = {}
    for tag, files in release_files.items():
        index: dict[PairKey, tuple[str, str] | None] = {}
        for path in sorted(files):
            for key in keys_of(files[path], path):
                index[key] = None if key in index else (path, files[path])
        out[tag] = {key: found for key, found in index.items() if found is not None}
    return out


class _Keys:
    """The pairing keys of a blob's message, parsed once per blob: (type, apiKey), name, path."""

    def __init__(self, contents: dict[str, bytes]) -> None:
        self.contents = contents
        self.messages: dict[str, Any] = {}

    def __call__(self, blob: str, path: str) -> tuple[PairKey, ...]:
        from linter.engine.context import FileContext
        from linter.parse.document import read_document

        if blob not in self.messages:
            self.messages[blob] = FileContext(read_document(path, self.contents[blob])).message
        message = self.messages[blob]
        keys: list[PairKey] = [("path", path)]
        if message is not None and message.api_key is not None:
            keys.insert(0, ("api", message.type, message.api_key))
        if message is not None and message.name:
            keys.insert(len(keys) - 1, ("name", message.name))
        return tuple(keys)


def run_in_process(work: Units) -> dict[str, list[dict[str, Any]]]:
    """The audit's findings and changes without Spark: the peer the distributed run is measured against."""
    return {"findings": [row for unit in work.blobs for row in lint_blob(unit)],
            "changes": [row for unit in work.pairs for row in compare_pair(unit)]}


# --- Spark ---------------------------------------------------------------------------------------


class Progress(Protocol):
    """What a run reports as it goes (``progress.RunProgress`` draws it)."""

    def step(self, text: str) -> None: ...

    def watch(self, spark: Any) -> None: ...


class Silent:
    """No progress output: the library default."""

    def step(self, text: str) -> None:
        """Ignore the step."""

    def watch(self, spark: Any) -> None:
        """Ignore the session."""


@dataclass
class AuditSummary:
    """What an audit did, for the CLI and the report's header."""

    out: str
    commits: int
    revisions: int
    blobs: int
    pairs: int
    findings: int
    changes: int
    errors: int
    seconds: float
    master: str
    meta: dict[str, Any] = field(default_factory=dict)


def run_unit(unit: BlobUnit | PairUnit) -> list[tuple[str, dict[str, Any]]]:
    """One unit of either kind, its rows tagged with the table they belong to."""
    if isinstance(unit, BlobUnit):
        return [("findings", row) for row in lint_blob(unit)]
    return [("changes", row) for row in compare_pair(unit)]


def distributed(spark: SparkSession, work: Units) -> dict[str, list[dict[str, Any]]]:
    """Every unit run on the executors in one job (lint and compat interleaved, heaviest first).

    The rows come back to the driver: they are small (findings and changes, not specs), so the
    driver writes the datasets itself and ``--out`` need not be storage the executors share.
    """
    # Biggest units first, so the last tasks to run are short ones and executors finish together.
    items: list[BlobUnit | PairUnit] = sorted([*work.blobs, *work.pairs], key=_unit_size, reverse=True)
    context = spark.sparkContext
    slices = max(1, min(len(items), context.defaultParallelism * 4))
    tables: dict[str, list[dict[str, Any]]] = {"findings": [], "changes": []}
    for table, row in context.parallelize(items, slices).flatMap(run_unit).collect():
        tables[table].append(row)
    return tables


def _unit_size(unit: BlobUnit | PairUnit) -> int:
    """Comparing costs several times linting: weigh pairs up so they are scheduled first."""
    return len(unit.data) if isinstance(unit, BlobUnit) else 4 * len(unit.old)


# At most this many distinct blobs and revision pairs, and no --master: the audit runs in this process.
# Spark's start alone (4-6 s and a 370 MB JVM on 2 cores) costs more than such a history's work
# (docs/performance.md: 1-26 ms a unit, so 200 units take 0.2-5 s); a vendor's copy or a branch
# audits in about a second.
IN_PROCESS_UNITS = 200


def reads_history(target: Path, repo: Path) -> bool:
    """Whether an output at ``target`` inside ``repo`` lands in what an audit reads: the object store
    (``.git``; all of a bare repository), not the working tree, so ``audit . --out audit`` is allowed."""
    git = repo / ".git"
    return not git.exists() or target.is_relative_to(git)


def audit(repo: str, out: str, *, refs: Iterable[str] = (), paths: Iterable[str] = (), since: str | None = None,
          master: str | None = None, overwrite: bool = False, spark: SparkSession | None = None,
          progress: Progress | None = None, all_branches: bool = False, first_parent: bool = False) -> AuditSummary:
    """Audit ``repo``'s history into ``out`` (Parquet datasets and report.html); ``all_branches`` adds every
    branch (local and remote-tracking, as Kafka's release branches are in a clone) to ``refs``."""
    from linter.spark.session import require_pyspark, session

    if spark is None and master is not None:
        require_pyspark()  # Spark is certain: a missing extra or Java is the first thing to say (else ``session``
        # says it once a large history is read; a small one runs without Spark)
    progress = progress or Silent()
    started = time.monotonic()
    with atomic_directory(out, overwrite=overwrite, inputs=[repo], reads=reads_history) as work_dir:
        progress.step("reading the history")
        refs = [*refs, *(branches(repo) if all_branches else ())]
        history = extract(repo, refs=list(dict.fromkeys(refs)) or None, paths=list(paths) or None, since=since,
                          first_parent=first_parent)
        small = spark is None and master is None and len(history.blobs) + len(history.pairs) <= IN_PROCESS_UNITS
        with ThreadPoolExecutor(1) as pool:  # the JVM starts while the driver parses the blobs for their units
            starting = pool.submit(session, master) if spark is None and not small else None
            work = units(history)
            skipped = f" ({work.skipped} other JSON files skipped)" if work.skipped else ""
            progress.step(f"{len(work.revisions)} spec revisions, {len(work.blobs)} distinct blobs, "
                          f"{len(work.pairs)} revision pairs{skipped}; "
                          f"{'a small history: no Spark' if small else 'starting Spark'}")
            spark = spark or (starting.result() if starting is not None else None)
        progress.step("linting the blobs and comparing the revision pairs")
        if spark is None:
            where, found = IN_PROCESS, run_in_process(work)
        else:
            progress.watch(spark)
            where, found = spark.sparkContext.master, distributed(spark, work)
        tables = {"revisions": [r.to_row() for r in work.revisions], **found}
        progress.step("writing revisions/, findings/, changes/")
        for name, rows in tables.items():
            write_parquet(rows, getattr(schema, name.upper()), work_dir / name)
        errors = sum(1 for table in ("findings", "changes") for row in tables[table] if row["error"])
        summary = AuditSummary(out, len({r.commit for r in work.revisions}), len(work.revisions),
                               len(work.blobs), len(work.pairs), len(tables["findings"]), len(tables["changes"]),
                               errors, round(time.monotonic() - started, 1), where)
        summary.meta = _meta(repo, history, summary)
        progress.step("writing report.html")
        _write_report(work_dir, tables, summary.meta)
        (work_dir / "summary.json").write_text(json.dumps(summary.meta, indent=2, default=str) + "\n")
    return summary


def _meta(repo: str, history: History, summary: AuditSummary) -> dict[str, Any]:
    return {"repository": str(Path(repo).resolve()), "refs": ", ".join(history.refs),
            "globs": ", ".join(history.globs_used), "releases": len(history.releases), "pairs": summary.pairs,
            "seconds": summary.seconds, "master": summary.master, "krpc_lint": tool_version()}


def _write_report(work_dir: Path, tables: dict[str, list[dict[str, Any]]], meta: dict[str, Any]) -> None:
    from linter.audit.report_html import render_report

    html = render_report(tables["revisions"], tables["findings"], tables["changes"],
                         title=f"krpc-lint audit of {Path(meta['repository']).name}", meta=meta)
    (work_dir / "report.html").write_text(html, encoding="utf-8")
