"""Capture reading speed: ``krpc-lint frames extract`` on a ~100 MB capture, side by side with its floor, a
process that only parses the Ethernet/IP/TCP headers of every packet with the same library (dpkt).

    python bench/extract.py [--megabytes 100] [--runs 3]

The capture is the real traffic of ``fixtures/captures`` (four clients against librdkafka's mock cluster) written
again and again, each copy on its own client ports with its sequence numbers and timestamps moved on, so it holds
thousands of connections, as a broker's capture does. Both sides are whole processes (start-up included); the
command writes its JSON Lines to a file. Goal (issue 27): at most 2x the floor. Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dpkt

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = sorted(path for path in (ROOT / "fixtures" / "captures").glob("*.pcap")
                  if "-any" not in path.name and "snaplen" not in path.name)  # Ethernet, whole packets
SPECS = ROOT.parent / "shared" / "kafka-specs" / "4.3"

FLOOR = """
import sys, dpkt
packets = payload = 0
with open(sys.argv[1], "rb") as stream:
    for _, buf in dpkt.pcap.Reader(stream):
        ip = dpkt.ethernet.Ethernet(buf).data
        tcp = ip.data
        packets += 1
        payload += len(tcp.data)
print(packets, payload)
"""


def _records() -> list[tuple[float, dpkt.ethernet.Ethernet]]:
    found = []
    for capture in CAPTURES:
        with open(capture, "rb") as stream:
            found += [(float(ts), dpkt.ethernet.Ethernet(buf)) for ts, buf in dpkt.pcap.Reader(stream)]
    return found


def make_capture(path: Path, megabytes: int) -> int:
    """A capture of about ``megabytes`` MB: copies of the fixtures' traffic, each on client ports of its own."""
    records, written, copy = _records(), 0, 0
    broker_ports = {eth.data.data.dport for _, eth in records if eth.data.data.flags & dpkt.tcp.TH_SYN
                    and not eth.data.data.flags & dpkt.tcp.TH_ACK}
    with open(path, "wb") as stream:
        writer = dpkt.pcap.Writer(stream, snaplen=262144)
        while written < megabytes * 1_000_000:
            shift = copy * 7
            for ts, eth in records:
                tcp = eth.data.data
                if tcp.dport in broker_ports:
                    tcp.sport = 1024 + (tcp.sport + shift) % 60000
                else:
                    tcp.dport = 1024 + (tcp.dport + shift) % 60000
                eth.data.sum = tcp.sum = 0
                data = bytes(eth)
                writer.writepkt(data, ts=ts + copy * 60)
                written += len(data) + 16
                if tcp.dport in broker_ports:
                    tcp.sport = (tcp.sport - 1024 - shift) % 60000
                else:
                    tcp.dport = (tcp.dport - 1024 - shift) % 60000
            copy += 1
    return copy


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, (result.stdout + result.stderr).strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="krpc-lint-bench-extract-") as scratch:
        capture = Path(scratch) / "kafka.pcap"
        copies = make_capture(capture, options.megabytes)
        size = capture.stat().st_size
        floor_runs, ours_runs = [], []
        for _ in range(options.runs):  # alternated, so a change of load hits both
            seconds, floor_said = timed([sys.executable, "-c", FLOOR, str(capture)])
            floor_runs.append(seconds)
            seconds, ours_said = timed([sys.executable, "-m", "linter.cli.main", "frames", "extract", str(capture),
                                        "--specs", str(SPECS), "-o", str(Path(scratch) / "frames.jsonl"),
                                        "--overwrite"])
            ours_runs.append(seconds)
        floor, ours = statistics.median(floor_runs), statistics.median(ours_runs)
        print(f"capture: {size / 1e6:.1f} MB, {copies} copies of the fixtures' traffic ({floor_said.split()[0]} "
              "packets)")
        print(f"{'what':<44}{'seconds':>9}{'MB/s':>9}{'vs floor':>10}")
        print(f"{'floor: dpkt Ethernet/IP/TCP headers':<44}{floor:>9.2f}{size / 1e6 / floor:>9.1f}{1.0:>9.2f}x")
        print(f"{'krpc-lint frames extract (JSON Lines)':<44}{ours:>9.2f}{size / 1e6 / ours:>9.1f}"
              f"{ours / floor:>9.2f}x")
        print(f"  {ours_said}")
        print(f"goal: at most 2x the floor -> {'met' if ours <= 2 * floor else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
