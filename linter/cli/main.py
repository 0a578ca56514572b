"""``krpc-lint``: lint Kafka message specs, list and explain the rules, print the spec schema.

Exit codes: 0 when no finding reaches the fail level, 1 when one does, 2 for usage errors
(bad path, config, selector or baseline) and internal errors.

This module imports only click: the engine, rich and the output formats load inside the
commands that use them, so ``--help``, ``--version`` and ``schema`` stay fast.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from linter.engine.rules import Rule

from linter.cli.common import (
    CliError,
    config_option,
    finish_output,
    guard_stdio,
    load_config_file,
    translate,
)
from linter.errors import KrpcLintError
from linter.vocabulary import PROFILES, in_profile


class _App(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # an output that fails (`| head -c1`, a full disk) too: one line, exit 2
            raise translate(exc) from exc


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from linter.vocabulary import tool_version

    click.echo(f"krpc-lint {tool_version()}")
    ctx.exit()


@click.group(cls=_App, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def cli() -> None:
    """Lint Apache Kafka message-spec JSON files."""


# --- rules ---------------------------------------------------------------------------------

_COLUMNS = ("id", "name", "severity", "category", "profiles", "title")


def _rule_dict(rule: Rule) -> dict[str, Any]:
    return {"id": rule.id, "name": rule.name, "severity": rule.severity, "category": rule.category,
            "profiles": list(rule.profiles), "title": rule.title, "rationale": rule.rationale,
            "hint": rule.hint, "references": list(rule.references), "status": rule.status,
            "replaced-by": rule.replaced_by}


def _rule_row(rule: Rule) -> dict[str, str]:
    """The table columns of a rule, as text; a rule that is not stable says so after its title."""
    data = {**_rule_dict(rule), "title": rule.listed_title}
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

    rules = [rule for rule in all_rules(load_config_file(config_file)) if profile is None or in_profile(profile, rule.profiles)]
    if fmt == "json":
        from linter.escape import json_text

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
    """Prose re-wrapped to 88 columns, keeping its blank-line paragraph breaks (found by RE2: a pack's text is
    input, and ``re`` took quadratic time on ``"\n" * n``)."""
    import textwrap

    from linter.parse.linear import linear

    return "\n\n".join(textwrap.fill(part, 88) for part in linear(r"\n\s*\n").split(text.strip()) if part.strip())


def explain_text(rule: Rule) -> str:
    """Everything a rule documents, as plain text."""
    parts = [
        f"{rule.title}\n",
        "".join(f"{label + ':':<11}{value}\n" for label, value in (
            ("Id", rule.id), ("Name", rule.name), ("Severity", rule.severity), ("Category", rule.category),
            ("Profiles", ", ".join(rule.profiles)), ("Status", rule.status_text),
            *((("Kafka", f"{rule.releases_text} (--kafka-version)"),) if rule.releases_text else ()))),
        _section("Rationale", _paragraphs(rule.rationale)),
    ]
    if rule.hint:
        fixable = (f"\n\nFixable: `krpc-lint lint --fix` applies the fix (`--diff` shows it). {rule.fix_note}".rstrip()
                   if rule.fixable else "")
        parts.append(_section("How to fix", _paragraphs(rule.hint) + fixable))
    if rule.references:
        parts.append(_section("References", "\n".join(f"- {ref}" for ref in rule.references)))
    definition = rule.check_def
    if definition is not None:
        import json

        options = rule.check.get("options")
        called = f"{definition.name} {json.dumps(options)}" if options else definition.name
        parts.append(_section("Check", f"{called}\n{_paragraphs(definition.doc)}"))
    for kind in ("bad", "good"):
        examples = [example for example in rule.examples if example.kind == kind]
        for number, example in enumerate(examples, 1):
            label = f"{kind.capitalize()} example" + (f" {number}" if len(examples) > 1 else "")
            if len(example.files) == 1 and rule.scope != "compat":  # compat: the file name says which side
                body = next(iter(example.texts.values()))
            else:
                body = "\n".join(f"--- {name}\n{text.rstrip()}" for name, text in example.texts.items())
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
    """Console entry point (``krpc-lint``): stdout is guarded (``common.guard_stdio``) and flushed before the
    exit, so an output that fails is one line and exit 2 even when the failure comes with the last bytes."""
    guard_stdio()
    try:
        cli.main(args=argv, prog_name="krpc-lint")
        code: Any = 0
    except SystemExit as done:
        code = done.code
    except KrpcLintError as exc:  # click's own output (--help, --version) could not be written
        translate(exc).show()
        code = 2
    sys.exit(finish_output(code) if isinstance(code, int) else code)


# --- lint (linter/cli/lint_cmd.py) ---------------------------------------------------------

from linter.cli.lint_cmd import lint_command

cli.add_command(lint_command)

# --- codec (linter/cli/codec_cmd.py) --------------------------------------------------------

from linter.cli.codec_cmd import codec_group

cli.add_command(codec_group)

# --- compat, changelog, matrix (linter/cli/compat_cmd.py) ------------------------------------

from linter.cli.compat_cmd import changelog_command, compat_command, matrix_command

for _command in (compat_command, changelog_command, matrix_command):
    cli.add_command(_command)

# --- audit, replay, frames (PySpark only when they run) ------------------------------------------

from linter.cli.audit_cmd import audit_command
from linter.cli.frames_check_cmd import check_command as _frames_check  # noqa: F401 - registers frames check
from linter.cli.frames_cmd import frames_group
from linter.cli.replay_cmd import replay_command

for _command in (audit_command, replay_command, frames_group):
    cli.add_command(_command)

# --- conformance (linter/cli/conformance_cmd.py) --------------------------------------------

from linter.cli.conformance_cmd import conformance_command

cli.add_command(conformance_command)

# --- size (linter/cli/size_cmd.py) ----------------------------------------------------------

from linter.cli.size_cmd import size_command

cli.add_command(size_command)

# --- readiness (linter/cli/readiness_cmd.py) -----------------------------------------------------

from linter.cli.readiness_cmd import readiness_command
from linter.cli.server_cmd import server_command

cli.add_command(readiness_command)
cli.add_command(server_command)

if __name__ == "__main__":
    main()
