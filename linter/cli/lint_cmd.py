"""``krpc-lint lint``: the command parses its options into ``LintOptions``; short steps do the work (the config the
flags make, the paths a run reads, the baseline written, the fix or diff, the report). Like ``main``, this module
imports only click at start-up: the engine loads when the command runs."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import click

from linter.cli.common import (
    NonEmptyPath,
    configured,
    finish_report,
    kafka_version_option,
    refuse_overlap,
    report_options,
    write_file,
)
from linter.escape import printable

if TYPE_CHECKING:
    from linter.engine.config import Config
    from linter.engine.findings import Report


class LintOptions(NamedTuple):  # not a dataclass: cheaper to define, and every krpc-lint start defines it
    """What ``krpc-lint lint`` was asked, as click parsed it (None: a flag not given, the config decides)."""

    paths: tuple[str, ...]
    fmt: str
    profile: str | None
    fail_on: str | None
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    preview: bool | None
    config_file: str | None
    baseline: str | None
    output: str | None
    color: bool | None
    kafka_version: str | None
    write_baseline: str | None
    changed_since: str | None
    allow_empty: bool
    no_siblings: bool
    no_cache: bool
    cache_dir: str | None
    fix: bool = False
    show_diff: bool = False


@click.command("lint")
@click.argument("paths", nargs=-1, type=NonEmptyPath())
@report_options
@kafka_version_option
@click.option("--write-baseline", type=NonEmptyPath(dir_okay=False), default=None,
              help="Record every current finding in this file and exit 0.")
@click.option("--changed-since", metavar="REF", default=None,
              help="Lint only the spec files changed since this git revision (committed or not, and untracked "
                   "ones), with their directories as context; PATHS default to '.'.")
@click.option("--allow-empty", is_flag=True, help="A directory without spec files is not an error (exit 0).")
@click.option("--no-siblings", is_flag=True,
              help="Check files named one by one alone, not with the other specs of their directory as context.")
@click.option("--no-cache", is_flag=True, help="Check every file again instead of reusing unchanged files' findings.")
@click.option("--cache-dir", type=NonEmptyPath(file_okay=False), default=None, envvar="KRPC_LINT_CACHE_DIR",
              help="Where findings are cached (default: ~/.cache/krpc-lint).")
@click.option("--fix", is_flag=True,
              help="Apply the edits of fixable rules' findings to the linted files, then report what remains.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Print the unified diff --fix would apply and write nothing; exit 1 when there is one.")
@click.pass_context
def lint_command(ctx: click.Context, /, **options: Any) -> None:
    """Lint spec files and directories (directories are searched for *.json)."""
    from linter.engine.runner import lint

    given = LintOptions(**options)
    _refuse_misuse(ctx, given)
    config = _config(given)
    paths, read = _targets(given, config)
    files = _named_files(given, paths, config)
    if given.write_baseline:
        _write_baseline(ctx, given.write_baseline, paths, read, config)
    if given.output:
        refuse_overlap(given.output, [*read, config.source, config.baseline],
                       "a linted path, the config or the baseline")
    report = lint(paths, config)
    if given.fix or given.show_diff:
        report = _fix_or_diff(ctx, given.show_diff, report, paths, config, files)
    _finish(ctx, given, report, config, files)


def _refuse_misuse(ctx: click.Context, given: LintOptions) -> None:
    """Usage errors click cannot see: no paths without --changed-since, --fix and --diff alone."""
    if not given.paths and given.changed_since is None:
        raise click.MissingParameter(ctx=ctx, param=next(p for p in ctx.command.params if p.name == "paths"))
    if (given.fix or given.show_diff) and (given.write_baseline or (given.fix and given.show_diff)):
        raise click.UsageError("--fix and --diff go neither together nor with --write-baseline")


def _config(given: LintOptions) -> Config:
    """The config file's settings with the flags given in their place."""
    from linter.engine.cache import default_cache_dir

    return configured(
        given.config_file, select=given.select, ignore=given.ignore, preview=given.preview,
        profile=given.profile,
        kafka_version=given.kafka_version,
        fail_on=given.fail_on,
        baseline=given.baseline,
        cache_dir=None if given.no_cache else (given.cache_dir or str(default_cache_dir())),
        allow_empty=given.allow_empty or None,
        siblings=False if given.no_siblings else None,
    )


