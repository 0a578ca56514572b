"""``../shared/compat-cases``: every labelled OLD/NEW pair gets its primary category and versions,
and every wire break comes with a witness the codec reproduces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require_shared, shared_path

from linter.codec import Codec
from linter.codec.errors import DecodeError
from linter.compat.compare import compare
from linter.compat.diff import primary
from linter.compat.revision import Revision
from linter.vocabulary import Category

CASES_DIR = shared_path() / "compat-cases"


def _cases() -> list[dict]:
    index = CASES_DIR / "expected.jsonl"
    if not index.exists():
        return [{"case": "missing"}]  # one placeholder: the test then skips (or fails in CI) with the reason
    return [json.loads(line) for line in index.read_text().splitlines() if line.strip()]


def _side(case: Path, name: str) -> Revision:
    path = case / name
    return Revision(name, {"Spec.json": path.read_bytes()} if path.exists() else {}, f"{case}/")


def _result(expected: dict):
    case = require_shared("compat-cases", expected["case"])
    return compare(_side(case, "old.json"), _side(case, "new.json"))


@pytest.mark.parametrize("expected", _cases(), ids=lambda e: e["case"])
def test_primary_category_and_versions(expected: dict) -> None:
    result = _result(expected)
    assert all(pair.error is None for pair in result.pairs), [pair.error for pair in result.pairs]
    changes = [change for _, change in result.changes()]
    category, versions = primary(changes)
    shown = "\n".join(f"  {c.category} {c.rule} {c.versions} {c.message}" for c in changes)
    assert (category, versions) == (expected["primary"], expected["affected_versions"]), (
        f"{expected['case']}: {expected['note']}\nchanges:\n{shown}")


def _decode_json(codec: Codec, name: str, version: int, data: bytes):
    return codec.to_json(name, version, codec.decode(name, version, data))


@pytest.mark.parametrize("expected", [e for e in _cases() if e.get("primary") == Category.WIRE_BREAKING], ids=lambda e: e["case"])
def test_wire_breaks_have_witnesses_the_codec_reproduces(expected: dict) -> None:
    result = _result(expected)
    for pair, change in result.changes():
        if change.category != Category.WIRE_BREAKING:
            continue
        witness = change.witness
        assert witness is not None, f"{change.rule} {change.message} has no witness"
        if change.rule == "api-key-changed":
            assert witness.error and str(pair.old.api_key) in witness.error
            continue
        assert_reproduces(pair.old, pair.new, witness)


def assert_reproduces(old_spec, new_spec, witness) -> None:
    """The writer's revision reads its own bytes back; the reader's fails or reads what the witness says."""
    data = bytes.fromhex(witness.hex)
    codecs = {"old": (Codec([old_spec]), old_spec.name), "new": (Codec([new_spec]), new_spec.name)}
    shown = {"old": witness.decoded_old, "new": witness.decoded_new}
    reader = "new" if witness.writer == "old" else "old"
    writer_codec, writer_name = codecs[witness.writer]
    assert _decode_json(writer_codec, writer_name, witness.version, data) == shown[witness.writer]
    reader_codec, reader_name = codecs[reader]
    if witness.error is not None:
        with pytest.raises(DecodeError):
            reader_codec.decode(reader_name, witness.version, data)
    else:
        assert _decode_json(reader_codec, reader_name, witness.version, data) == shown[reader]
        assert witness.reason
