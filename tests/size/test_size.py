"""The wire-size advisor (``linter.size.measure``, ``krpc-lint size``): exact per-field attribution and the
KIP-636 what-if, checked against an independently edited spec."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from linter.cli.main import cli
from linter.codec import Codec
from linter.codec.values import random_value
from linter.size.measure import (
    SizeError,
    kip636_paths,
    measure,
    tag_fields,
    what_if_bytes,
    what_if_codec,
)

TRUNK = "trunk-2024-10"
RESPONSES = ("MetadataResponse", "DescribeGroupsResponse", "FetchResponse")


@pytest.fixture(scope="module")
def codec(kafka_specs: Path) -> Codec:
    return Codec.load(kafka_specs / TRUNK)


@pytest.fixture(scope="module")
def specs_dir(kafka_specs: Path) -> Path:
    return kafka_specs / TRUNK


def generated(codec: Codec, name: str, version: int, count: int = 30, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [random_value(codec, name, version, rng) for _ in range(count)]


def top(codec: Codec, name: str) -> int:
    versions = codec.spec(name).versions
    assert versions is not None
    return versions.highest


def set_everywhere(value: Any, key: str, item: Any) -> int:
    """Set ``key`` to ``item`` in every dict of the value; how many were set."""
    count = 0
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                value[k] = copy.deepcopy(item)
                count += 1
            else:
                count += set_everywhere(v, key, item)
    elif isinstance(value, list):
        count += sum(set_everywhere(v, key, item) for v in value)
    return count


# --- exact attribution -----------------------------------------------------------------------


@pytest.mark.parametrize("name", [*RESPONSES, "MetadataRequest", "FetchRequest", "ProduceRequest",
                                  "DescribeConfigsResponse", "ConsumerGroupHeartbeatResponse"])
def test_fields_add_up_to_the_encoded_bytes_at_every_version(codec: Codec, name: str) -> None:
    versions = codec.spec(name).versions
    assert versions is not None
    for version in versions:
        values = generated(codec, name, version, count=10, seed=version)
        sizes = measure(codec, name, version, values)
        assert sizes.count == 10
        assert sizes.bytes == sum(len(codec.encode(name, version, v)) for v in values)
        assert sum(sizes.fields.values()) == sizes.bytes, (name, version)


def test_fields_add_up_on_the_fixtures() -> None:
    codec = Codec.load("fixtures/valid")
    for name in codec.names:
        versions = codec.spec(name).versions
        for version in versions or ():
            values = generated(codec, name, version, count=5, seed=version)
            sizes = measure(codec, name, version, values)
            assert sum(sizes.fields.values()) == sizes.bytes, (name, version)


def test_attribution_of_a_known_value(codec: Codec) -> None:
    """DescribeGroupsResponse v5, one group with no members: every path's bytes by hand."""
    value = codec.from_json("DescribeGroupsResponse", 5, {
        "throttleTimeMs": 0, "groups": [{"errorCode": 0, "groupId": "g", "groupState": "", "protocolType": "",
                                          "protocolData": "", "members": [], "authorizedOperations": 0}]})
    fields = measure(codec, "DescribeGroupsResponse", 5, [value]).fields
    assert fields["ThrottleTimeMs"] == 4
    assert fields["Groups"] == 1 + 1  # compact length, the element's tagged-field count
    assert fields["Groups[].ErrorCode"] == 2
    assert fields["Groups[].GroupId"] == 2  # compact length 1+1, one byte
    assert fields["Groups[].Members"] == 1
    assert fields[""] == 1


# --- the KIP-636 what-if ---------------------------------------------------------------------


def edited_by_hand(spec_raw: dict[str, Any], flexible_from: int) -> dict[str, Any]:
    """The spec's JSON with every ErrorCode and ErrorMessage tagged from ``flexible_from`` on, written
    independently of ``tag_fields``: fresh tags per field list, ``default: null`` for nullable messages."""
    raw = copy.deepcopy(spec_raw)

    def edit(fields: list[dict[str, Any]]) -> None:
        tags = [f["tag"] for f in fields if "tag" in f]
        for f in fields:
            if f["name"] in ("ErrorCode", "ErrorMessage") and "tag" not in f:
                low = int(f["versions"].rstrip("+").split("-")[0])
                high = f["versions"].split("-")[1] if "-" in f["versions"] else None
                start = max(low, flexible_from)
                if high is not None and start > int(high):
                    continue
                f["tag"] = max(tags, default=-1) + 1
                tags.append(f["tag"])
                f["taggedVersions"] = f"{start}+" if high is None else f"{start}-{high}"
                if f["name"] == "ErrorMessage" and "nullableVersions" in f and "default" not in f:
                    f["default"] = "null"
            edit(f.get("fields", []))

    edit(raw["fields"])
    for common in raw.get("commonStructs", []):
        edit(common["fields"])
    return raw


