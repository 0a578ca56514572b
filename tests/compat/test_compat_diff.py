"""Unit cases of the layout comparison that the labelled pairs do not cover."""

from __future__ import annotations

import json

from linter.compat.diff import compare_messages, primary
from linter.compat.witness import CrossCodec
from linter.model.spec import build_message

WRAPPED = {"type": "data", "name": "ExampleRecord", "validVersions": "0-1", "flexibleVersions": "none",
           "fields": [{"name": "F1", "type": "S1", "versions": "0+",
                       "fields": [{"name": "F2", "type": "int32", "versions": "0+"}]}]}


def _changes(old: dict, new: dict):
    return compare_messages(build_message(old, "old.json"), build_message(new, "new.json"))


def _edited(spec: dict, old: str, new: str) -> dict:
    return json.loads(json.dumps(spec).replace(old, new))


def test_inlined_wrapper_struct_changes_are_source_only_in_every_version() -> None:
    for flexible in ("none", "1+"):
        old = {**WRAPPED, "flexibleVersions": flexible}
        changes = _changes(old, _edited(old, '"S1"', '"S2"'))
        assert primary(changes) == ("SOURCE_ONLY", [0, 1]), changes


def test_same_name_renames_at_two_levels_do_not_collide() -> None:
    """A rename of an outer field and of an inner field with the old outer name (AddPartitionsToTxn)."""
    old = {"type": "data", "name": "R", "validVersions": "0", "flexibleVersions": "none", "fields": [
        {"name": "Results", "type": "[]Topic", "versions": "0", "fields": [
            {"name": "Name", "type": "string", "versions": "0"},
            {"name": "Results", "type": "[]int32", "versions": "0"}]}]}
    new = _edited(old, '"name": "Results", "type": "[]Topic"', '"name": "ByTopic", "type": "[]Topic"')
    new = _edited(new, '"name": "Results", "type": "[]int32"', '"name": "ByPartition", "type": "[]int32"')
    old_spec, new_spec = build_message(old, "old.json"), build_message(new, "new.json")
    changes = compare_messages(old_spec, new_spec)
    assert primary(changes)[0] == "SOURCE_ONLY"
    renames = {(c.message) for c in changes if c.rule == "field-renamed"}
    assert renames == {"Results renamed to ByTopic", "ByTopic[].Results renamed to ByPartition"}


def test_cross_codec_sees_a_swap_but_not_a_rename() -> None:
    old = {"type": "data", "name": "R", "validVersions": "0", "flexibleVersions": "0+", "fields": [
        {"name": "A", "type": "int32", "versions": "0"}, {"name": "B", "type": "int32", "versions": "0"}]}
    swapped = _edited(_edited(_edited(old, '"A"', '"X"'), '"B"', '"A"'), '"X"', '"B"')
    cross = CrossCodec(build_message(old, "o"), build_message(swapped, "n"), {})
    witness = cross.search(0, attempts=16)
    assert witness is not None and "is read as" in witness.reason
    renamed = _edited(old, '"B"', '"C"')
    cross = CrossCodec(build_message(old, "o"), build_message(renamed, "n"), {("", "B"): "C"})
    assert cross.search(0, attempts=16) is None
