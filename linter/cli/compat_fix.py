"""``krpc-lint compat --suggest`` and ``--fix``: the spec edits that keep released bytes (``linter.compat.suggest``).

``--suggest`` prints them as a unified diff (or JSON) and writes nothing; ``--fix`` writes them into the new
revision's files on disk, one atomic write per file, and only when the file still holds the text the edit was
made for. A change Kafka's format cannot carry in a new version is explained on stderr, never edited.
"""

from __future__ import annotations

import json
import os

import click

from linter.cli.lint_fix import printable_diff
from linter.compat.compare import CompatResult
from linter.compat.suggest import Suggestion, suggest
from linter.engine.fixes import unified_diff, write_atomically
from linter.escape import json_safe, printable
from linter.vocabulary import plural


def _explain(suggestions: list[Suggestion]) -> None:
    for suggestion in suggestions:
        for why in suggestion.blocked:
            click.echo(f"{printable(suggestion.file)}:{suggestion.line}:{suggestion.col}: {printable(suggestion.message)}: "
                       f"no new version can carry this change: {printable(why)}", err=True)


def _to_json(suggestion: Suggestion) -> dict[str, object]:
    out: dict[str, object] = {"file": suggestion.file, "message": suggestion.message,
                              "fixable": suggestion.fixable, "notes": list(suggestion.notes)}
    if suggestion.fixable:
        out["diff"] = unified_diff(suggestion.file, suggestion.text, suggestion.fixed)
        out["edits"] = [{"start": e.start, "end": e.end, "old": e.old, "new": e.new} for e in suggestion.edits]
    else:
        out["explanation"] = list(suggestion.blocked)
    return out


def show_suggestions(ctx: click.Context, result: CompatResult, fmt: str) -> None:
    """Print the edits (``text``: a unified diff; ``json``: a document) and exit 1 when a released wire break
    needs one (whether an edit or an explanation), else 0."""
    suggestions = suggest(result)
    if fmt == "json":
        click.echo(json_safe(json.dumps({"suggestions": [_to_json(s) for s in suggestions]}, indent=2)))
    else:
        for suggestion in suggestions:
            if suggestion.fixable:
                click.echo(printable_diff(unified_diff(suggestion.file, suggestion.text, suggestion.fixed)), nl=False)
        _explain(suggestions)
        _summary(suggestions, "suggested")
    ctx.exit(1 if suggestions else 0)


def apply_suggestions(result: CompatResult) -> int:
    """Write the fixable suggestions into the new revision's files; the number of files written."""
    suggestions = suggest(result)
    written = 0
    for suggestion in suggestions:
        if not suggestion.fixable:
            continue
        if not _unchanged(suggestion):
            continue
        try:
            write_atomically(suggestion.file, suggestion.fixed)
        except OSError as exc:
            click.echo(f"krpc-lint: {printable(suggestion.file)}: not fixed: {printable(str(exc.strerror or exc))}",
                       err=True)
            continue
        written += 1
    _explain(suggestions)
    _summary(suggestions, "applied", written)
    return written


def _unchanged(suggestion: Suggestion) -> bool:
    """Whether the file on disk still holds the text the edit was made for (``--fix`` edits nothing else)."""
    try:
        with open(suggestion.file, "rb") as handle:
            current = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        click.echo(f"krpc-lint: {printable(suggestion.file)}: not fixed: {printable(str(exc))}", err=True)
        return False
    if current != suggestion.text:
        click.echo(f"krpc-lint: {printable(suggestion.file)}: not fixed: it changed while compat ran", err=True)
        return False
    return True


def _summary(suggestions: list[Suggestion], verb: str, written: int | None = None) -> None:
    fixable = sum(1 for s in suggestions if s.fixable)
    blocked = sum(1 for s in suggestions if s.blocked)
    files = fixable if written is None else written
    text = f"krpc-lint: {verb} edits to {plural(files, 'file')}"
    if blocked:
        text += f"; {plural(blocked, 'message')} need{'s' if blocked == 1 else ''} a hand-made " \
                "edit (explained above)"
    click.echo(text if suggestions else "krpc-lint: no released wire break: nothing to suggest", err=True)


def fixable_hint(result: CompatResult) -> str:
    """The line under compat's text report that says how many released wire breaks ``--fix`` can move into a
    new version ("" when none can)."""
    fixable = sum(1 for suggestion in suggest(result) if suggestion.fixable)
    if not fixable:
        return ""
    return (f"{plural(fixable, 'file')} can keep the released bytes and take the change in a new "
            "version: `--suggest` shows the edit, `--fix` writes it")


def require_disk(result: CompatResult) -> None:
    """``--fix`` edits files on disk: the new revision must be read from there, not from a git tree."""
    for rel in result.new.files:
        shown = result.new.display(rel)
        if not os.path.isfile(shown):
            raise click.UsageError(f"--fix edits the new revision's files on disk, and {shown} is not one "
                                   "(give NEW as a directory or file, or use --against REF)")