@pytest.mark.parametrize("name", RESPONSES)
def test_kip636_saving_is_the_difference_with_a_hand_edited_spec(codec: Codec, specs_dir: Path, tmp_path: Path,
                                                                 name: str) -> None:
    spec = codec.spec(name)
    version = top(codec, name)
    raw = edited_by_hand(spec.raw, spec.flexible.lowest)
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / f"{name}.json").write_text(json.dumps(raw))
    request = name.removesuffix("Response") + "Request"
    (specs / f"{request}.json").write_text(json.dumps(codec.spec(request).raw))
    edited = Codec.load(specs)  # Kafka's generator rules accept the edit
    for values in (generated(codec, name, version), zeroed(generated(codec, name, version))):
        # through Kafka's JSON form, as --values reads them (it has no records: they become empty)
        values = [codec.from_json(name, version, codec.to_json(name, version, v)) for v in values]
        before = sum(len(codec.encode(name, version, v)) for v in values)
        after = sum(len(edited.encode(name, version, v)) for v in values)
        assert what_if_bytes(what_if_codec(spec, kip636_paths(spec), null_error_messages=True),
                             name, version, values) == after
        result = invoke_json(codec, specs_dir, name, version, values, tmp_path)
        assert result["bytes"] == before
        assert result["what_if"] == {"bytes": after, "saved": before - after}


def zeroed(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for value in values:
        set_everywhere(value, "errorCode", 0)
        set_everywhere(value, "errorMessage", None)
    return values


def invoke_json(codec: Codec, specs_dir: Path, name: str, version: int, values: list[dict[str, Any]],
                tmp: Path) -> dict[str, Any]:
    lines = tmp / "values.jsonl"
    lines.write_text("".join(json.dumps(codec.to_json(name, version, v)) + "\n" for v in values))
    run = CliRunner().invoke(cli, ["size", str(specs_dir), name, "--version", str(version), "--values", str(lines),
                                   "--kip636", "--format", "json"])
    assert run.exit_code == 0, run.output
    [message] = json.loads(run.output)["messages"]
    assert message["count"] == len(values)
    result: dict[str, Any] = message
    return result


def test_kip636_arithmetic_per_error_code(codec: Codec) -> None:
    """An ErrorCode of 0 made tagged saves its 2 bytes; a set one costs its tag and size (2 bytes) more."""
    name = "MetadataResponse"
    version = top(codec, name)
    spec = codec.spec(name)
    edited = what_if_codec(spec, kip636_paths(spec), null_error_messages=True)
    values = generated(codec, name, version)
    codes = sum(set_everywhere(v, "errorCode", 0) for v in values)
    assert codes > 0
    before = measure(codec, name, version, values).bytes
    assert before - what_if_bytes(edited, name, version, values) == 2 * codes
    for v in values:
        set_everywhere(v, "errorCode", 3)
    before = measure(codec, name, version, values).bytes
    assert before - what_if_bytes(edited, name, version, values) == -2 * codes


def test_kip636_arithmetic_per_error_message(codec: Codec) -> None:
    """A null ErrorMessage tagged with a null default saves its 1 byte; a set one costs 2 more; with the
    implicit "" default a null one is written and costs 2 more too."""
    name = "CreateTopicsResponse"
    version = top(codec, name)
    spec = codec.spec(name)
    values = generated(codec, name, version)
    codes = sum(set_everywhere(v, "errorCode", 0) for v in values)
    messages = sum(set_everywhere(v, "errorMessage", None) for v in values)
    assert messages > 0
    before = measure(codec, name, version, values).bytes
    null_default = what_if_codec(spec, kip636_paths(spec), null_error_messages=True)
    assert before - what_if_bytes(null_default, name, version, values) == 2 * codes + messages
    empty_default = what_if_codec(spec, kip636_paths(spec), null_error_messages=False)
    assert before - what_if_bytes(empty_default, name, version, values) == 2 * codes - 2 * messages
    for v in values:
        set_everywhere(v, "errorMessage", "oops")
    before = measure(codec, name, version, values).bytes
    assert before - what_if_bytes(null_default, name, version, values) == 2 * codes - 2 * messages


def test_tag_an_arbitrary_field(codec: Codec) -> None:
    spec = codec.spec("MetadataResponse")
    edited = tag_fields(spec, ["Topics[].IsInternal"])
    field = next(f for f, _ in edited.all_fields() if f.name == "IsInternal")
    assert field.tag == 0 and str(field.tagged_versions) == "9+"
    assert tag_fields(spec, ["ThrottleTimeMs"]).raw["fields"][0]["taggedVersions"] == "9+"
    with pytest.raises(SizeError, match="no field 'Topics\\[\\].Nope'"):
        tag_fields(spec, ["Topics[].Nope"])
    assert kip636_paths(codec.spec("MetadataRequest")) == []
    assert kip636_paths(spec) == ["Topics[].ErrorCode", "Topics[].Partitions[].ErrorCode"]


# --- the command -------------------------------------------------------------------------------


def test_cli_text(specs_dir: Path) -> None:
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "DescribeGroupsResponse", "--count", "5", "--kip636"])
    assert run.exit_code == 0, run.output
    lines = run.output.splitlines()
    assert lines[0].startswith("DescribeGroupsResponse v5: ") and lines[0].endswith(" bytes in 5 messages")
    assert any(line.split()[0] == "Groups[].ErrorCode" for line in lines[1:])
    assert lines[-2].startswith("  what-if: ")
    assert lines[-1].startswith("Total: ") and " bytes in 5 messages; what-if: " in lines[-1]


