"""``Codec.from_files``: a codec of spec texts held in memory (what a Spark worker builds from the revision
shipped with its job) refuses, skips and names exactly what ``Codec.load`` of the same directory does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from linter.codec import Codec, SpecError
from linter.compat.sources import read_specs

VALID = REPO_ROOT / "fixtures" / "valid"
BROKEN = ("KL301-field-name-pattern.json", "KL001-json-syntax.json")


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """fixtures/valid with two specs Kafka's generator refuses beside them, one in a subdirectory."""
    specs = tmp_path / "specs"
    shutil.copytree(VALID, specs)
    (specs / "more").mkdir()
    shutil.copy(REPO_ROOT / "fixtures" / "invalid" / BROKEN[0], specs / BROKEN[0])
    shutil.copy(REPO_ROOT / "fixtures" / "invalid" / BROKEN[1], specs / "more" / BROKEN[1])
    return specs


def test_the_texts_of_a_directory_make_the_codec_its_path_does() -> None:
    from_disk, from_texts = Codec.load(VALID), Codec.from_files(read_specs(VALID).files)
    assert from_texts.names == from_disk.names and from_texts.skipped == ()
    for name in from_disk.names:
        spec = from_disk.spec(name)
        for version in spec.versions or ():
            value = from_disk.default(name, version)
            assert from_texts.encode(name, version, value) == from_disk.encode(name, version, value)


def test_the_same_files_are_refused_in_the_same_words(mixed: Path) -> None:
    with pytest.raises(SpecError) as on_disk:
        Codec.load(mixed)
    with pytest.raises(SpecError) as in_memory:
        Codec.from_files(read_specs(mixed).files)
    assert str(in_memory.value) == str(on_disk.value)
    assert str(on_disk.value).startswith("2 spec files have errors Kafka's generator refuses")


def test_allow_invalid_leaves_out_the_same_files(mixed: Path) -> None:
    from_disk = Codec.load(mixed, allow_invalid=True)
    from_texts = Codec.from_files(read_specs(mixed).files, allow_invalid=True)
    assert sorted(Path(name).name for name in from_texts.skipped) == sorted(BROKEN)
    assert sorted(Path(name).name for name in from_disk.skipped) == sorted(BROKEN)
    assert from_texts.names == from_disk.names == Codec.load(VALID).names


def test_no_texts_and_no_specs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no spec files or directories given"):
        Codec.from_files({})
    (tmp_path / "notes.json").write_text('{"not": "a spec"}')
    with pytest.raises(SpecError, match="no spec files here") as read:
        read_specs(tmp_path)
    with pytest.raises(SpecError) as loaded:
        Codec.load(tmp_path)
    assert str(read.value) == str(loaded.value)


def test_a_revision_is_known_by_its_files_not_where_they_were_read(mixed: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(mixed, tmp_path / "elsewhere")
    assert read_specs(copy).digest == read_specs(mixed).digest
    (copy / "more" / BROKEN[1]).write_text("{}")
    assert read_specs(copy).digest != read_specs(mixed).digest
