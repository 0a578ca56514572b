"""The real captures of issue 27 (``fixtures/captures/``): real clients against librdkafka's mock broker.

For now these check the fixtures themselves: each is a capture, tshark's reading of it is committed and
holds the requests the frames reader will be judged on, and tshark still reads the same where it is
installed. Two more make captures again with ``bench/captures.py``, as CI can (root, loopback): aiokafka's,
and the old clients' (pinned to versions Kafka 4.0 removed, for ``krpc-lint readiness``: ``support.old_clients``).
The frames reader's own checks against these files come with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import unavailable
from support import old_clients, tshark
from support.old_clients import CAPTURES, OLD_CLIENTS, make_captures, why_not_live

MODERN = ["confluent-kafka", "kafka-python", "aiokafka", "kafkajs", "confluent-kafka-any", "confluent-kafka-snaplen96"]
NAMES = MODERN + list(OLD_CLIENTS)
PCAP_MAGIC = {bytes.fromhex(m) for m in ("a1b2c3d4", "d4c3b2a1", "a1b23c4d", "4d3cb2a1", "0a0d0d0a")}
# ApiVersions, Metadata, Produce, Fetch, FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetCommit
EXPECTED_KEYS = {18, 3, 0, 1, 10, 11, 14, 12, 8}
# what every client's capture holds: connect, produce, consume in a group, commit
EVERY_CLIENT = {18, 3, 0, 1, 10, 11, 14, 8}
# what every old client's capture holds: those less ApiVersions (librdkafka 0.9 sends none), plus ListOffsets
EVERY_OLD_CLIENT = {3, 0, 1, 2, 10, 11, 14, 8}
# the lowest version Kafka 4.3 accepts (validVersions of ProduceRequest.json 3-13, FetchRequest.json 4-18,
# ListOffsetsRequest.json 1-11 in /work/shared/kafka-specs/4.3): an old client sends each of these below it
FLOOR_4_3 = {0: 3, 1: 4, 2: 1}


def capture(name: str) -> Path:
    return CAPTURES / f"{name}.pcap"


def request_keys(pdus: list[dict[str, object]]) -> set[object]:
    return {pdu["api_key"] for pdu in pdus if pdu["kind"] == "request"}


def request_pairs(pdus: list[dict[str, object]]) -> set[tuple[object, object]]:
    return {(pdu["api_key"], pdu["api_version"]) for pdu in pdus if pdu["kind"] == "request"}


def expected_keys(name: str) -> set[int]:
    """The API keys a capture of this client must hold: old clients run other calls than modern ones."""
    return EVERY_OLD_CLIENT if name in OLD_CLIENTS else EVERY_CLIENT


def removed_pairs(pairs: set[tuple[object, object]]) -> set[tuple[object, object]]:
    """The (api_key, api_version) pairs below Kafka 4.3's floor among those FLOOR_4_3 names."""
    return {(key, version) for key, version in pairs
            if isinstance(key, int) and isinstance(version, int) and version < FLOOR_4_3.get(key, 0)}


@pytest.mark.parametrize("name", NAMES)
def test_fixture_is_a_small_capture(name: str) -> None:
    data = capture(name).read_bytes()
    assert data[:4] in PCAP_MAGIC
    assert 1000 < len(data) < 300_000


@pytest.mark.parametrize("name", OLD_CLIENTS)
def test_old_client_fixture_is_under_150_kb(name: str) -> None:
    assert capture(name).stat().st_size < 150_000


def test_fixtures_are_small_together() -> None:
    assert sum(capture(name).stat().st_size for name in NAMES) < 1_500_000


@pytest.mark.parametrize("name", NAMES)
def test_committed_tshark_reading(name: str) -> None:
    reading = tshark.committed(capture(name))
    assert reading["capture"] == f"{name}.pcap"
    requests = [pdu for pdu in reading["pdus"] if pdu["kind"] == "request"]
    responses = [pdu for pdu in reading["pdus"] if pdu["kind"] == "response"]
    assert len(requests) > 20 and responses
    assert expected_keys(name) <= request_keys(reading["pdus"])
    assert all({"api_key", "api_version", "correlation_id"} <= pdu.keys() for pdu in requests)


