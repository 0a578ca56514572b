"""The shipped release table (``linter/readiness/releases.json``): what Kafka's specs say at each release, KIP-896's
minimums in 4.0.0 with the restorations where they landed, the order of names and the one-line refusal.

The table is checked two ways against a clone of the bundle: ``bench/release_ranges.py --check`` regenerates it
byte for byte, and an independent reading of every tag's request specs (their top keys found by a regular
expression in ``git cat-file`` output, no krpc-lint parser) gives the same ranges.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared
from support.gitrepo import git

from linter.readiness import releases
from linter.readiness.releases import (
    DamagedTable,
    UnknownRelease,
    release_names,
    release_target,
)

MESSAGES = "clients/src/main/resources/common/message"
TOP_KEY = re.compile(r'^\s*"(apiKey|type|validVersions|deprecatedVersions)":\s*"?([^",\s]+)', re.MULTILINE)
# KIP-896 as Kafka 4.0 applied it: the first version each API keeps ("Version(s) 0[-N] were removed in Apache
# Kafka 4.0" in the 4.3 specs; the delegation-token APIs from a 4.0.0 broker's ApiVersions).
KIP_896_MINIMUMS = {"Produce": 3, "Fetch": 4, "ListOffsets": 1, "OffsetCommit": 2, "OffsetFetch": 1,
                    "OffsetForLeaderEpoch": 2, "CreateTopics": 2, "DeleteTopics": 1, "DescribeAcls": 1,
                    "CreateAcls": 1, "DeleteAcls": 1, "DescribeConfigs": 1, "AlterReplicaLogDirs": 1,
                    "DescribeLogDirs": 1, "CreateDelegationToken": 1, "RenewDelegationToken": 1,
                    "ExpireDelegationToken": 1, "DescribeDelegationToken": 1, "WriteTxnMarkers": 1}
Ranges = dict[int, tuple[int, int, tuple[int, int] | None]]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Path:
    clone = tmp_path_factory.mktemp("kafka") / "kafka"
    git(clone.parent, "clone", "-q", str(require_shared("kafka-history", "kafka-json.bundle")), str(clone))
    return clone


def _span(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def _blobs(kafka: Path, names: list[str]) -> list[str]:
    """The texts of ``REF:path`` names, through one ``git cat-file --batch``."""
    out = subprocess.run(["git", "-C", str(kafka), "cat-file", "--batch"], input="\n".join(names).encode() + b"\n",
                         capture_output=True, check=True).stdout
    texts, pos = [], 0
    for _ in names:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        texts.append(out[header_end + 1:header_end + 1 + size].decode())
        pos = header_end + 1 + size + 1
    return texts


def _declared(kafka: Path, ref: str) -> Ranges:
    """The request ranges at ``ref``, from each ``*Request.json``'s first apiKey/type/validVersions/deprecatedVersions
    (Kafka writes the top keys before the fields, whose own keys are ``versions``, never ``validVersions``)."""
    paths = [p for p in git(kafka, "ls-tree", "-r", "--name-only", ref, MESSAGES).split() if p.endswith("Request.json")]
    ranges: Ranges = {}
    for text in _blobs(kafka, [f"{ref}:{path}" for path in paths]):
        keys: dict[str, str] = {}
        for key, value in TOP_KEY.findall(text):
            keys.setdefault(key, value)
        if keys.get("type") == "request" and keys.get("validVersions", "none") != "none":
            deprecated = keys.get("deprecatedVersions")
            dropped = None if deprecated is None else _span(deprecated)
            ranges[int(keys["apiKey"])] = (*_span(keys["validVersions"]), dropped)
    return ranges


def _table(name: str) -> Ranges:
    return {key: (api.lowest, api.highest, api.deprecated) for key, api in release_target(name).apis.items()}


def test_the_table_is_what_the_sources_say(kafka: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "release_ranges.py"), "--kafka", str(kafka),
                           "--shared", str(require_shared()), "--check"], capture_output=True, text=True, check=False,
                          cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert "left out (no request specs): 0.8.0, 0.8.1, 1.0.0, 1.0.1, 1.0.2, 1.1.0, 1.1.1, 2.0.0, 2.0.1, 2.1.0, " \
           "2.1.1\n" in done.stderr


def test_every_tag_has_the_ranges_its_spec_files_declare(kafka: Path) -> None:
    tags = [tag for tag in git(kafka, "tag", "--list").split() if _declared(kafka, tag)]
    assert tags[0] == "2.2.0" and [name for name in release_names() if name in tags] == tags
    for tag in tags:
        assert _table(tag) == _declared(kafka, tag), tag
        commit = git(kafka, "rev-parse", f"{tag}^{{commit}}")[:12]
        assert release_target(tag).source.startswith(f"Kafka {tag} tag (bundle commit {commit})")


def test_3_9_0_is_the_pinned_release_branch(kafka: Path) -> None:
    assert _table("3.9.0") == _declared(kafka, "2510fc47a599f451223216de632243bcc79663b8")
    assert "3.9 release branch at 2510fc47a599" in release_target("3.9.0").source


def test_4_0_0_has_kip_896_minimums_and_the_metadata_restoration() -> None:
    apis = {api.name: api for api in release_target("4.0.0").apis.values()}
    assert {name: apis[name].lowest for name in KIP_896_MINIMUMS} == KIP_896_MINIMUMS
    assert (apis["Produce"].highest, apis["Fetch"].highest) == (12, 17)
    assert apis["Metadata"].lowest == 0  # apache/kafka#18716 put v0-3 back on the 4.0 branch before 4.0.0
    assert apis["JoinGroup"].lowest == 2  # v0-1 came back in 4.0.1 and 4.1.0 (apache/kafka#20116, #20142)
    assert not {"LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown"} & set(apis)
    assert all(api.deprecated is None for api in apis.values())


def test_3_x_deprecates_what_4_0_removes_and_still_has_it() -> None:
    before, after = release_target("3.9.0").apis, release_target("4.0.0").apis
    assert before[0].deprecated == (0, 6) and before[0].lowest == 0 and after[0].lowest == 3
    assert {4, 5, 6, 7} <= set(before)


def test_4_3_has_the_joingroup_restoration_and_the_same_minimums_as_4_0_0() -> None:
    old = {api.name: api.lowest for api in release_target("4.0.0").apis.values()}
    new = {api.name: api.lowest for api in release_target("4.3").apis.values()}
    assert new["JoinGroup"] == 0
    assert {name: low for name, low in new.items() if name in old and name != "JoinGroup"} == \
        {name: old[name] for name in new if name in old and name != "JoinGroup"}
    assert "client APIs only" in release_target("4.3").source


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split("."))


def test_names_are_in_version_order() -> None:
    names = release_names()
    assert names == sorted(names, key=_version) and len(set(names)) == len(names)
    assert names[0] == "2.2.0" and names[-1] == "4.3" and names.index("3.9.0") < names.index("4.0.0")
    assert all(release_target(name).source for name in names)


@pytest.mark.parametrize(("name", "close"), [("4.0", "close: 4.0.0"), ("3.9", "close: 3.9.0"), ("banana", "")])
def test_an_unknown_name_is_one_line_naming_close_releases(name: str, close: str) -> None:
    with pytest.raises(UnknownRelease) as caught:
        release_target(name)
    message = str(caught.value)
    assert "\n" not in message and f'"{name}"' in message and close in message and "known: 2.2.0 … 4.3" in message


def test_a_hostile_name_is_cut_and_escaped() -> None:
    with pytest.raises(UnknownRelease) as caught:
        release_target("\x1b[2J" + "9" * 100_000)
    message = str(caught.value)
    assert "\x1b" not in message and "\\x1b" in message and len(message) < 200


@pytest.mark.parametrize("text", ["not json", "[]", '{"releases": {}}', '{"releases": {"1.0": {"apis": {}}}}',
                                  '{"releases": {"1.0": {"source": "s", "apis": {"x": [0, 1, null, null, "A"]}}}}',
                                  '{"releases": {"1.0": {"source": "s", "apis": {"0": [2, 1, null, null, "A"]}}}}',
                                  '{"releases": {"1.0": {"source": "s", "apis": {"0": [0, 1, 0, null, "A"]}}}}'])
def test_a_damaged_table_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    (tmp_path / releases.TABLE_RESOURCE).write_text(text, encoding="utf-8")
    monkeypatch.setattr(releases.resources, "files", lambda package: tmp_path)
    releases._table.cache_clear()
    try:
        with pytest.raises(DamagedTable, match="regenerate it with bench/release_ranges.py"):
            release_names()
    finally:
        monkeypatch.undo()
        releases._table.cache_clear()


def test_the_4x_input_names_a_source_for_every_correction() -> None:
    entries = json.loads((REPO_ROOT / "linter" / "readiness" / "releases_4x.json").read_text())["releases"]
    assert set(entries) <= set(release_names())
    for entry in entries.values():
        assert entry["source"] and ("specs" in entry or (entry["base"]["commit"] and entry["advertised"]["source"]
                                                         and all(entry["removed"].values())))
