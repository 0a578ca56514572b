"""Compat on real Kafka releases (../shared/kafka-specs): no crash, every wire break proven by bytes,
and the verdicts match what happened in Kafka's history (checked by reading the spec files)."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import require_shared
from test_compat_cases import assert_reproduces

from linter.compat.compare import CompatResult, _header_specs, compare
from linter.compat.diff import MessageDiff
from linter.compat.sources import read_revision
from linter.compat.witness import CrossCodec, Headers
from linter.vocabulary import Category

_RESULTS: dict[tuple[str, str], CompatResult] = {}


def _compare(old: str, new: str) -> CompatResult:
    if (old, new) not in _RESULTS:
        _RESULTS[(old, new)] = compare(read_revision(str(require_shared("kafka-specs", old))),
                                       read_revision(str(require_shared("kafka-specs", new))))
    return _RESULTS[(old, new)]


RELEASES = [("3.7.0", "trunk-2024-10"), ("2.8.0", "3.7.0")]


@pytest.mark.parametrize(("old", "new"), RELEASES)
def test_every_pair_is_compared(old: str, new: str) -> None:
    result = _compare(old, new)
    assert len(result.pairs) > 150
    assert [(p.old_file, p.new_file, p.error) for p in result.pairs if p.error] == []


@pytest.mark.parametrize(("old", "new"), RELEASES)
def test_every_wire_break_has_a_reproducible_witness(old: str, new: str) -> None:
    breaks = [(pair, change) for pair, change in _compare(old, new).changes() if change.category == Category.WIRE_BREAKING]
    assert breaks
    for pair, change in breaks:
        assert change.witness is not None, f"{change.message_name}: {change.message}"
        assert_reproduces(pair.old, pair.new, change.witness)


@pytest.mark.parametrize(("old", "new"), RELEASES)
def test_cross_check_finds_no_divergence_from_the_verdicts(old: str, new: str) -> None:
    rules = Counter(change.rule for _, change in _compare(old, new).changes())
    assert rules["cross-check-divergence"] == 0


@pytest.mark.parametrize(("old", "new"), RELEASES)
def test_versions_left_out_of_the_cross_check_read_back_as_written(old: str, new: str) -> None:
    """compare() skips the cross-check of a version whose layouts are the same wire, names included
    (``layout.same_wire``); run it there anyway, with more values than compat uses: nothing diverges."""
    result = _compare(old, new)
    headers = Headers(_header_specs(result.old), _header_specs(result.new))
    checked = 0
    for pair in result.pairs:
        if pair.old is None or pair.new is None or pair.error or pair.old.raw == pair.new.raw:
            continue
        diff = MessageDiff(pair.old, pair.new)
        diff.run()
        cross = CrossCodec(pair.old, pair.new, diff.renames, diff.old_version, headers)
        for version in sorted(diff.same_wire):
            assert cross.search(version, 8, seed=version) is None, f"{pair.new.name} v{version}"
            checked += 1
    assert checked > 100  # the skip is common: a change to a spec leaves most of its versions alone


def _by_rule(result: CompatResult, rule: str) -> dict[str, list[tuple[int, ...]]]:
    out: dict[str, list[tuple[int, ...]]] = {}
    for _, change in result.changes():
        if change.rule == rule:
            out.setdefault(change.message_name, []).append(change.versions)
    return out


def test_2_8_to_3_7_metadata_records_became_flexible() -> None:
    """KRaft's records were non-flexible in 2.8.0 (early access) and 0+ flexible from 3.0."""
    flexible = _by_rule(_compare("2.8.0", "3.7.0"), "flexible-versions-changed")
    assert {"PartitionRecord", "TopicRecord", "RegisterBrokerRecord"} <= set(flexible)
    assert all(versions == [(0,)] for versions in flexible.values())


def test_2_8_to_3_7_removed_record_and_renames() -> None:
    result = _compare("2.8.0", "3.7.0")
    assert "AccessControlRecord" in _by_rule(result, "message-removed")
    renamed = _by_rule(result, "field-renamed")["AddPartitionsToTxnResponse"]
    assert (0, 1, 2, 3) in renamed  # Results -> ResultsByTopicV3AndBelow, same bytes


def test_3_7_to_trunk_unstable_versions_are_not_released() -> None:
    """ConsumerGroupDescribe v0 was unstable in 3.7.0: its changes are informational."""
    result = _compare("3.7.0", "trunk-2024-10")
    describe = [c for _, c in result.changes() if c.message_name == "ConsumerGroupDescribeResponse"
                and c.category == Category.WIRE_BREAKING]
    assert describe and all(not c.released for c in describe)
    released_breaks = {c.message_name for _, c in result.changes() if c.category == Category.WIRE_BREAKING and c.released}
    assert released_breaks and all(name.startswith("ConsumerGroup") for name in released_breaks)
