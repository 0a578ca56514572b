"""linter.audit.history on real git repositories: revisions, lineages, pairs, releases, errors.

One repository in Kafka's layout is built per module, with dated commits:

    day 1  c1  add Fetch, "Old Name", Produce (clients) and TopicRecord (metadata); a non-spec JSON
    day 2  c2  modify Fetch                       (branch "side" from here: day 2 12h, s1 modifies Fetch)
    day 3  c3  rename "Old Name" -> NewName, small edit       tag 1.0.0 (lightweight)
    day 4  c4  delete Produce                                 tag 1.1.0-rc1 (not a release)
    day 5  c5  Fetch back to c1's bytes (a revert)
    day 6  f1  on branch "feature": modify TopicRecord
    day 7  c7  modify NewName                                 tag 1.1.0 (annotated, day 7 12h)
    day 8  c8  merge "feature"
    day 9  c9  Fetch made executable (same blob)
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.gitrepo import commit, git, init_repo, isolate_git, write

from linter.audit.history import (
    DEFAULT_GLOBS,
    FALLBACK_GLOBS,
    History,
    HistoryError,
    RevisionPair,
    SpecRevision,
    extract,
)
from linter.spark import schema

MSG = "clients/src/main/resources/common/message"
META = "metadata/src/main/resources/common/metadata"
SHORT = {f"{MSG}/FetchRequest.json": "Fetch", f"{MSG}/Old Name.json": "Old Name",
         f"{MSG}/NewName.json": "NewName", f"{MSG}/ProduceRequest.json": "Produce",
         f"{META}/TopicRecord.json": "TopicRecord", None: None}


def spec(name: str, versions: str = "0", extra: str = "") -> str:
    """A spec-like text, long enough that a small edit keeps a rename detectable."""
    fields = "".join(f'    {{ "name": "Field{i}", "type": "int32", "versions": "0+" }},\n' for i in range(8))
    return (f'{{\n  "apiKey": 1,\n  "type": "request",\n  "name": "{name}",\n  "validVersions": "{versions}",\n'
            f'  "fields": [\n{fields}{extra}    {{ "name": "Last", "type": "string", "versions": "0+" }}\n  ]\n}}\n')


def day(number: int, hour: int = 0) -> int:
    return int(datetime(2024, 1, number, hour, tzinfo=UTC).timestamp())


def at(mp: pytest.MonkeyPatch, number: int, hour: int = 0) -> None:
    """The next commit (or annotated tag) is dated ``number`` January 2024, ``hour`` o'clock UTC."""
    stamp = f"@{day(number, hour)} +0000"
    mp.setenv("GIT_AUTHOR_DATE", stamp)
    mp.setenv("GIT_COMMITTER_DATE", stamp)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


