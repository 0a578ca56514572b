"""``krpc-lint``: lint Kafka message specs, list and explain the rules, print the spec schema.

Exit codes: 0 when no finding reaches the fail level, 1 when one does, 2 for usage errors
(bad path, config, selector or baseline) and internal errors.

This module imports only click: the engine, rich and the output formats load inside the
commands that use them, so ``--help``, ``--version`` and ``schema`` stay fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from linter.engine.config import Config
    from linter.engine.rules import Rule

from linter.cli.common import (
    CliError,
    InternalError,
    emit,
    load_config_file,
    refuse_overlap,
)
from linter.engine.levels import FORMATS, KAFKA_VERSIONS, PROFILES, SEVERITIES

DEBUG_ENV = "KRPC_LINT_DEBUG"


def _translate(exc: Exception) -> CliError:
    """Known problems become usage errors; anything else is an internal error."""
    try:
        from linter.engine.config import ConfigError
        from linter.engine.rules import RuleError
        from linter.engine.runner import UsageError
        from linter.engine.suppress import BaselineError
    except Exception:  # noqa: BLE001 - a broken install: report the original problem, not this one
        known: tuple[type[Exception], ...] = ()
    else:
        known = (UsageError, ConfigError, RuleError, BaselineError)
    if isinstance(exc, known):
        return CliError(str(exc))
    if os.environ.get(DEBUG_ENV) == "1":
        import traceback

        traceback.print_exception(exc)
    return InternalError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


class _App(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # `krpc-lint rules | head`: stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except Exception as exc:
            raise _translate(exc) from exc


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from linter.report.formats import tool_version

    click.echo(f"krpc-lint {tool_version()}")
    ctx.exit()


@click.group(cls=_App, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def cli() -> None:
    """Lint Apache Kafka message-spec JSON files."""


config_option = click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), default=None,
    help="Config file (default: .krpc-lint.yaml or pyproject.toml [tool.krpc-lint] found from the "
         "working directory up).")


kafka_version_option = click.option(
    "--kafka-version", type=click.Choice(KAFKA_VERSIONS), default=None, metavar="VERSION",
    help="Apply exactly the generator rules of this Kafka release (2.8, 3.0 ... 3.9, 4.0 ... 4.3, trunk); "
         "default: the config's, else any: what some supported release accepts.")


# --- lint ----------------------------------------------------------------------------------


@cli.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="Output format.")
@click.option("--profile", type=click.Choice(PROFILES), default=None,
              help="Rule profile (default: the config's, else recommended).")
@kafka_version_option
@click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
              help="Lowest severity that makes the exit code 1 (default: the config's, else error).")
@click.option("--select", multiple=True, metavar="RULE",
              help="Also run these rules (id, id prefix, name, category or profile); repeatable.")
@click.option("--ignore", multiple=True, metavar="RULE", help="Do not run these rules; repeatable.")
@config_option
@click.option("--baseline", type=click.Path(dir_okay=False), default=None,
              help="Leave out the findings recorded in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), default=None,
              help="Record every current finding in this file and exit 0.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file instead of standard output (the summary line goes to stderr).")
@click.option("--changed-since", metavar="REF", default=None,
              help="Lint only the spec files changed since this git revision (committed or not, and untracked "
                   "ones), with their directories as context; PATHS default to '.'.")
@click.option("--color/--no-color", default=None,
              help="Colour the text report (default: when standard output is a terminal and NO_COLOR is unset).")
@click.option("--allow-empty", is_flag=True, help="A directory without spec files is not an error (exit 0).")
@click.option("--no-siblings", is_flag=True,
              help="Check files named one by one alone, not with the other specs of their directory as context.")
@click.option("--no-cache", is_flag=True, help="Check every file again instead of reusing unchanged files' findings.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, envvar="KRPC_LINT_CACHE_DIR",
              help="Where findings are cached (default: ~/.cache/krpc-lint).")
@click.pass_context
def lint_command(ctx: click.Context, paths: tuple[str, ...], fmt: str, profile: str | None, kafka_version: str | None,
                 fail_on: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
                 config_file: str | None, baseline: str | None, write_baseline: str | None,
                 output: str | None, changed_since: str | None, color: bool | None, allow_empty: bool,
                 no_siblings: bool, no_cache: bool, cache_dir: str | None) -> None:
    """Lint spec files and directories (directories are searched for *.json)."""
    from linter.engine.runner import collect_files, display_paths, lint, select_rules
    from linter.report.formats import render, summary_line

    if not paths and changed_since is None:
        raise click.MissingParameter(ctx=ctx, param=next(p for p in ctx.command.params if p.name == "paths"))

    config = load_config_file(config_file)
    config = config.with_overrides(
        profile=profile,
        kafka_version=kafka_version,
        fail_on=fail_on,
        select=(*config.select, *select) if select else None,
        ignore=(*config.ignore, *ignore) if ignore else None,
        baseline=baseline,
        cache_dir=None if no_cache else (cache_dir or str(_default_cache_dir())),
        allow_empty=allow_empty or None,
        siblings=False if no_siblings else None,
    )
    paths = paths or (".",)  # only --changed-since comes without paths
    read = _read_paths(paths, config)
    if changed_since is not None:
        paths = _changed_specs(changed_since, paths, config)
        read += _read_paths(paths, config)
    files = collect_files(paths, config).files if fmt == "junit" else []
    if write_baseline:
        refuse_overlap(write_baseline, [*read, config.source], "a linted path or the config")
        report = lint(paths, replace(config, baseline=None))
        from linter.engine.suppress import write_baseline as record

        _write(write_baseline, lambda file: record(report.findings, file))
        count = len(report.findings)
        click.echo(f"krpc-lint: recorded {count} finding{'' if count == 1 else 's'} in {write_baseline}", err=True)
        ctx.exit(0)
    if output:
        refuse_overlap(output, [*read, config.source, config.baseline],
                       "a linted path, the config or the baseline")
    report = lint(paths, config)
    rules = None
    if fmt == "sarif":
        rules = select_rules(config).effective()
    if color is None:
        color = output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    color = color and fmt == "text"
    text = render(report, fmt, color=color, rules=rules,
                  files=display_paths(files) if fmt == "junit" else None)
    emit(text, output, color=color)
    if output:  # the report is in the file: say what it holds, as ruff does
        click.echo(f"{summary_line(report).removesuffix('.')}; wrote {output}", err=True)
    ctx.exit(1 if report.failed(config.fail_on) else 0)


def _changed_specs(ref: str, paths: tuple[str, ...], config: Config) -> tuple[str, ...]:
    """``--changed-since``: the spec files below ``paths`` that differ from REF, named one by one (so their
    directories are read as context, as pre-commit's files are); a git problem is a usage error."""
    from linter.compat.sources import SourceError, changed_specs

    try:
        return tuple(changed_specs(ref, paths, config, f"--changed-since {ref}"))
    except SourceError as exc:
        raise CliError(str(exc)) from None


def _read_paths(paths: tuple[str, ...], config: Config) -> list[str]:
    """What a lint of ``paths`` reads: the paths, and the directory of each file named alone when its siblings
    are read with it (so a report there that the next run would take for a sibling spec is refused)."""
    files = [path for path in paths if os.path.isfile(path)] if config.siblings else []
    return [*paths, *(os.path.dirname(path) or "." for path in files)]


def _default_cache_dir() -> Path:
    from linter.engine.cache import default_cache_dir

    return default_cache_dir()


def _write(file: str, write: Callable[[str], object]) -> None:
    """``write(file)``, with an unwritable file reported as a usage error."""
    try:
        write(file)
    except OSError as exc:
        raise CliError(f"{file}: cannot write: {exc.strerror or exc}") from None


# --- rules ---------------------------------------------------------------------------------

_COLUMNS = ("id", "name", "severity", "category", "profiles", "title")


def _rule_dict(rule: Rule) -> dict[str, Any]:
    return {"id": rule.id, "name": rule.name, "severity": rule.severity, "category": rule.category,
            "profiles": list(rule.profiles), "title": rule.title, "rationale": rule.rationale,
            "hint": rule.hint, "references": list(rule.references)}


def _rule_row(rule: Rule) -> dict[str, str]:
    """The table columns of a rule, as text."""
    data = _rule_dict(rule)
    return {column: ",".join(data[column]) if column == "profiles" else data[column] for column in _COLUMNS}


def _column_widths(rows: list[dict[str, str]]) -> dict[str, int]:
    return {column: max(len(row[column]) for row in [dict(zip(_COLUMNS, _COLUMNS, strict=True)), *rows]) for column in _COLUMNS}


def _plain_table(rows: list[dict[str, str]]) -> str:
    widths = _column_widths(rows)
    lines = []
    for row in [{column: column.upper() for column in _COLUMNS}, *rows]:
        cells = [row[column].ljust(widths[column]) for column in _COLUMNS[:-1]]
        lines.append("  ".join([*cells, row["title"]]).rstrip())
    return "\n".join(lines) + "\n"


def _print_table(rows: list[dict[str, str]]) -> None:
    """A rich table on a terminal wide enough for every column but the title; plain text otherwise."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from linter.report.formats import SEVERITY_STYLE

    console = Console(highlight=False)
    widths = _column_widths(rows)
    if console.width < sum(widths[column] + 2 for column in _COLUMNS[:-1]) + 24:
        console.print(_plain_table(rows), end="", markup=False, soft_wrap=True)
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in _COLUMNS[:-1]:
        table.add_column(column.upper(), no_wrap=True, min_width=widths[column])
    table.add_column("TITLE", overflow="fold")
    for row in rows:
        cells = [Text(row[column], style=SEVERITY_STYLE.get(row[column], "")) if column == "severity"
                 else Text(row[column]) for column in _COLUMNS]
        table.add_row(*cells)
    console.print(table)


@cli.group("rules", invoke_without_command=True)
@click.option("--profile", type=click.Choice(PROFILES), default=None, help="Only the rules of this profile.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@config_option
@click.pass_context
def rules_group(ctx: click.Context, profile: str | None, fmt: str, config_file: str | None) -> None:
    """List the rules; `rules explain ID` explains one."""
    if ctx.invoked_subcommand is not None:
        return
    from linter.engine.runner import all_rules

    rules = [rule for rule in all_rules(load_config_file(config_file)) if profile is None or profile in rule.profiles]
    if fmt == "json":
        from linter.report.escape import json_text

        click.echo(json_text([_rule_dict(rule) for rule in rules]), nl=False)
    elif sys.stdout.isatty():
        _print_table([_rule_row(rule) for rule in rules])
    else:
        click.echo(_plain_table([_rule_row(rule) for rule in rules]), nl=False)


def _find_rule(rules: list[Rule], ref: str) -> Rule:
    wanted = ref.strip().lower()
    for rule in rules:
        if wanted in (rule.id.lower(), rule.name.lower()):
            return rule
    import difflib

    keys = [key for rule in rules for key in (rule.id, rule.name)]
    close = difflib.get_close_matches(ref, keys, n=3)
    suggestion = f"; did you mean {' or '.join(close)}?" if close else ""
    raise CliError(f"unknown rule {ref!r}{suggestion} (`krpc-lint rules` lists them)")


def _section(title: str, body: str) -> str:
    import textwrap

    return f"{title}:\n{textwrap.indent(body.rstrip(), '  ')}\n"


def _paragraphs(text: str) -> str:
    """Prose re-wrapped to 88 columns, keeping its blank-line paragraph breaks."""
    import re
    import textwrap

    return "\n\n".join(textwrap.fill(part, 88) for part in re.split(r"\n\s*\n", text.strip()) if part.strip())


def explain_text(rule: Rule) -> str:
    """Everything a rule documents, as plain text."""
    parts = [
        f"{rule.title}\n",
        "".join(f"{label + ':':<11}{value}\n" for label, value in (
            ("Id", rule.id), ("Name", rule.name), ("Severity", rule.severity), ("Category", rule.category),
            ("Profiles", ", ".join(rule.profiles)),
            *((("Kafka", f"enforced since {rule.kafka_since} (--kafka-version)"),) if rule.kafka_since else ()))),
        _section("Rationale", _paragraphs(rule.rationale)),
    ]
    if rule.hint:
        parts.append(_section("How to fix", _paragraphs(rule.hint)))
    if rule.references:
        parts.append(_section("References", "\n".join(f"- {ref}" for ref in rule.references)))
    for kind in ("bad", "good"):
        examples = [example for example in rule.examples if example.kind == kind]
        for number, example in enumerate(examples, 1):
            label = f"{kind.capitalize()} example" + (f" {number}" if len(examples) > 1 else "")
            if len(example.files) == 1 and rule.scope != "compat":  # compat: the file name says which side
                body = next(iter(example.files.values()))
            else:
                body = "\n".join(f"--- {name}\n{text.rstrip()}" for name, text in example.files.items())
            parts.append(_section(label, body))
    return "\n".join(parts)


@rules_group.command("explain")
@click.argument("rule_ref", metavar="ID_OR_NAME")
@config_option
def explain_command(rule_ref: str, config_file: str | None) -> None:
    """Explain one rule: why it exists, how to fix it, and examples."""
    from linter.engine.runner import all_rules

    click.echo(explain_text(_find_rule(all_rules(load_config_file(config_file)), rule_ref)), nl=False)


# --- schema --------------------------------------------------------------------------------


@cli.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of the message-spec format."""
    from linter.model.schema import schema_text

    text = schema_text()
    click.echo(text if text.endswith("\n") else text + "\n", nl=False)


def main(argv: list[str] | None = None) -> None:
    """Console entry point (``krpc-lint``)."""
    cli.main(args=argv, prog_name="krpc-lint")


# --- codec (linter/cli/codec_cmd.py) --------------------------------------------------------

from linter.cli.codec_cmd import codec_group

cli.add_command(codec_group)

# --- compat, changelog, matrix (linter/cli/compat_cmd.py) ------------------------------------

from linter.cli.compat_cmd import changelog_command, compat_command, matrix_command

for _command in (compat_command, changelog_command, matrix_command):
    cli.add_command(_command)

# --- audit, replay, frames (linter/cli/pipeline_cmd.py; PySpark only when they run) ----------

from linter.cli.pipeline_cmd import audit_command, frames_group, replay_command

for _command in (audit_command, replay_command, frames_group):
    cli.add_command(_command)

if __name__ == "__main__":
    main()
