"""What every command shares: the one translator from errors to messages and exit codes, the options
``lint`` and ``compat`` both take, the config they run with, text that can always be printed, and the one
way a report reaches stdout or a file (atomically, only once it exists, never onto an input).

Imports only click, the error base and the escaping of linter.escape at start-up, so every
subcommand module uses it without importing ``linter.cli.main``.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from linter.errors import WRITE_ERRNOS, KrpcLintError, OutputError, cannot_write
from linter.escape import printable, writable
from linter.vocabulary import FORMATS, KAFKA_VERSIONS, PROFILES, SEVERITIES, plural

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
    if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:  # a write no guard below named (ENOSPC, EPIPE...)
        return CliError(str(cannot_write(str(exc.filename) if exc.filename else "the output", exc)))
    if os.environ.get(DEBUG_ENV) == "1":
        import traceback

        traceback.print_exception(exc)
    return InternalError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


STDOUT = "standard output"


class _Guarded(io.FileIO):
    """A standard descriptor under ``sys.stdout``/``sys.stdin``: a failed write is an ``OutputError`` naming
    standard output, raised once; later writes (the flush at exit among them) are dropped, and the descriptor
    points at /dev/null, as Python's documentation advises after EPIPE. ``closed_as``: the descriptor was
    closed when krpc-lint started (``>&-``, ``<&-``), so any use is an error saying so."""

    def __init__(self, fd: int, mode: str, closed_as: str | None = None) -> None:
        super().__init__(fd, mode, closefd=False)
        self._closed_as = closed_as
        self._failed = False

    def write(self, data: Any) -> int:
        size = len(memoryview(data))
        if self._failed:
            return size
        if self._closed_as:
            self._failed = True
            raise OutputError(self._closed_as)
        try:
            return super().write(data) or 0
        except OSError as exc:
            self._failed = True
            _to_devnull(self.fileno())
            raise cannot_write(STDOUT, exc) from None

    def readinto(self, buffer: Any) -> int:
        if self._closed_as:
            raise KrpcLintError(self._closed_as)
        return super().readinto(buffer) or 0


def _to_devnull(fd: int) -> None:
    """Point ``fd`` at /dev/null (a closed standard descriptor taken, so no file krpc-lint opens becomes it)."""
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def guard_stdio() -> None:
    """Put standard output (and a closed standard input) under ``_Guarded``, so every write to stdout, by
    click, rich or print, fails as one line naming it (exit 2) instead of an internal error; called once by the
    command line's entry point. A closed stderr is pointed at /dev/null (its messages are lost, the exit code
    stays)."""
    opened = {fd: _is_open(fd) for fd in (0, 1, 2)}
    for fd, is_open in opened.items():
        if not is_open:
            _to_devnull(fd)
    old = sys.stdout
    raw = _Guarded(1, "w", None if opened[1] else
                   "standard output is closed: leave it open, or write the report with -o FILE")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=getattr(old, "encoding", None) or "utf-8",
                                  errors=getattr(old, "errors", None) or "strict",
                                  line_buffering=bool(getattr(old, "line_buffering", False)))
    if not opened[0]:
        closed_in = _Guarded(0, "r", "standard input is closed: give the input with -i FILE (or a pipe)")
        sys.stdin = io.TextIOWrapper(io.BufferedReader(closed_in), encoding="utf-8")


def finish_output(code: int) -> int:
    """``code``, once what is still buffered for stdout is written: a failure there (the command had finished)
    is the one line and exit 2; Python's own flush at exit finds nothing left."""
    try:
        sys.stdout.flush()
    except (OutputError, OSError) as exc:
        translate(exc).show()
        return 2
    return code


class NonEmptyPath(click.Path):
    """``click.Path`` that refuses ``""``: an empty path would name the working directory, or pass for an option
    not given (``--baseline ''`` silently ignored)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path names no file", param, ctx)
        return super().convert(value, param, ctx)


def non_empty(why: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback refusing an empty value (or an empty one among a repeatable option's): ``why`` says what
    it would mean, instead of the option passing for not given."""
    def check(_ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        values = value if isinstance(value, tuple) else (value,)
        if any(isinstance(item, str) and not item.strip() for item in values):
            raise click.BadParameter(f"an empty value {why}", param=param)
        return value

    return check


_no_empty_selector = non_empty("selects no rule; give a rule id, name, category or profile")


def _options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several click options as one decorator, applied in the order listed (as in ``--help``)."""
    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


config_option = click.option(
    "--config", "config_file", type=NonEmptyPath(dir_okay=False), default=None,
    help="Config file (default: .krpc-lint.yaml or pyproject.toml [tool.krpc-lint] found from the "
         "working directory up).")

kafka_version_option = click.option(
    "--kafka-version", type=click.Choice(KAFKA_VERSIONS), default=None, metavar="VERSION",
    help="Apply exactly the generator rules of this Kafka release (2.8, 3.0 ... 3.9, 4.0 ... 4.3, trunk); "
         "default: the config's, else any: what some supported release accepts.")

# Which rules a run reports and when it fails: the same flags mean the same in lint, compat and frames check.
rule_options = _options(
    click.option("--profile", type=click.Choice(PROFILES), default=None,
                 help="Rule profile (default: the config's, else recommended)."),
    click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
                 help="Lowest severity that makes the exit code 1 (default: the config's, else error)."),
    click.option("--select", multiple=True, metavar="RULE", callback=_no_empty_selector,
                 help="Also run these rules (id, id prefix, name, category or profile); repeatable."),
    click.option("--ignore", multiple=True, metavar="RULE", callback=_no_empty_selector, help="Do not run these rules; repeatable."),
)

# What ``lint`` and ``compat`` report with: the same flags mean the same in both.
report_options = _options(
    click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                 help="Output format."),
    rule_options,
    click.option("--preview", is_flag=True, default=None,
                 help="Also run the rules in preview (else only those --select names by id or name)."),
    config_option,
    click.option("--baseline", type=NonEmptyPath(dir_okay=False), default=None,
                 help="Leave out the findings recorded in this baseline file."),
    click.option("--output", "-o", type=NonEmptyPath(dir_okay=False), default=None,
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
        click.echo(printable(f"{summary_line(report).removesuffix('.')}; wrote {output}"), err=True)
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
    return printable(f"krpc-lint: skipped {plural(len(names), 'spec file')} with errors "
                     f"(--allow-invalid): {', '.join(names[:shown])}{more}")


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