def test_cli_json_contract(specs_dir: Path, codec: Codec) -> None:
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "MetadataResponse", "--version", "9", "--count", "4",
                                   "--seed", "3", "--tag", "Topics[].IsInternal", "--format", "json"])
    assert run.exit_code == 0, run.output
    [message] = json.loads(run.output)["messages"]
    assert set(message) == {"name", "version", "count", "bytes", "fields", "what_if"}
    assert (message["name"], message["version"], message["count"]) == ("MetadataResponse", 9, 4)
    assert sum(f["bytes"] for f in message["fields"]) == message["bytes"]
    assert set(message["what_if"]) == {"bytes", "saved"}
    assert message["what_if"]["saved"] == message["bytes"] - message["what_if"]["bytes"]
    plain = CliRunner().invoke(cli, ["size", str(specs_dir), "MetadataResponse", "--count", "2", "--format", "json"])
    assert "what_if" not in json.loads(plain.output)["messages"][0]


def test_cli_every_message(specs_dir: Path) -> None:
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--count", "2", "--kip636", "--format", "json"])
    assert run.exit_code == 0, run.output
    messages = json.loads(run.output)["messages"]
    assert {m["name"] for m in messages} >= {"MetadataRequest", "MetadataResponse"}
    assert all(sum(f["bytes"] for f in m["fields"]) == m["bytes"] for m in messages)
    assert all(m["what_if"]["saved"] == 0 for m in messages if m["name"].endswith("Request"))


@pytest.mark.parametrize(("args", "error"), [
    (["NoSuchResponse"], "unknown message 'NoSuchResponse'"),
    (["MetadataResponse", "--version", "99"], "MetadataResponse has no version 99"),
    (["MetadataResponse", "--tag", "Nope"], "MetadataResponse has no field 'Nope'"),
    (["--version", "1"], "--version needs a MESSAGE"),
])
def test_cli_usage_errors_exit_2(specs_dir: Path, args: list[str], error: str) -> None:
    run = CliRunner().invoke(cli, ["size", str(specs_dir), *args])
    assert run.exit_code == 2
    assert error in run.output
    assert len(run.output.strip().splitlines()) == 1


def test_cli_bad_values_name_line_and_field(specs_dir: Path, tmp_path: Path) -> None:
    values = tmp_path / "values.jsonl"
    values.write_text('{"throttleTimeMs": 0, "groups": []}\n\n{"throttleTimeMs": "x", "groups": []}\n')
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "DescribeGroupsResponse", "--values", str(values)])
    assert run.exit_code == 2
    assert f"{values}:3: " in run.output and "ThrottleTimeMs" in run.output
    values.write_text("{not json\n")
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "DescribeGroupsResponse", "--values", str(values)])
    assert run.exit_code == 2 and f"{values}:1: not JSON" in run.output


def test_allow_invalid_skips_the_specs_kafka_would_refuse(tmp_path: Path) -> None:
    import shutil

    specs = tmp_path / "specs"
    shutil.copytree("fixtures/valid", specs)
    shutil.copy("fixtures/invalid/KL301-field-name-pattern.json", specs / "Broken.json")
    refused = CliRunner().invoke(cli, ["size", str(specs), "--count", "3"])
    assert refused.exit_code == 2 and "--allow-invalid" in refused.output
    allowed = CliRunner().invoke(cli, ["size", str(specs), "--count", "3", "--allow-invalid", "--format", "json"])
    assert allowed.exit_code == 0, allowed.output
    assert "skipped 1 spec file with errors (--allow-invalid): Broken.json" in allowed.stderr
    assert json.loads(allowed.stdout)["total"]["count"] > 0
