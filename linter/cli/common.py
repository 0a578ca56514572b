"""What every command shares: the usage error (exit 2), text that can always be printed, and the one way
a report reaches stdout or a file (atomically, only once it exists, never onto an input).

Imports only click (and the escaping of linter.report.escape), so every subcommand module can use it without importing ``linter.cli.main``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from linter.report.escape import printable

if TYPE_CHECKING:
    from linter.engine.config import Config


class CliError(click.ClickException):
    """A usage error: the message goes to stderr and the exit code is 2."""

    exit_code = 2
    prefix = "error"

    def show(self, file: Any = None) -> None:
        click.echo(printable(f"krpc-lint: {self.prefix}: {self.message}"), err=True)


class InternalError(CliError):
    prefix = "internal error"


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
    text = printable(text)
    if output is None:
        click.echo(text, nl=False, color=color)
        return
    target = Path(output)
    try:
        if target.exists() and not target.is_file():
            with open(target, "w", encoding="utf-8") as stream:
                stream.write(text)
            return
        _replace_file(target.resolve() if target.is_symlink() else target, text)
    except OSError as exc:
        raise CliError(f"{output}: cannot write: {exc.strerror or exc}") from None


def _replace_file(target: Path, text: str) -> None:
    import tempfile  # only when writing a file: it costs a cold start milliseconds

    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(partial, target.stat().st_mode & 0o777 if target.exists() else 0o644)  # not mkstemp's 0600
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
