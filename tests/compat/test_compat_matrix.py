"""The version matrix: per-API ranges across revisions, overlaps, negotiated versions and flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require_shared

from linter.compat.matrix import NO_COMMON, Matrix, matrix
from linter.compat.revision import Revision
from linter.model.versions import Versions


def spec(name: str, key: int, versions: str | None, kind: str = "request", unstable: bool = False) -> bytes:
    raw: dict = {"apiKey": key, "type": kind, "name": name, "flexibleVersions": "none", "fields": []}
    if versions is not None:
        raw["validVersions"] = versions
    if unstable:
        raw["latestVersionUnstable"] = True
    return json.dumps(raw).encode()


def rev(label: str, *specs: tuple[str, bytes]) -> Revision:
    return Revision(label, dict(specs))


def req(name: str, key: int, versions: str, unstable: bool = False) -> tuple[str, bytes]:
    return f"{name}.json", spec(name, key, versions, unstable=unstable)


def rec(name: str, key: int, versions: str, folder: str = "metadata") -> tuple[str, bytes]:
    return f"{folder}/{name}.json", spec(name, key, versions, kind="metadata")


def row(m: Matrix, key: int):
    return next(r for r in m.apis if r.api_key == key)


# --- crafted revisions --------------------------------------------------------------------


def test_overlap_and_negotiated_version_is_the_highest_common():
    m = matrix([rev("old", req("ProduceRequest", 0, "0-9")), rev("new", req("ProduceRequest", 0, "2-11"))])
    produce = row(m, 0)
    assert produce.name == "Produce"
    assert produce.overlap == Versions(2, 9)
    assert produce.negotiated == 9
    assert not produce.no_common and produce.flags == ()
    assert m.problems == ()


def test_disjoint_ranges_are_flagged_and_are_problems():
    m = matrix([rev("a", req("FooRequest", 7, "0-2")), rev("b", req("FooRequest", 7, "3-5"))])
    foo = row(m, 7)
    assert foo.overlap is not None and foo.overlap.empty
    assert foo.negotiated is None
    assert foo.no_common and foo.flags == (NO_COMMON,)
    assert m.problems == (foo,)
    assert m.to_dict()["problems"] == [{"kind": "api", "apiKey": 7, "name": "Foo", "group": None}]
    assert "| Foo | 7 | 0-2 | 3-5 | none | none | NO COMMON VERSION |" in m.to_markdown()
    assert "1 without a common version" in m.to_text()


def test_api_missing_in_one_revision_is_shown_but_not_a_problem():
    m = matrix([rev("a", req("FooRequest", 1, "0-3")),
                rev("b", req("FooRequest", 1, "0-3"), req("BarRequest", 2, "0-1"))])
    bar = row(m, 2)
    assert bar.missing == ("a",)
    assert bar.support("a") is None and str(bar.support("b")) == "0-1"
    assert bar.overlap is None and bar.negotiated is None  # fewer than two revisions offer it
    assert bar.flags == ("missing in a",)
    assert not bar.no_common and m.problems == ()


def test_overlap_among_the_revisions_that_offer_it_even_when_one_lacks_it():
    """An API new in B whose range C drops is a real break between B and C, whatever A lacks."""
    m = matrix([rev("a"), rev("b", req("FooRequest", 3, "0-1")), rev("c", req("FooRequest", 3, "2-4"))])
    foo = row(m, 3)
    assert foo.missing == ("a",) and foo.no_common
    assert foo.flags == (NO_COMMON, "missing in a")


def test_unstable_top_version_is_excluded_by_default():
    revisions = [rev("a", req("FooRequest", 4, "0-12")), rev("b", req("FooRequest", 4, "0-12", unstable=True))]
    foo = row(matrix(revisions), 4)
    assert foo.support("b").versions == Versions(0, 11)
    assert foo.support("b").unstable == 12
    assert str(foo.support("b")) == "0-11 (+12 unstable)"
    assert foo.negotiated == 11


def test_unstable_top_version_is_kept_with_the_option():
    revisions = [rev("a", req("FooRequest", 4, "0-12")), rev("b", req("FooRequest", 4, "0-12", unstable=True))]
    m = matrix(revisions, include_unstable=True)
    foo = row(m, 4)
    assert foo.support("b").versions == Versions(0, 12)
    assert str(foo.support("b")) == "0-12 (12 unstable)"
    assert foo.negotiated == 12
    assert m.to_dict()["includeUnstable"] is True


def test_api_with_only_an_unstable_version_is_not_offered_by_default():
    revisions = [rev("a", req("FooRequest", 9, "0")), rev("b", req("FooRequest", 9, "0", unstable=True))]
    foo = row(matrix(revisions), 9)
    assert foo.not_offered == ("b",) and foo.missing == ()
    assert str(foo.support("b")) == "none (+0 unstable)"
    assert foo.overlap is None and not foo.no_common  # nothing to negotiate, not a break
    assert foo.flags == ("unstable only in b",)
    assert row(matrix(revisions, include_unstable=True), 9).negotiated == 0


def test_rows_are_named_after_the_newest_revision():
    m = matrix([rev("2.8", req("AlterIsrRequest", 56, "0")), rev("3.7", req("AlterPartitionRequest", 56, "0-3"))])
    renamed = row(m, 56)
    assert renamed.name == "AlterPartition"
    assert renamed.support("2.8").name == "AlterIsrRequest"
    assert renamed.negotiated == 0


def test_only_requests_with_an_api_key_are_apis():
    m = matrix([rev("a", req("FooRequest", 1, "0"),
                    ("FooResponse.json", spec("FooResponse", 1, "0", kind="response")),
                    ("Data.json", json.dumps({"type": "data", "name": "Data", "validVersions": "0"}).encode()))])
    assert [(r.api_key, r.name) for r in m.apis] == [(1, "Foo")]


def test_metadata_records_have_their_own_rows_per_directory():
    old = rev("old", rec("TopicRecord", 2, "0"), rec("QuotaRecord", 14, "0"), rec("GoneRecord", 6, "0"))
    new = rev("new", rec("TopicRecord", 2, "1-2"), rec("ClientQuotaRecord", 14, "0"),
              rec("RemoteLogRecord", 2, "0", folder="storage"))
    m = matrix([old, new])
    assert m.apis == ()
    keys = [(r.group, r.api_key, r.name) for r in m.records]
    assert keys == [("metadata", 2, "TopicRecord"), ("metadata", 6, "GoneRecord"),
                    ("metadata", 14, "ClientQuotaRecord"), ("storage", 2, "RemoteLogRecord")]
    topic = m.records[0]
    assert topic.kind == "record" and topic.no_common
    assert m.problems == (topic,)
    assert m.records[1].flags == ("missing in new",)
    assert m.records[2].negotiated == 0
    assert "## Metadata records (storage)" in m.to_markdown()
    assert matrix([old, new], records=False).records == ()


def test_three_revisions_give_the_pairwise_versions_of_a_rolling_upgrade():
    m = matrix([rev("A", req("FooRequest", 1, "0-3")), rev("B", req("FooRequest", 1, "2-6")),
                rev("C", req("FooRequest", 1, "5-9"))])
    foo = row(m, 1)
    assert [(s.old, s.new, s.negotiated) for s in foo.steps] == [("A", "B", 3), ("B", "C", 6)]
    assert foo.no_common  # A and C never meet: upgrading straight from A to C breaks
    assert "| API | apiKey | A | B | C | overlap | negotiated | A→B | B→C | flags |" in m.to_markdown()
    assert "A->B" in m.to_text()


def test_two_revisions_have_no_pairwise_columns():
    m = matrix([rev("A", req("FooRequest", 1, "0-3")), rev("B", req("FooRequest", 1, "2-6"))])
    assert "| API | apiKey | A | B | overlap | negotiated | flags |" in m.to_markdown()
    assert [s.to_dict() for s in row(m, 1).steps] == [{"from": "A", "to": "B", "overlap": "2-3", "negotiated": 3}]


def test_unusable_files_are_listed_and_explain_a_missing_api():
    bad = b'{"apiKey": 3, "type": "request", "name": "BarRequest", "validVersions": "0"}]'
    old = rev("old", req("FooRequest", 1, "0"), ("BarRequest.json", bad),
              ("OtherFoo.json", spec("OtherFooRequest", 1, "0")), ("NoVersions.json", spec("NoVersionsRequest", 2, None)))
    new = rev("new", req("FooRequest", 1, "0"), req("BarRequest", 3, "0"))
    m = matrix([old, new])
    assert [(s.revision, s.path) for s in m.skipped] == [
        ("old", "BarRequest.json"), ("old", "NoVersions.json"), ("old", "OtherFoo.json")]
    assert "validVersions" in m.skipped[1].reason
    assert m.skipped[2].reason == "apiKey 1 is also used by FooRequest.json"  # the first file by path wins
    assert row(m, 1).support("old").name == "FooRequest"
    bar = row(m, 3)
    assert bar.missing == ("old",) and bar.left_out == ("old",)
    assert bar.flags == ("missing in old (its file was left out)",)
    assert bar.to_dict()["leftOut"] == ["old"]
    assert "Files left out of the matrix:\n  old: BarRequest.json: unexpected ']'" in m.to_text()


def test_labels_must_be_given_and_distinct():
    with pytest.raises(ValueError, match="at least one"):
        matrix([])
    with pytest.raises(ValueError, match="distinct"):
        matrix([rev("x"), rev("x")])


def test_to_dict_is_json_with_the_documented_keys():
    m = matrix([rev("a", req("FooRequest", 1, "0-2", unstable=True)), rev("b", req("FooRequest", 1, "1-3"))])
    data = json.loads(json.dumps(m.to_dict()))
    assert list(data) == ["revisions", "includeUnstable", "apis", "records", "coordinatorRecords", "problems", "skipped"]
    foo = data["apis"][0]
    assert list(foo) == ["apiKey", "name", "kind", "group", "versions", "overlap", "negotiated", "noCommon",
                         "missing", "leftOut", "notOffered", "steps", "flags"]
    assert foo["versions"]["a"] == {"name": "FooRequest", "path": "FooRequest.json", "versions": "0-1",
                                    "lowest": 0, "highest": 1, "unstable": 2, "removed": False}
    assert (foo["overlap"], foo["negotiated"], foo["noCommon"]) == ("1", 1, False)


def test_text_table_is_aligned_and_deterministic():
    m = matrix([rev("2.8.0", req("ProduceRequest", 0, "0-9"), req("FooRequest", 12, "0")),
                rev("3.7.0", req("ProduceRequest", 0, "0-10"))])
    text = m.to_text()
    assert text == m.to_text()
    lines = text.splitlines()
    assert lines[:5] == [
        "APIs",
        "API      apiKey  2.8.0  3.7.0  overlap  negotiated  flags",
        "-------  ------  -----  -----  -------  ----------  ----------------",
        "Produce       0  0-9    0-10   0-9      9",
        "Foo          12  0      -      -        -           missing in 3.7.0",
    ]
    assert all(line == line.rstrip() for line in lines)


def test_markdown_rows_have_as_many_cells_as_the_header_and_escape_pipes():
    m = matrix([rev("a|b", req("FooRequest", 1, "0")), rev("c", req("FooRequest", 1, "0"))])
    table = [line for line in m.to_markdown().splitlines() if line.startswith("|")]
    assert table[0] == "| API | apiKey | a\\|b | c | overlap | negotiated | flags |"
    assert {line.replace("\\|", "").count("|") for line in table} == {8}


# --- real Kafka specs -----------------------------------------------------------------------

RELEASES = ("2.8.0", "3.7.0", "trunk-2024-10")


def load(label: str) -> Revision:
    root: Path = require_shared("kafka-specs", label)
    return Revision(label, {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.json")})


@pytest.fixture(scope="module")
def releases() -> list[Revision]:
    return [load(label) for label in RELEASES]


@pytest.fixture(scope="module")
def real(releases) -> Matrix:
    return matrix(releases)


def test_real_produce_ranges_and_negotiated_versions(real):
    produce = row(real, 0)
    assert produce.name == "Produce"
    assert [str(s) for _, s in produce.cells] == ["0-9", "0-10", "0-11"]
    assert produce.negotiated == 9  # a 2.8.0 peer caps it
    assert [s.negotiated for s in produce.steps] == [9, 10]


def test_real_every_api_key_and_no_api_without_a_common_version(real):
    """trunk-2024-10 predates KIP-896's raised minimums: every request still starts at version 0."""
    assert [r.api_key for r in real.apis] == list(range(88))
    assert all(s.versions.lowest == 0 for r in real.apis for _, s in r.cells if s is not None and s.offered)
    assert real.problems == ()
    assert "88 APIs, 30 metadata records, 22 coordinator records, 0 without a common version" in real.to_text()


