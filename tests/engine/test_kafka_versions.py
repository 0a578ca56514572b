"""``--kafka-version`` / ``kafka-version``: each target applies exactly its release's generator rules
(docs/kafka-versions.md), the default accepts what any supported release accepts, and the real 2025–26
specs lint as Kafka builds them, also from a config file in a vendor's layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import format_findings, require_shared, run_cli

from linter.engine.config import Config, ConfigError, load_config
from linter.engine.runner import UsageError, lint, lint_texts
from linter.model.targets import TARGETS
from linter.vocabulary import KAFKA_VERSIONS

MESSAGES = "src/main/resources/common/message"
CLASSIC = ["2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9"]


def _request(**extra) -> dict:
    return {"name": "ShelfScanRequest", "type": "request", "apiKey": 1180, "validVersions": "0-2",
            "flexibleVersions": "2+", "fields": [{"name": "Id", "type": "int32", "versions": "0+"}], **extra}


FEATURES = {
    "headerVersions": _request(headerVersions={"0-1": "1", "2+": "2"}),
    "coordinator-key": {"name": "ShelfKey", "type": "coordinator-key", "apiKey": 5, "validVersions": "0",
                        "flexibleVersions": "none", "fields": [{"name": "Id", "type": "int32", "versions": "0"}]},
    "zkBroker": _request(listeners=["zkBroker", "broker"]),
    "removed API": {"name": "ShelfScanRequest", "type": "request", "apiKey": 1180, "validVersions": "none"},
    "no headerVersions": _request(),
}
# feature -> the rule that reports it, per target ("" = accepted)
EXPECTED = {
    "headerVersions": {**{t: "KL101" for t in [*CLASSIC, "4.0", "4.1", "4.2", "4.3"]}, "trunk": "", "any": ""},
    "coordinator-key": {**{t: "KL103" for t in [*CLASSIC, "4.0"]}, **{t: "" for t in ("4.1", "4.2", "4.3", "trunk", "any")}},
    "zkBroker": {**{t: "" for t in [*CLASSIC, "any"]}, **{t: "KL103" for t in ("4.0", "4.1", "4.2", "4.3")},
                 "trunk": "KL103 KL218"},  # on trunk the request also lacks headerVersions
    "removed API": {**{t: "KL206" for t in CLASSIC}, **{t: "" for t in ("4.0", "4.1", "4.2", "4.3", "trunk", "any")}},
    "no headerVersions": {**{t: "" for t in TARGETS if t != "trunk"}, "trunk": "KL218"},
}


def test_every_target_is_in_the_table() -> None:
    assert set(TARGETS) == {*CLASSIC, "4.0", "4.1", "4.2", "4.3", "trunk", "any"}
    assert tuple(TARGETS) == KAFKA_VERSIONS  # the CLI's choices, which it knows without importing the model
    assert all(set(row) == set(TARGETS) for row in EXPECTED.values())


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("feature", list(FEATURES))
def test_each_target_judges_each_format_change(feature: str, target: str) -> None:
    config = Config(profile="kafka", kafka_version=None if target == "any" else target)
    name = f"{FEATURES[feature]['name']}.json"
    report = lint_texts({name: json.dumps(FEATURES[feature])}, config, complete=False)
    errors = sorted({f.rule for f in report.findings if f.severity == "error"})
    assert errors == EXPECTED[feature][target].split(), format_findings(report.findings)


def test_an_unknown_kafka_version_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown kafka version '5.0'"):
        lint_texts({"A.json": "{}"}, Config(kafka_version="5.0"))
    (tmp_path / ".krpc-lint.yaml").write_text("kafka-version: '5.0'\n")
    with pytest.raises(ConfigError, match="kafka-version must be one of"):
        load_config(start=tmp_path)
    result = run_cli("lint", "--kafka-version", "5.0", "fixtures/valid")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_the_4_3_corpus_is_clean_for_4_3_and_by_default() -> None:
    folder = require_shared("kafka-specs", "4.3")
    for version in (None, "4.3", "trunk"):
        report = lint([folder], Config(profile="kafka", kafka_version=version))
        errors = [f for f in report.findings if f.severity == "error"]
        if version == "trunk":  # trunk requires headerVersions, which 4.3 does not have yet
            assert errors and {f.rule for f in errors} == {"KL218"}
        else:
            assert not errors, format_findings(errors)


def test_the_trunk_2026_samples_as_kafka_builds_them() -> None:
    samples = require_shared("kafka-specs", "trunk-2026-samples")
    paths = [samples / "group-coordinator" / MESSAGES, *sorted((samples / "clients" / MESSAGES).glob("*.json"))]
    for version in (None, "trunk", "4.1"):
        report = lint(paths, Config(profile="kafka", kafka_version=version))
        rules = {f.rule for f in report.findings if f.severity == "error"}
        assert rules == ({"KL101"} if version == "4.1" else set()), (version, format_findings(report.findings))
    old = lint(paths, Config(profile="kafka", kafka_version="3.9"))
    by_file = {Path(f.path).name: f.rule for f in old.findings if f.severity == "error"}
    assert all(by_file.get(p.name) == "KL103" for p in (samples / "group-coordinator" / MESSAGES).glob("*.json"))
    assert by_file["DeleteTopicsRequest.json"] == "KL101"


def test_earlier_corpora_keep_their_verdict_by_default_and_fail_where_their_release_ends() -> None:
    specs = require_shared("kafka-specs")
    assert not [f for f in lint([specs / "3.7.0"], Config(profile="kafka")).findings if f.severity == "error"]
    assert not [f for f in lint([specs / "3.7.0"], Config(profile="kafka", kafka_version="3.7")).findings
                if f.severity == "error"]
    zk = {f.rule for f in lint([specs / "3.7.0"], Config(profile="kafka", kafka_version="4.0")).findings}
    assert zk == {"KL103"}  # zkBroker listeners: ZooKeeper is gone in 4.0


def test_a_vendor_copy_with_kafka_version_in_its_config(tmp_path: Path) -> None:
    """kafka-python's layout: the specs under its own package, the target in pyproject.toml."""
    source = require_shared("kafka-specs", "4.3", "clients", *MESSAGES.split("/"))
    vendored = tmp_path / "kafka" / "protocol" / "schemas" / "resources"
    shutil.copytree(source, vendored)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "vendor"\n\n[tool.krpc-lint]\nprofile = "kafka"\n'
                                             'kafka-version = "4.3"\n')
    clean = run_cli("lint", "--no-cache", "kafka/protocol/schemas/resources", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    request = vendored / "ApiVersionsRequest.json"
    request.write_text(request.read_text().replace('"listeners": ["broker", "controller"]',
                                                   '"listeners": ["zkBroker", "broker", "controller"]'))
    stale = run_cli("lint", "kafka/protocol/schemas/resources", cwd=tmp_path)
    assert stale.returncode == 1 and "KL103" in stale.stdout and "ApiVersionsRequest.json" in stale.stdout
    # the result cache is per target: the same files under another target are checked again
    relaxed = run_cli("lint", "--kafka-version", "3.9", "kafka/protocol/schemas/resources", cwd=tmp_path)
    assert relaxed.returncode == 0, relaxed.stdout


def test_rules_explain_names_the_release() -> None:
    result = run_cli("rules", "explain", "KL218")
    assert result.returncode == 0 and "Kafka's generator enforces it since trunk" in result.stdout


def test_a_header_versions_map_of_every_version_is_checked_entry_by_entry() -> None:
    """Hostile input: 32,767 ranges. Every check does constant work per range (no loop over the versions a
    range covers), so this lints in well under a second; each flexible version mapped to header 1 is one finding."""
    top = 32766
    ranges = {str(v): "1" for v in range(top)} | {f"{top}+": "2"}
    spec = _request(validVersions=f"0-{top}", flexibleVersions="100+", headerVersions=ranges)
    report = lint_texts({"ShelfScanRequest.json": json.dumps(spec)}, Config(profile="strict"), complete=False)
    flexible = [f for f in report.findings if f.rule == "KL217"]
    assert len(flexible) == top - 100 and flexible[0].message.startswith("version 100 is flexible")
    assert not [f for f in report.findings if f.rule in ("KL213", "KL214", "KL258")]
