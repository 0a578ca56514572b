"""``krpc-lint lint --fix`` and ``--diff``: apply (or show) the edits of fixable rules' findings.

Only files the run linted themselves (named or found in a directory given) are touched, never a sibling read
as context; each in one atomic write (``linter.engine.fixes.write_atomically``), and only with ``--fix``.
"""

from __future__ import annotations

import click

from linter.engine.findings import Report
from linter.engine.fixes import (
    fixed_text,
    planned_edits,
    unified_diff,
    write_atomically,
)
from linter.escape import guard_lines, printable
from linter.vocabulary import plural


def printable_diff(diff: str) -> str:
    """A diff (``unified_diff``) as the terminal and a CI log may show it: each line's text made ``printable`` (a
    spec's control, bidi character or ``##[`` shows as its escape, never acts), a CRLF file's CR kept before its
    LF (it moves nothing; the diff of a CRLF file still applies), and no line a runner reads as a command."""
    lines = diff.split("\n")
    for number, line in enumerate(lines):
        cr = "\r" if line.endswith("\r") else ""
        lines[number] = printable(line.removesuffix("\r")) + cr
    return guard_lines("\n".join(lines))


def _changes(report: Report, files: list[str]) -> list[tuple[str, str, str, int]]:
    """(file, old text, new text, edits applied) of each file the fixes change."""
    out = []
    for file, edits in sorted(planned_edits(report.findings, files).items()):
        try:
            old, new, applied = fixed_text(file, edits)
        except (OSError, ValueError) as exc:
            click.echo(f"krpc-lint: {printable(file)}: not fixed: {printable(str(exc))}", err=True)
            continue
        if new != old:
            out.append((file, old, new, applied))
    return out


def show_diff(report: Report, files: list[str]) -> bool:
    """Print the unified diff of what ``--fix`` would change; whether there is one. Writes nothing."""
    changes = _changes(report, files)
    for file, old, new, _ in changes:
        click.echo(printable_diff(unified_diff(file, old, new)), nl=False)
    return bool(changes)


def apply_fixes(report: Report, files: list[str]) -> int:
    """Write the fixes, one atomic write per file; the number of edits applied (said on stderr)."""
    fixed = files_fixed = 0
    for file, _, new, applied in _changes(report, files):
        try:
            write_atomically(file, new)
        except OSError as exc:
            click.echo(f"krpc-lint: {printable(file)}: not fixed: {printable(str(exc.strerror or exc))}", err=True)
            continue
        fixed, files_fixed = fixed + applied, files_fixed + 1
    click.echo(f"krpc-lint: fixed {plural(fixed, 'finding')} in {plural(files_fixed, 'file')}", err=True)
    return fixed
