"""The real captures of issue 27 (``fixtures/captures/``): real clients against librdkafka's mock broker.

For now these check the fixtures themselves: each is a capture, tshark's reading of it is committed and
holds the requests the frames reader will be judged on, and tshark still reads the same where it is
installed. A second test makes a capture again with ``bench/captures.py``, as CI can (root, loopback).
The frames reader's own checks against these files come with it.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, unavailable
from support import tshark

CAPTURES = REPO_ROOT / "fixtures" / "captures"
NAMES = ["confluent-kafka", "kafka-python", "aiokafka", "kafkajs", "confluent-kafka-any", "confluent-kafka-snaplen96"]
PCAP_MAGIC = {bytes.fromhex(m) for m in ("a1b2c3d4", "d4c3b2a1", "a1b23c4d", "4d3cb2a1", "0a0d0d0a")}
# ApiVersions, Metadata, Produce, Fetch, FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetCommit
EXPECTED_KEYS = {18, 3, 0, 1, 10, 11, 14, 12, 8}
# what every client's capture holds: connect, produce, consume in a group, commit
EVERY_CLIENT = {18, 3, 0, 1, 10, 11, 14, 8}


def capture(name: str) -> Path:
    return CAPTURES / f"{name}.pcap"


def request_keys(pdus: list[dict[str, object]]) -> set[object]:
    return {pdu["api_key"] for pdu in pdus if pdu["kind"] == "request"}


@pytest.mark.parametrize("name", NAMES)
def test_fixture_is_a_small_capture(name: str) -> None:
    data = capture(name).read_bytes()
    assert data[:4] in PCAP_MAGIC
    assert 1000 < len(data) < 300_000


def test_fixtures_are_small_together() -> None:
    assert sum(capture(name).stat().st_size for name in NAMES) < 1_500_000


@pytest.mark.parametrize("name", NAMES)
def test_committed_tshark_reading(name: str) -> None:
    reading = tshark.committed(capture(name))
    assert reading["capture"] == f"{name}.pcap"
    requests = [pdu for pdu in reading["pdus"] if pdu["kind"] == "request"]
    responses = [pdu for pdu in reading["pdus"] if pdu["kind"] == "response"]
    assert len(requests) > 20 and responses
    assert EVERY_CLIENT <= request_keys(reading["pdus"])
    assert all({"api_key", "api_version", "correlation_id"} <= pdu.keys() for pdu in requests)


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


def can_capture_on_loopback() -> str | None:
    """Why tcpdump cannot capture on ``lo`` here, or None when it can (root or capture rights)."""
    if shutil.which("tcpdump") is None:
        return "tcpdump is not installed (.ci/run installs it)"
    probe = subprocess.Popen(["tcpdump", "-i", "lo", "-w", "/dev/null", "tcp port 9"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert probe.stderr is not None
        said = probe.stderr.readline()
        while said and "listening on" not in said and probe.poll() is None:
            said = probe.stderr.readline()
        return None if "listening on" in said else f"tcpdump cannot capture on lo: {said.strip()}"
    finally:
        probe.terminate()
        probe.wait(10)


def test_capture_made_again(tmp_path: Path) -> None:
    """bench/captures.py makes the aiokafka capture again: the same requests at the same versions."""
    reason = can_capture_on_loopback()
    if reason is None and not all(importlib.util.find_spec(m) for m in ("confluent_kafka", "aiokafka")):
        reason = "confluent-kafka and aiokafka (the test extras) are not installed"
    if reason is not None:
        unavailable(reason)
    done = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "captures.py"), str(tmp_path),
                           "--clients", "aiokafka", "--no-variants"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    made = tmp_path / "aiokafka.pcap"
    assert made.read_bytes()[:4] in PCAP_MAGIC
    if tshark.available():
        live = {(p["api_key"], p["api_version"]) for p in tshark.committed(made)["pdus"] if p["kind"] == "request"}
        kept = {(p["api_key"], p["api_version"]) for p in tshark.committed(capture("aiokafka"))["pdus"]
                if p["kind"] == "request"}
        assert {kv for kv in live if kv[0] in EVERY_CLIENT} == {kv for kv in kept if kv[0] in EVERY_CLIENT}
