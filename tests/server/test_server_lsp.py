"""``krpc-lint server`` driven by a real LSP client (pygls's) over stdio, in a workspace copied from Kafka's specs
(trunk-2024-10): diagnostics on a bad field name, a quick fix for a numeric default, hover on a field, and the
diagnostics cleared once the text is good again."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from conftest import require_shared

pytest.importorskip("pygls", reason="the language server needs pygls (the test extras install it)")

from lsprotocol import types
from pygls.lsp.client import LanguageClient

FETCH = "FetchRequest.json"


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    source = require_shared("kafka-specs", "trunk-2024-10", "clients", "src", "main", "resources", "common", "message")
    target = tmp_path / "message"
    shutil.copytree(source, target)
    (tmp_path / ".krpc-lint.yaml").write_text("select: [KL803]\n", encoding="utf-8")  # numeric defaults (strict)
    return target


class Session:
    """A client talking to the server; diagnostics as they are published, by URI."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.arrived = asyncio.Event()

    def expect(self, uri: str) -> None:
        """Forget ``uri``'s diagnostics before a notification that makes the server publish them again."""
        self.published.pop(uri, None)
        self.arrived.clear()

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """``uri``'s diagnostics once published (after ``expect``)."""
        for _ in range(200):
            if uri in self.published:
                return self.published[uri]
            try:
                await asyncio.wait_for(self.arrived.wait(), 0.5)
            except TimeoutError:
                pass
            self.arrived.clear()
        raise AssertionError(f"no diagnostics for {uri}")


@asynccontextmanager
async def started(workspace: Path, options: dict[str, str] | None = None) -> AsyncIterator[Session]:
    client = LanguageClient("krpc-lint-test", "1")
    opened = Session(client)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        opened.published[params.uri] = list(params.diagnostics)
        opened.arrived.set()

    await client.start_io(sys.executable, "-m", "linter.cli.main", "server")
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri(), initialization_options=options,
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="message")]))
    client.initialized(types.InitializedParams())
    yield opened
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def run(workspace: Path, scenario: Callable[[Session], Awaitable[None]],
        options: dict[str, str] | None = None) -> None:
    """A scenario against a server started for it, in a fresh event loop."""
    async def main() -> None:
        async with started(workspace, options) as session:
            await scenario(session)

    asyncio.run(main())


def _open(session: Session, path: Path, text: str) -> str:
    uri = path.as_uri()
    session.expect(uri)
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)))
    return uri


def _change(session: Session, uri: str, version: int, text: str) -> None:
    session.expect(uri)
    session.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n")


async def _hover(session: Session, uri: str, text: str, needle: str) -> str:
    """The hover's markdown inside ``needle``'s first occurrence in ``text``."""
    line = _line_of(text, needle)
    shown = await session.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=text.splitlines()[line].index(needle) + 3)))
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    return shown.contents.value


def test_diagnostics_fixes_hover_and_clearing(workspace: Path) -> None:
    run(workspace, lambda session: diagnostics_fixes_hover_and_clearing(session, workspace))


async def diagnostics_fixes_hover_and_clearing(session: Session, workspace: Path) -> None:
    path = workspace / FETCH
    good = path.read_text(encoding="utf-8")
    uri = path.as_uri()

    _open(session, path, good)
    opened = await session.diagnostics(uri)
    assert opened == [], [(d.code, d.message) for d in opened]

    renamed = good.replace('"MaxWaitMs"', '"Max_WaitMs"', 1)
    _change(session, uri, 2, renamed)
    found = await session.diagnostics(uri)
    assert [(d.code, d.range.start.line) for d in found] == [("KL301", _line_of(renamed, '"Max_WaitMs"'))]
    assert found[0].code_description is not None and "kl301-field-name-pattern" in found[0].code_description.href
    assert found[0].severity == types.DiagnosticSeverity.Error

    numeric = good.replace('"default": "-1"', '"default": -1', 1)
    _change(session, uri, 3, numeric)
    found = await session.diagnostics(uri)
    assert [d.code for d in found] == ["KL803"]
    actions = await session.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=found[0].range,
        context=types.CodeActionContext(diagnostics=found)))
    fixes = [action for action in actions or [] if isinstance(action, types.CodeAction)
             and action.title.startswith("Fix KL803")]
    assert len(fixes) == 1 and fixes[0].edit is not None and fixes[0].edit.changes is not None
    (edit,) = fixes[0].edit.changes[uri]
    assert edit.new_text == '"-1"' and edit.range.start.line == _line_of(numeric, '"default": -1')
    assert any(isinstance(action, types.CodeAction) and action.title.startswith("Suppress KL803")
               for action in actions or [])

    line = _line_of(good, '"MaxWaitMs"')
    column = good.splitlines()[line].index("MaxWaitMs")
    _change(session, uri, 4, good)
    cleared = await session.diagnostics(uri)
    assert cleared == []
    shown = await session.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=column)))
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    assert "**MaxWaitMs**: `int32`" in shown.contents.value and "versions: 0+" in shown.contents.value
    assert "int32 (4 bytes)" in shown.contents.value


def test_a_hostile_buffer_never_kills_the_server(workspace: Path) -> None:
    run(workspace, lambda session: hostile_buffers(session, workspace))


async def hostile_buffers(session: Session, workspace: Path) -> None:
    path = workspace / FETCH
    uri = path.as_uri()
    for version, text in enumerate(["{" * 100_000, '{"name": "X", "fields": [' + "[" * 5000, "\ud800", ""], 1):
        if version == 1:
            _open(session, path, text)
        else:
            _change(session, uri, version, text)
        await session.diagnostics(uri)
    _change(session, uri, 9, path.read_text(encoding="utf-8"))
    assert await session.diagnostics(uri) == []  # still serving


