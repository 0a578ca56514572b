"""What the language server says of a spec buffer, without the protocol: its findings (linted with the other specs
of its directory as context, open buffers in place of their files), the edits of its fixes, and what a field is.

Positions are the protocol's: 0-based lines, columns in UTF-16 code units (LSP's default encoding), which ``Lines``
converts to and from the parser's character offsets.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from linter.compat.api import compare_texts, suggest
from linter.compat.releases import FileReleases
from linter.compat.revision import Revision
from linter.compat.sources import read_revision
from linter.engine.config import Config, load_config
from linter.engine.findings import Edit, Finding
from linter.engine.runner import lint_texts
from linter.model.spec import FieldSpec, MessageSpec, build_message
from linter.model.traits import FieldAt, field_at, header_version
from linter.model.versions import Versions
from linter.model.wire import PRIMITIVES, WIRE
from linter.parse.files import InputError, read_regular
from linter.parse.jsonc import JsonSyntaxError, LineIndex, PositionalParser
from linter.parse.scanner import value_end
from linter.report.formats import message_with_witness

SPEC_SUFFIX = ".json"
MAX_SIBLINGS = 2000  # spec files of a directory read as context (Kafka's message directory has about 250)
MAX_BUFFER = 16 << 20  # characters of a buffer (bytes of a sibling file) the server lints: the CLI's cap on a spec


class Lines:
    """A text's lines (the parser's ``LineIndex``), to convert character offsets to LSP positions and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = LineIndex(text)
        self.starts = self.index.starts

    def position(self, offset: int) -> tuple[int, int]:
        """(line, UTF-16 column) of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = self.index.line_col(offset)[0] - 1
        return line, _utf16(self.text[self.starts[line]:offset])

    def offset(self, line: int, column: int) -> int:
        """The character offset of (line, UTF-16 column), clamped to the text."""
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[max(line, 0)]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)
        units = 0
        for index in range(start, end):
            if units >= column:
                return index
            units += 2 if ord(self.text[index]) > 0xFFFF else 1
        return end


def _utf16(text: str) -> int:
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


@dataclass(frozen=True)
class Span:
    """A finding's place in its buffer, as character offsets: the key or value it points at."""

    start: int
    end: int


def finding_span(lines: Lines, finding: Finding) -> Span:
    """The token a finding's line and column point at (a key, a value, a whole object), or its line's rest."""
    if finding.line < 1 or finding.line > len(lines.starts):
        return Span(0, 0)
    start = min(lines.starts[finding.line - 1] + max(finding.col - 1, 0), len(lines.text))
    text = lines.text
    try:
        end = value_end(text, start) if start < len(text) and text[start] in '"{[-0123456789tfn' else start
    except (IndexError, ValueError):
        end = start
    if end <= start:
        line_end = text.find("\n", start)
        end = len(text) if line_end < 0 else line_end
    return Span(start, end)


# --- linting a buffer ------------------------------------------------------------------------------------------


def siblings(path: Path, open_texts: Mapping[Path, str]) -> dict[str, str | bytes]:
    """The spec files of ``path``'s directory by name, an open buffer in place of its file, ``path``'s own
    included (from ``open_texts``): the context `lint` gives a file named with its directory."""
    texts: dict[str, str | bytes] = {}
    directory = path.parent
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(SPEC_SUFFIX))[:MAX_SIBLINGS]
    except OSError:
        names = []
    for name in names:
        file = directory / name
        if file in open_texts:
            continue
        try:
            data = read_regular(file, MAX_BUFFER)  # regular files only, as every reader of specs
        except (InputError, OSError):
            continue
        if len(data) <= MAX_BUFFER:
            texts[name] = data
    for file, text in open_texts.items():
        if file.parent == directory and file.name.endswith(SPEC_SUFFIX) and len(text) <= MAX_BUFFER:
            texts[file.name] = text
    return texts