def test_real_missing_apis(real):
    missing = {label: {r.api_key for r in real.apis if label in r.missing} for label in RELEASES}
    assert missing["2.8.0"] == {61, *range(65, 88)}
    assert missing["3.7.0"] == set(range(75, 88))
    assert missing["trunk-2024-10"] == set()
    assert row(real, 75).name == "DescribeTopicPartitions"
    assert row(real, 75).flags == ("missing in 2.8.0, 3.7.0",)


def test_real_describe_producers_is_missing_in_2_8_0_only_because_its_file_is_unreadable(real):
    assert [(s.revision, s.path) for s in real.skipped] == [
        ("2.8.0", "clients/src/main/resources/common/message/DescribeProducersRequest.json")]
    describe_producers = row(real, 61)
    assert describe_producers.left_out == ("2.8.0",)
    assert describe_producers.flags == ("missing in 2.8.0 (its file was left out)",)
    assert describe_producers.negotiated == 0


def test_real_rename_alter_isr_to_alter_partition(real):
    alter = row(real, 56)
    assert alter.name == "AlterPartition"
    assert [s.name for _, s in alter.cells] == ["AlterIsrRequest", "AlterPartitionRequest", "AlterPartitionRequest"]
    assert alter.negotiated == 0 and [s.negotiated for s in alter.steps] == [0, 3]


