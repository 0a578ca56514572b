"""The rules of Kafka's unit tests (category kafka-tests, KL3001 and up, KL258): Kafka's own CI passed every
release, so no release's specs may break one of them; and each fires on a real spec changed the way the test it
stands for would catch. docs/kafka-tests.md lists the tests, with their sources."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import require_shared

from linter.compat.releases import Release, release_revisions, release_tags
from linter.engine.config import Config
from linter.engine.runner import all_rules, lint, lint_files
from linter.model.targets import TARGETS

FAMILY = {rule.id for rule in all_rules() if rule.category == "kafka-tests"}
MESSAGES = ("clients", "src", "main", "resources", "common", "message")


def only_family(kafka_version: str | None) -> Config:
    """The family's rules alone (the generator's rules, profile kafka, left out), under ``kafka_version``."""
    return Config(profile="kafka-ci", ignore=("kafka",), kafka_version=kafka_version, siblings=False)


def targets_of(tag: str) -> tuple[str | None, ...]:
    """The --kafka-version values a release tag or branch is linted under: its own (3.7.1 is 3.7, origin/trunk
    is trunk) and none (any); only none before 2.8, the oldest release a lint can stand for."""
    name = tag.removeprefix("origin/")
    minor = name if name == "trunk" else ".".join(name.lstrip("v").split(".")[:2])
    return (minor, None) if minor in TARGETS else (None,)


def test_the_family_is_what_the_docs_list() -> None:
    assert FAMILY == {"KL258", "KL3001", "KL3002", "KL3003", "KL3004", "KL3005", "KL3006"}
    doc = (Path(__file__).resolve().parents[2] / "docs" / "kafka-tests.md").read_text(encoding="utf-8")
    assert all(rule in doc for rule in FAMILY)


@pytest.mark.parametrize(("corpus", "version"), [
    ("2.8.0", "2.8"), ("3.7.0", "3.7"), ("trunk-2024-10", None), ("trunk-2024-10", "3.9"), ("trunk-2024-10", "4.0"),
    ("4.3", "4.3"), ("2.8.0", None), ("3.7.0", None), ("4.3", None)])
def test_no_release_corpus_breaks_kafkas_tests(corpus: str, version: str | None) -> None:
    report = lint([require_shared("kafka-specs", corpus)], only_family(version))
    assert report.files > 100
    assert [f for f in report.findings if f.rule in FAMILY] == []


def test_the_trunk_samples_with_header_versions_pass_under_trunk() -> None:
    """The only real specs with headerVersions (KL258's input), linted as files: the sample holds requests
    without their responses (its README)."""
    samples = sorted(require_shared("kafka-specs", "trunk-2026-samples").rglob("*.json"))
    assert any("headerVersions" in path.read_text(encoding="utf-8") for path in samples)
    report = lint(samples, only_family("trunk"))
    assert report.files == len(samples) and [f for f in report.findings if f.rule in FAMILY] == []


def test_no_release_tag_of_kafka_breaks_kafkas_tests(tmp_path: Path) -> None:
    """Every release tag of the bundle (2.2.0 … 3.8.0 hold JSON specs), under its own release and under any.
    Specs before 2.8 name no listeners (KAFKA-12278 added them), and KL3004 leaves such a directory alone."""
    bundle = require_shared("kafka-history", "kafka-json.bundle")
    clone = tmp_path / "kafka"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True, capture_output=True, timeout=300)
    heads = [Release(f"origin/{branch}", rev_parse(clone, f"origin/{branch}"), 0) for branch in ("3.9", "trunk")]
    checked = 0
    for release in release_revisions(str(clone), [*release_tags(str(clone)), *heads]):
        if not release.files:
            continue
        for version in targets_of(release.label):
            report, _ = lint_files(release.files, only_family(version))
            found = [f"{f.path}: {f.rule} {f.message}" for f in report.findings if f.rule in FAMILY]
            assert found == [], (release.label, version, found)
        checked += 1
    assert checked >= 42, f"only {checked} release tags and branch heads hold specs"


def rev_parse(repo: Path, ref: str) -> str:
    return subprocess.run(["git", "rev-parse", ref], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _bump_request(messages: Path) -> None:
    _edit(messages / "FetchRequest.json", '"validVersions": "0-16"', '"validVersions": "0-17"')


def _negative_key(messages: Path) -> None:
    _edit(messages / "HeartbeatRequest.json", '"apiKey": 12', '"apiKey": -12')
    _edit(messages / "HeartbeatResponse.json", '"apiKey": 12', '"apiKey": -12')


def _copied_api(messages: Path) -> None:
    _edit(messages / "SyncGroupRequest.json", '"name": "SyncGroupRequest"', '"name": "JoinGroupRequest"')
    _edit(messages / "SyncGroupResponse.json", '"name": "SyncGroupResponse"', '"name": "JoinGroupResponse"')


def _no_listeners(messages: Path) -> None:
    _edit(messages / "ListGroupsRequest.json", '"listeners": ["zkBroker", "broker"],', "")


def _vote_on_zk(messages: Path) -> None:
    _edit(messages / "VoteRequest.json", '"listeners": ["controller"]', '"listeners": ["zkBroker", "controller"]')


def _old_versions_dropped(messages: Path) -> None:
    _edit(messages / "ListGroupsRequest.json", '"validVersions": "0-4"', '"validVersions": "1-4"')
    _edit(messages / "ListGroupsResponse.json", '"validVersions": "0-4"', '"validVersions": "1-4"')


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name}: {old!r} not found"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(("change", "rule", "files"), [
    (_bump_request, "KL3001", ["FetchResponse.json"]),
    (_negative_key, "KL3002", ["HeartbeatRequest.json"]),
    (_copied_api, "KL3003", ["SyncGroupRequest.json", "SyncGroupResponse.json"]),
    (_no_listeners, "KL3004", ["ListGroupsRequest.json"]),
    (_vote_on_zk, "KL3005", ["VoteRequest.json"]),
    (_old_versions_dropped, "KL3006", ["ListGroupsRequest.json"]),
])
def test_each_rule_fires_on_kafka_3_7_changed_as_its_test_would_catch(
        tmp_path: Path, change: Callable[[Path], None], rule: str, files: list[str]) -> None:
    """Kafka 3.7.0's message directory, one change: exactly the rule of the test that change fails, under 3.7."""
    messages = tmp_path / "message"
    shutil.copytree(require_shared("kafka-specs", "3.7.0", *MESSAGES), messages)
    change(messages)
    findings = [f for f in lint([messages], only_family("3.7")).findings]
    assert sorted((f.rule, Path(f.path).name) for f in findings) == [(rule, name) for name in sorted(files)], findings
    assert all(f.severity == "error" and "Kafka's build fails" in f.message for f in findings)


def test_the_quorum_apis_rule_runs_without_a_release(tmp_path: Path) -> None:
    """No release builds a Vote served by zkBroker (the test up to 3.9, the generator's listeners since 4.0), so
    KL3005 runs without --kafka-version, and on the element of listeners that is wrong."""
    messages = tmp_path / "message"
    shutil.copytree(require_shared("kafka-specs", "3.7.0", *MESSAGES), messages)
    _edit(messages / "VoteRequest.json", '"listeners": ["controller"]', '"listeners": ["controller", "zkBroker"]')
    (found,) = lint([messages], only_family(None)).findings
    assert (found.rule, Path(found.path).name) == ("KL3005", "VoteRequest.json")
    text = (messages / "VoteRequest.json").read_text(encoding="utf-8").splitlines()[found.line - 1]
    assert text[found.col - 1:].startswith('"zkBroker"'), (text, found.col)


def test_selecting_a_rule_that_does_not_hold_for_the_release_says_so(tmp_path: Path) -> None:
    """KL3006 holds up to 3.9: named without --kafka-version it does not run, and stderr says why and how."""
    spec = tmp_path / "RackMoveRequest.json"
    shutil.copy(Path(__file__).resolve().parents[2] / "fixtures" / "invalid" / "KL3006-versions-start-at-zero.json",
                spec)
    quiet = subprocess.run([sys.executable, "-m", "linter.cli.main", "lint", "--no-cache", "--select", "KL3006",
                            str(spec)], capture_output=True, text=True, timeout=120, check=False)
    assert "KL3006" not in quiet.stdout
    assert ("rule KL3006 (versions-start-at-zero) does not run with no --kafka-version: Kafka's tests assert it "
            "up to 3.9 (--kafka-version 3.9 runs it)") in quiet.stderr, quiet.stderr
    loud = subprocess.run([sys.executable, "-m", "linter.cli.main", "lint", "--no-cache", "--select", "KL3006",
                           "--kafka-version", "3.9", str(spec)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert loud.returncode == 1 and "KL3006 [versions-start-at-zero]" in loud.stdout, loud.stdout
