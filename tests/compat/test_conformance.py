"""``krpc-lint conformance`` (issue 17): a vendor's copy of the specs against upstream's, per API and version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from linter.cli.main import cli
from linter.compat.conformance import conformance
from linter.compat.conformance_manifest import ManifestError, classify, parse_manifest
from linter.compat.sources import read_revision

MESSAGES = ("trunk-2024-10", "clients", "src", "main", "resources", "common", "message")
VENDOR_API = """{
  "apiKey": 1000,
  "type": "request",
  "listeners": ["broker"],
  "name": "AcmeFrobnicateRequest",
  "validVersions": "0-1",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Knob", "type": "int32", "versions": "0+", "about": "Which knob." },
    { "name": "Hint", "type": "string", "versions": "1+", "nullableVersions": "1+", "about": "A hint." }
  ]
}
"""

# (type, apiKey, name) -> version -> verdict, for every message the fixture's vendor declares
EXPECTED: dict[tuple[str, int | None, str], dict[int, str]] = {
    ("request", 1, "FetchRequest"): {**{v: "identical" for v in range(4, 12)},
                                     **{v: "compatible" for v in range(12, 16)}},
    # AllowAutoTopicCreation (4+) defaults otherwise: v0-3 lack the field, so a reader substitutes the default;
    # from v4 on the value is always on the wire (compat's default-changed versions)
    ("request", 3, "MetadataRequest"): {**{v: "semantic" for v in range(4)},
                                        **{v: "identical" for v in range(4, 13)}},
    ("request", 11, "JoinGroupRequest"): {0: "identical", 1: "diverges"},
    ("request", 18, "ApiVersionsRequest"): {v: "identical" for v in range(4)},
    ("response", 18, "ApiVersionsResponse"): {**{v: "identical" for v in range(5)}, 5: "vendor-only"},
    ("request", 1000, "AcmeFrobnicateRequest"): {0: "vendor-only", 1: "vendor-only"},
    ("header", None, "RequestHeader"): {v: "identical" for v in range(3)},
}


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, f"the fixture expects {old!r} in the upstream spec"
    return text.replace(old, new, 1)


@pytest.fixture
def vendored(kafka_specs: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(vendor dir, upstream dir): a Redpanda-style copy of a few of trunk-2024-10's specs, snake_case names."""
    upstream = kafka_specs.joinpath(*MESSAGES)
    vendor = tmp_path / "schemata"
    vendor.mkdir()

    def copy(name: str, target: str, *edits: tuple[str, str]) -> None:
        text = (upstream / name).read_text(encoding="utf-8")
        for old, new in edits:
            text = _edit(text, old, new)
        (vendor / target).write_text(text, encoding="utf-8")

    copy("ApiVersionsRequest.json", "api_versions_request.json", ('"validVersions": "0-4"', '"validVersions": "0-3"'))
    copy("ApiVersionsResponse.json", "api_versions_response.json",
         ('"validVersions": "0-4"', '"validVersions": "0-5"'))
    copy("FetchRequest.json", "fetch_request.json", ('"validVersions": "0-17"', '"validVersions": "4-15"'),
         ('{ "name": "ClusterId", "type": "string", "versions": "12+", "nullableVersions": "12+", "default": "null",\n'
          '      "taggedVersions": "12+", "tag": 0, "ignorable": true,\n'
          '      "about": "The clusterId if known. This is used to validate metadata fetches prior to broker '
          'registration." },\n    ', ""))
    copy("MetadataRequest.json", "metadata_request.json",
         ('"name": "AllowAutoTopicCreation", "type": "bool", "versions": "4+", "default": "true"',
          '"name": "AllowAutoTopicCreation", "type": "bool", "versions": "4+", "default": "false"'))
    copy("JoinGroupRequest.json", "join_group_request.json", ('"validVersions": "0-9"', '"validVersions": "0-1"'),
         ('"name": "RebalanceTimeoutMs", "type": "int32"', '"name": "RebalanceTimeoutMs", "type": "int64"'))
    copy("RequestHeader.json", "request_header.json")
    (vendor / "acme_frobnicate_request.json").write_text(VENDOR_API, encoding="utf-8")
    return vendor, upstream


def _verdicts(data: dict[str, Any]) -> dict[tuple[str, int | None, str], dict[int, str]]:
    return {(api["type"], api["api_key"], api["name"]): {v["version"]: v["verdict"] for v in api["versions"]}
            for api in data["apis"] if api["vendor_file"] is not None}


