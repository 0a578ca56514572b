"""Language server latency: from an edit of FetchRequest.json sent over LSP to its diagnostics received, in a copy of
Kafka's trunk-2024-10 message directory (the other specs are the context), side by side with its floor, the same
lint of the buffer in this process (``linter.server.analysis.lint_buffer``), with ``krpc-lint lint FILE`` as a
process (what pre-commit pays per run), and with a lint of every spec of the directory (what the server did before
it linted one buffer as ``lint FILE`` does).

    python bench/server.py [--edits 30]

Figures: docs/performance.md, "Language server".
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MESSAGES = ROOT.parent.joinpath("shared", "kafka-specs", "trunk-2024-10", "clients", "src", "main", "resources",
                                "common", "message")


async def over_lsp(path: Path, edits: int) -> list[float]:
    """Seconds from each didChange to the diagnostics it brings."""
    client = LanguageClient("bench", "1")
    arrived: asyncio.Queue[float] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        if params.uri == path.as_uri():
            arrived.put_nowait(time.perf_counter())

    await client.start_io(sys.executable, "-m", "linter.cli.main", "server")
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                         root_uri=path.parent.as_uri()))
    client.initialized(types.InitializedParams())
    text, uri = path.read_text(encoding="utf-8"), path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="json", version=0, text=text)))
    await arrived.get()
    seconds = []
    for edit in range(1, edits + 1):
        changed = text.replace('"MaxWaitMs"', f'"MaxWaitMs{edit}"', 1)
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=edit),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=changed)]))
        seconds.append(await arrived.get() - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return seconds


def in_process(path: Path, edits: int) -> list[float]:
    from linter.server.analysis import config_for, lint_buffer

    text, config = path.read_text(encoding="utf-8"), config_for(path)
    lint_buffer(path, {path: text}, config)  # warm: rules loaded, the codec's caches filled
    seconds = []
    for edit in range(1, edits + 1):
        changed = text.replace('"MaxWaitMs"', f'"MaxWaitMs{edit}"', 1)
        started = time.perf_counter()
        lint_buffer(path, {path: changed}, config)
        seconds.append(time.perf_counter() - started)
    return seconds


def whole_directory(path: Path, edits: int) -> list[float]:
    """Every spec of the directory linted with the buffer (what the server did before it linted the buffer as
    ``lint FILE`` does): for comparison."""
    from linter.engine.runner import lint_texts
    from linter.server.analysis import config_for, siblings

    text, config = path.read_text(encoding="utf-8"), config_for(path)
    seconds = []
    for edit in range(1, edits + 1):
        changed = text.replace('"MaxWaitMs"', f'"MaxWaitMs{edit}"', 1)
        started = time.perf_counter()
        lint_texts(siblings(path, {path: changed}), config)
        seconds.append(time.perf_counter() - started)
    return seconds


def as_process(path: Path, runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "linter.cli.main", "lint", str(path)], capture_output=True, check=False)
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=30)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="krpc-lint-bench-server-") as scratch:
        messages = Path(scratch) / "message"
        shutil.copytree(MESSAGES, messages)
        path = messages / "FetchRequest.json"
        sides = {"floor: lint_buffer in this process": in_process(path, options.edits),
                 "krpc-lint server: edit -> diagnostics": asyncio.run(over_lsp(path, options.edits)),
                 "krpc-lint lint FILE, a process": as_process(path, 5),
                 "every spec of the directory linted": whole_directory(path, options.edits)}
        specs = len(list(messages.glob("*.json")))
    floor = statistics.median(sides["floor: lint_buffer in this process"])
    print(f"{specs} specs as context, {options.edits} edits of FetchRequest.json")
    print(f"{'what':<40}{'median ms':>10}{'vs floor':>10}")
    for name, seconds in sides.items():
        median = statistics.median(seconds)
        print(f"{name:<40}{median * 1000:>10.1f}{median / floor:>9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
