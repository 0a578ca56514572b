"""Revisions from command-line arguments: files, directories and git trees, in real repositories."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from support.gitrepo import commit, git, init_repo, isolate_git, write

from linter.compat.sources import READ_LIMIT, SourceError, against, read_revision
from linter.parse.document import MAX_SPEC_BYTES

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FOO = '{"name": "FooRequest", "apiKey": 1}\n'
BAR = '{"name": "BarResponse", "apiKey": 2}\n'


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with specs in nested, hidden and generated directories, and a non-spec file."""
    root = init_repo(tmp_path / "repo")
    write(root, "specs/FooRequest.json", FOO)
    write(root, "specs/nested/BarResponse.json", BAR)
    write(root, "specs/README.md", "not a spec")
    write(root, "specs/.hidden/Secret.json", "{}")
    write(root, "specs/build/Generated.json", "{}")
    write(root, "top.json", "{}")
    commit(root, "first")
    return root


# -- disk ---------------------------------------------------------------------------------


def test_file_is_keyed_by_name_and_displayed_as_typed(repo: Path) -> None:
    revision = read_revision("specs/FooRequest.json", cwd=repo)
    assert revision.files == {"FooRequest.json": FOO.encode()}
    assert revision.prefix == "specs/"
    assert revision.label == "specs/FooRequest.json"
    assert revision.display("FooRequest.json") == "specs/FooRequest.json"
    assert read_revision("top.json", cwd=repo).display("top.json") == "top.json"


def test_directory_is_recursive_and_skips_hidden_generated_non_json_and_non_specs(tmp_path: Path) -> None:
    write(tmp_path, "d/X.json", FOO)
    write(tmp_path, "d/nested/deep/Y.json", FOO)
    write(tmp_path, "d/nested/src/main/resources/common/message/Broken.json", "[]")  # a spec location: kept
    for skipped in (".hidden/Z.json", ".git/G.json", ".venv/V.json", "node_modules/N.json", "build/B.json"):
        write(tmp_path, f"d/{skipped}", FOO)
    write(tmp_path, "d/notes.txt", "x")
    write(tmp_path, "d/X.json.bak", "x")
    write(tmp_path, "d/workload.json", '{"class": "org.apache.kafka.trogdor.workload.ProduceBenchSpec"}')
    revision = read_revision("d", cwd=tmp_path)
    assert list(revision.files) == ["X.json", "nested/deep/Y.json", "nested/src/main/resources/common/message/Broken.json"]
    assert revision.files["nested/deep/Y.json"] == FOO.encode()
    assert revision.display("nested/deep/Y.json") == "d/nested/deep/Y.json"
    assert read_revision("d/", cwd=tmp_path).prefix == "d/"  # no doubled slash


def test_oversize_file_is_kept_just_past_the_limit_so_the_parser_reports_it(tmp_path: Path) -> None:
    (tmp_path / "Big.json").write_bytes(b" " * (MAX_SPEC_BYTES + 100))
    revision = read_revision("Big.json", cwd=tmp_path)
    assert len(revision.files["Big.json"]) == READ_LIMIT
    assert "larger than" in revision.unreadable()["Big.json"]


def test_existing_path_wins_over_ref_colon_path(repo: Path) -> None:
    write(repo, "HEAD:odd.json", '{"on": "disk"}')
    revision = read_revision("HEAD:odd.json", cwd=repo)
    assert revision.files == {"HEAD:odd.json": b'{"on": "disk"}'}