class Kafka:
    """The module's repository: its path and the commit id of each label."""

    def __init__(self, path: Path, ids: dict[str, str]) -> None:
        self.path = path
        self.ids = ids
        self.label = {commit_id: name for name, commit_id in ids.items()}

    def blob(self, label: str, path: str) -> str:
        return git(self.path, "rev-parse", f"{self.ids[label]}:{path}").strip()

    def rows(self, revisions: list[SpecRevision]) -> list[tuple]:
        """``(commit, parent, status, path, old_path, blob, lineage, release)`` with labels for ids."""
        return [(self.label[r.commit], self.label.get(r.parent or "", r.parent), r.status, SHORT[r.path],
                 SHORT[r.old_path], self.blob_label(r), SHORT[r.lineage], r.release) for r in revisions]

    def blob_label(self, revision: SpecRevision) -> str | None:
        """``label`` when the blob is ``path`` as commit ``label`` left it, searched oldest first."""
        if revision.blob is None:
            return None
        return next(label for label in self.ids if self.has(label, revision.path, revision.blob))

    def has(self, label: str, path: str, blob: str) -> bool:
        done = subprocess.run(["git", "-C", str(self.path), "rev-parse", "-q", "--verify", f"{self.ids[label]}:{path}"],
                              check=False, capture_output=True, text=True)
        return done.stdout.strip() == blob

    def pairs(self, pairs: list[RevisionPair]) -> list[tuple]:
        """``(lineage, old commit, old path, new commit, new status, released_in)`` with labels."""
        return [(SHORT[p.lineage], self.label[p.old.commit], SHORT[p.old.path], self.label[p.new.commit],
                 p.new.status, p.released_in) for p in pairs]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kafka]:
    top = tmp_path_factory.mktemp("history")
    repo = top / "kafka"
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(mp, top)
        init_repo(repo, "trunk")
        ids = {}

        def step(label: str, number: int, hour: int = 0) -> None:
            at(mp, number, hour)
            commit(repo, label)
            ids[label] = head(repo)

        write(repo, f"{MSG}/FetchRequest.json", spec("Fetch"))
        write(repo, f"{MSG}/Old Name.json", spec("OldName"))
        write(repo, f"{MSG}/ProduceRequest.json", spec("Produce"))
        write(repo, f"{META}/TopicRecord.json", spec("TopicRecord"))
        write(repo, "docs/not-a-spec.json", "{}\n")
        step("c1", 1)
        write(repo, f"{MSG}/FetchRequest.json", spec("Fetch", "0-1"))
        step("c2", 2)
        git(repo, "branch", "side")
        git(repo, "mv", f"{MSG}/Old Name.json", f"{MSG}/NewName.json")
        added = '    { "name": "New", "type": "int8", "versions": "0+" },\n'
        write(repo, f"{MSG}/NewName.json", spec("OldName", extra=added))
        step("c3", 3)
        git(repo, "tag", "1.0.0")
        (repo / MSG / "ProduceRequest.json").unlink()
        step("c4", 4)
        git(repo, "tag", "1.1.0-rc1")
        write(repo, f"{MSG}/FetchRequest.json", spec("Fetch"))
        step("c5", 5)
        git(repo, "checkout", "-q", "-b", "feature")
        write(repo, f"{META}/TopicRecord.json", spec("TopicRecord", "0-1"))
        step("f1", 6)
        git(repo, "checkout", "-q", "trunk")
        write(repo, f"{MSG}/NewName.json", spec("NewName", "0-2"))
        step("c7", 7)
        at(mp, 7, 12)
        git(repo, "tag", "-a", "-m", "release", "1.1.0")
        at(mp, 8)
        git(repo, "merge", "-q", "--no-ff", "--no-edit", "feature")
        ids["c8"] = head(repo)
        os.chmod(repo / MSG / "FetchRequest.json", 0o755)
        step("c9", 9)
        git(repo, "checkout", "-q", "side")
        write(repo, f"{MSG}/FetchRequest.json", spec("Fetch", "0-3"))
        step("s1", 2, 12)
        git(repo, "checkout", "-q", "trunk")
        yield Kafka(repo, ids)


# Every spec change on trunk, in history order (parents first: git's topological order puts c7 before f1).
TRUNK = [
    ("c1", None, "A", "Fetch", None, "c1", "Fetch", "1.0.0"),
    ("c1", None, "A", "Old Name", None, "c1", "Old Name", "1.0.0"),
    ("c1", None, "A", "Produce", None, "c1", "Produce", "1.0.0"),
    ("c1", None, "A", "TopicRecord", None, "c1", "TopicRecord", "1.0.0"),
    ("c2", "c1", "M", "Fetch", None, "c2", "Fetch", "1.0.0"),
    ("c3", "c2", "R", "NewName", "Old Name", "c3", "Old Name", "1.0.0"),
    ("c4", "c3", "D", "Produce", None, None, "Produce", "1.1.0"),
    ("c5", "c4", "M", "Fetch", None, "c1", "Fetch", "1.1.0"),
    ("c7", "c5", "M", "NewName", None, "c7", "Old Name", "1.1.0"),
    ("f1", "c5", "M", "TopicRecord", None, "f1", "TopicRecord", None),
    ("c8", "c7", "M", "TopicRecord", None, "f1", "TopicRecord", None),
    ("c9", "c8", "M", "Fetch", None, "c1", "Fetch", None),
]
# Each change against the revision its parent had; the revert to c1's bytes is a pair, c9's mode change is not.
TRUNK_PAIRS = [
    ("Fetch", "c1", "Fetch", "c2", "M", None),
    ("Old Name", "c1", "Old Name", "c3", "R", None),  # 1.0.0 is tagged on c3 itself: not shipped before it
    ("Produce", "c1", "Produce", "c4", "D", "1.0.0"),
    ("Fetch", "c2", "Fetch", "c5", "M", "1.0.0"),
    ("Old Name", "c3", "NewName", "c7", "M", "1.0.0"),  # 1.1.0 is tagged after c7
    ("TopicRecord", "c1", "TopicRecord", "f1", "M", "1.0.0"),
    ("TopicRecord", "c1", "TopicRecord", "c8", "M", "1.1.0"),  # the merge, against its first parent
]