def lint_buffer(path: Path, open_texts: Mapping[Path, str], config: Config | None = None,
                directory: Mapping[str, str | bytes] | None = None) -> list[Finding]:
    """The findings of ``path``'s buffer (``open_texts[path]``), with its directory as context: as ``lint FILE``
    lints a file named alone, only the buffer's own rules run, and the directory's rules on all. ``directory``:
    ``siblings(path, open_texts)`` when the caller already read it for another buffer of the directory."""
    config = config if config is not None else config_for(path)
    texts = directory if directory is not None else siblings(path, open_texts)
    report = lint_texts(texts, config, complete=True, context=[name for name in texts if name != path.name])
    return [finding for finding in report.findings if finding.path == path.name]


def config_for(path: Path) -> Config:
    """The config `lint` would use for the file: the nearest one at or above its directory."""
    return load_config(start=path.parent)


def fix_all(findings: list[Finding]) -> list[Edit]:
    """Every fix of the findings that does not overlap an earlier one: what ``lint --fix`` applies in one run."""
    edits, cursor = [], 0
    for edit in sorted({edit for finding in findings for edit in finding.fix}):
        if edit.start >= cursor:
            edits.append(edit)
            cursor = edit.end
    return edits


def suppression(lines: Lines, finding: Finding) -> Edit:
    """A comment that suppresses the finding, alone on the line before it, indented as that line."""
    line = max(finding.line - 1, 0)
    start = lines.starts[min(line, len(lines.starts) - 1)]
    indent = len(lines.text[start:]) - len(lines.text[start:].lstrip(" \t"))
    comment = f"{lines.text[start:start + indent]}// krpc-lint: ignore[{finding.rule}] reason\n"
    return Edit(start, start, "", comment)


@dataclass(frozen=True)
class Compat:
    """A buffer against the file at a git ref: compat's findings, and ``compat --suggest``'s edits of the buffer
    that keep every released version's bytes (empty when none can, or nothing breaks)."""

    findings: list[Finding]
    suggestion: tuple[Edit, ...] = ()
    notes: tuple[str, ...] = ()


def compat_buffer(path: Path, text: str, ref: str, config: Config | None = None) -> Compat:
    """The changes of ``path``'s buffer against the file at git ``ref`` (``compat --against REF`` for one file),
    each wire break's witness in its message, and the suggested edits; nothing when the file is new at ``ref``.
    ``SourceError`` when the ref or the repository cannot be read."""
    config = config if config is not None else config_for(path)
    old = read_revision(f"{ref}:./{path.name}", cwd=path.parent).files
    if not old:
        return Compat([])
    old_bytes = next(iter(old.values()))
    report = compare_texts({path.name: old_bytes}, {path.name: text}, config)
    findings = [replace(finding, message=message_with_witness(replace(finding, message=f"{finding.message} "
                                                                                      f"(against {ref})")))
                for finding in report.findings]
    if not any(finding.witness for finding in findings):
        return Compat(findings)
    suggested = [one for one in suggest(Revision(ref, {path.name: old_bytes}),
                                        Revision("buffer", {path.name: text.encode("utf-8")})) if one.fixable]
    return Compat(findings, suggested[0].edits, suggested[0].notes) if suggested else Compat(findings)


# --- where things are ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    """A buffer parsed with positions, and its message (``parsed`` gives ``None`` when it does not parse)."""

    text: str
    parser: PositionalParser
    message: MessageSpec

    def span(self, path: tuple[str | int, ...]) -> Span | None:
        """The value at ``path``, as character offsets."""
        found = self.parser.positions.exact(path)
        return None if found is None else Span(found[1], value_end(self.text, found[1]))

    def member(self, path: tuple[str | int, ...]) -> Span | None:
        """The key and value at ``path`` (the value alone in an array)."""
        found = self.parser.positions.exact(path)
        return None if found is None else Span(found[0] if found[0] >= 0 else found[1], value_end(self.text, found[1]))


def parsed(text: str) -> Parsed | None:
    parser = PositionalParser(text)
    try:
        raw = parser.parse()
    except (JsonSyntaxError, RecursionError):
        return None
    return Parsed(text, parser, build_message(raw, "buffer")) if isinstance(raw, dict) else None