def test_missing_path_says_so(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as caught:
        read_revision("nope.json", cwd=tmp_path)
    assert str(caught.value) == "nope.json: no such file or directory"


# -- REF:path -----------------------------------------------------------------------------


def test_ref_file_reads_the_committed_bytes(repo: Path) -> None:
    write(repo, "specs/FooRequest.json", '{"name": "Changed"}')
    revision = read_revision("HEAD:specs/FooRequest.json", cwd=repo)
    assert revision.files == {"FooRequest.json": FOO.encode()}
    assert revision.label == "HEAD:specs/FooRequest.json"
    assert revision.display("FooRequest.json") == "HEAD:specs/FooRequest.json"


def test_ref_directory_lists_specs_with_the_same_filter_as_disk(repo: Path) -> None:
    revision = read_revision("HEAD:specs", cwd=repo)
    assert revision.files == {"FooRequest.json": FOO.encode(), "nested/BarResponse.json": BAR.encode()}
    assert revision.display("nested/BarResponse.json") == "HEAD:specs/nested/BarResponse.json"
    assert revision.files == read_revision("specs", cwd=repo).files


def test_ref_with_empty_path_is_the_whole_tree(repo: Path) -> None:
    revision = read_revision("HEAD:", cwd=repo)
    assert list(revision.files) == ["specs/FooRequest.json", "specs/nested/BarResponse.json"]  # top.json is no spec
    assert revision.label == "HEAD:"
    assert revision.display("specs/FooRequest.json") == "HEAD:specs/FooRequest.json"
    assert read_revision("HEAD:top.json", cwd=repo).files == {"top.json": b"{}"}  # named: always read


def test_ref_path_is_relative_to_the_top_and_dot_slash_to_cwd(repo: Path) -> None:
    inside = repo / "specs"
    relative = read_revision("HEAD:./nested", cwd=inside)
    assert relative.files == {"BarResponse.json": BAR.encode()}
    assert relative.display("BarResponse.json") == "HEAD:./nested/BarResponse.json"
    assert read_revision("HEAD:specs/nested", cwd=inside).files == relative.files
    with pytest.raises(SourceError, match="nested does not exist at HEAD"):
        read_revision("HEAD:nested", cwd=inside)


def test_oversize_blob_is_capped_and_the_next_blob_still_reads_whole(repo: Path) -> None:
    (repo / "big").mkdir()
    (repo / "big/A_Big.json").write_bytes(b'{"name": "Big", "apiKey": 1, ' + b" " * (MAX_SPEC_BYTES + 5000))
    write(repo, "big/B_Small.json", BAR)
    commit(repo)
    revision = read_revision("HEAD:big", cwd=repo)
    assert len(revision.files["A_Big.json"]) == READ_LIMIT  # a spec by its head, read to the parser's limit
    assert revision.files["B_Small.json"] == BAR.encode()  # the stream stayed in step past the skipped bytes


def test_path_missing_at_ref(repo: Path) -> None:
    with pytest.raises(SourceError) as caught:
        read_revision("HEAD:specs/Missing.json", cwd=repo)
    assert str(caught.value) == "specs/Missing.json does not exist at HEAD"


def test_dot_slash_path_cannot_leave_the_repository(repo: Path) -> None:
    with pytest.raises(SourceError, match="outside the git repository"):
        read_revision("HEAD:./../elsewhere", cwd=repo)


def test_unknown_ref_says_how_to_fetch(repo: Path) -> None:
    with pytest.raises(SourceError) as caught:
        read_revision("origin/trunk:specs", cwd=repo)
    message = str(caught.value)
    assert message.startswith("unknown git revision 'origin/trunk'")
    assert '"git fetch origin trunk"' in message
    assert "fetch-depth: 0" in message


def test_unknown_ref_in_a_shallow_clone_says_it_is_shallow(repo: Path, tmp_path: Path) -> None:
    write(repo, "specs/FooRequest.json", '{"name": "FooRequest", "apiKey": 11}')
    commit(repo, "second")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", repo.as_uri(), str(clone))
    assert "FooRequest.json" in read_revision("HEAD:specs", cwd=clone).files  # the tip is there
    with pytest.raises(SourceError) as caught:
        read_revision("HEAD~1:specs", cwd=clone)
    message = str(caught.value)
    assert "shallow clone" in message
    assert "git fetch --unshallow" in message
    assert "fetch-depth: 0" in message


@pytest.mark.parametrize("ref", ["--output=stolen", "-c"])
def test_ref_starting_with_dash_is_refused(repo: Path, ref: str) -> None:
    with pytest.raises(SourceError, match="cannot start with '-'"):
        read_revision(f"{ref}:specs", cwd=repo)
    with pytest.raises(SourceError, match="cannot start with '-'"):
        against(ref, cwd=repo)
    assert not (repo / "stolen").exists()


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(SourceError, match="not inside one") as caught:
        read_revision("HEAD:specs", cwd=plain)
    assert "HEAD:specs: no such file or directory" in str(caught.value)
    with pytest.raises(SourceError, match="--against HEAD needs a git repository"):
        against("HEAD", cwd=plain)


def test_git_not_installed(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-programs"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SourceError, match="install git"):
        read_revision("HEAD:specs", cwd=repo)


# -- against ------------------------------------------------------------------------------


def test_against_pairs_the_same_keys_on_both_sides(repo: Path) -> None:
    write(repo, "specs/FooRequest.json", '{"name": "FooRequest", "apiKey": 99}')
    write(repo, "specs/NewRequest.json", '{"name": "NewRequest", "apiKey": 3}')  # untracked: only on the new side
    old, new = against("HEAD", ["specs"], cwd=repo)
    paired = ["specs/FooRequest.json", "specs/nested/BarResponse.json"]
    assert list(old.files) == paired
    assert list(new.files) == ["specs/FooRequest.json", "specs/NewRequest.json", "specs/nested/BarResponse.json"]
    assert old.files["specs/FooRequest.json"] == FOO.encode()
    assert new.files["specs/FooRequest.json"] == b'{"name": "FooRequest", "apiKey": 99}'
    assert old.display("specs/FooRequest.json") == "HEAD:specs/FooRequest.json"
    assert new.display("specs/FooRequest.json") == "specs/FooRequest.json"
    assert (old.label, new.label) == ("HEAD", "working tree")


def test_against_from_a_subdirectory_keys_relative_to_cwd(repo: Path) -> None:
    inside = repo / "specs"
    old, new = against("HEAD", cwd=inside)
    assert list(old.files) == list(new.files) == ["FooRequest.json", "nested/BarResponse.json"]
    shown = old.display("FooRequest.json")
    assert shown == "HEAD:./FooRequest.json"
    assert git(inside, "show", shown) == FOO  # git reads the displayed name back to the same file


def test_against_merges_several_paths(repo: Path) -> None:
    (repo / "top.json").unlink()  # deleted since HEAD: only on the old side
    old, new = against("HEAD", ["specs/nested", "top.json"], cwd=repo)
    assert list(old.files) == ["specs/nested/BarResponse.json", "top.json"]
    assert list(new.files) == ["specs/nested/BarResponse.json"]


def test_against_path_missing_on_both_sides(repo: Path) -> None:
    with pytest.raises(SourceError, match="neither in the working tree nor at HEAD"):
        against("HEAD", ["nowhere"], cwd=repo)


def test_against_unknown_ref(repo: Path) -> None:
    with pytest.raises(SourceError, match="unknown git revision 'origin/trunk'.*git fetch origin trunk"):
        against("origin/trunk", ["specs"], cwd=repo)


def test_head_before_the_first_commit_is_empty_so_everything_is_added(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "new-repo")
    write(root, "specs/FooRequest.json", FOO)
    old, new = against("HEAD", ["specs"], cwd=root)
    assert old.files == {} and list(new.files) == ["specs/FooRequest.json"]
    with pytest.raises(SourceError, match="unknown git revision 'main'"):
        against("main", ["specs"], cwd=root)


def test_without_paths_every_spec_of_the_tree_is_compared_and_other_json_is_not(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "kafka")
    specs = ["clients/src/main/resources/common/message/FooRequest.json",
             "clients/src/test/resources/common/message/BarResponse.json",
             "metadata/src/main/resources/common/metadata/BarRecord.json",
             "storage/src/main/resources/message/BazRecord.json"]
    for rel in specs:
        write(root, rel, FOO)
    write(root, "core/src/main/resources/common/message/MovedRecord.json", FOO)  # its module goes away below
    for rel in ("clients/src/main/resources/other/X.json", "tests/spec/workload.json", "package.json"):
        write(root, rel, '{"class": "Workload", "durationMs": 1000}')
    commit(root)
    (root / "core/src/main/resources/common/message/MovedRecord.json").unlink()
    old, new = against("HEAD", cwd=root)
    assert sorted(new.files) == sorted(specs)
    assert sorted(old.files) == sorted([*specs, "core/src/main/resources/common/message/MovedRecord.json"])
    assert "package.json" in new.others and "tests/spec/workload.json" in old.others


def test_symlinks_are_skipped_on_both_sides_so_they_pair(repo: Path) -> None:
    (repo / "specs/Link.json").symlink_to("FooRequest.json")
    commit(repo)
    old, new = against("HEAD", ["specs"], cwd=repo)
    assert "specs/Link.json" not in old.files
    assert list(old.files) == list(new.files)


def test_read_specs_reads_regular_files_only(tmp_path: Path) -> None:
    """The texts shipped to Spark workers are read as lint reads specs: a FIFO named as SPECS is refused, never
    read (a read would wait for a writer forever)."""
    import os

    from linter.compat.sources import read_specs
    from linter.parse.files import InputError

    fifo = tmp_path / "Spec.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_specs(fifo)
    assert sorted(read_specs(REPO_ROOT / "fixtures" / "valid").files)[:1] == ["BlobPushRequest.json"]