@pytest.mark.parametrize("name", OLD_CLIENTS)
def test_old_clients_send_only_removed_produce_fetch_and_list_offsets(name: str) -> None:
    """Each old capture holds Produce, Fetch and ListOffsets requests, all below 4.3's floor, none at a kept version."""
    pairs = request_pairs(tshark.committed(capture(name))["pdus"])
    floored = {(key, version) for key, version in pairs if key in FLOOR_4_3}
    assert {key for key, _ in floored} == set(FLOOR_4_3)
    assert removed_pairs(pairs) == floored


def test_modern_clients_send_no_removed_versions() -> None:
    """The contrast the readiness tests rely on: no modern capture holds a request below 4.3's floor."""
    for name in MODERN:
        pairs = request_pairs(tshark.committed(capture(name))["pdus"])
        assert not removed_pairs(pairs), name


def test_committed_readings_cover_the_group_protocol() -> None:
    seen = set().union(*(request_keys(tshark.committed(capture(name))["pdus"]) for name in NAMES))
    assert EXPECTED_KEYS <= seen


@pytest.mark.parametrize("name", NAMES)
def test_live_tshark_reads_what_was_committed(name: str) -> None:
    if not tshark.available():
        unavailable("tshark is not installed (.ci/run installs it)")
    committed = tshark.committed(capture(name))
    if tshark.version() == committed["tshark"]:
        assert tshark.kafka_pdus(capture(name), committed["port"]) == committed["pdus"]
    else:  # another dissector may read bodies differently; the request headers are what the checks use
        assert tshark.request_headers(capture(name), committed["port"]) == [
            (p["api_key"], p["api_version"], p["correlation_id"]) for p in committed["pdus"] if p["kind"] == "request"
        ]


def test_capture_made_again(tmp_path: Path) -> None:
    """bench/captures.py makes the aiokafka capture again: the same requests at the same versions."""
    reason = why_not_live(("confluent_kafka", "aiokafka"))
    if reason is not None:
        unavailable(reason)
    (made,) = make_captures(tmp_path, ("aiokafka",))
    assert made.read_bytes()[:4] in PCAP_MAGIC
    if tshark.available():
        live = request_pairs(tshark.committed(made)["pdus"])
        kept = request_pairs(tshark.committed(capture("aiokafka"))["pdus"])
        assert {kv for kv in live if kv[0] in EVERY_CLIENT} == {kv for kv in kept if kv[0] in EVERY_CLIENT}


def test_old_client_captures_fall_back_to_the_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the clients cannot be captured, the readiness tests get the committed captures, all of them."""
    monkeypatch.setattr(old_clients, "why_not_live", lambda: "tcpdump cannot capture on lo: test")
    found = old_clients.old_client_captures(tmp_path)
    assert found == [capture(name) for name in OLD_CLIENTS]
    assert all(path.read_bytes()[:4] in PCAP_MAGIC for path in found)
    assert not any(tmp_path.iterdir())


def test_old_clients_captured_again(tmp_path: Path) -> None:
    """bench/captures.py makes the old clients' captures again: the same calls at the same old versions."""
    reason = why_not_live()
    if reason is None and not tshark.available():
        reason = "tshark is not installed (.ci/run installs it)"
    if reason is not None:
        unavailable(reason)
    for name, made in zip(OLD_CLIENTS, make_captures(tmp_path), strict=True):
        assert made.read_bytes()[:4] in PCAP_MAGIC
        live = {(key, version) for key, version, _ in tshark.request_headers(made) if key in EVERY_OLD_CLIENT}
        kept = {kv for kv in request_pairs(tshark.committed(capture(name))["pdus"]) if kv[0] in EVERY_OLD_CLIENT}
        assert live == kept, name
