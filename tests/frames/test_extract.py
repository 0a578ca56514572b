"""``frames extract`` on captures of real clients against a real broker (fixtures/captures, made by
bench/captures.py): the requests are those tshark's Kafka dissector reads, each frame is the stream's bytes
between size prefixes, and the same traffic reordered, duplicated, as pcapng, gzipped or under Linux cooked
headers gives the same frames; a lossy or cut capture gives no frame that was not on the wire (issue 27)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path
from typing import Any

import dpkt
import pyarrow.parquet as pq
import pytest
from conftest import REPO_ROOT, require_shared
from hypothesis import given as hypothesis_given
from hypothesis import strategies as st
from support import tshark
from support.packets import (
    framed,
    gzipped,
    joined,
    pcap_bytes,
    pcapng_bytes,
    reassembled,
)

from linter.codec import Codec
from linter.frames.capture import is_capture, packets
from linter.frames.extract import Extraction, capture_files, json_line
from linter.frames.traffic import Tally

CAPTURES = REPO_ROOT / "fixtures" / "captures"
CHECKED = sorted(path for path in CAPTURES.glob("*.pcap") if tshark.sidecar(path).exists())
WHOLE = [path for path in CHECKED if "snaplen" not in path.name]  # every packet captured whole
ETHERNET = [path for path in WHOLE if "-any" not in path.name]  # tcpdump -i lo: Ethernet headers
SNAPPED = [path for path in CHECKED if "snaplen" in path.name]  # tcpdump --snapshot-length: packets cut


@pytest.fixture(scope="module")
def codec() -> Codec:
    return Codec.load(require_shared("kafka-specs", "4.3"))


def extracted(codec: Codec, *paths: str | Path) -> list[dict[str, Any]]:
    return list(Extraction(capture_files(paths), codec).rows())


def headers(rows: Iterable[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    return Counter((row["direction"], row["api_key"], row["api_version"], row["correlation_id"]) for row in rows)


def without_time(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in row.items() if key != "ts"} for row in rows]


def records(path: Path) -> list[tuple[float, bytes]]:
    with open(path, "rb") as stream:
        return [(float(ts), bytes(buf)) for ts, buf in dpkt.pcap.Reader(stream)]


def ip_of(frame: bytes) -> Any:
    """The IP packet of an Ethernet frame (tcpdump on Linux's loopback writes Ethernet headers)."""
    return dpkt.ethernet.Ethernet(frame).data


def test_there_are_real_captures_to_check() -> None:
    assert len(WHOLE) >= 4, "fixtures/captures: one capture per client, each with tshark's reading"
    assert SNAPPED, "and one cut by a snap length"
    assert all(is_capture(path) for path in CHECKED)


@pytest.mark.parametrize("capture", WHOLE, ids=lambda path: path.stem)
def test_every_request_and_response_is_what_tshark_reads(capture: Path, codec: Codec) -> None:
    """tshark's Kafka dissector is the independent reading of the same headers: every request's key, version
    and correlation id, every response's correlation id (and its request's key and version where tshark
    matched it: it does not always)."""
    pdus = tshark.committed(capture)["pdus"]
    rows = extracted(codec, capture)
    ours = headers(row for row in rows if row["direction"] == "request")
    assert ours == Counter(("request", pdu["api_key"], pdu["api_version"], pdu["correlation_id"])
                           for pdu in pdus if pdu["kind"] == "request")
    assert sum(ours.values()) >= 30
    responses = [(row["connection"], row["correlation_id"], row["api_key"], row["api_version"])
                 for row in rows if row["direction"] == "response"]
    assert Counter(correlation for _, correlation, _, _ in responses) == Counter(
        pdu["correlation_id"] for pdu in pdus if pdu["kind"] == "response")
    matched = Counter((pdu["correlation_id"], pdu["api_key"], pdu["api_version"]) for pdu in pdus
                      if pdu["kind"] == "response" and "api_key" in pdu)
    assert matched <= Counter((correlation, key, version) for _, correlation, key, version in responses)


@pytest.mark.parametrize("capture", SNAPPED, ids=lambda path: path.stem)
def test_a_capture_cut_by_its_snap_length_gives_only_whole_frames(capture: Path, codec: Codec) -> None:
    tally = Tally()
    rows = list(Extraction([str(capture)], codec, tally=tally).rows())
    assert tally["packets cut by the snaplen"] > 0 and tally["bytes lost (gaps)"] > 0
    assert all(int.from_bytes(row["bytes"][:4], "big") == len(row["bytes"]) - 4 for row in rows)
    whole = {row["bytes"] for row in extracted(codec, CAPTURES / capture.name.replace("-snaplen96", ""))}
    assert rows and all(row["bytes"][8:] in {frame[8:] for frame in whole} or row["direction"] == "response"
                        for row in rows if row["direction"] == "request")


@pytest.mark.parametrize("capture", WHOLE, ids=lambda path: path.stem)
def test_each_frame_is_the_streams_bytes_between_size_prefixes(capture: Path, codec: Codec) -> None:
    rows = extracted(codec, capture)
    flows = reassembled(packets(str(capture), Tally()))
    streams = {f"{flow.src[0]}:{flow.src[1]} > {flow.dst[0]}:{flow.dst[1]}": joined(segments)
               for flow, segments in flows.items()}
    for connection in {row["connection"] for row in rows}:
        client, broker = connection.split(" > ")
        for direction, key in (("request", f"{client} > {broker}"), ("response", f"{broker} > {client}")):
            frames = b"".join(row["bytes"] for row in rows if row["connection"] == connection
                              and row["direction"] == direction)
            assert frames == streams.get(key, b""), (connection, direction)
    assert all(int.from_bytes(row["bytes"][:4], "big") == len(row["bytes"]) - 4 for row in rows)


def variants(capture: Path, tmp_path: Path) -> dict[str, Path]:
    """The same traffic written five other ways."""
    kept = records(capture)
    payloads = [index for index, (_, frame) in enumerate(kept) if len(ip_of(frame).data.data) > 0]
    swapped = list(kept)
    by_flow: dict[tuple[Any, ...], list[int]] = {}
    for index in payloads:
        packet = ip_of(kept[index][1])
        by_flow.setdefault((packet.src, packet.data.sport, packet.dst, packet.data.dport), []).append(index)
    for indexes in by_flow.values():  # segments of one flow out of order: each chosen one after its successor
        for first, second in list(pairwise(indexes))[::3]:
            swapped[first], swapped[second] = swapped[second], swapped[first]
    duplicated = [record for index, record in enumerate(kept) for _ in range(2 if index in payloads[::3] else 1)]
    out = {"reordered": pcap_bytes(frame for _, frame in swapped),
           "duplicated": pcap_bytes(frame for _, frame in duplicated),
           "pcapng": pcapng_bytes((0, frame) for _, frame in kept),
           "gzipped": gzipped(capture.read_bytes()),
           "sll2": pcap_bytes((framed(ip_of(frame), "sll2") for _, frame in kept), linktype=276)}
    paths = {}
    for name, data in out.items():
        paths[name] = tmp_path / f"{capture.stem}-{name}.cap"
        paths[name].write_bytes(data)
    return paths


@pytest.mark.parametrize("capture", ETHERNET[:2], ids=lambda path: path.stem)
def test_the_same_traffic_written_another_way_gives_the_same_frames(capture: Path, codec: Codec,
                                                                       tmp_path: Path) -> None:
    expected = without_time(extracted(codec, capture))
    for name, path in variants(capture, tmp_path).items():
        got = without_time(extracted(codec, path))
        if name == "reordered":  # frames come out when their last segment is in: the order across flows moves
            key = lambda row: (row["connection"], row["direction"], row["correlation_id"])
            assert sorted(got, key=key) == sorted(expected, key=key), name
        else:
            assert got == expected, name


@pytest.mark.parametrize("capture", ETHERNET[:2], ids=lambda path: path.stem)
def test_a_lossy_or_cut_capture_gives_no_frame_that_was_not_on_the_wire(capture: Path, codec: Codec,
                                                                          tmp_path: Path) -> None:
    whole = extracted(codec, capture)
    on_the_wire = {row["bytes"] for row in whole}
    kept = records(capture)
    payloads = [index for index, (_, frame) in enumerate(kept) if len(ip_of(frame).data.data) > 0]
    lossy = tmp_path / "lossy.pcap"
    lossy.write_bytes(pcap_bytes(frame for index, (_, frame) in enumerate(kept) if index not in payloads[5::7]))
    cut = tmp_path / "cut.pcap"
    data = capture.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    snapped = tmp_path / "snapped.pcap"
    snapped.write_bytes(pcap_bytes((frame[:120] for _, frame in kept), snaplen=120))
    for path in (lossy, cut, snapped):
        tally = Tally()
        rows = list(Extraction([str(path)], codec, tally=tally).rows())
        assert {row["bytes"] for row in rows} <= on_the_wire, path.name
        assert len(rows) < len(whole), path.name
    assert sum(1 for _ in Extraction([str(lossy)], codec).rows()) > 0


def test_the_command_writes_json_lines_and_says_what_it_read(tmp_path: Path) -> None:
    specs = require_shared("kafka-specs", "4.3")
    out = tmp_path / "frames.jsonl"
    result = subprocess.run([sys.executable, "-m", "linter.cli.main", "frames", "extract", str(WHOLE[0]),
                             "--specs", str(specs), "-o", str(out)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="ascii").splitlines()]
    assert len(lines) > 30 and all(bytes.fromhex(line["hex"])[:4] for line in lines)
    assert f"1 capture, {len(lines)} frames" in result.stderr
    again = subprocess.run([sys.executable, "-m", "linter.cli.main", "frames", "extract", str(WHOLE[0]),
                            "--specs", str(specs), "-o", str(out)], capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "exists" in again.stderr  # never over an output without --overwrite
    parquet = tmp_path / "frames.parquet"
    result = subprocess.run([sys.executable, "-m", "linter.cli.main", "frames", "extract", str(WHOLE[0]),
                             "--specs", str(specs), "-o", str(parquet)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    table = pq.read_table(parquet).to_pylist()  # the same rows as the JSON Lines, bytes as bytes
    assert [{**{k: v for k, v in row.items() if k != "bytes"}, "hex": row["bytes"].hex()} for row in table] == lines


def test_what_is_not_a_capture_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A file that is not a capture, and a directory that holds none: one line naming it, never a silent 0 frames."""
    specs = require_shared("kafka-specs", "4.3")
    (tmp_path / "notes.pcap").write_text("hello\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    for given, said in ((tmp_path / "notes.pcap", "not a pcap or pcapng capture"),
                        (tmp_path / "empty", "no packet capture here")):
        result = subprocess.run([sys.executable, "-m", "linter.cli.main", "frames", "extract", str(given),
                                 "--specs", str(specs), "-o", "-"], capture_output=True, text=True, check=False)
        assert result.returncode == 2 and result.stdout == "", result.stderr
        assert result.stderr.count("\n") == 1 and said in result.stderr and str(given) in result.stderr


_maybe_int = st.none() | st.integers(-(2**31), 2**31 - 1)
_maybe_text = st.none() | st.text(max_size=20)


@hypothesis_given(st.fixed_dictionaries({
    "api_key": _maybe_int, "api_version": _maybe_int, "direction": st.sampled_from(["request", "response"]),
    "correlation_id": _maybe_int, "bytes": st.none() | st.binary(max_size=40),
    "ts": st.floats(allow_nan=True, allow_infinity=True), "connection": st.text(max_size=30),
    "client_id": _maybe_text, "software_name": _maybe_text, "software_version": _maybe_text,
    "problem": _maybe_text}))
def test_json_line_is_what_json_dumps_writes(row: dict[str, Any]) -> None:
    order = ("api_key", "api_version", "direction", "correlation_id", "ts", "connection", "client_id",
             "software_name", "software_version", "problem")
    expected = {key: row[key] for key in order}
    expected["hex"] = row["bytes"].hex() if row["bytes"] is not None else None
    assert json_line(row) == json.dumps(expected, separators=(",", ":"))