def test_compat_against_head_in_a_clone_of_kafka_shows_a_retype_with_its_witness(tmp_path: Path) -> None:
    bundle = require_shared("kafka-history", "kafka-json.bundle")
    clone = tmp_path / "kafka"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True, capture_output=True, timeout=300)
    messages = clone / "clients" / "src" / "main" / "resources" / "common" / "message"
    run(messages, lambda session: retyped(session, messages), {"compatAgainst": "HEAD"})


async def retyped(session: Session, messages: Path) -> None:
    path = messages / FETCH
    good = path.read_text(encoding="utf-8")
    wide = good.replace('{ "name": "MaxWaitMs", "type": "int32"', '{ "name": "MaxWaitMs", "type": "int64"', 1)
    assert wide != good
    uri = path.as_uri()
    _open(session, path, wide)
    found = await session.diagnostics(uri)
    breaks = [d for d in found if d.code == "KL1003"]
    assert len(breaks) == 1 and breaks[0].severity == types.DiagnosticSeverity.Error, [(d.code, d.message) for d in found]
    assert "int32 -> int64 (against HEAD)\n" in breaks[0].message  # the witness as the text report and SARIF say it:
    assert "witness: v0 written by the old revision:" in breaks[0].message and "the new revision" in breaks[0].message
    assert breaks[0].range.start.line == _line_of(wide, '"MaxWaitMs"')
    _change(session, uri, 2, good)  # the break stays until the file is saved: compat runs on open and save
    await session.diagnostics(uri)
    session.expect(uri)
    session.client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [d.code for d in await session.diagnostics(uri)] == []

    anchor = '{ "name": "MaxWaitMs", "type": "int32", "versions": "0+",'
    inserted = good.replace(anchor, '{ "name": "Budget", "type": "int32", "versions": "0+", "about": "x" },\n    '
                            + anchor, 1)
    _change(session, uri, 3, inserted)
    await session.diagnostics(uri)
    session.expect(uri)
    session.client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    found = await session.diagnostics(uri)
    assert "KL1001" in [d.code for d in found], [(d.code, d.message) for d in found]
    actions = await session.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=found[0].range,
        context=types.CodeActionContext(diagnostics=found)))
    (keep,) = [action for action in actions or [] if isinstance(action, types.CodeAction)
               and action.title.startswith("Keep the released bytes")]
    assert keep.edit is not None and keep.edit.changes is not None
    assert sorted(edit.new_text for edit in keep.edit.changes[uri]) == ['"0-18"', '"18+"']  # compat --suggest

    said = await _hover(session, uri, inserted, '"validVersions"')  # every shipped version's bytes changed
    shipped = [line for line in said.splitlines() if line.startswith("- v") and "header" not in line]
    assert shipped and all("changed since" in line for line in shipped[:-1]), said
    assert shipped[-1] == "- v17: in no release", said

    _change(session, uri, 4, good)
    await session.diagnostics(uri)
    said = await _hover(session, uri, good, '"validVersions"')
    for version in (11, 12, 13, 16):  # the first release tag whose FetchRequest.json lists the version, by git
        assert f"v{version}: shipped in {first_listing(messages / FETCH, version)}" in said, said
    assert "- v17: in no release" in said


def first_listing(path: Path, version: int) -> str:
    """The first release tag (in version order) whose copy of ``path`` has ``version`` in its validVersions."""
    tags = subprocess.run(["git", "tag", "--sort=version:refname"], cwd=path.parent, check=True, capture_output=True,
                          text=True).stdout.split()
    for tag in tags:
        shown = subprocess.run(["git", "show", f"{tag}:./{path.name}"], check=False, cwd=path.parent,
                               capture_output=True, text=True)
        if shown.returncode == 0:
            spec = re.search(r'"validVersions":\s*"(\d+)-(\d+)"', shown.stdout)
            if spec and int(spec[1]) <= version <= int(spec[2]):
                return tag
    raise AssertionError(f"no release lists v{version}")


def test_definition_outline_and_completion(workspace: Path) -> None:
    run(workspace, lambda session: navigation(session, workspace))


async def navigation(session: Session, workspace: Path) -> None:
    path = workspace / "AddPartitionsToTxnRequest.json"
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    _open(session, path, text)
    await session.diagnostics(uri)
    use = _line_of(text, '"type": "[]AddPartitionsToTxnTopic"')
    column = text.splitlines()[use].index("[]AddPartitionsToTxnTopic")
    found = await session.client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=use, character=column)))
    assert isinstance(found, types.Location), found
    assert found.range.start.line == _line_of(text, '{ "name": "AddPartitionsToTxnTopic"')  # the common struct

    outline = await session.client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert outline is not None
    names = [symbol.name for symbol in outline if isinstance(symbol, types.DocumentSymbol)]
    assert names[-1] == "AddPartitionsToTxnTopic" and "Transactions" in names and "V3AndBelowTopics" in names
    transactions = next(s for s in outline if isinstance(s, types.DocumentSymbol) and s.name == "Transactions")
    assert "TransactionalId" in [child.name for child in transactions.children or []]

    offered = await session.client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=use, character=column)))
    labels = {item.label for item in (offered.items if isinstance(offered, types.CompletionList) else offered or [])}
    assert {"nullableVersions", "taggedVersions", "int32", "[]AddPartitionsToTxnTopic", "topicName"} <= labels

    said = await _hover(session, uri, text, '"validVersions"')
    assert "not flexible, request header v1" in said  # versions before flexibleVersions
    assert "flexible, request header v2" in said
    assert "Releases: none known (not a git repository, so no release tags)" in said  # a copy, not a checkout
