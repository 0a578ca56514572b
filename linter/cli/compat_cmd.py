"""``krpc-lint compat``, ``changelog`` and ``matrix``: compare revisions of the specs.

Exit codes as for ``lint``: 0 when no finding reaches the fail level, 1 when one does (for
``matrix``: when an API has no common version), 2 for usage errors such as an unknown git ref.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import click

from linter.cli.common import (
    NonEmptyPath,
    configured,
    emit,
    finish_report,
    refuse_overlap,
    report_options,
)

if TYPE_CHECKING:
    from linter.compat.revision import Revision


def _disk_inputs(paths: tuple[str, ...], against: str | None) -> list[str]:
    """The inputs on disk an output must not touch: the paths given (the working tree for --against)."""
    given = (paths or (".",)) if against is not None else paths
    return [path for path in given if os.path.exists(path)]


def _revisions(paths: tuple[str, ...], against: str | None) -> tuple[Revision, Revision]:
    """(old, new) from ``OLD NEW`` or ``--against REF [PATHS]``."""
    from linter.compat.sources import against as against_ref
    from linter.compat.sources import read_revision

    if against is not None:
        return against_ref(against, list(paths))  # none: Kafka's spec directories, else "."
    if len(paths) != 2:
        raise click.UsageError("give OLD and NEW (files, directories or REF:path), or --against REF [PATHS]")
    return read_revision(paths[0]), read_revision(paths[1])


def _released(refs: tuple[str, ...]) -> list[Revision] | None:
    """The release revisions ``--released`` names (see ``releases.resolve_released``)."""
    from linter.compat.releases import resolve_released

    return resolve_released(refs, os.getcwd()).revisions


def _short_labels(revisions: Sequence[Revision]) -> list[Revision]:
    """Column and title labels: a directory's last name (``trunk-2024-10``) when that stays unique."""
    short = [os.path.basename(r.label.rstrip("/")) or r.label for r in revisions]
    if len(set(short)) != len(short):
        return list(revisions)
    return [replace(r, label=label) for r, label in zip(revisions, short)]


@click.command("compat")
@click.argument("paths", nargs=-1, type=NonEmptyPath())
@click.option("--against", metavar="REF", default=None,
              help="Compare the git revision REF (old) with the working tree (new) at PATHS "
                   "(default: Kafka's spec directories, else .).")
@click.option("--released", metavar="REF", multiple=True,
              help="Releases whose shipped layouts are frozen (a git ref or directory; repeatable), 'auto' for "
                   "every release tag of the repository (the default in a repository that has them), 'none'; a "
                   "change to a version no release shipped in that form is informational.")
@report_options
@click.option("--cross-check", type=click.IntRange(0, 10_000), default=None, metavar="N",
              help="Values per direction that cross-check each changed version judged compatible (default 4; 0: off).")
@click.option("--no-witness", is_flag=True, help="Do not search for byte-level witnesses of wire breaks.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated values.")
@click.option("--suggest", is_flag=True,
              help="Print the spec edit that keeps every released version's bytes and moves each released wire "
                   "break into a new version (a unified diff; json with --format json); write nothing. Exit 1 "
                   "when a released wire break needs one.")
@click.option("--fix", is_flag=True,
              help="Write the edits --suggest shows into the new revision's files, then report what remains.")