def test_real_unstable_versions(releases, real):
    end_txn = row(real, 26)
    assert str(end_txn.support("trunk-2024-10")) == "0-4 (+5 unstable)"
    assert end_txn.steps[1].negotiated == 3
    describe = row(real, 69)  # ConsumerGroupDescribe: 3.7.0 had only an unstable version 0
    assert describe.not_offered == ("3.7.0",) and describe.negotiated is None
    share = {r.api_key for r in real.apis if r.not_offered == ("trunk-2024-10",)}
    assert share == {76, 77, 78, 79, 83, 84, 85, 86, 87}  # the KIP-932 share-group APIs

    unstable = matrix(releases, include_unstable=True)
    assert row(unstable, 26).support("trunk-2024-10").versions == Versions(0, 5)
    assert row(unstable, 69).negotiated == 0
    assert not any(r.not_offered for r in unstable.apis)


def test_real_metadata_records(real):
    groups = {}
    for r in real.records:
        groups.setdefault(r.group, []).append(r.api_key)
    assert {group: len(keys) for group, keys in groups.items()} == {
        "metadata/src/main/resources/common/metadata": 26, "storage/src/main/resources/message": 4}
    kraft = {r.api_key: r for r in real.records if r.group.startswith("metadata/")}
    assert kraft[6].name == "AccessControlRecord" and kraft[6].missing == ("3.7.0", "trunk-2024-10")
    assert kraft[14].name == "ClientQuotaRecord" and kraft[14].support("2.8.0").name == "QuotaRecord"
    assert [str(s) for _, s in kraft[0].cells] == ["0", "0-3", "0-3"] and kraft[0].negotiated == 0
    assert not any(r.no_common for r in real.records)


def test_real_3_7_0_to_trunk_rolling_upgrade(releases):
    m = matrix(releases[1:])
    assert m.labels == ("3.7.0", "trunk-2024-10")
    assert m.problems == ()
    assert {r.api_key for r in m.apis if r.missing} == set(range(75, 88))
    assert row(m, 1).negotiated == 16  # Fetch: 3.7.0 0-16, trunk 0-17
    json.dumps(m.to_dict())
    assert "| Fetch | 1 | 0-16 | 0-17 | 0-16 | 16 |  |" in m.to_markdown()
