"""The immutable model: binding with Jackson's coercions, the struct registry graph, defaults, schema errors."""

from __future__ import annotations

import pytest

from linter.model.defaults import DefaultError, parse_default
from linter.model.registry import StructRegistry
from linter.model.schema import structure_issues
from linter.model.spec import build_message
from linter.model.types import FieldType
from linter.model.versions import NONE, Versions


def message(**root):
    base = {"name": "Example", "type": "data", "validVersions": "0-3", "flexibleVersions": "1+", "fields": []}
    base.update(root)
    return build_message(base, "Example.json")


def test_binding_follows_jacksons_coercions():
    spec = message(fields=[{"name": "Id", "type": " int32 ", "versions": 0, "ignorable": "True",
                            "tag": "0", "taggedVersions": "1+", "mapKey": 1, "default": -1}]).fields[0]
    assert spec.type == FieldType("int32")
    assert spec.versions == Versions(0, 0)
    assert (spec.ignorable, spec.map_key, spec.tag, spec.default) == (True, True, 0, "-1")


def test_tagged_scalar_takes_its_tagged_versions():
    spec = message(fields=[{"name": "Id", "type": "int32", "tag": 0, "taggedVersions": "2+"}]).fields[0]
    assert spec.versions == Versions(2, 32767) and spec.tagged


def test_single_object_for_a_list_and_null_fields():
    built = message(fields={"name": "Id", "type": "int32", "versions": "0+"})
    assert [f.name for f in built.fields] == ["Id"]
    assert message(fields=None).fields == ()


def test_bad_versions_become_issues_not_exceptions():
    built = message(fields=[{"name": "Id", "type": "int32", "versions": "1-"}], validVersions="x")
    assert built.fields[0].versions is None and built.versions is None
    assert sorted(i.path for i in built.issues) == [("fields", 0, "versions"), ("validVersions",)]


def test_all_fields_walks_inline_and_common_structs():
    built = message(
        fields=[{"name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
            {"name": "Partitions", "type": "[]Partition", "versions": "0+", "fields": [
                {"name": "Index", "type": "int32", "versions": "0+"}]}]}],
        commonStructs=[{"name": "Common", "versions": "0+", "fields": [{"name": "X", "type": "int8", "versions": "0+"}]}])
    assert [(f.name, s.name) for f, s in built.all_fields()] == [
        ("Topics", "Example"), ("Partitions", "Topic"), ("Index", "Partition"), ("X", "Common")]


def registry(**root) -> StructRegistry:
    return StructRegistry(message(**root))


def common(name: str, *field_types: str) -> dict:
    return {"name": name, "versions": "0+",
            "fields": [{"name": f"F{i}", "type": t, "versions": "0+"} for i, t in enumerate(field_types)]}


def test_registry_reachability_through_common_structs():
    reg = registry(fields=[{"name": "A", "type": "[]Outer", "versions": "0+"}],
                   commonStructs=[common("Outer", "[]Inner"), common("Inner", "int32"), common("Orphan", "int32")])
    assert reg.reachable() == {"Outer", "Inner"}
    assert [c.name for c in reg.unused_commons()] == ["Orphan"]
    assert set(reg.graph.successors("Outer")) == {"Inner"}


def test_registry_duplicates_missing_and_respecified():
    inline = {"name": "B", "type": "[]Thing", "versions": "0+", "fields": [{"name": "X", "type": "int32", "versions": "0+"}]}
    reg = registry(
        fields=[inline, dict(inline, name="C"), {"name": "D", "type": "Shared", "versions": "0+",
                                                  "fields": [{"name": "Y", "type": "int8", "versions": "0+"}]}],
        commonStructs=[common("Shared", "[]Nowhere"), common("Shared", "int8")])
    assert [f.name for f in reg.duplicate_inline] == ["C"]
    assert [f.name for f in reg.respecified_commons] == ["D"]
    assert [f.type.name for f in reg.missing] == ["Nowhere"]
    assert len(reg.duplicate_commons) == 1


@pytest.mark.parametrize("type_name, text, value", [
    ("int8", "0x7f", 127), ("int8", "0x-1", -1), ("int8", "+1", 1), ("int8", "0x", 0), ("uint16", "65535", 65535),
    ("uint32", "4294967295", 4294967295), ("int64", "-9223372036854775808", -(2**63)), ("float64", " 2.5 ", 2.5),
    ("float64", "1.0f", 1.0), ("float64", "0x1p3", 8.0), ("bool", "tRuE", True), ("string", "null", None),
    ("uuid", "AAAAAAAAAAAAAAAAAAAAAA", bytes(16)),
])
def test_defaults_java_accepts(type_name, text, value):
    result = parse_default(FieldType(type_name), text)
    assert result == value if not isinstance(value, float) else abs(result - value) < 1e-12


@pytest.mark.parametrize("type_name, text", [
    ("int8", "200"), ("int8", "0X10"), ("int16", "70000"), ("int32", "1_000"), ("int32", " 1"), ("uint16", "-1"),
    ("uint32", "4294967296"), ("int32", "null"), ("float64", "1,5"), ("float64", "1.2.3"), ("bool", "yes"),
    ("uuid", "AAAA"), ("uuid", "0"), ("bytes", "00"), ("[]int32", "[]"),
])
def test_defaults_java_rejects(type_name, text):
    field_type = FieldType.parse(type_name)
    with pytest.raises(DefaultError):
        parse_default(field_type, text)


def test_schema_errors_carry_paths_and_checks():
    issues = structure_issues({"name": "X", "type": "request", "fields": [
        {"name": "A", "type": "int32", "versions": "0+", "nullable": True},
        {"name": "B", "type": "int32", "ignorable": "yes", "entityType": "topic"}]})
    found = {(i.check, i.path) for i in issues}
    assert found == {
        ("required-property", ()),  # apiKey, for a request
        ("unknown-key", ("fields", 0, "nullable")),
        ("value-kind", ("fields", 1, "ignorable")),
        ("enum-value", ("fields", 1, "entityType")),
    }


def test_versions_algebra():
    assert Versions.parse("1-4").subtract(Versions.parse("1-2")) == Versions(3, 4)
    assert Versions.parse("3+").subtract(Versions.parse("4+")) == Versions(3, 3)
    assert Versions.parse("4+").subtract(Versions.parse("3+")) == NONE
    assert Versions.parse("1-5").subtract(Versions.parse("2-4")) is None
    assert Versions.parse("0+").contains(NONE) and str(Versions.parse("3-1")) == "none"
