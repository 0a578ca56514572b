"""``krpc-lint frames check`` on public wire-encoding bugs of Kafka clients and brokers.

``fixtures/wire-bugs`` holds one frames corpus per bug (built by ``bench/wire_bugs.py`` from the codec and the bug's
mutation) and ``manifest.json``, which says what each corpus must produce. For each entry the command must report every
expected (frame, rule, severity), and no other finding of severity error or warning: a corpus without expectations
(a decoder bug, Kafka's own valid bytes) must come out clean of both.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import REPO_ROOT, require_shared, shared_path

from linter.cli.main import cli

FIXTURES = REPO_ROOT / "fixtures" / "wire-bugs"
SCRIPT = REPO_ROOT / "bench" / "wire_bugs.py"
ENTRIES: list[dict[str, Any]] = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
FRAME_KEYS = {"api_key", "api_version", "direction", "correlation_id", "hex"}
SEVERITIES = {"error", "warning", "info"}


def _key(finding: dict[str, Any]) -> tuple[Any, Any, Any]:
    return finding["frame"], finding["rule"], finding["severity"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["source"] for entry in ENTRIES])
def test_frames_check_reports_the_bug(entry: dict[str, Any]) -> None:
    specs = require_shared("kafka-specs", entry["specs"])
    result = CliRunner().invoke(cli, ["frames", "check", str(FIXTURES / entry["file"]), "--specs", str(specs),
                                      "--format", "json"], catch_exceptions=False)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"exit {result.exit_code}, no JSON report on stdout: {result.stdout[:500]!r} {result.stderr[:500]!r}")
    findings = report["findings"]
    found = {_key(finding) for finding in findings}
    expected = {(want["frame"], want["rule"], want["severity"]) for want in entry["expect"]}
    assert expected <= found, f"missing {sorted(expected - found)}; reported {findings}"
    others = [finding for finding in findings
              if finding["severity"] in ("error", "warning") and _key(finding) not in expected]
    assert others == [], f"{entry['source']}: findings not in the manifest"


def test_the_manifest_describes_every_corpus() -> None:
    """Shape only (no ../shared needed): each corpus is listed once, each line a frame, each expectation on a frame."""
    assert sorted(entry["file"] for entry in ENTRIES) == sorted(path.name for path in FIXTURES.glob("*.jsonl"))
    assert len({entry["source"] for entry in ENTRIES}) == len(ENTRIES)
    for entry in ENTRIES:
        assert {"file", "source", "url", "specs", "summary", "expect"} <= entry.keys(), entry["file"]
        lines = (FIXTURES / entry["file"]).read_text(encoding="utf-8").splitlines()
        frames = [json.loads(line) for line in lines]
        assert frames and all(frame.keys() == FRAME_KEYS for frame in frames), entry["file"]
        for frame in frames:
            data = bytes.fromhex(frame["hex"])
            assert frame["direction"] in ("request", "response")
            assert len(data) >= 4, entry["file"]
        for want in entry["expect"]:
            assert 0 <= want["frame"] < len(frames), (entry["file"], want)
            assert want["rule"].startswith("KL20") and want["severity"] in SEVERITIES, (entry["file"], want)


def _check(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(directory), "--check", "--shared", str(shared_path())],
                          capture_output=True, text=True, check=False, timeout=600)


def test_the_committed_fixtures_are_what_the_script_builds() -> None:
    require_shared("kafka-specs")
    result = _check(FIXTURES)
    assert result.returncode == 0, result.stderr


def test_the_check_notices_a_changed_fixture(tmp_path: Path) -> None:
    require_shared("kafka-specs")
    copy = tmp_path / "wire-bugs"
    shutil.copytree(FIXTURES, copy)
    corpus = copy / ENTRIES[0]["file"]
    text = corpus.read_text(encoding="utf-8")
    corpus.write_text(text.replace('"hex": "0000', '"hex": "0001', 1), encoding="utf-8")
    result = _check(copy)
    assert result.returncode == 1
    assert ENTRIES[0]["file"] in result.stderr
