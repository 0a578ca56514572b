"""The server's lint of one buffer is `lint FILE`'s: the buffer's own rules, and the directory's rules over every
file. Same findings as a lint of the whole directory, for every file; file rules run on the buffer alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import require_shared

from linter.engine import runner
from linter.engine.config import Config
from linter.server.analysis import lint_buffer, siblings

MESSAGES = ("clients", "src", "main", "resources", "common", "message")


@pytest.fixture()
def messages(tmp_path: Path) -> Path:
    """trunk-2024-10's message directory, FetchRequest bumped to v18 without its response (a directory finding)."""
    target = tmp_path / "message"
    shutil.copytree(require_shared("kafka-specs", "trunk-2024-10", *MESSAGES), target)
    fetch = target / "FetchRequest.json"
    fetch.write_text(fetch.read_text(encoding="utf-8").replace('"validVersions": "0-17"', '"validVersions": "0-18"'),
                     encoding="utf-8")
    return target


def test_a_buffer_gets_what_a_lint_of_its_directory_says_of_it(messages: Path) -> None:
    config = Config(profile="strict")
    whole = runner.lint_texts(siblings(messages / "FetchRequest.json", {}), config)
    for name in ("FetchRequest.json", "FetchResponse.json", "ProduceRequest.json", "VoteRequest.json"):
        expected = sorted((f.rule, f.line, f.col, f.message) for f in whole.findings if f.path == name)
        found = sorted((f.rule, f.line, f.col, f.message) for f in lint_buffer(messages / name, {}, config))
        assert found == expected, name
    response = lint_buffer(messages / "FetchResponse.json", {}, config)
    assert "KL3001" in {f.rule for f in response}  # what the request's bump breaks in its response


def test_file_rules_run_on_the_buffer_alone(messages: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    linted: list[str] = []
    file_findings = runner._file_findings

    def counted(ctx, ruleset, cache):  # type: ignore[no-untyped-def]
        linted.append(ctx.path)
        return file_findings(ctx, ruleset, cache)

    monkeypatch.setattr(runner, "_file_findings", counted)
    lint_buffer(messages / "FetchRequest.json", {}, Config(profile="strict"))
    assert linted == ["FetchRequest.json"]  # not the 185 other specs of the directory
