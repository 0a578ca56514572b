"""What every command shares: the one translator from errors to messages and exit codes, the options
``lint`` and ``compat`` both take, the config they run with, text that can always be printed, and the one
way a report reaches stdout or a file (atomically, only once it exists, never onto an input).

Imports only click, the error base and the escaping of linter.report.escape at start-up, so every
subcommand module uses it without importing ``linter.cli.main``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from linter.engine.levels import FORMATS, KAFKA_VERSIONS, PROFILES, SEVERITIES
from linter.errors import KrpcLintError
from linter.report.escape import printable, writable

if TYPE_CHECKING:
    from linter.engine.config import Config
    from linter.engine.findings import Report
    from linter.engine.rules import Rule

DEBUG_ENV = "KRPC_LINT_DEBUG"
F = TypeVar("F", bound=Callable[..., Any])


class CliError(click.ClickException):
    """A usage error: the message goes to stderr and the exit code is 2."""

    exit_code = 2
    prefix = "error"

    def show(self, file: Any = None) -> None:
        click.echo(printable(f"krpc-lint: {self.prefix}: {self.message}"), err=True)


class InternalError(CliError):
    prefix = "internal error"


def translate(exc: Exception) -> CliError:
    """The one translator from an exception to what the user sees: krpc-lint's own errors
    (``KrpcLintError``: bad specs, configs, rule packs, bytes, revisions, paths) are usage errors, one
    line and exit 2; anything else is a bug, an internal error (exit 2 too, its traceback with
    ``KRPC_LINT_DEBUG=1``)."""
    if isinstance(exc, CliError):
        return exc
    if isinstance(exc, KrpcLintError):
        return CliError(str(exc))
    if os.environ.get(DEBUG_ENV) == "1":
        import traceback

        traceback.print_exception(exc)
    return InternalError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def _options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several click options as one decorator, applied in the order listed (as in ``--help``)."""
    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


config_option = click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), default=None,
    help="Config file (default: .krpc-lint.yaml or pyproject.toml [tool.krpc-lint] found from the "
         "working directory up).")

kafka_version_option = click.option(
    "--kafka-version", type=click.Choice(KAFKA_VERSIONS), default=None, metavar="VERSION",
    help="Apply exactly the generator rules of this Kafka release (2.8, 3.0 ... 3.9, 4.0 ... 4.3, trunk); "
         "default: the config's, else any: what some supported release accepts.")

# What ``lint`` and ``compat`` report with: the same flags mean the same in both.
report_options = _options(
    click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                 help="Output format."),
    click.option("--profile", type=click.Choice(PROFILES), default=None,
                 help="Rule profile (default: the config's, else recommended)."),
    click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
                 help="Lowest severity that makes the exit code 1 (default: the config's, else error)."),
    click.option("--select", multiple=True, metavar="RULE",
                 help="Also run these rules (id, id prefix, name, category or profile); repeatable."),
    click.option("--ignore", multiple=True, metavar="RULE", help="Do not run these rules; repeatable."),
    click.option("--preview", is_flag=True, default=None,
                 help="Also run the rules in preview (else only those --select names by id or name)."),
    config_option,
    click.option("--baseline", type=click.Path(dir_okay=False), default=None,
                 help="Leave out the findings recorded in this baseline file."),
    click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
                 help="Write the report to this file instead of standard output (the summary line goes to "
                      "stderr)."),
    click.option("--color/--no-color", default=None,
                 help="Colour the text report (default: when standard output is a terminal and NO_COLOR is "
                      "unset)."),
)


def configured(config_file: str | None, *, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
               preview: bool | None = None, **flags: Any) -> Config:
    """The config a command runs with: the config file's, with the flags given on the command line
    (``None``: not given) in its place; ``--select``/``--ignore`` add to the configured lists."""
    config = load_config_file(config_file)
    return config.with_overrides(select=(*config.select, *select) if select else None,
                                 ignore=(*config.ignore, *ignore) if ignore else None,
                                 preview=preview or None, **flags)


def finish_report(ctx: click.Context, report: Report, fmt: str, output: str | None, config: Config, *,
                  color: bool | None = None, rules: dict[str, Rule] | None = None,
                  files: list[str] | None = None, fixable: str = "") -> NoReturn:
    """Render ``report`` in ``fmt``, send it to stdout or ``output`` (then its summary line to stderr, as
    ruff does) and exit: 1 when a finding reaches the fail level, else 0. ``fixable`` (the text format only,
    on stderr) says what ``--fix`` would do about the findings, as ruff's "[*] N fixable" line."""
    from linter.report.formats import render, summary_line

    if color is None:
        color = output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    color = color and fmt == "text"
    emit(render(report, fmt, color=color, rules=rules, files=files), output, color=color)
    if output:
        click.echo(f"{summary_line(report).removesuffix('.')}; wrote {output}", err=True)
    if fixable and fmt == "text":
        click.echo(f"[*] {fixable}", err=True)
    ctx.exit(1 if report.failed(config.fail_on) else 0)


def write_file(file: str, write: Callable[[str], object]) -> None:
    """``write(file)``, with an unwritable file reported as a usage error."""
    try:
        write(file)
    except OSError as exc:
        raise CliError(f"{file}: cannot write: {exc.strerror or exc}") from None


def load_config_file(config_file: str | None) -> Config:
    """The config a command runs with: ``config_file``, else the one found from the working directory (the
    engine is imported only when a command runs, so ``--help`` stays fast)."""
    from linter.engine.config import load_config

    return load_config(config_file)


ALLOW_INVALID_HELP = ("Skip the spec files Kafka's generator would refuse (their count and names go to stderr in one "
                      "line) instead of refusing them all.")


def skipped_line(files: Iterable[str], shown: int = 5) -> str:
    """The one stderr line that says which spec files ``--allow-invalid`` left out."""
    names = [os.path.basename(file) for file in files]
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return (f"krpc-lint: skipped {len(names)} spec file{'s' if len(names) != 1 else ''} with errors (--allow-invalid): "
            f"{', '.join(names[:shown])}{more}")


def refuse_overlap(output: str, inputs: Iterable[str | os.PathLike[str] | None], what: str = "an input") -> None:
    """``parse.files.refuse_overlap`` as a usage error (exit 2), for commands that walk specs: inside an input
    directory only a path the walk would read is refused."""
    from linter.parse.discovery import would_read
    from linter.parse.files import OutputOverInput
    from linter.parse.files import refuse_overlap as refuse

    try:
        refuse(output, inputs, what, reads=would_read)
    except OutputOverInput as exc:
        raise CliError(str(exc)) from None


def emit(text: str, output: str | None = None, *, color: bool = False) -> None:
    """The finished report: to stdout, or to ``output``. A regular file (or a new one) is replaced through a
    temporary sibling renamed over it, so it only ever holds a whole report (callers render first, then
    emit); anything else that exists (``/dev/null``, a FIFO, a terminal) is written to, never replaced."""
    text = writable(text)
    if output is None:
        click.echo(text, nl=False, color=color)
        return
    target = Path(output)
    try:
        if target.exists() and not target.is_file():
            with open(target, "w", encoding="utf-8") as stream:
                stream.write(text)
            return
        from linter.parse.files import replace_file  # only when writing a file

        replace_file(target.resolve() if target.is_symlink() else target, text)
    except OSError as exc:
        raise CliError(f"{output}: cannot write: {exc.strerror or exc}") from None


def append_to(path: str | None, text: str) -> None:
    """Append ``text`` to ``path`` when there is one (the GitHub job summary and step outputs)."""
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