def definition(text: str, offset: int) -> Span | None:
    """Where the struct named by the ``type`` value at ``offset`` is defined: a common struct's name, or the type of
    the field that defines the inline struct."""
    buffer = parsed(text)
    if buffer is None:
        return None
    wanted = next((field.type.struct_name for field, _ in buffer.message.all_fields()
                   if field.type is not None and _holds(buffer.span((*field.path, "type")), offset)), None)
    if wanted is None:
        return None
    structs = [*buffer.message.common_structs, *(struct for struct in buffer.message.all_structs()
                                                  if struct.kind == "inline" and struct.fields)]
    for struct in structs:  # a common struct, else the field whose own fields define it inline
        if struct.name == wanted:
            return buffer.span((*struct.path, "name" if struct.kind == "common" else "type"))
    return None


def _holds(span: Span | None, offset: int) -> bool:
    return span is not None and span.start <= offset < span.end


@dataclass(frozen=True)
class Symbol:
    """A field or common struct of the document's outline."""

    name: str
    detail: str
    span: Span  # the whole object
    name_span: Span  # its name
    children: tuple[Symbol, ...]
    struct: bool = False


def symbols(text: str) -> list[Symbol]:
    """The outline: the message's fields, nested, then its common structs with theirs."""
    buffer = parsed(text)
    if buffer is None:
        return []

    def of(fields: tuple[FieldSpec, ...]) -> list[Symbol]:
        out = []
        for field in fields:
            whole, name = buffer.span(field.path), buffer.span((*field.path, "name"))
            if whole is not None and name is not None:
                out.append(Symbol(str(field.name), f"{field.type_text} {field.versions or ''}".strip(), whole, name,
                                  tuple(of(field.fields))))
        return out

    found = of(buffer.message.fields)
    for struct in buffer.message.common_structs:
        whole, name = buffer.span(struct.path), buffer.span((*struct.path, "name"))
        if whole is not None and name is not None:
            found.append(Symbol(str(struct.name), "common struct", whole, name, tuple(of(struct.fields)), True))
    return found


FIELD_KEYS = ("name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "default", "ignorable",
              "entityType", "mapKey", "flexibleVersions", "zeroCopy", "about", "fields")
ENTITY_TYPES = ("transactionalId", "producerId", "groupId", "topicName", "brokerId")


def completions(text: str) -> list[tuple[str, str]]:
    """(label, kind) the buffer may want: field keys, primitive types and the structs it defines, entity types."""
    buffer = parsed(text)
    structs = sorted({str(struct.name) for struct in buffer.message.all_structs()
                      if struct.kind != "message" and struct.name}) if buffer is not None else []
    return ([(key, "key") for key in FIELD_KEYS] + [(name, "type") for name in PRIMITIVES]
            + [(f"[]{name}", "type") for name in (*PRIMITIVES, *structs)] + [(name, "type") for name in structs]
            + [(name, "entityType") for name in ENTITY_TYPES])


# --- what a field is -------------------------------------------------------------------------------------------


def field_at_offset(text: str, offset: int) -> tuple[MessageSpec, FieldSpec] | None:
    """The innermost field whose JSON object holds ``offset``, with its message; ``None`` outside any field or
    when the buffer does not parse."""
    buffer = parsed(text)
    if buffer is None:
        return None
    best: tuple[int, FieldSpec] | None = None
    for field, _ in buffer.message.all_fields():
        span = buffer.span(field.path)
        if span is not None and _holds(span, offset) and (best is None or span.start > best[0]):
            best = (span.start, field)
    return (buffer.message, best[1]) if best is not None else None


def versions_at_offset(text: str, offset: int, releases: FileReleases | None = None) -> str | None:
    """Markdown for a hover on ``validVersions`` or ``flexibleVersions``: per run of versions, flexible or not and
    the header version it takes (KIP-482, KIP-511, KIP-1313's ``headerVersions``), then, given the file at the
    repository's release tags, which release first shipped each version (compat's release knowledge);
    ``None`` elsewhere."""
    buffer = parsed(text)
    if buffer is None or not any(_holds(buffer.member((key,)), offset) for key in ("validVersions", "flexibleVersions")):
        return None
    message = buffer.message
    versions = message.versions
    if versions is None or versions.empty or versions.highest - versions.lowest > 1000:
        return f"**{message.name}**: no version to describe"
    def form(version: int) -> str:
        header = header_version(message, version) if message.type in ("request", "response") else None
        return ("flexible" if message.flexible.contains(version) else "not flexible") + (
            f", {message.type} header v{header}" if header is not None else "")

    runs = _runs((version, form(version)) for version in range(versions.lowest, versions.highest + 1))
    unstable = " (the top version is unstable: latestVersionUnstable)" if message.latest_version_unstable else ""
    return "\n".join([f"**{message.name}** versions {versions}{unstable}", "",
                      *(f"- v{run}: {said}" for run, said in runs),
                      *([] if releases is None else ["", *shipped_lines(releases, text)])])