def _targets(given: LintOptions, config: Config) -> tuple[tuple[str, ...], list[str]]:
    """The paths to lint, and every path the run reads (no output may land on one)."""
    paths = given.paths or (".",)  # only --changed-since comes without paths
    read = _read_paths(paths, config)
    if given.changed_since is not None:
        paths = _changed_specs(given.changed_since, paths, config)
        read += _read_paths(paths, config)
    return paths, read


def _named_files(given: LintOptions, paths: tuple[str, ...], config: Config) -> list[str]:
    """The linted files, by name: junit's passing cases, and the only files --fix/--diff may edit."""
    if given.fmt != "junit" and not given.fix and not given.show_diff:
        return []
    from linter.engine.runner import collect_files, display_paths

    return display_paths(collect_files(paths, config).files)


def _write_baseline(ctx: click.Context, target: str, paths: tuple[str, ...], read: list[str],
                    config: Config) -> NoReturn:
    """``--write-baseline``: every current finding recorded (the configured baseline left out), then exit 0."""
    from linter.engine.runner import lint
    from linter.engine.suppress import write_baseline as record
    from linter.vocabulary import plural

    refuse_overlap(target, [*read, config.source], "a linted path or the config")
    report = lint(paths, replace(config, baseline=None))
    _say_notes(report.notes)
    write_file(target, lambda file: record(report.findings, file))
    click.echo(printable(f"krpc-lint: recorded {plural(len(report.findings), 'finding')} in {target}"), err=True)
    ctx.exit(0)


def _fix_or_diff(ctx: click.Context, show_diff: bool, report: Report, paths: tuple[str, ...], config: Config,
                 files: list[str]) -> Report:
    """``--diff`` prints the edits and exits (1 when there are some); ``--fix`` applies them and returns what
    remains."""
    from linter.cli.lint_fix import apply_fixes
    from linter.cli.lint_fix import show_diff as print_diff
    from linter.engine.runner import lint

    if show_diff:
        ctx.exit(1 if print_diff(report, files) else 0)
    return lint(paths, config) if apply_fixes(report, files) else report


def _finish(ctx: click.Context, given: LintOptions, report: Report, config: Config, files: list[str]) -> NoReturn:
    """The notes, then the report in its format and the exit code of its findings."""
    from linter.engine.runner import select_rules

    _say_notes(report.notes)
    fixable = sum(1 for finding in report.findings if finding.fix)
    finish_report(ctx, report, given.fmt, given.output, config, color=given.color,
                  rules=select_rules(config).effective() if given.fmt == "sarif" else None,
                  files=files if given.fmt == "junit" else None,
                  fixable=f"{fixable} fixable with `krpc-lint lint --fix` (`--diff` shows the edits)" if fixable else "")


def _say_notes(notes: list[str]) -> None:
    """What the run inferred from the linted tree (a fork's generator), once each, on stderr."""
    for note in notes:
        click.echo(printable(f"krpc-lint: {note}"), err=True)


def _changed_specs(ref: str, paths: tuple[str, ...], config: Config) -> tuple[str, ...]:
    """``--changed-since``: the spec files below ``paths`` that differ from REF, named one by one (so their
    directories are read as context, as pre-commit's files are); a git problem is a usage error."""
    from linter.compat.sources import changed_specs

    return tuple(changed_specs(ref, paths, config, f"--changed-since {ref}"))


def _read_paths(paths: tuple[str, ...], config: Config) -> list[str]:
    """What a lint of ``paths`` reads: the paths, and the directory of each file named alone when its siblings
    are read with it (so a report there that the next run would take for a sibling spec is refused)."""
    files = [path for path in paths if os.path.isfile(path)] if config.siblings else []
    return [*paths, *(os.path.dirname(path) or "." for path in files)]