@pytest.fixture(scope="module")
def trunk(kafka: Kafka) -> History:
    return extract(kafka.path)


def test_revisions_follow_renames_deletions_reverts_and_merges(kafka: Kafka, trunk: History) -> None:
    assert kafka.rows(trunk.revisions) == TRUNK
    assert [r.time for r in trunk.revisions] == [day(1)] * 4 + [day(n) for n in (2, 3, 4, 5, 7, 6, 8, 9)]
    assert trunk.refs == {"HEAD": kafka.ids["c9"]}
    assert trunk.globs_used == DEFAULT_GLOBS
    assert trunk.pathspecs == (f":(glob){MSG}/*.json", f":(glob){META}/*.json")


def test_pairs_are_against_the_parents_revision(kafka: Kafka, trunk: History) -> None:
    assert kafka.pairs(trunk.pairs) == TRUNK_PAIRS
    assert all(pair.lineage == pair.new.lineage == pair.old.lineage for pair in trunk.pairs)


def test_blobs_are_distinct_with_their_first_path(kafka: Kafka, trunk: History) -> None:
    expected = {kafka.blob(label, path): path for label, path in [
        ("c1", f"{MSG}/FetchRequest.json"), ("c1", f"{MSG}/Old Name.json"), ("c1", f"{MSG}/ProduceRequest.json"),
        ("c1", f"{META}/TopicRecord.json"), ("c2", f"{MSG}/FetchRequest.json"), ("c3", f"{MSG}/NewName.json"),
        ("c7", f"{MSG}/NewName.json"), ("f1", f"{META}/TopicRecord.json")]}
    assert list(trunk.blobs.items()) == list(expected.items())  # history order
    texts = trunk.read_blobs(trunk.blobs)
    assert list(texts) == list(expected)
    assert texts[kafka.blob("c7", f"{MSG}/NewName.json")] == spec("NewName", "0-2").encode()