@click.pass_context
def compat_command(ctx: click.Context, paths: tuple[str, ...], against: str | None, released: tuple[str, ...],
                   fmt: str, profile: str | None, fail_on: str | None, select: tuple[str, ...],
                   ignore: tuple[str, ...], preview: bool | None, config_file: str | None, baseline: str | None, output: str | None,
                   color: bool | None, cross_check: int | None, no_witness: bool, seed: int, suggest: bool = False,
                   fix: bool = False) -> None:
    """Compare two revisions of the specs and classify every change.

    OLD and NEW are files, directories or git trees (REF:path). Categories: WIRE_BREAKING,
    NULLABILITY_WIDENED/NARROWED, DEFAULT_CHANGED, VERSION_DROPPED, MAX_VERSION_LOWERED,
    TAG_REMOVED, SOURCE_ONLY, SAFE; each wire break carries a witness from the codec.
    With --suggest or --fix: the edit that moves each released wire break into a new version.
    """
    from linter.compat.compare import DEFAULT_CROSS_CHECK, compare
    from linter.compat.report import compat_ruleset, to_report

    if suggest and (fix or fmt not in ("text", "json") or output):
        raise click.UsageError("--suggest goes with --format text or json, without --fix or --output")
    if output:
        refuse_overlap(output, [*_disk_inputs(paths, against), config_file, baseline], "an input")
    old, new = _revisions(paths, against)
    config = configured(config_file, select=select, ignore=ignore, preview=preview, profile=profile, fail_on=fail_on,
                        baseline=baseline)
    releases = _released(released)
    checks = DEFAULT_CROSS_CHECK if cross_check is None else cross_check
    result = compare(old, new, released=releases, witnesses=not (no_witness or suggest or fix), cross_check=checks,
                     seed=seed)
    if suggest or fix:
        from linter.cli.compat_fix import (
            apply_suggestions,
            require_disk,
            show_suggestions,
        )

        if suggest:
            show_suggestions(ctx, result, fmt)
        require_disk(result)
        if apply_suggestions(result):
            old, new = _revisions(paths, against)
        result = compare(old, new, released=releases, witnesses=not no_witness, cross_check=checks, seed=seed)
    report = to_report(result, config)
    hint = ""
    if fmt == "text" and not fix:
        from linter.cli.compat_fix import fixable_hint

        hint = fixable_hint(result)
    finish_report(ctx, report, fmt, output, config, color=color,
                  rules=compat_ruleset(config)[0].effective("compat") if fmt == "sarif" else None,
                  files=sorted(new.display(r) for r in new.files) if fmt == "junit" else None, fixable=hint)


@click.command("changelog")
@click.argument("old")
@click.argument("new")
@click.option("--format", "fmt", type=click.Choice(("markdown", "json")), default="markdown", show_default=True)
@click.option("--output", "-o", type=NonEmptyPath(dir_okay=False), default=None, help="Write it to this file.")
def changelog_command(old: str, new: str, fmt: str, output: str | None) -> None:
    """A protocol changelog per API between two revisions: what a client must implement."""
    from linter.compat.changelog import changelog

    if output:
        refuse_overlap(output, _disk_inputs((old, new), None), "an input")
    old_rev, new_rev = _short_labels(_revisions((old, new), None))
    log = changelog(old_rev, new_rev)
    emit(log.to_markdown() if fmt == "markdown" else log.to_json(), output)


@click.command("matrix")
@click.argument("specs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(("text", "markdown", "json")), default="text", show_default=True)
@click.option("--include-unstable", is_flag=True, help="Count versions marked latestVersionUnstable as offered.")
@click.pass_context
def matrix_command(ctx: click.Context, specs: tuple[str, ...], fmt: str, include_unstable: bool) -> None:
    """For each API: the versions each spec set supports, the overlap and the negotiated version."""

    from linter.compat.matrix import matrix
    from linter.compat.sources import read_revision

    if len(specs) < 2:
        raise click.UsageError("give at least two spec sets (files, directories or REF:path)")
    twice = next((spec for index, spec in enumerate(specs) if spec in specs[:index]), None)
    if twice is not None:
        raise click.UsageError(f"{twice} is named twice: give each spec set once")
    revisions = [read_revision(spec) for spec in specs]
    table = matrix(_short_labels(revisions), include_unstable=include_unstable)
    if fmt == "json":
        emit(table.to_json())
    else:
        emit(table.to_markdown() if fmt == "markdown" else table.to_text())
    ctx.exit(1 if table.problems else 0)
