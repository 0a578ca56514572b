"""Hostile names and what a report may print about them (issue 25): shared by ``tests/robustness/test_fuzz_hostile.py``
and the campaign ``bench/fuzz.py``.

A spec, a file name or a directory in a pull request is the attacker's text; what krpc-lint prints goes to a
terminal, a CI log (GitHub reads a line starting with ``::``, or holding ``##[``, as a workflow command) and a
job summary (Markdown tables). ``problems`` checks one output for what only unescaped input can put there:

- a C0 control character other than the newline our layouts write (no layout writes a tab: a tab is the
  input's; a CR right before a LF is a CRLF file's line end in a diff of it, and moves nothing), a C1 control character, U+2028/U+2029, a bidirectional embedding, override or isolate
  (U+202A-U+202E, U+2066-U+2069, the Trojan Source set);
- a line that (after leading blanks, which GitHub's runner skips) starts with ``::``, except the commands we
  write ourselves (the annotations of the github format and the Action's log, the Action's groups and notices,
  a ``::stop-commands::TOKEN`` and the ``::TOKEN::`` that ends it: what the runner skips inside is checked too),
  with exactly one annotation per finding; ``##[`` anywhere (the runner's legacy syntax, read in any line);
- bytes that are not UTF-8.

The colour text format may hold the SGR sequences rich writes (``ESC [ ... m``): ``problems`` is given
``colour=True`` and removes those before checking; an ESC the input brought is anything else.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linter.compat.changelog import Changelog
    from linter.engine.config import Config
    from linter.engine.findings import Report

# What a name may hold in a pull request: a forged workflow command after a newline, terminal sequences
# (a window title, erase screen, CSI as one C1 byte), carriage returns, NUL, line and paragraph separators,
# bidi overrides, table and code-span breakers, rich markup, lone surrogates (a JSON escape in a spec, an
# undecodable byte in a file name), XML and Markdown specials.
HOSTILE_PIECES = [
    "\n::error file=README.md,line=1::pwned", "\n::add-mask::x", "\r\n::stop-commands::t0k3n", "\n##[error]pwned",
    "  ::warning::indented", "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x1b[31mred\x1b[0m", "\x9b31m", "\x85",
    "\r", "x\ry", "\x00", "\x07", "\x08", "\t", "\x0b\x0c", "\x7f", "\u2028", "\u2029", "\u202e", "\u2066", "\u200f",
    "|", "a|b|c", "`", "```", "[bold]x[/bold]", "[link=https://evil]x[/link]", "\ud800", "\udcff", "\udbff",
    "<script>", "</summary>", "&amp;", "]]>", "%0A::error::x", "%", "%25", ",", ":", "::", "'\"", "\\n", "\ufeff",
    "\U0001F600", "\u0301", "é",
]
SPEC_DIR = "clients/src/main/resources/common/message"  # a Kafka spec location: every *.json there is a spec
LEGACY = "##["  # GitHub's runner reads a legacy command anywhere in a line (ActionCommand.TryParse)
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x80-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
SGR = re.compile("\x1b\\[[0-9;]*m")  # what rich writes in colour
# The lines of a log that only krpc-lint writes: annotations (one per finding), the Action's groups and notices.
ANNOTATION = re.compile(r"::(error|warning|notice) file=")
STOP = re.compile(r"::stop-commands::(\S{16,})$")
OURS = re.compile(r"::(group::krpc-lint |endgroup::$|notice title=krpc-lint::|error title=krpc-lint::)")
NAMES = {"\x85": "NEL", "\u2028": "U+2028", "\u2029": "U+2029", "\x1b": "ESC", "\r": "CR", "\t": "TAB", "\x00": "NUL"}


def char_name(char: str) -> str:
    code = ord(char)
    if char in NAMES:
        return NAMES[char]
    if code < 0x20:
        return f"C0 {code:#04x}"
    if code < 0xA0:
        return f"C1 {code:#04x}"
    return f"bidi U+{code:04X}"


def problems(output: str | bytes, *, annotations: int | None = None, colour: bool = False) -> list[str]:
    """What in ``output`` only unescaped input can have put there (empty when clean): one short label each
    (``"ESC"``, ``"forged ::"``...), for counting. ``annotations``: the github format or the Action's log,
    which must hold exactly that many annotation lines (one per finding; -1: any number, for a run seen from
    outside) and no other command but ours."""
    if isinstance(output, bytes):
        try:
            output = output.decode("utf-8")
        except UnicodeDecodeError:
            return ["not UTF-8"]
    try:  # what the Action writes to sys.stdout and the job summary itself: strict UTF-8, as on a runner
        output.encode("utf-8")
    except UnicodeEncodeError:
        return ["lone surrogate"]
    if colour:
        output = SGR.sub("", output)
    found = sorted({char_name(char) for char in CONTROL.findall(output.replace("\r\n", "\n"))})
    written, token = 0, ""
    for line in output.split("\n"):
        line = line.lstrip()  # the runner skips Unicode blanks (.NET's TrimStart)
        if LEGACY in line:
            found.append("forged ##[")
        if not line.startswith("::"):
            continue
        if annotations is not None and ANNOTATION.match(line):
            written += 1
        elif annotations is not None and (stop := STOP.match(line)):
            token = stop.group(1)  # the Action's groups: the runner reads no command until ``::token::``
        elif annotations is not None and token and line == f"::{token}::":
            token = ""
        elif annotations is None or not OURS.match(line):
            found.append("forged ::")
    if annotations is not None and annotations >= 0 and written != annotations:
        found.append(f"annotations {written} for {annotations} findings")
    return found


def table_problems(markdown: str, rows: int) -> list[str]:
    """A Markdown job summary whose findings table (the block after ``| Severity |``) does not hold ``rows``
    rows (-1: any number) of four cells, or that holds a control character: a name broke the table."""
    found = problems(markdown)  # a job summary is no log: it may not hold a command either
    lines = markdown.split("\n")
    try:
        start = next(n for n, line in enumerate(lines) if line.startswith("| Severity |"))
    except StopIteration:
        return found + (["table rows"] if rows > 0 else [])
    body = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        body.append(line)
    if rows >= 0 and len(body) != rows:
        found.append("table rows")  # of len(body) for rows
    if any(len(re.findall(r"(?<!\\)\|", line)) != 5 for line in body):
        found.append("table row not of 4 cells")
    return found


def written(text: str, directory: Path, *, colour: bool = False) -> bytes:
    """The bytes ``krpc-lint ... -o FILE`` writes for a rendered report (``cli.common.emit``): to a file, where
    nothing is stripped (on a pipe, click drops the CSI sequences of a text that is not in colour, not the rest)."""
    from linter.cli.common import emit

    target = directory / "report.out"
    emit(text, str(target), color=colour)
    return target.read_bytes()


def text_lines(report: Report) -> int:
    """The lines of the text format: one per finding, its hint and its witness's two, and the summary."""
    return 1 + sum(1 + bool(f.hint) + 2 * bool(f.witness) for f in report.findings)


