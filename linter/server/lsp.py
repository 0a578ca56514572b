"""``krpc-lint server``: the Language Server Protocol over stdio (pygls), for spec authors' editors.

On open and on every change a buffer is linted as ``lint`` would lint its file (the nearest config, the other specs of
its directory as context, open buffers in place of their files), and every open buffer of that directory is linted
again, since a change can break or heal its siblings (a request bumped without its response). Diagnostics carry the
rule id, a link to the rule's docs and the exact key or value. Code actions: each fixable finding's fix, every fix at
once (``source.fixAll.krpc-lint``), and a suppression comment. Hover on a field: its type, versions, default and how
it travels per version range; on ``validVersions``/``flexibleVersions``, each run's header version and which release
tag first shipped it. Go to definition of a struct type, the outline of fields (document symbols), and
completion of field keys, types and entity types. With ``initializationOptions: {"compatAgainst": REF}``, the buffer's wire breaks against
the file at git REF are diagnostics too, each with its witness, refreshed on open and on save. A buffer that cannot be
linted is reported in the log, and the server goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from linter.compat.releases import FileReleases, file_releases
from linter.engine.findings import Edit, Finding
from linter.model.spec import MessageSpec
from linter.server.analysis import (
    Compat,
    Lines,
    Symbol,
    compat_buffer,
    completions,
    definition,
    describe_field,
    field_at_offset,
    finding_span,
    fix_all,
    lint_buffer,
    siblings,
    suppression,
    symbols,
    versions_at_offset,
)
from linter.vocabulary import TOOL_NAME, tool_version

RULE_DOCS = "https://krpc-lint.dev/rules"  # docs/rules.md, an anchor per rule
FIX_ALL = "source.fixAll.krpc-lint"
SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "info": types.DiagnosticSeverity.Information}
LOG = logging.getLogger("linter.server")


class SpecServer(LanguageServer):
    """The server, with the findings of each open buffer kept for its code actions."""

    def __init__(self) -> None:
        super().__init__(TOOL_NAME, tool_version())
        self.findings: dict[str, list[Finding]] = {}  # lint's and compat's, as published
        self.compat: dict[str, Compat] = {}  # compat's findings and suggestion, refreshed on open and save
        self.compat_against: str | None = None  # a git ref (initializationOptions.compatAgainst)
        self.releases: dict[str, FileReleases] = {}  # each file at its repository's release tags, read once
        self.parsed_releases: dict[bytes, MessageSpec | None] = {}  # their files parsed once, shared by all

    def releases_of(self, uri: str) -> FileReleases:
        """The file at its repository's release tags, read on the first hover of its versions (tags seldom move
        while one edits; a save reads them again)."""
        if uri not in self.releases:
            self.releases[uri] = file_releases(Path(to_fs_path(uri) or uri), self.parsed_releases)
        return self.releases[uri]

    def refresh_compat(self, uri: str) -> None:
        """The wire breaks of ``uri``'s buffer against ``compat_against``, when set (on open and on save)."""
        if not self.compat_against:
            return
        path = Path(to_fs_path(uri) or uri)
        try:
            self.compat[uri] = compat_buffer(path, self.workspace.get_text_document(uri).source, self.compat_against)
        except Exception as exc:  # noqa: BLE001 - a ref that cannot be read is said once in the log, not fatal
            LOG.warning("krpc-lint: %s: no compat against %s: %s: %s", path, self.compat_against,
                        type(exc).__name__, exc)
            self.compat[uri] = Compat([])

    def open_texts(self) -> dict[Path, str]:
        return {Path(to_fs_path(uri) or uri): document.source for uri, document in self.workspace.text_documents.items()}

    def relint(self, uri: str) -> None:
        """Lint ``uri`` and every open buffer of its directory, the directory read once; publish their
        diagnostics."""
        path = Path(to_fs_path(uri) or uri)
        texts = self.open_texts()
        directory = siblings(path, texts)
        for other, document in list(self.workspace.text_documents.items()):
            other_path = Path(to_fs_path(other) or other)
            if other_path.parent == path.parent:
                self.publish(other, other_path, document.source, texts, directory)

    def publish(self, uri: str, path: Path, text: str, texts: dict[Path, str],
                directory: dict[str, str | bytes]) -> None:
        try:
            findings = lint_buffer(path, texts, directory=directory)
        except Exception as exc:  # noqa: BLE001 - a hostile buffer never stops the server: it is logged
            LOG.warning("krpc-lint: %s: cannot lint: %s: %s", path, type(exc).__name__, exc)
            findings = []
        compat = self.compat.get(uri)
        findings = findings + (compat.findings if compat is not None else [])
        self.findings[uri] = findings
        lines = Lines(text)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=[diagnostic(lines, finding) for finding in findings]))


def diagnostic(lines: Lines, finding: Finding) -> types.Diagnostic:
    span = finding_span(lines, finding)
    return types.Diagnostic(
        range=_range(lines, span.start, span.end), message=finding.message, source=TOOL_NAME,
        severity=SEVERITY.get(finding.severity, types.DiagnosticSeverity.Information), code=finding.rule,
        code_description=types.CodeDescription(href=f"{RULE_DOCS}#{finding.rule.lower()}-{finding.name}"),
        data={"rule": finding.rule})


def _range(lines: Lines, start: int, end: int) -> types.Range:
    (start_line, start_col), (end_line, end_col) = lines.position(start), lines.position(end)
    return types.Range(start=types.Position(line=start_line, character=start_col),
                       end=types.Position(line=end_line, character=end_col))