def shipped_lines(releases: FileReleases, text: str) -> list[str]:
    """Markdown lines: which release first shipped each run of versions, as ``compat`` decides what shipped."""
    if not releases.revisions:
        return [f"Releases: none known ({releases.why or 'no release tag holds this file'})"]
    labels = [revision.label for revision in releases.revisions]
    head = (f"Releases ({releases.tags} release tags, {len(labels)} with `{releases.path}`: "
            f"{labels[0]} … {labels[-1]}):")
    runs = _runs(releases.versions(text.encode("utf-8", "surrogatepass")))
    return [head, "", *(f"- v{run}: {said}" for run, said in runs)]


def _runs(labelled: Iterable[tuple[int, str]]) -> list[tuple[Versions, str]]:
    """Consecutive versions with the same label as one range each, in version order: what hovers list."""
    runs: list[tuple[int, int, str]] = []
    for version, label in labelled:
        if runs and runs[-1][2] == label and runs[-1][1] == version - 1:
            runs[-1] = (runs[-1][0], version, label)
        else:
            runs.append((version, version, label))
    return [(Versions(low, high), label) for low, high, label in runs]


def describe_field(message: MessageSpec, field: FieldSpec) -> str:
    """Markdown: the field's type, versions, nullable and tagged versions, default, and how it travels."""
    out = [f"**{field.name}**: `{field.type_text}`", ""]
    for label, value in (("versions", field.versions), ("nullable", field.nullable_versions),
                         ("tagged", field.tagged_versions)):
        if value is not None and not value.empty:
            out.append(f"- {label}: {value}")
    if field.tag is not None:
        out.append(f"- tag: {field.tag}")
    if field.default_given:
        out.append(f"- default: `{field.default}`")
    wire = wire_forms(message, field)
    if wire:
        out += ["", "On the wire:", *(f"- v{versions}: {form}" for versions, form in wire)]
    if field.about:
        out += ["", str(field.about)]
    return "\n".join(out)


def wire_forms(message: MessageSpec, field: FieldSpec) -> list[tuple[str, str]]:
    """How the field travels in each run of the message's versions where that does not change."""
    versions, flexible = message.versions, message.flexible
    if versions is None or field.type is None or versions.highest - versions.lowest > 1000:
        return []
    def form(version: int) -> str:
        at = field_at(field, version, flexible.contains(version))
        return _form(field, at) if at.present else "absent"

    return [(str(run), said) for run, said in _runs((v, form(v)) for v in range(versions.lowest, versions.highest + 1))]


def _form(field: FieldSpec, at: FieldAt) -> str:
    assert field.type is not None
    primitive = WIRE.get(field.type.name)
    if field.type.is_array:
        kind = f"{'compact' if at.compact else 'int32-length'} array"
    elif primitive is None:
        kind = "struct"
    elif primitive.size is not None:
        kind = f"{primitive.name} ({primitive.size} bytes)"
    else:
        kind = primitive.wire(at.compact)
    extras = [f"tag {at.tag}" if at.tag is not None else "", "nullable" if at.nullable else ""]
    return ", ".join([kind, *filter(None, extras)])


__all__ = [
    "Compat",
    "Lines",
    "Parsed",
    "Span",
    "Symbol",
    "compat_buffer",
    "completions",
    "config_for",
    "definition",
    "describe_field",
    "field_at_offset",
    "finding_span",
    "fix_all",
    "lint_buffer",
    "siblings",
    "suppression",
    "symbols",
    "versions_at_offset",
    "wire_forms",
]