def report_problems(report: Report, directory: Path, *, rules: dict[str, Any] | None = None,
                    files: list[str] | None = None, colour: bool = False) -> dict[str, list[str]]:
    """Each output format's problems (only those that have some) for ``report`` as ``-o`` writes it; the text
    format must also keep one line per finding (a newline in a name must not make another)."""
    from linter.report.formats import render
    from linter.vocabulary import FORMATS

    found = {}
    for fmt in (*FORMATS, "colour") if colour else FORMATS:
        text = render(report, "text" if fmt == "colour" else fmt, color=fmt == "colour", rules=rules, files=files)
        data = written(text, directory, colour=fmt == "colour")
        found[fmt] = problems(data, annotations=len(report.findings) if fmt == "github" else None,
                              colour=fmt == "colour")
        if fmt in ("text", "colour") and data.count(b"\n") != text_lines(report):
            found[fmt].append("text lines")
    return {fmt: labels for fmt, labels in found.items() if labels}


def changelog_problems(log: Changelog, directory: Path) -> dict[str, list[str]]:
    """``krpc-lint changelog`` in Markdown and JSON, as ``-o`` writes them."""
    found = {"changelog": problems(written(log.to_markdown(), directory)),
             "changelog json": problems(written(log.to_json(), directory))}
    return {what: labels for what, labels in found.items() if labels}


def action_problems(lint_report: Report, compat_report: Report | None, log: Changelog | None,
                    config: Config, suggestions: tuple[Any, ...] = ()) -> dict[str, list[str]]:
    """The Action's step log (annotations, then the text reports in groups) and its Markdown job summary, as
    ``linter.cli.action.run`` writes them for these reports: no command but ours in the log, one annotation
    per finding, and a findings table of one row (four cells) per finding shown."""
    from linter.cli.action import MAX_TABLE_ROWS, Outcome, job_summary
    from linter.cli.action import log as step_log

    outcome = Outcome(lint_report, compat_report, log, "0123456789ab" if compat_report else "",
                      "the pull request's base", config, "none", suggestions=suggestions)
    found = {"action log": problems(step_log(outcome), annotations=len(outcome.in_workspace())),
             "job summary": table_problems(job_summary(outcome), min(len(outcome.findings), MAX_TABLE_ROWS))}
    return {what: labels for what, labels in found.items() if labels}


def suggestion_problems(suggestions: tuple[Any, ...]) -> dict[str, list[str]]:
    """``compat --suggest``'s diffs as the command line prints them."""
    from linter.cli.lint_fix import printable_diff
    from linter.engine.fixes import unified_diff

    diffs = "".join(printable_diff(unified_diff(s.file, s.text, s.fixed)) for s in suggestions if s.fixable)
    found = problems(diffs)
    return {"suggest diff": found} if found else {}