def _api(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(api for api in data["apis"] if api["name"] == name)


def test_every_declared_version_of_the_fixture_gets_its_verdict(vendored: tuple[Path, Path]) -> None:
    vendor, upstream = vendored
    data = conformance(read_revision(str(vendor)), read_revision(str(upstream))).to_dict()
    assert _verdicts(data) == EXPECTED
    assert data["errors"] == [] and data["unclassified"] == []


def test_details_name_the_difference_and_a_divergence_carries_witness_bytes(vendored: tuple[Path, Path]) -> None:
    vendor, upstream = vendored
    data = conformance(read_revision(str(vendor)), read_revision(str(upstream))).to_dict()
    join = _api(data, "JoinGroupRequest")
    (broken,) = [v for v in join["versions"] if v["verdict"] == "diverges"]
    retyped = [d for d in broken["details"] if d["kind"] == "field-retyped"]
    assert retyped and "RebalanceTimeoutMs" in retyped[0]["message"]
    witness = next(d["witness"] for d in broken["details"] if "witness" in d)
    assert witness["version"] == 1 and witness["writer"] in ("old", "new") and bytes.fromhex(witness["hex"])
    fetch = {v["version"]: v for v in _api(data, "FetchRequest")["versions"]}
    assert [d["kind"] for d in fetch[12]["details"]] == ["tag-removed"] and fetch[11]["details"] == []
    assert "ClusterId" in fetch[12]["details"][0]["message"]
    metadata = {v["version"]: v for v in _api(data, "MetadataRequest")["versions"]}
    assert [d["kind"] for d in metadata[0]["details"]] == ["default-changed"] and metadata[4]["details"] == []


def test_coverage_is_listed_newest_first_and_never_a_finding(vendored: tuple[Path, Path]) -> None:
    vendor, upstream = vendored
    data = conformance(read_revision(str(vendor)), read_revision(str(upstream))).to_dict()
    assert _api(data, "FetchRequest")["upstream_only_versions"] == [17, 16, 3, 2, 1, 0]
    assert _api(data, "JoinGroupRequest")["upstream_only_versions"] == [9, 8, 7, 6, 5, 4, 3, 2]
    assert _api(data, "ApiVersionsRequest")["upstream_only_versions"] == [4]
    assert _api(data, "ApiVersionsResponse")["upstream_only_versions"] == []
    produce = _api(data, "ProduceRequest")  # not copied at all: coverage only
    assert produce["vendor_file"] is None and produce["versions"] == [] and produce["upstream_only_versions"][0] == 11
    acme = _api(data, "AcmeFrobnicateRequest")
    assert acme["upstream_file"] is None and acme["vendor_file"].endswith("acme_frobnicate_request.json")
    kinds = {d["kind"] for api in data["apis"] for v in api["versions"] for d in v["details"]}
    assert not kinds & {"message-removed", "max-version-lowered", "version-dropped", "file-renamed", "message-added"}
    summary = data["summary"]
    assert {k: summary[k] for k in ("identical", "compatible", "semantic", "diverges", "vendor-only")} == {
        "identical": 30, "compatible": 4, "semantic": 4, "diverges": 1, "vendor-only": 3}
    assert summary["apis"] == len(data["apis"]) and summary["vendor_only_apis"] == 1


def test_cli_json_exit_code_and_fail_on(vendored: tuple[Path, Path], tmp_path: Path) -> None:
    vendor, upstream = vendored
    runner = CliRunner()
    result = runner.invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--format", "json"])
    assert result.exit_code == 1, result.output
    assert _verdicts(json.loads(result.stdout)) == EXPECTED
    assert "1 diverges version(s)" in result.stderr
    passing = runner.invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--fail-on", "none"])
    assert passing.exit_code == 0, passing.output
    assert passing.stdout.startswith("Conformance of ")
    assert "JoinGroupRequest" in passing.stdout and "field-retyped" in passing.stdout
    strict = runner.invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--fail-on", "semantic"])
    assert strict.exit_code == 1 and "4 semantic version(s)" in strict.stderr
    out = tmp_path / "conformance.md"
    written = runner.invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--format", "markdown",
                                  "-o", str(out), "--fail-on", "none"])
    assert written.exit_code == 0 and written.stdout == ""
    markdown = out.read_text(encoding="utf-8")
    assert markdown.startswith("# Conformance:") and "| JoinGroupRequest | 11 | 1 | **diverges** |" in markdown


def test_cli_usage_errors_exit_2(vendored: tuple[Path, Path], tmp_path: Path) -> None:
    vendor, upstream = vendored
    runner = CliRunner()
    missing = runner.invoke(cli, ["conformance", str(vendor)])
    assert missing.exit_code == 2 and "--upstream" in missing.output
    nowhere = runner.invoke(cli, ["conformance", str(tmp_path / "nope"), "--upstream", str(upstream)])
    assert nowhere.exit_code == 2 and "no such file or directory" in nowhere.stderr
    bad = runner.invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--fail-on", "loud"])
    assert bad.exit_code == 2 and "loud" in bad.output
    inside = runner.invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream),
                                 "-o", str(vendor / "request_header.json")])
    assert inside.exit_code == 2
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("Produce: sometimes\n", encoding="utf-8")
    refused = runner.invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--manifest", str(manifest)])
    assert refused.exit_code == 2 and "Produce" in refused.stderr and len(refused.stderr.splitlines()) == 1


