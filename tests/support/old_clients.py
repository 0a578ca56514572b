"""Captures of real clients pinned to old protocol versions, for ``krpc-lint readiness`` (issue 28).

Kafka 4.0 removed old API versions (KIP-896); a readiness test needs traffic that really uses them, sent by
real clients, not frames this project encoded. ``bench/captures.py`` makes it: kafka-python with
``api_version=(0, 10)`` and confluent-kafka (librdkafka) with ``api.version.request=false`` and
``broker.version.fallback=0.9.0``, each against librdkafka's mock cluster, under tcpdump on loopback. Where
that cannot run (no capture rights, clients not installed), the committed ``fixtures/captures/`` files of the
same scenarios stand in: they were made by the same script.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CAPTURES = REPO_ROOT / "fixtures" / "captures"
SCRIPT = REPO_ROOT / "bench" / "captures.py"
#: the old-client scenarios of bench/captures.py, which takes its OLD_NAMES from here; no dots: a sidecar is
#: named by what precedes one
OLD_CLIENTS: tuple[str, ...] = ("kafka-python-0_10", "librdkafka-0_9")
CLIENT_MODULES = ("confluent_kafka", "kafka")  # confluent-kafka also runs the mock broker
TIMEOUT = 300


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


def why_not_live(modules: tuple[str, ...] = CLIENT_MODULES) -> str | None:
    """Why clients (the old ones by default; ``modules``: the Python modules a scenario needs) cannot be
    captured here, or None when they can."""
    reason = can_capture_on_loopback()
    if reason is None and not all(importlib.util.find_spec(module) for module in modules):
        reason = f"{', '.join(modules)} (the test extras) are not installed"
    return reason


def committed_captures() -> list[Path]:
    """The committed captures of the old clients, in OLD_CLIENTS order."""
    return [CAPTURES / f"{name}.pcap" for name in OLD_CLIENTS]


def make_captures(out_dir: Path, names: tuple[str, ...] = OLD_CLIENTS) -> list[Path]:
    """Run bench/captures.py for the scenarios ``names`` (the old clients by default) into ``out_dir``, with
    tshark's reading beside each capture (``NAME.tshark.jsonl``) where tshark is installed, as for the fixtures;
    AssertionError if it fails."""
    done = subprocess.run([sys.executable, str(SCRIPT), str(out_dir), "--clients", *names, "--no-variants"],
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, f"bench/captures.py failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    made = [out_dir / f"{name}.pcap" for name in names]
    missing = [path.name for path in made if not path.is_file() or path.stat().st_size == 0]
    assert not missing, f"bench/captures.py exited 0 without writing {missing}:\n{done.stdout[-3000:]}"
    return made


def old_client_captures(tmp_path: Path) -> list[Path]:
    """Captures of the old clients made now with bench/captures.py when tcpdump can capture on lo (and the
    clients are installed); else the committed fixtures. Where capturing is possible but fails: AssertionError.
    Either way each has its tshark reading beside it where tshark is installed (``support.tshark.committed``)."""
    if why_not_live() is not None:
        return committed_captures()
    return make_captures(tmp_path)