# --- hostile names in a spec (``rng``: a seeded ``random.Random``, or hypothesis's ``st.randoms()``) ---------


def hostile_name(rng: random.Random, base: str = "Foo") -> str:
    """A name holding one to three hostile pieces, around or instead of a plausible one."""
    pieces = [rng.choice(HOSTILE_PIECES) for _ in range(rng.randrange(1, 4))]
    if rng.random() < 0.2:
        return "".join(pieces)
    at = rng.randrange(len(base) + 1)
    return base[:at] + "".join(pieces) + base[at:]


def fields_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every field of a spec (commonStructs' too), without recursion."""
    found, stack = [], [spec.get("fields"), *(s.get("fields") for s in spec.get("commonStructs") or [])]
    while stack:
        fields = stack.pop()
        for item in fields if isinstance(fields, list) else []:
            if isinstance(item, dict):
                found.append(item)
                stack.append(item.get("fields"))
    return found


def rename_struct(spec: dict[str, Any], old: str, new: str) -> None:
    """A struct's name, everywhere the spec refers to it (types and commonStructs)."""
    for item in fields_of(spec) + list(spec.get("commonStructs") or []):
        if item.get("type") in (old, "[]" + old):
            item["type"] = item["type"].replace(old, new)
        if item.get("name") == old and "fields" in item and "type" not in item:
            item["name"] = new


def with_hostile_names(spec: dict[str, Any], rng: random.Random) -> None:
    """One to three names of the spec made hostile: the message's, a field's, a struct's (consistently), an
    about, a default, an entity type."""
    fields = fields_of(spec)
    for _ in range(rng.randrange(1, 4)):
        where = rng.randrange(6)
        item = rng.choice(fields) if fields else spec
        if where == 0 or not fields:
            spec["name"] = hostile_name(rng, str(spec.get("name", "Foo")))
        elif where == 1:
            item["name"] = hostile_name(rng, str(item.get("name", "F")))
        elif where == 2:
            structs = [f["type"].removeprefix("[]") for f in fields if str(f.get("type", "")).lstrip("[]")[:1].isupper()]
            if structs:
                old = rng.choice(structs)
                rename_struct(spec, old, hostile_name(rng, old))
        elif where == 3:
            item["about"] = hostile_name(rng, "The thing.")
        elif where == 4:
            item["default"] = hostile_name(rng, str(item.get("default", "x")))
        else:
            item["entityType"] = hostile_name(rng, "topicName")


def breaking_edit(spec: dict[str, Any], rng: random.Random) -> None:
    """A change compat reports with the names around it: a field retyped, removed, renamed or made nullable."""
    fields = [f for f in fields_of(spec) if isinstance(f.get("type"), str)]
    if not fields:
        return
    item = rng.choice(fields)
    operation = rng.randrange(4)
    if operation == 0:
        item["type"] = {"int32": "int64", "int64": "int32", "string": "bytes"}.get(item["type"], "int8")
    elif operation == 1:
        for holder in [spec, *fields_of(spec)]:
            if isinstance(holder.get("fields"), list) and item in holder["fields"]:
                holder["fields"].remove(item)
                break
    elif operation == 2:
        item["name"] = hostile_name(rng, str(item.get("name", "F")))
    else:
        item["nullableVersions"] = "0+"


def hostile_path(rng: random.Random, name: str) -> str:
    """A relative path to a spec: its file name or a directory above it hostile, nested, or long."""
    stem = name.removesuffix(".json")
    parts = [rng.choice(["", "specs", hostile_name(rng, "dir"), "a" * rng.randrange(1, 250)])
             for _ in range(rng.choice([0, 0, 1, 2, 20]))]
    file = hostile_name(rng, stem) + ".json" if rng.random() < 0.7 else name
    return "/".join(part.replace("/", "") for part in [*parts, file] if part.replace("/", ""))


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    """``files`` below ``root`` in a Kafka spec location; names keep their undecodable bytes (``\\udcff``)."""
    for relative, data in files.items():
        path = Path(os.fsdecode(os.fsencode(str(root / SPEC_DIR))) + "/" + relative)
        os.makedirs(os.fsencode(path.parent), exist_ok=True)
        with open(os.fsencode(path), "wb") as handle:
            handle.write(data)


def disk_name(rng: random.Random, stem: str) -> str:
    """A file or directory name a file system holds: no NUL, no slash, at most 255 bytes."""
    name = hostile_name(rng, stem).replace("\x00", "").replace("/", "")
    # Undecodable bytes (U+DC80-DCFF) become those bytes; other lone surrogates their (ill-formed) UTF-8.
    raw = b"".join(bytes([ord(c) - 0xDC00]) if "\udc80" <= c <= "\udcff" else c.encode("utf-8", "surrogatepass")
                   for c in name)[:200]
    return os.fsdecode(raw) or stem