def test_read_blobs_caps_a_large_blob_like_compat(
    kafka: Kafka, trunk: History, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("linter.compat.sources.READ_LIMIT", 10)
    blob = kafka.blob("c1", f"{MSG}/FetchRequest.json")
    assert trunk.read_blobs([blob, blob]) == {blob: spec("Fetch").encode()[:10]}
    assert trunk.read_blobs(["0" * 40, blob]) == {blob: spec("Fetch").encode()[:10]}  # a missing object is left
    assert trunk.unreadable == {"0" * 40: f"git cannot read blob {'0' * 40} (missing or corrupt)"}  # out, and said


def test_releases_and_their_specs(kafka: Kafka, trunk: History) -> None:
    assert trunk.releases == {"1.0.0": kafka.ids["c3"], "1.1.0": kafka.ids["c7"]}
    assert trunk.release_specs("1.0.0") == {
        f"{MSG}/FetchRequest.json": kafka.blob("c2", f"{MSG}/FetchRequest.json"),
        f"{MSG}/NewName.json": kafka.blob("c3", f"{MSG}/NewName.json"),
        f"{MSG}/ProduceRequest.json": kafka.blob("c1", f"{MSG}/ProduceRequest.json"),
        f"{META}/TopicRecord.json": kafka.blob("c1", f"{META}/TopicRecord.json"),
    }
    assert trunk.release_specs("1.1.0") is trunk.release_specs("1.1.0")  # read once
    with pytest.raises(HistoryError, match="'1.1.0-rc1' is not a release tag"):
        trunk.release_specs("1.1.0-rc1")


def test_release_pattern_is_configurable(kafka: Kafka) -> None:
    history = extract(kafka.path, release_pattern=r"-rc\d+$")
    assert history.releases == {"1.1.0-rc1": kafka.ids["c4"]}
    assert [r.release for r in history.revisions][:7] == ["1.1.0-rc1"] * 7
    with pytest.raises(HistoryError, match="not a regular expression"):
        extract(kafka.path, release_pattern="(")


def test_rows_have_the_schema_columns(trunk: History) -> None:
    row = trunk.revisions[5].to_row()
    assert list(row) == schema.columns(schema.REVISIONS)
    assert row["time"] == datetime(2024, 1, 3, tzinfo=UTC)
    assert (row["status"], row["old_path"], row["lineage"]) == ("R", f"{MSG}/Old Name.json", f"{MSG}/Old Name.json")


def test_first_parent_reads_each_change_once(kafka: Kafka) -> None:
    history = extract(kafka.path, first_parent=True)
    assert kafka.rows(history.revisions) == [row for row in TRUNK if row[0] != "f1"]
    assert kafka.pairs(history.pairs) == [pair for pair in TRUNK_PAIRS if pair[3] != "f1"]


def test_since_lists_later_revisions_paired_with_earlier_ones(kafka: Kafka) -> None:
    history = extract(kafka.path, since="2024-01-05T00:00:00Z")
    assert kafka.rows(history.revisions) == TRUNK[7:]
    assert kafka.pairs(history.pairs) == TRUNK_PAIRS[3:]  # c5 against c2, c7's lineage named before the rename
    assert set(history.blobs) == {r.blob for r in history.revisions}


def test_several_refs_are_a_union(kafka: Kafka, trunk: History) -> None:
    history = extract(kafka.path, refs=["trunk", "side", "trunk"])
    assert history.refs == {"trunk": kafka.ids["c9"], "side": kafka.ids["s1"]}
    side = ("s1", "c2", "M", "Fetch", None, "s1", "Fetch", None)  # in no release
    assert kafka.rows(history.revisions) == TRUNK[:5] + [side] + TRUNK[5:]
    assert ("Fetch", "c2", "Fetch", "s1", "M", None) in kafka.pairs(history.pairs)
    assert len(history.pairs) == len(TRUNK_PAIRS) + 1
    only_side = extract(kafka.path, refs=["side"])
    assert [row[:3] for row in kafka.rows(only_side.revisions)] == \
        [("c1", None, "A")] * 4 + [("c2", "c1", "M"), ("s1", "c2", "M")]


def test_from_a_subdirectory_and_a_bare_clone(kafka: Kafka, trunk: History, tmp_path: Path) -> None:
    assert extract(kafka.path / MSG).revisions == trunk.revisions
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(kafka.path), str(bare)], check=True)
    history = extract(bare, refs=["trunk"])
    assert history.repo == str(bare)
    assert history.revisions == trunk.revisions and history.pairs == trunk.pairs


def test_other_layouts_fall_back_to_every_json_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path)
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    for rel in ("fixtures/spéc a.json", "fixtures/deep/b.json", ".github/c.json", "node_modules/x/d.json", "e.txt"):
        write(repo, rel, "{}\n" if rel != "fixtures/deep/b.json" else "[]\n")
    at(monkeypatch, 1)
    commit(repo)
    history = extract(repo)
    assert history.globs_used == FALLBACK_GLOBS
    assert [(r.status, r.path) for r in history.revisions] == \
        [("A", "fixtures/deep/b.json"), ("A", "fixtures/spéc a.json")]
    assert history.releases == {} and history.pairs == []
    given = extract(repo, paths=["fixtures/*.json"])
    assert given.globs_used == ("fixtures/*.json",) and given.pathspecs == (":(glob)fixtures/*.json",)
    assert [r.path for r in given.revisions] == ["fixtures/spéc a.json"]
    assert extract(repo, paths=["src/*.json"]).revisions == []  # no fallback for given paths