def _text_edits(lines: Lines, edits: list[Edit]) -> list[types.TextEdit]:
    return [types.TextEdit(range=_range(lines, edit.start, edit.end), new_text=edit.new) for edit in edits]


def code_actions(server: SpecServer, uri: str, wanted: types.Range,
                 asked: Sequence[types.CodeActionKind | str] | None) -> list[types.CodeAction]:
    """Quick fixes and suppressions of the findings in ``wanted``, and fix-all when asked for or when any fix."""
    only = [str(kind) for kind in asked] if asked else None
    document = server.workspace.get_text_document(uri)
    lines = Lines(document.source)
    findings = server.findings.get(uri, [])
    actions: list[types.CodeAction] = []
    for finding in findings:
        span = finding_span(lines, finding)
        where = _range(lines, span.start, span.end)
        if (where.end.line, where.end.character) < (wanted.start.line, wanted.start.character) or \
                (where.start.line, where.start.character) > (wanted.end.line, wanted.end.character):
            continue
        if finding.fix:
            actions.append(_action(f"Fix {finding.rule} [{finding.name}]", types.CodeActionKind.QuickFix, uri,
                                   _text_edits(lines, list(finding.fix)), diagnostic(lines, finding)))
        actions.append(_action(f"Suppress {finding.rule} on this line", types.CodeActionKind.QuickFix, uri,
                               _text_edits(lines, [suppression(lines, finding)]), diagnostic(lines, finding)))
    compat = server.compat.get(uri)
    if compat is not None and compat.suggestion:
        notes = "; ".join(compat.notes)
        actions.append(_action(f"Keep the released bytes: make the change in a new version ({notes})",
                               types.CodeActionKind.QuickFix, uri, _text_edits(lines, list(compat.suggestion)), None))
    every = fix_all(findings)
    if every and (not only or any(FIX_ALL.startswith(kind) or kind == FIX_ALL for kind in only)):
        actions.append(_action("Fix all krpc-lint findings", FIX_ALL, uri, _text_edits(lines, every), None))
    if only:
        actions = [action for action in actions if any(str(action.kind).startswith(kind) for kind in only)]
    return actions


def _action(title: str, kind: str, uri: str, edits: list[types.TextEdit],
            fixes: types.Diagnostic | None) -> types.CodeAction:
    return types.CodeAction(title=title, kind=kind, diagnostics=[fixes] if fixes else None,
                            edit=types.WorkspaceEdit(changes={uri: edits}))


def hover(server: SpecServer, uri: str, position: types.Position) -> types.Hover | None:
    document = server.workspace.get_text_document(uri)
    lines = Lines(document.source)
    offset = lines.offset(position.line, position.character)
    try:
        found = field_at_offset(document.source, offset)
        said = describe_field(*found) if found is not None else \
            versions_at_offset(document.source, offset, server.releases_of(uri))
    except Exception as exc:  # noqa: BLE001 - as for diagnostics: logged, never fatal
        LOG.warning("krpc-lint: %s: no hover: %s: %s", uri, type(exc).__name__, exc)
        return None
    if said is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=said))


def _symbol(lines: Lines, symbol: Symbol) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name, detail=symbol.detail,
        kind=types.SymbolKind.Struct if symbol.struct else types.SymbolKind.Field,
        range=_range(lines, symbol.span.start, symbol.span.end),
        selection_range=_range(lines, symbol.name_span.start, symbol.name_span.end),
        children=[_symbol(lines, child) for child in symbol.children])


COMPLETION_KINDS = {"key": types.CompletionItemKind.Property, "type": types.CompletionItemKind.Class,
                    "entityType": types.CompletionItemKind.EnumMember}


def build() -> SpecServer:
    """The server with its features registered."""
    server = SpecServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: SpecServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        ref = options.get("compatAgainst") if isinstance(options, dict) else None
        ls.compat_against = ref if isinstance(ref, str) and ref else None

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SpecServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.refresh_compat(params.text_document.uri)
        ls.relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SpecServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.releases.pop(params.text_document.uri, None)
        ls.refresh_compat(params.text_document.uri)
        ls.relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SpecServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SpecServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.findings.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                          diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def actions(ls: SpecServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(ls, params.text_document.uri, params.range, params.context.only)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: SpecServer, params: types.HoverParams) -> types.Hover | None:
        return hover(ls, params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def on_definition(ls: SpecServer, params: types.DefinitionParams) -> types.Location | None:
        text = ls.workspace.get_text_document(params.text_document.uri).source
        lines = Lines(text)
        span = definition(text, lines.offset(params.position.line, params.position.character))
        return None if span is None else types.Location(uri=params.text_document.uri,
                                                        range=_range(lines, span.start, span.end))

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def on_symbols(ls: SpecServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        text = ls.workspace.get_text_document(params.text_document.uri).source
        lines = Lines(text)
        return [_symbol(lines, symbol) for symbol in symbols(text)]

    @server.feature(types.TEXT_DOCUMENT_COMPLETION)
    def on_completion(ls: SpecServer, params: types.CompletionParams) -> list[types.CompletionItem]:
        text = ls.workspace.get_text_document(params.text_document.uri).source
        return [types.CompletionItem(label=label, kind=COMPLETION_KINDS[kind], detail=kind)
                for label, kind in completions(text)]

    return server


def serve() -> None:
    """Run the server on stdin and stdout until the client exits."""
    build().start_io()


__all__ = ["FIX_ALL", "SpecServer", "build", "code_actions", "diagnostic", "hover", "serve"]


