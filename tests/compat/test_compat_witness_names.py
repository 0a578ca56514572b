"""Issue 15: a witness names the change that causes it, not only the first field its bytes upset.

Every witness the compat fixtures produce (``fixtures/compat/**`` and ``../shared/compat-cases``)
must name the field its finding is about, and the first field read differently when there is one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared, shared_path

from linter.compat.api import compare_result
from linter.compat.compare import CompatResult
from linter.compat.report import to_report
from linter.compat.revision import Revision
from linter.compat.witness_cause import Cause, explain
from linter.report.formats import render_text
from linter.vocabulary import Category

FIXTURES = REPO_ROOT / "fixtures" / "compat"
DEMO = FIXTURES / "demo"


def _fixture_pairs() -> list[Path]:
    """Every directory under fixtures/compat holding an ``old`` and a ``new`` revision."""
    return sorted(old.parent for old in FIXTURES.rglob("old") if (old.parent / "new").is_dir())


def _shared_cases() -> list[str]:
    index = shared_path() / "compat-cases" / "expected.jsonl"
    if not index.exists():
        return ["missing"]  # one placeholder: the test then skips (or fails in CI) with the reason
    return [json.loads(line)["case"] for line in index.read_text().splitlines() if line.strip()]


def _case_side(case: Path, name: str) -> Revision:
    path = case / name
    return Revision(name, {"Spec.json": path.read_bytes()} if path.exists() else {}, f"{case}/")


def _witness_text(witness: dict) -> str:
    return witness.get("error") or witness.get("reason") or ""


def _assert_witnesses_name_their_cause(result: CompatResult) -> int:
    """Each wire break's witness names the field of its change (and that field is the finding's), and
    the first field read differently when it has one; returns how many witnesses were checked."""
    checked = 0
    for _, change in result.changes():
        if change.category != Category.WIRE_BREAKING or change.witness is None:
            continue
        witness = change.witness.to_dict()
        text, cause = _witness_text(witness), witness.get("cause")
        assert {"version", "writer", "hex"} <= set(witness)
        where = f"{change.rule} {change.message}: {text!r}"
        if change.rule == "cross-check-divergence":
            assert cause is None, where  # its cause is exactly what nobody knows
            continue
        assert cause, f"no cause: {where}"
        assert cause in text, f"the witness does not name {cause}: {where}"
        leaf = re.split(r"\[\]\.|\.", cause)[-1]
        assert leaf in change.message, f"{cause} is not what the finding is about: {where}"
        if witness.get("diverges_at"):
            assert witness["diverges_at"] in text, where
        checked += 1
    return checked


@pytest.mark.parametrize("pair", _fixture_pairs(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_witnesses_name_their_cause(pair: Path) -> None:
    _assert_witnesses_name_their_cause(compare_result(pair / "old", pair / "new"))


def test_fixtures_produce_witnesses_at_all() -> None:
    """Guards the test above against passing vacuously (a fixture layout change, a witness switched off)."""
    total = sum(_assert_witnesses_name_their_cause(compare_result(p / "old", p / "new")) for p in _fixture_pairs())
    assert total >= 10


@pytest.mark.parametrize("case", _shared_cases())
def test_shared_case_witnesses_name_their_cause(case: str) -> None:
    path = require_shared("compat-cases", "expected.jsonl" if case == "missing" else case)
    _assert_witnesses_name_their_cause(compare_result(_case_side(path, "old.json"), _case_side(path, "new.json")))


def test_max_wait_ms_witness_names_the_retyped_field_and_where_bytes_diverge() -> None:
    """The issue's example: MaxWaitMs int64 -> int32 (the demo pair, new to old)."""
    result = compare_result(DEMO / "new", DEMO / "old")
    [change] = [c for _, c in result.changes() if c.rule == "field-retyped"]
    witness = change.witness.to_dict()
    assert (witness["cause"], witness["cause_change"]) == ("MaxWaitMs", "MaxWaitMs int64 -> int32")
    assert witness["diverges_at"] and witness["diverges_at"] != "MaxWaitMs"  # the retype upsets a later field
    text = _witness_text(witness)
    assert text.startswith("MaxWaitMs int64 -> int32 shifts the bytes; "
                           f"the first field read differently is {witness['diverges_at']}: ")
    rendered = render_text(to_report(result))
    assert "MaxWaitMs int64 -> int32 shifts the bytes" in rendered


def test_wording_of_a_value_read_differently() -> None:
    """One place words every witness: the cause, whether it shifts the bytes, the first field read differently."""
    cause = Cause("MaxWaitMs", "MaxWaitMs int64 -> int32")
    assert explain("ReplicaId: wrote 0, read 1", "ReplicaId", "wrote 0, read 1", cause) == (
        "MaxWaitMs int64 -> int32 shifts the bytes; the first field read differently is ReplicaId: wrote 0, read 1")
    assert explain("Port: wrote -1, read 65535", "Port", "wrote -1, read 65535", Cause("Port", "Port int16 -> uint16")) \
        == "Port int16 -> uint16; the first field read differently is Port itself: wrote -1, read 65535"
    assert explain("byte 5: 8 trailing bytes after the message", None, "", Cause("Epoch", "Epoch (int64) removed")) \
        == "Epoch (int64) removed shifts the bytes: byte 5: 8 trailing bytes after the message"
    assert explain("ReplicaId: wrote 0, read 1", "ReplicaId", "wrote 0, read 1", None) == "ReplicaId: wrote 0, read 1"


def test_witness_keeps_its_keys_for_the_audit_schema() -> None:
    """``witness_version``/``witness_writer``/``witness_hex`` of the audit come from these keys."""
    result = compare_result(DEMO / "old", DEMO / "new")
    [change] = [c for _, c in result.changes() if c.rule == "field-retyped"]
    witness = change.witness.to_dict()
    assert {"version", "writer", "hex", "decoded_old", "cause", "cause_change", "diverges_at"} <= set(witness)
    assert "error" in witness or "decoded_new" in witness
