"""The real Kafka corpus (``../shared/kafka-specs``): valid releases lint clean, 2.8.0 exactly as Kafka judges it."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import format_findings

from linter.engine.config import Config
from linter.engine.runner import lint

VALID_RELEASES = ("trunk-2024-10", "3.7.0")
HISTORIC_MISSING_FLEXIBLE = 29  # per kafka-specs/README.md
_LINE_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


def _lint(folder: Path, profile: str | None = None):
    config = Config(profile=profile) if profile else Config()
    return lint([folder], config)


def _by_file(findings) -> Counter:
    return Counter((str(Path(f.path).resolve()), f.rule, f.name) for f in findings)


def _simple_json(path: Path):
    """An independent reader: drop whole-line // comments and ignore whatever follows the root object."""
    text = _LINE_COMMENT.sub("", path.read_text(encoding="utf-8"))
    value, _ = json.JSONDecoder().raw_decode(text.lstrip())
    return value


@pytest.mark.parametrize("release", VALID_RELEASES)
def test_valid_release_has_no_errors(kafka_specs: Path, release: str) -> None:
    report = _lint(kafka_specs / release)
    assert report.files > 100
    errors = [f for f in report.findings if f.severity == "error"]
    warnings = [f for f in report.findings if f.severity != "error"]
    assert not errors, (
        f"{len(errors)} error(s) on {release}, which Kafka accepts:\n{format_findings(errors)}\n"
        f"and {len(warnings)} warning/info finding(s):\n{format_findings(warnings)}"
    )


@pytest.mark.parametrize("release", VALID_RELEASES)
def test_valid_release_is_clean_with_kafka_profile(kafka_specs: Path, release: str) -> None:
    report = _lint(kafka_specs / release, "kafka")
    assert report.files > 100
    assert not report.findings, f"kafka profile reports findings on {release}:\n{format_findings(report.findings)}"


def test_2_8_0_errors_are_exactly_kafkas(kafka_specs: Path) -> None:
    folder = kafka_specs / "2.8.0"
    files = sorted(folder.rglob("*.json"))
    without_flexible = [f for f in files if "flexibleVersions" not in _simple_json(f)]
    assert len(without_flexible) == HISTORIC_MISSING_FLEXIBLE, [f.name for f in without_flexible]
    trailing = [f for f in files if f.name == "DescribeProducersRequest.json"]
    assert len(trailing) == 1

    expected = Counter({(str(f.resolve()), "KL204", "flexible-versions-required"): 1 for f in without_flexible})
    expected[(str(trailing[0].resolve()), "KL002", "trailing-content")] += 1

    report = _lint(folder)
    errors = [f for f in report.findings if f.severity == "error"]
    actual = _by_file(errors)
    missing = expected - actual
    unexpected = actual - expected
    assert not missing and not unexpected, (
        f"missing errors: {sorted(missing.elements())}\n"
        f"unexpected errors: {sorted(unexpected.elements())}\n"
        f"all errors:\n{format_findings(errors)}"
    )