def _api_versions_only(kafka_specs: Path, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A vendor that copies ApiVersions only, upstream, and the names of upstream's live APIs."""
    upstream = kafka_specs.joinpath(*MESSAGES)
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    for name in ("ApiVersionsRequest.json", "ApiVersionsResponse.json"):
        (vendor / name).write_bytes((upstream / name).read_bytes())
    names = sorted({m.name[: -len("Request")] for m in read_revision(str(upstream)).messages.values()
                    if m.type == "request" and m.api_key is not None and not m.removed})
    return vendor, upstream, names


def test_a_manifest_that_omits_an_upstream_api_makes_it_unclassified(kafka_specs: Path, tmp_path: Path) -> None:
    vendor, upstream, names = _api_versions_only(kafka_specs, tmp_path)
    lines = ["conformance:", '  ApiVersions: {supported: "0-3"}']
    lines += [f"  {name}: passthrough" for name in names if name not in ("ApiVersions", "Fetch")]
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--manifest",
                                      str(manifest), "--format", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert [(u["api"], u["api_key"], u["versions"]) for u in data["unclassified"]] == [
        ("Fetch", 1, list(range(17, -1, -1))), ("ApiVersions", 18, [4])]
    assert data["summary"]["unclassified"] == 19 and "unclassified API(s)" in result.stderr


def test_manifest_forms() -> None:
    manifest = parse_manifest({"ProduceRequest": {"supported": "3-12", "unsupported": "0-2"}, "Fetch": "passthrough"})
    assert [str(r) for r in manifest.covered("ProduceResponse") or []] == ["3-12", "0-2"]
    assert manifest.covered("Metadata") is None
    for bad in ({"Fetch": "maybe"}, {"Fetch": {"supported": "x"}}, ["Fetch"], {"Fetch": {}}):
        with pytest.raises(ManifestError):
            parse_manifest(bad)


def test_manifest_naming_an_api_neither_side_has_is_refused(vendored: tuple[Path, Path]) -> None:
    vendor_rev, upstream_rev = (read_revision(str(p)) for p in vendored)
    result = conformance(vendor_rev, upstream_rev)
    with pytest.raises(ManifestError, match="Frobnicate2"):
        classify(result, upstream_rev, vendor_rev, parse_manifest({"Frobnicate2": "unsupported"}))


def test_kafka_43_as_vendored_by_kafka_python_against_trunk_2024_10(kafka_specs: Path) -> None:
    """Acceptance 2: versions new in 4.3 are vendor-only, KIP-896's removals upstream-only, nothing diverges."""
    vendor = read_revision(str(kafka_specs / "4.3" / "clients" / "src" / "main" / "resources" / "common" / "message"))
    data = conformance(vendor, read_revision(str(kafka_specs / "trunk-2024-10"))).to_dict()
    summary = data["summary"]
    assert summary["diverges"] == 0 and summary["errors"] == 0
    assert summary["identical"] + summary["vendor-only"] == sum(len(a["versions"]) for a in data["apis"])
    produce = _api(data, "ProduceRequest")
    assert {v["version"]: v["verdict"] for v in produce["versions"] if v["verdict"] != "identical"} == {
        12: "vendor-only", 13: "vendor-only"}
    assert produce["upstream_only_versions"] == [2, 1, 0]  # KIP-896: Produce's baseline is v3
    assert _api(data, "FetchRequest")["upstream_only_versions"] == [3, 2, 1, 0]
    assert all(api["upstream_file"] is not None for api in data["apis"])  # every 4.3 message is upstream's too


def test_the_config_holds_the_manifest_under_conformance(kafka_specs: Path, tmp_path: Path) -> None:
    """``conformance:`` in .krpc-lint.yaml is the manifest when --manifest is not given; --manifest wins."""
    vendor, upstream, names = _api_versions_only(kafka_specs, tmp_path)
    config = tmp_path / ".krpc-lint.yaml"
    config.write_text("\n".join(["conformance:", '  ApiVersions: {supported: "0-4"}',
                                 *(f"  {n}: passthrough" for n in names if n not in ("ApiVersions", "Fetch"))]) + "\n")
    args = ["conformance", str(vendor), "--upstream", str(upstream), "--format", "json", "--config", str(config)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert [u["api"] for u in json.loads(result.stdout)["unclassified"]] == ["Fetch"]
    config.write_text("conformance: [Fetch]\n")
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and "conformance must be a table" in refused.stderr


def test_sarif_holds_each_version_that_is_not_identical(vendored: tuple[Path, Path], sarif_validator) -> None:
    vendor, upstream = vendored
    result = CliRunner().invoke(cli, ["conformance", str(vendor), "--upstream", str(upstream), "--format", "sarif"])
    assert result.exit_code == 1, result.output
    log = json.loads(result.stdout)
    sarif_validator.validate(log)
    results = log["runs"][0]["results"]
    expected = sum(1 for versions in EXPECTED.values() for verdict in versions.values()
                   if verdict not in ("identical", "vendor-only"))
    assert len(results) == expected
    diverging = [r for r in results if r["ruleId"] == "conformance/diverges"]
    assert len(diverging) == 1 and diverging[0]["level"] == "error" and "witness" in diverging[0]["properties"]
    assert {r["level"] for r in results if r["ruleId"] != "conformance/diverges"} == {"note"}