def test_bad_refs_and_repositories_say_what_to_do(
    kafka: Kafka, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path)
    with pytest.raises(HistoryError, match=r"unknown git revision 'nope': check the name, or fetch it first"):
        extract(kafka.path, refs=["nope"])
    with pytest.raises(HistoryError, match="cannot start with '-'"):
        extract(kafka.path, refs=["--output=/tmp/x"])
    tree = git(kafka.path, "rev-parse", "HEAD^{tree}").strip()
    with pytest.raises(HistoryError, match=f"'{tree}' is not a commit: pass a branch, tag or commit"):
        extract(kafka.path, refs=[tree])
    with pytest.raises(HistoryError, match="is not a git repository .*: pass the directory of a git checkout"):
        extract(tmp_path)
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    with pytest.raises(HistoryError, match="has no commits yet"):
        extract(empty)
    assert issubclass(HistoryError, ValueError)


def test_kafka_style_release_branches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Releases are tagged on branches never merged back: none is an ancestor of a later trunk commit."""
    isolate_git(monkeypatch, tmp_path)
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "trunk", str(repo))
    ids = {}

    def step(label: str, number: int, branch: str, path: str, text: str, tag: str | None = None) -> None:
        if ids:  # an unborn branch cannot be checked out
            git(repo, "checkout", "-q", branch)
        write(repo, path, text)
        at(monkeypatch, number)
        commit(repo, label)
        ids[head(repo)] = label
        if tag:
            git(repo, "tag", "-a", "-m", tag, tag)

    fetch = f"{MSG}/FetchRequest.json"
    step("t1", 1, "trunk", fetch, spec("Fetch"))
    git(repo, "branch", "1.0", "trunk")
    step("r1", 2, "1.0", "gradle.properties", "version=1.0.0\n", tag="1.0.0")
    step("t2", 3, "trunk", fetch, spec("Fetch", "0-1"))
    git(repo, "branch", "2.0", "trunk")
    step("r2", 4, "2.0", "gradle.properties", "version=2.0.0\n", tag="2.0.0")
    step("r3", 5, "1.0", "gradle.properties", "version=1.0.1\n", tag="1.0.1")  # a bug-fix release after 2.0.0
    step("t3", 6, "trunk", fetch, spec("Fetch", "0-2"))
    history = extract(repo)
    assert list(history.releases) == ["1.0.0", "1.0.1", "2.0.0"]  # version order
    assert [(ids[r.commit], r.release) for r in history.revisions] == [("t1", "1.0.0"), ("t2", "2.0.0"), ("t3", None)]
    # t3 changes what 2.0.0 shipped: the highest version tagged before it, though 1.0.1 is newer
    assert [(ids[p.old.commit], ids[p.new.commit], p.released_in) for p in history.pairs] == [
        ("t1", "t2", "1.0.0"), ("t2", "t3", "2.0.0")]
    assert set(history.release_specs("2.0.0")) == {fetch}


def test_a_branch_merged_without_net_change_is_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git log's default simplification would skip a side branch whose merge changes nothing."""
    isolate_git(monkeypatch, tmp_path)
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "trunk", str(repo))
    fetch = f"{MSG}/FetchRequest.json"
    for label, number, text in [("m1", 1, spec("Fetch")), ("f1", 2, spec("Fetch", "0-1")), ("f2", 3, spec("Fetch"))]:
        write(repo, fetch, text)
        at(monkeypatch, number)
        commit(repo, label)
        if label == "m1":
            git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "checkout", "-q", "trunk")
    at(monkeypatch, 4)
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "feature")
    labels = {git(repo, "rev-parse", f"trunk~{n}" if n else "trunk^2").strip(): label
              for n, label in [(1, "m1"), (0, "f2")]}
    labels[git(repo, "rev-parse", "trunk^2~1").strip()] = "f1"
    history = extract(repo)
    assert [(labels[r.commit], r.status) for r in history.revisions] == [("m1", "A"), ("f1", "M"), ("f2", "M")]
    assert [(labels[p.old.commit], labels[p.new.commit]) for p in history.pairs] == [("m1", "f1"), ("f1", "f2")]
