"""compat, changelog and matrix on Kafka 4.x and trunk 2026: KIP-896 baselines, removed APIs and their
reserved apiKeys, header versions (KIP-1313) and coordinator records converted from data records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared, run_cli

from linter import changelog, compare, matrix
from linter.engine.config import Config

MESSAGES = "src/main/resources/common/message"
GROUP = f"group-coordinator/{MESSAGES}"
STRICT = Config(profile="strict")


def _by_rule(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for finding in report.findings:
        out.setdefault(finding.rule, []).append(finding)
    return out


def test_trunk_2024_to_4_3_has_no_wire_break_and_explains_kip_896() -> None:
    specs = require_shared("kafka-specs")
    report = compare(specs / "trunk-2024-10" / "clients" / MESSAGES, specs / "4.3" / "clients" / MESSAGES, STRICT)
    assert not [f for f in report.findings if f.category == "WIRE_BREAKING"]
    dropped = {f.message_name: f for f in _by_rule(report)["KL1041"]}
    assert dropped["ProduceRequest"].versions == (0, 1, 2) and dropped["FetchRequest"].versions == (0, 1, 2, 3)
    assert all("KIP-896" in f.message for f in dropped.values() if f.message_name.endswith(("Request", "Response")))


def test_a_converted_coordinator_key_is_source_only() -> None:
    specs = require_shared("kafka-specs")
    old = specs / "trunk-2024-10" / GROUP / "ConsumerGroupMetadataKey.json"
    new = specs / "trunk-2026-samples" / GROUP / "ConsumerGroupMetadataKey.json"
    report = compare(old, new, STRICT)
    assert [(f.rule, f.category) for f in report.findings] == [("KL1072", "SOURCE_ONLY")]
    result = run_cli("compat", "--format", "json", str(old), str(new))
    assert result.returncode == 0, result.stdout + result.stderr
    assert {f["category"] for f in json.loads(result.stdout)["findings"]} == {"SOURCE_ONLY"}


def test_every_converted_key_and_value_of_the_samples(tmp_path: Path) -> None:
    """Each key and value in both revisions: the conversion is source-only; the only other changes are the
    fields the samples really changed (their later commits)."""
    specs = require_shared("kafka-specs")
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    samples = specs / "trunk-2026-samples" / GROUP
    old_dir.mkdir(), new_dir.mkdir()
    for sample in samples.glob("*.json"):
        before = specs / "trunk-2024-10" / GROUP / sample.name
        if before.exists():
            shutil.copy(before, old_dir), shutil.copy(sample, new_dir)
    report = compare(old_dir, new_dir, STRICT)
    converted = {f.message_name for f in _by_rule(report)["KL1072"]}
    assert {"ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue", "ShareGroupMetadataKey"} <= converted
    keys = [f for f in report.findings if f.message_name.endswith("Key")]
    assert keys and all(f.rule == "KL1072" for f in keys), [(f.message_name, f.rule) for f in keys]
    assert "KL1013" not in _by_rule(report)  # the cross-decoding of old@type and new@0 agrees


def test_a_changed_coordinator_key_is_a_wire_break_with_a_witness(tmp_path: Path) -> None:
    specs = require_shared("kafka-specs")
    new = json.loads("".join(line for line in (specs / "trunk-2026-samples" / GROUP / "ConsumerGroupMetadataKey.json")
                             .read_text().splitlines(keepends=True) if not line.lstrip().startswith("//")))
    new["fields"][0]["type"] = "int32"
    (tmp_path / "ConsumerGroupMetadataKey.json").write_text(json.dumps(new))
    report = compare(specs / "trunk-2024-10" / GROUP / "ConsumerGroupMetadataKey.json",
                     tmp_path / "ConsumerGroupMetadataKey.json", STRICT)
    retyped = _by_rule(report)["KL1003"]
    assert retyped[0].category == "WIRE_BREAKING" and retyped[0].witness is not None


def _write(folder: Path, **specs: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, spec in specs.items():
        (folder / f"{name}.json").write_text(json.dumps({"name": name, **spec}))
    return folder


def _request(key: int, versions: str, **extra) -> dict:
    spec = {"type": "request", "apiKey": key, "validVersions": versions, **extra}
    if versions != "none":
        spec = {"flexibleVersions": "1+", "fields": [{"name": "Id", "type": "int32", "versions": "0+"}], **spec}
    return spec


def test_an_api_emptied_to_none_is_removed_and_its_key_reuse_breaks(tmp_path: Path) -> None:
    v1 = _write(tmp_path / "v1", LegacyRequest=_request(1000, "0-2"))
    v2 = _write(tmp_path / "v2", LegacyRequest=_request(1000, "none"))
    v3 = _write(tmp_path / "v3", ShinyRequest=_request(1000, "0"))
    removed = _by_rule(compare(v1, v2, STRICT))
    assert list(removed) == ["KL1044"] and removed["KL1044"][0].category == "VERSION_DROPPED"
    assert removed["KL1044"][0].versions == (0, 1, 2) and "stays reserved" in removed["KL1044"][0].message
    reused = _by_rule(compare(v2, v3, STRICT))["KL1014"][0]
    assert reused.category == "WIRE_BREAKING" and reused.witness is not None
    assert "LegacyRequest" in reused.witness["error"]
    assert "KL1014" not in _by_rule(compare(v2, v2, STRICT))


def test_header_versions_declared_as_implied_are_safe_and_a_changed_one_breaks(tmp_path: Path) -> None:
    specs = require_shared("kafka-specs", "trunk-2024-10", "clients", *MESSAGES.split("/"))
    old, same, moved = tmp_path / "old", tmp_path / "same", tmp_path / "moved"
    for folder in (old, same, moved):
        shutil.copytree(specs, folder)
    text = (specs / "ApiVersionsRequest.json").read_text()
    anchor = '"flexibleVersions": "3+",'
    (same / "ApiVersionsRequest.json").write_text(text.replace(anchor, anchor + ' "headerVersions": {"0-2": "1", "3+": "2"},'))
    (moved / "ApiVersionsRequest.json").write_text(text.replace(anchor, anchor + ' "headerVersions": {"0-1": "1", "2+": "2"},'))
    declared = _by_rule(compare(old, same, STRICT))
    assert list(declared) == ["KL1086"] and declared["KL1086"][0].category == "SAFE"
    changed = _by_rule(compare(old, moved, STRICT))["KL1015"]
    assert [(f.category, f.versions) for f in changed] == [("WIRE_BREAKING", (2,))]
    witness = changed[0].witness
    assert witness is not None and "request header v2" in witness["error"]  # the frame of v2, read as header 2


def test_matrix_and_changelog_3_7_0_to_4_3() -> None:
    specs = require_shared("kafka-specs")
    table = matrix([specs / "3.7.0", specs / "4.3"])
    produce = next(row for row in table.apis if row.api_key == 0)
    assert (str(produce.overlap), produce.negotiated) == ("3-10", 10)
    assert table.coordinator and all(row.kind == "coordinator" for row in table.coordinator)
    log = changelog(specs / "3.7.0", specs / "4.3")
    fetch = next(entry for entry in log.entries if entry.key == 1 and entry.kind == "api")
    assert any("KIP-896" in change["message"] for message in fetch.messages for change in message.changes)


def test_matrix_and_changelog_show_removed_apis(tmp_path: Path) -> None:
    v1 = _write(tmp_path / "v1", LegacyRequest=_request(1000, "0-2"))
    v2 = _write(tmp_path / "v2", LegacyRequest=_request(1000, "none"))
    row = matrix([v1, v2]).apis[0]
    (_, before), (label, after) = row.cells
    assert str(before) == "0-2" and str(after) == "removed"
    assert f"removed in {label} (apiKey reserved)" in row.flags
    entry = changelog(v1, v2).entries[0]
    assert entry.status == "removed"
    assert "stays reserved" in changelog(v1, v2).to_markdown()


@pytest.mark.parametrize(("doc", "command"), [
    ("changelog-3.7.0-4.3.md", ["changelog"]),
    ("matrix-3.7.0-4.3.md", ["matrix", "--format", "markdown"]),
])
def test_the_committed_examples_are_current(doc: str, command: list[str]) -> None:
    require_shared("kafka-specs", "4.3")
    result = run_cli(*command, "../shared/kafka-specs/3.7.0", "../shared/kafka-specs/4.3")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (REPO_ROOT / "docs" / doc).read_text(encoding="utf-8"), f"docs/{doc} is stale"


def test_a_converted_key_is_cross_decoded_at_its_record_type() -> None:
    """The old key is read at its record type (its old version), the new one at version 0, both ways."""
    from linter.compat.diff import MessageDiff
    from linter.compat.witness import CrossCodec
    from linter.engine.context import FileContext
    from linter.parse.document import read_document

    specs = require_shared("kafka-specs")
    old, new = (FileContext(read_document(p.name, p.read_bytes())).message for p in
                (specs / "trunk-2024-10" / GROUP / "ShareGroupMemberMetadataKey.json",
                 specs / "trunk-2026-samples" / GROUP / "ShareGroupMemberMetadataKey.json"))
    diff = MessageDiff(old, new)
    diff.run()
    assert diff.compared_versions() == [0] and diff.old_version(0) == 10
    cross = CrossCodec(old, new, diff.renames, diff.old_version)
    assert all(cross.attempt(0, writer, seed) is None for writer in ("old", "new") for seed in range(8))


def test_a_new_api_beside_the_removed_one_that_reserves_its_key_breaks(tmp_path: Path) -> None:
    """The removed API's file stays (as Kafka keeps it) and a new API takes its apiKey: still a reuse."""
    v1 = _write(tmp_path / "v1", LegacyRequest=_request(1000, "none"))
    v2 = _write(tmp_path / "v2", LegacyRequest=_request(1000, "none"), ShinyRequest=_request(1000, "0-1"))
    reused = _by_rule(compare(v1, v2, STRICT))["KL1014"]
    assert [(f.message_name, f.versions) for f in reused] == [("ShinyRequest", (0, 1))]
    assert reused[0].witness is not None and "LegacyRequest" in reused[0].witness["error"]
