"""krpc-lint where Kafka contributors run it: inside a clone of Kafka's real history
(``../shared/kafka-history/kafka-json.bundle``), where specs live among other JSON (Trogdor workloads,
native-image configs), and in a vendor's copy. One file discovery decides what is a spec everywhere."""

from __future__ import annotations

import json
import posixpath
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import require_shared, run_cli
from support.gitrepo import git

from linter.compat.revision import Revision
from linter.compat.sources import read_revision
from linter.parse.discovery import in_spec_location, looks_like_spec


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the bundle with trunk checked out (as a contributor has it)."""
    bundle = require_shared("kafka-history", "kafka-json.bundle")
    clone = tmp_path_factory.mktemp("kafka") / "kafka"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True, capture_output=True)
    return clone


def _other_json(kafka: Path) -> list[str]:
    return [path for path in git(kafka, "ls-files", "*.json").split() if not in_spec_location(path)]


def test_lint_dot_reads_only_the_specs(kafka: Path) -> None:
    others = _other_json(kafka)
    assert any(p.startswith("tests/spec/") for p in others) and any(p.startswith("docker/") for p in others)
    result = run_cli("lint", "--no-cache", "--format", "json", ".", cwd=kafka)
    assert result.returncode == 0, result.stdout[-2000:]
    report = json.loads(result.stdout)
    assert all(in_spec_location(f["path"]) for f in report["findings"]), report["findings"]
    assert report["summary"]["skipped"] == len(others)
    text = run_cli("lint", ".", cwd=kafka).stdout
    assert text.rstrip().endswith(f"({len(others)} other JSON files skipped).")


def test_compat_against_a_release_reads_only_the_specs(kafka: Path) -> None:
    result = run_cli("compat", "--against", "3.8.0", "--format", "json", cwd=kafka)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert findings and all(in_spec_location(f["path"]) for f in findings)
    assert not [f for f in findings if f["category"] == "WIRE_BREAKING"]
    dot = run_cli("compat", "--against", "3.8.0", ".", "--format", "json", cwd=kafka)  # "." explicitly: the same
    assert dot.returncode == 0 and json.loads(dot.stdout)["findings"] == findings


def test_a_vendor_copy_with_other_json_beside_it(tmp_path: Path) -> None:
    source = require_shared("kafka-specs", "4.3", "clients", "src", "main", "resources", "common", "message")
    vendored = tmp_path / "kafka" / "protocol" / "schemas"
    shutil.copytree(source, vendored / "resources")
    (vendored / "package.json").write_text('{"name": "schemas", "version": "1.0.0"}')
    (vendored / "resources" / "index.json").write_text('["FetchRequest.json"]')
    result = run_cli("lint", "--no-cache", "--profile", "kafka", "kafka", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "All checks passed: 108 files (2 other JSON files skipped)." in result.stdout


def test_a_directory_without_specs_is_a_usage_error_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "settings.json").write_text('{"retries": 3}')
    empty = run_cli("lint", "conf", cwd=tmp_path)
    assert empty.returncode == 2 and "conf: no spec files here (1 other JSON file skipped)" in empty.stderr
    allowed = run_cli("lint", "--allow-empty", "conf", cwd=tmp_path)
    assert allowed.returncode == 0 and "0 files (1 other JSON file skipped)" in allowed.stdout


def test_a_named_file_is_always_read(tmp_path: Path) -> None:
    (tmp_path / "odd.json").write_text('{"retries": 3}')
    result = run_cli("lint", "odd.json", cwd=tmp_path)
    assert result.returncode == 1 and "KL105" in result.stdout  # read as a spec: it has no name or type


@pytest.mark.parametrize(("text", "spec"), [
    (b'// licence\n{\n  "apiKey": 1, "type": "request", "name": "FetchRequest", "validVersions": "0-3"', True),
    (b'{"name": "X", "validVersions": "0", "fields": [', True),  # broken, but a spec
    (b'\xef\xbb\xbf{"type": "data", "name": "X", "flexibleVersions": "0+"}', True),
    (b'{"class": "org.apache.kafka.trogdor.workload.ProduceBenchSpec", "name": "x"}', False),
    (b'[{"name": "java.lang.String"}]', False),
    (b"", False),
])
def test_looks_like_spec(text: bytes, spec: bool) -> None:
    assert looks_like_spec(text) is spec


MESSAGES = "clients/src/main/resources/common/message"
METADATA = "metadata/src/main/resources/common/metadata"
RAFT = "raft/src/main/resources/common/message"


def test_a_file_named_alone_is_checked_with_its_directory(kafka: Path) -> None:
    """pre-commit passes only the changed files: FetchRequest bumped to v18 without FetchResponse is
    still the pair mismatch (KL3001, an error: Kafka's build fails) the directory run reports, on the response it
    breaks."""
    request = kafka / MESSAGES / "FetchRequest.json"
    original = request.read_text()
    try:
        request.write_text(original.replace('"validVersions": "0-17"', '"validVersions": "0-18"'))
        alone = run_cli("lint", "--no-cache", f"{MESSAGES}/FetchRequest.json", cwd=kafka)
        assert "FetchResponse.json" in alone.stdout and "KL3001" in alone.stdout, alone.stdout
        assert alone.returncode == 1, alone.stdout  # an error, where KL255's warning passed
        assert "Found 1 error in 1 file" in alone.stdout  # the siblings' own findings are not reported
        isolated = run_cli("lint", "--no-cache", "--no-siblings", f"{MESSAGES}/FetchRequest.json", cwd=kafka)
        assert isolated.returncode == 0 and "All checks passed: 1 file" in isolated.stdout, isolated.stdout
    finally:
        request.write_text(original)


def test_a_file_named_alone_never_claims_a_missing_partner(tmp_path: Path) -> None:
    """Only a directory given whole proves absence (the trunk-2026 samples hold requests without responses)."""
    samples = require_shared("kafka-specs", "trunk-2026-samples", "clients", "src", "main", "resources", "common",
                             "message")
    result = run_cli("lint", "--profile", "kafka", str(samples / "DeleteTopicsRequest.json"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    whole = run_cli("lint", "--profile", "kafka", str(samples), cwd=tmp_path)
    assert whole.returncode == 1 and "KL703" in whole.stdout


def test_include_reads_json_that_does_not_look_like_a_spec(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "Odd.json").write_text('{"retries": 3}')
    (tmp_path / ".krpc-lint.yaml").write_text("include: ['schemas/*.json']\n")
    result = run_cli("lint", "schemas", cwd=tmp_path)
    assert result.returncode == 1 and "Odd.json" in result.stdout and "KL105" in result.stdout


def test_a_record_renamed_with_its_file_is_a_rename_in_kafkas_history(kafka: Path) -> None:
    """MINOR (#8625) renamed SubscriptionInfo.json to SubscriptionInfoData.json: same bytes, no apiKey."""
    commit = git(kafka, "log", "--format=%h", "-1", "--grep", "Only add 'Data' suffix for generated").strip()
    where = "streams/src/main/resources/common/message"
    result = run_cli("compat", "--profile", "strict", "--format", "json", f"{commit}~1:{where}", f"{commit}:{where}",
                     cwd=kafka)
    assert result.returncode == 0, result.stdout + result.stderr
    found = {(f["rule"], f["category"]) for f in json.loads(result.stdout)["findings"]}
    assert found == {("KL1062", "SOURCE_ONLY"), ("KL1063", "SOURCE_ONLY")}


def _record(name: str, versions: str, fields: list[dict]) -> str:
    return json.dumps({"type": "data", "name": name, "validVersions": versions, "flexibleVersions": "0+",
                       "fields": fields})


def test_renamed_records_pair_by_their_bytes(tmp_path: Path) -> None:
    from linter import Config, compare

    same = [{"name": "Epoch", "type": "int32", "versions": "0+"}, {"name": "Owner", "type": "string", "versions": "0+"}]
    (tmp_path / "old").mkdir(), (tmp_path / "new").mkdir(), (tmp_path / "grown").mkdir()
    (tmp_path / "old" / "LedgerState.json").write_text(_record("LedgerState", "0", same))
    (tmp_path / "new" / "LedgerStateData.json").write_text(_record("LedgerStateData", "0", same))
    grown = [*same, {"name": "Size", "type": "int64", "versions": "1+"}]
    (tmp_path / "grown" / "LedgerStateData.json").write_text(_record("LedgerStateData", "0-1", grown))
    strict = Config(profile="strict")
    renamed = {(f.rule, f.category) for f in compare(tmp_path / "old", tmp_path / "new", strict).findings}
    assert renamed == {("KL1062", "SOURCE_ONLY"), ("KL1063", "SOURCE_ONLY")}
    changed = {f.rule for f in compare(tmp_path / "old", tmp_path / "grown", strict).findings}
    assert {"KL1062", "KL1063", "KL1081"} <= changed and "KL1042" not in changed  # the change plus the rename
    other = [{"name": "Epoch", "type": "int64", "versions": "0+"}]
    (tmp_path / "new" / "LedgerStateData.json").write_text(_record("LedgerStateData", "0", other))
    unrelated = {f.rule for f in compare(tmp_path / "old", tmp_path / "new", strict).findings}
    assert unrelated == {"KL1042", "KL1082"}  # other bytes: removed and added, not a rename


def _breaks(kafka: Path, subject: str, path: str, *released: str) -> list[dict]:
    """The wire breaks ``compat`` (the CLI, --released auto unless given) reports for the commit whose subject
    starts with ``subject``: its parent's file against its own."""
    found = [line.split("\0") for line in git(kafka, "log", "--all", "--format=%h%x00%s").splitlines()]
    commits = [commit for commit, text in found if text.startswith(subject)]
    assert commits, f"no commit {subject!r} in the bundle"
    commit = commits[0]
    args = [arg for value in released for arg in ("--released", value)]
    result = run_cli("compat", *args, "--format", "json", f"{commit}~1:{path}", f"{commit}:{path}", cwd=kafka)
    assert result.returncode in (0, 1), result.stderr
    return [f for f in json.loads(result.stdout)["findings"] if f["category"] == "WIRE_BREAKING"]


def test_released_is_decided_by_the_layouts_the_releases_shipped(kafka: Path) -> None:
    """KAFKA-14462 [6/N] changed ConsumerGroup* records after the 3.5 branch was cut, which shipped the old
    layout in 3.5.0-3.5.2: released. KAFKA-10028 retyped a tag whose int32 layout no release ever shipped."""
    records = _breaks(kafka, "KAFKA-14462; [6/N] Update Records",
                      "group-coordinator/src/main/resources/common/message/ConsumerGroupMemberMetadataValue.json")
    assert records and all(f["released"] for f in records)
    assert all(f["message"].endswith("(v0 as shipped in 3.5.0)") for f in records), records  # the release named
    features = _breaks(kafka, "KAFKA-10028: Implement write path for feature versioning system",
                       f"{MESSAGES}/ApiVersionsResponse.json")
    assert [(f["rule"], f["released"]) for f in features] == [("KL1011", False)]
    assert _breaks(kafka, "KAFKA-10028: Implement write path for feature versioning system",
                   f"{MESSAGES}/ApiVersionsResponse.json", "auto") == features  # auto is the default here
    plain = _breaks(kafka, "KAFKA-10028: Implement write path for feature versioning system",
                    f"{MESSAGES}/ApiVersionsResponse.json", "none")
    assert [(f["rule"], f["released"]) for f in plain] == [("KL1011", True)]  # by version number alone


@pytest.mark.parametrize(("subject", "path", "release"), [
    # KIP-360 added fields to InitProducerId v2 after the 2.4 branch shipped v2 without them ...
    ("KAFKA-8710; Allow transactional producers", f"{MESSAGES}/InitProducerIdRequest.json", "v2 as shipped in 2.4.0"),
    # ... and KAFKA-9229 moved them to v3: it changes a v2 layout that no release ever shipped.
    ("KAFKA-9229: Fix incompatible change", f"{MESSAGES}/InitProducerIdRequest.json", None),
    # KRaft's records of 2.8.0 (early access) were changed incompatibly for 3.0.
    ("KAFKA-13053; Bump kraft frame version", f"{METADATA}/TopicRecord.json", "v0 as shipped in 2.8.0"),
    # The quorum-state file lost ClusterId (as shipped since 2.7.0); the revert restores the shipped layout.
    ("KAFKA-14371: Remove unused clusterId", f"{RAFT}/QuorumStateData.json", "v0 as shipped in 2.7.0"),
    ('Revert "KAFKA-14371', f"{RAFT}/QuorumStateData.json", None),
    # 3.7.0 shipped ConsumerGroupDescribe v0 with the request marked latestVersionUnstable: the response's
    # v0 is unreleased too, although 3.7.0's response file has no such mark.
    ("MINOR: Mark ConsumerGroupDescribe API as stable", f"{MESSAGES}/ConsumerGroupDescribeResponse.json", None),
])
def test_released_cases_established_by_reading_the_releases(kafka: Path, subject: str, path: str,
                                                             release: str | None) -> None:
    """Each case checked by hand against the release tags' copies of the file (git show TAG:path)."""
    breaks = _breaks(kafka, subject, path)
    assert breaks
    assert all(f["released"] is (release is not None) for f in breaks), breaks
    if release is not None:
        assert all(f["message"].endswith(f"({release})") for f in breaks), breaks


def test_audit_and_compat_agree_on_every_change_of_the_history(kafka: Path) -> None:
    """Acceptance (issue 13): on every revision pair of every branch of the bundle, the audit (each pair
    with each release's copy of its file) and compat with every release's whole tree (``--released auto``)
    report the same changes: rule, versions, released or not, and message (the release that shipped the
    bytes included). compat is given the two files as ``REF:path`` names them (a deleted file: the two
    directories), so a move between directories with the same base name is no rename to it."""
    from linter import Config, compare
    from linter.audit.history import branches, extract
    from linter.audit.run import run_in_process, units
    from linter.compat.releases import release_revisions, release_tags

    history = extract(str(kafka), refs=branches(kafka))
    work = units(history)
    rows = run_in_process(work)["changes"]
    assert not [r for r in rows if r["error"]]
    by_audit: dict[tuple, set] = {_pair_key(unit.pair): set() for unit in work.pairs}
    for row in rows:
        by_audit[_pair_key(row)].add(_change_key(row["rule"], row["versions"], row["released"], row["message"], row))
    for changes in by_audit.values():
        changes.discard(None)
    releases = release_revisions(str(kafka), release_tags(str(kafka)))
    config, released_seen, deleted = Config(profile="strict"), set(), 0
    for unit in work.pairs:
        pair = unit.pair
        if unit.new is None:
            deleted += 1
            directory = posixpath.dirname(pair["old_path"])
            old = read_revision(f"{pair['old_commit']}:{directory}", cwd=kafka)
            new = read_revision(f"{pair['new_commit']}:{directory}", cwd=kafka)
        else:
            old, new = _as_named(pair["old_commit"], pair["old_path"], unit.old), \
                _as_named(pair["new_commit"], pair["new_path"], unit.new)
        findings = [f for f in compare(old, new, config, released=releases).findings
                    if unit.new is not None or f.path.endswith("/" + posixpath.basename(pair["old_path"]))]
        by_compat = {_change_key(f.rule, f.versions, f.released, f.message, pair) for f in findings} - {None}
        assert by_compat == by_audit[_pair_key(pair)], (pair["new_path"], pair["new_commit"])
        released_seen |= {key[2] for key in by_compat if key[0] in WIRE_RULES}
    assert len(work.pairs) > 1100 and len(rows) > 1400 and deleted > 0
    assert released_seen == {True, False}  # released and unreleased wire breaks both occur in Kafka's history


WIRE_RULES = {f"KL{n}" for n in range(1001, 1016)}


def _pair_key(pair: dict) -> tuple:
    return pair["old_commit"], pair["old_path"], pair["new_commit"], pair["new_path"]


def _change_key(rule: str, versions, released: bool, message: str, pair: dict) -> tuple | None:
    if rule == "KL1063":  # file-renamed: compat names the two files as given, by their base names
        if posixpath.basename(pair["old_path"]) == posixpath.basename(pair["new_path"]):
            return None  # moved to another directory: only the audit sees the paths
        message = message.split(": file ")[0]
    return rule, tuple(versions), released, message


def _as_named(commit: str, path: str, data: bytes) -> Revision:
    """What ``read_revision(f"{commit}:{path}")`` gives, from the bytes the audit read."""
    from linter.compat.revision import Revision

    name = posixpath.basename(path)
    return Revision(f"{commit}:{path}", {name: data}, f"{commit}:{path[: len(path) - len(name)]}")


def test_every_branch_of_the_history(kafka: Path) -> None:
    """audit --all-branches reads trunk and every release branch (remote-tracking in a clone): the
    repository's ~1,150 distinct spec blobs and ~1,175 revision pairs."""
    from linter.audit.history import branches, extract
    from linter.audit.run import units

    names = branches(kafka)
    assert {"trunk", "origin/3.9", "origin/2.8"} <= set(names) and "origin/HEAD" not in names
    every = units(extract(str(kafka), refs=names))
    assert len(every.blobs) > 1100 and len(every.pairs) > 1100
    first_parent = extract(str(kafka), refs=names, first_parent=True)
    assert 0 < len(first_parent.pairs) <= len(every.pairs)


def test_compat_fix_makes_kafkas_own_fix_of_a_released_break(kafka: Path, tmp_path: Path) -> None:
    """KAFKA-8710 added ProducerId/ProducerEpoch to InitProducerId v2, which 2.4.0 had shipped without them;
    KAFKA-9229 moved them to a new v3. ``compat --fix --against 2.4.0`` at the commit before that fix writes
    exactly Kafka's fix: the file equals KAFKA-9229's, byte for byte."""
    found = [line.split("\0") for line in git(kafka, "log", "--all", "--format=%h%x00%s").splitlines()]
    fix = next(commit for commit, text in found if text.startswith("KAFKA-9229: Fix incompatible change"))
    tree = tmp_path / "before-fix"
    git(kafka, "worktree", "add", "-q", "--detach", str(tree), f"{fix}~1")
    try:
        files = [f"{MESSAGES}/InitProducerIdRequest.json", f"{MESSAGES}/InitProducerIdResponse.json"]
        shown = run_cli("compat", "--suggest", "--against", "2.4.0", *files, cwd=tree)
        assert shown.returncode == 1, shown.stderr
        assert '+    { "name": "ProducerId", "type": "int64", "versions": "3+"' in shown.stdout
        fixed = run_cli("compat", "--fix", "--against", "2.4.0", *files, cwd=tree)
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert git(tree, "diff", fix, "--", *files) == ""  # Kafka's own fix, to the byte
        assert git(tree, "diff", "--stat", "HEAD", "--", files[1]) == ""  # the response already had v3
    finally:
        git(kafka, "worktree", "remove", "--force", str(tree))
