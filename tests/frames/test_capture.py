"""Reading packet captures (issue 27): pcap in both byte orders and clocks, pcapng with several interfaces,
gzip, every link type ``tcpdump -i any`` or a loopback writes, IPv4 and IPv6 — the same TCP stream from all of
them; and bad input (cut, not a capture, a 4 GB record, unknown blocks, other protocols) counted, never raised."""

from __future__ import annotations

import random
import struct
import tracemalloc
from pathlib import Path
from typing import Any

import dpkt
import pytest
from support.packets import (
    BROKER,
    BROKER6,
    CLIENT,
    CLIENT6,
    LINKTYPES,
    big_endian_pcap,
    conversation,
    framed,
    gzipped,
    ip_packet,
    joined,
    payload,
    pcap_bytes,
    pcapng_block,
    pcapng_bytes,
    reassembled,
    write,
)

from linter.errors import KrpcLintError
from linter.frames.capture import (
    CUT,
    SNAPLEN,
    TOO_LONG,
    TRUNCATED,
    CaptureError,
    packets,
)
from linter.frames.tcp import LOST
from linter.frames.traffic import Flow, Packet, Tally

REQUEST, REPLY = payload(4000), payload(2500)[::-1]
CONVERSATION = conversation(REQUEST, REPLY)


def read(path: str) -> tuple[list[Packet], Tally]:
    tally = Tally()
    return list(packets(path, tally)), tally


def streams(path: str) -> tuple[dict[Flow, bytes], Tally]:
    """The bytes of each flow of the capture at ``path``, checked to have no gap."""
    tally = Tally()
    flows = reassembled(packets(path, tally), tally)
    assert all(segment.gap == 0 for segments in flows.values() for segment in segments)
    return {flow: joined(segments) for flow, segments in flows.items()}, tally


def expected(client: tuple[str, int] = CLIENT, broker: tuple[str, int] = BROKER) -> dict[Flow, bytes]:
    return {Flow(client, broker): REQUEST, Flow(broker, client): REPLY}


@pytest.mark.parametrize("link", sorted(LINKTYPES))
def test_every_link_type_gives_the_same_stream(tmp_path: Path, link: str) -> None:
    for v6 in (False, True):
        ends = (CLIENT6, BROKER6) if v6 else (CLIENT, BROKER)
        frames = [framed(one, link) for one in conversation(REQUEST, REPLY, client=ends[0], broker=ends[1])]
        path = write(tmp_path / f"{link}{v6}.cap", pcap_bytes(frames, LINKTYPES[link]))
        assert streams(path) == (expected(*ends), Tally())


@pytest.mark.parametrize("linktype", [228, 12, 14])
def test_raw_ip_under_its_other_link_types(tmp_path: Path, linktype: int) -> None:
    frames = [framed(one, "raw") for one in CONVERSATION]
    assert streams(write(tmp_path / "raw", pcap_bytes(frames, linktype)))[0] == expected()


def test_byte_orders_clocks_pcapng_and_gzip_give_the_same_stream(tmp_path: Path) -> None:
    frames = [framed(one) for one in CONVERSATION]
    mixed = [(index % 3, framed(one, ("ethernet", "sll2", "sll")[index % 3])) for index, one in
             enumerate(CONVERSATION)]
    captures = {
        "micro": pcap_bytes(frames), "nano": pcap_bytes(frames, nano=True),
        "big": big_endian_pcap(frames), "big-nano": big_endian_pcap(frames, nano=True),
        "pcapng": pcapng_bytes(mixed, (1, 276, 113)),
    }
    for name, data in list(captures.items()):
        captures[name + ".gz"] = gzipped(data)
    for name, data in captures.items():
        assert streams(write(tmp_path / name, data)) == (expected(), Tally()), name


def test_reordered_and_duplicated_packets_in_a_capture(tmp_path: Path) -> None:
    packets_ = conversation(REQUEST, REPLY, mss=64, fin=False)
    shuffled = packets_[:2] + random.Random(1).sample(packets_[2:], len(packets_) - 2)
    doubled = [one for one in shuffled for _ in range(2)]
    frames = [framed(one, "sll2") for one in doubled]
    assert streams(write(tmp_path / "x", pcap_bytes(frames, 276)))[0] == expected()


def test_packets_say_where_they_were(tmp_path: Path) -> None:
    frames = [framed(one) for one in CONVERSATION]
    udp = bytes(dpkt.ethernet.Ethernet(type=0x0800, data=bytes(dpkt.ip.IP(p=17, data=dpkt.udp.UDP(data=b"x")))))
    path = write(tmp_path / "named.pcap", pcap_bytes([udp, *frames], nano=True))
    read_packets, tally = read(path)
    first = read_packets[0]
    assert (first.file, first.number, first.flow, first.flags) == (path, 2, Flow(CLIENT, BROKER), 0x02)
    assert isinstance(first.ts, float) and first.ts == pytest.approx(1_700_000_000.001)
    assert [one.number for one in read_packets] == list(range(2, len(frames) + 2))
    assert tally == Tally({"not TCP": 1})


def test_pcapng_clock_resolution_and_offset(tmp_path: Path) -> None:
    options = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HHq", 14, 8, 100) + b"\0" * 4
    idb = pcapng_block(1, struct.pack("<HHI", 1, 0, 0) + options)
    ticks = 1_500_000_000_250_000_000
    frame = framed(ip_packet(CLIENT, BROKER, 1, b"x"))
    epb = pcapng_block(6, struct.pack("<IIIII", 0, ticks >> 32, ticks & 0xFFFFFFFF, len(frame), len(frame)) + frame)
    shb = bytes(dpkt.pcapng.SectionHeaderBlockLE())
    [one], _ = read(write(tmp_path / "ns.pcapng", shb + idb + epb))
    assert one.ts == pytest.approx(1_500_000_100.25)


def test_a_snaplen_cut_packet_says_what_is_missing(tmp_path: Path) -> None:
    frames = [framed(one) for one in CONVERSATION]
    header = 14 + 20 + 20
    frames[4] = frames[4][:header + 30]  # 70 of its 100 payload bytes not captured
    frames[5] = frames[5][:header - 4]  # cut inside its TCP header
    read_packets, tally = read(write(tmp_path / "cut.pcap", pcap_bytes(frames)))
    cut = [one for one in read_packets if one.missing]
    assert [(len(one.payload), one.missing) for one in cut] == [(30, 70)]
    assert tally == Tally({SNAPLEN: 1, CUT: 1})
    flows = reassembled(read_packets, tally)
    request = flows[Flow(CLIENT, BROKER)]
    assert [segment.gap for segment in request] == [0, 0, 0, 170]
    assert joined(request[:3]) == REQUEST[:230] and joined(request[3:]) == REQUEST[400:]
    assert tally[LOST] == 170


@pytest.mark.parametrize("kind", ["pcap", "pcapng", "gzip"])
def test_a_file_cut_mid_record_yields_what_came_before(tmp_path: Path, kind: str) -> None:
    frames = [framed(one) for one in CONVERSATION]
    data = pcapng_bytes([(0, frame) for frame in frames]) if kind == "pcapng" else pcap_bytes(frames)
    whole = len(read(write(tmp_path / "whole", data))[0])
    cut = data[:-10]
    if kind == "gzip":
        cut = gzipped(data)[:-30]
    read_packets, tally = read(write(tmp_path / "cut", cut))
    assert 0 < len(read_packets) < whole
    assert tally == Tally({TRUNCATED: 1})


def test_a_file_cut_in_its_header_is_counted(tmp_path: Path) -> None:
    assert read(write(tmp_path / "h", pcap_bytes([])[:10])) == ([], Tally({TRUNCATED: 1}))


@pytest.mark.parametrize(("data", "shown"), [
    (b"frame size\n", "magic 66 72 61 6d"), (b"", "empty"), (gzipped(b"PK\x03\x04zip"), "magic 50 4b 03 04"),
])
def test_a_file_that_is_no_capture_is_one_clear_error(tmp_path: Path, data: bytes, shown: str) -> None:
    path = write(tmp_path / "x.pcap", data)
    with pytest.raises(CaptureError, match=f"x.pcap: not a pcap or pcapng capture \\({shown}\\)"):
        read(path)
    assert issubclass(CaptureError, KrpcLintError) and issubclass(CaptureError, ValueError)


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    with pytest.raises(KrpcLintError, match="not a regular file"):
        read(str(tmp_path))


def test_a_4_gb_record_ends_the_file_without_allocating_it(tmp_path: Path) -> None:
    frames = [framed(one) for one in CONVERSATION[:3]]
    data = pcap_bytes(frames) + struct.pack("<IIII", 0, 0, 0xFFFFFFF0, 0xFFFFFFF0) + b"x" * 100
    block = struct.pack("<II", 6, 0xFFFFFFF0) + b"\0" * 64
    ng = pcapng_bytes([(0, frame) for frame in frames]) + block
    for name, capture in (("pcap", data), ("pcapng", ng)):
        tracemalloc.start()
        read_packets, tally = read(write(tmp_path / name, capture))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (len(read_packets), tally) == (3, Tally({TOO_LONG: 1}))
        assert peak < 4 << 20


def test_unknown_pcapng_blocks_are_skipped_and_counted(tmp_path: Path) -> None:
    frames = [framed(one) for one in CONVERSATION]
    data = pcapng_bytes([(0, frame) for frame in frames])
    shb_idb = len(pcapng_bytes([]))
    extra = pcapng_block(0x1234, b"vendor") + pcapng_block(4, b"\0" * 4) + pcapng_block(0x4321, b"")
    read_packets, tally = read(write(tmp_path / "u", data[:shb_idb] + extra + data[shb_idb:]))
    assert len(read_packets) == len(frames)
    assert tally == Tally({"pcapng blocks of unknown type skipped": 2})


def test_a_second_pcapng_section_restarts_its_interfaces(tmp_path: Path) -> None:
    first = pcapng_bytes([(0, framed(one)) for one in CONVERSATION[:4]])
    second = pcapng_bytes([(0, framed(one, "sll")) for one in CONVERSATION[4:]], (113,))
    assert streams(write(tmp_path / "two", first + second))[0] == expected()


def _other(kind: str) -> bytes:
    """A frame that holds no usable TCP segment, of ``kind``."""
    if kind == "udp":
        return framed(dpkt.ip.IP(src=b"\1" * 4, dst=b"\2" * 4, p=17, data=dpkt.udp.UDP(sport=53, dport=53)))
    if kind == "arp":
        return bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_ARP, data=dpkt.arp.ARP()))
    if kind == "fragment":
        fragment: Any = ip_packet(CLIENT, BROKER, 1, b"x" * 40)
        fragment.mf = 1
        return framed(fragment)
    if kind == "fragment6":
        inner = bytes(ip_packet(CLIENT, BROKER, 1, b"y")).__len__()
        header = struct.pack(">BBHI", 6, 0, 8, 7)  # next header TCP, offset 1 (not the first fragment)
        ip6 = dpkt.ip6.IP6(src=b"\1" * 16, dst=b"\2" * 16, nxt=44, hlim=1, plen=8 + inner, data=header + b"z" * inner)
        return framed(ip6)
    return framed(ip_packet(CLIENT, BROKER, 1, b"x"))[:14 + 12]  # cut inside the IP header


def test_traffic_with_no_tcp_is_counted_by_reason(tmp_path: Path) -> None:
    kinds = ["udp", "udp", "arp", "fragment", "fragment6", "cut"]
    frames = [_other(kind) for kind in kinds]
    read_packets, tally = read(write(tmp_path / "udp.pcap", pcap_bytes(frames)))
    assert read_packets == []
    assert tally == Tally({"not TCP": 2, "not IP": 1, "IP fragments": 2, CUT: 1})
    _, other = read(write(tmp_path / "wifi.pcap", pcap_bytes(frames[:2], linktype=105)))
    assert other == Tally({"link type 105 unsupported": 2})


def test_ip_options_and_vlan_tags_are_walked(tmp_path: Path) -> None:
    with_options: Any = ip_packet(CLIENT, BROKER, 1, b"payload")
    with_options.opts = b"\x01\x01\x01\x00"  # NOPs and the end of the options
    with_options.hl = 6
    with_options.len = 0  # dpkt refills it
    frame = framed(dpkt.ip.IP(bytes(with_options)), "vlan")
    [one], tally = read(write(tmp_path / "o", pcap_bytes([frame])))
    assert (one.payload, one.missing, tally) == (b"payload", 0, Tally())


def test_memory_stays_flat_as_a_capture_grows(tmp_path: Path) -> None:
    def peak(count: int) -> int:
        frames = [framed(one) for one in conversation(payload(count * 100), mss=100)]
        path = write(tmp_path / f"{count}.pcap.gz", gzipped(pcap_bytes(frames)))
        tracemalloc.start()
        total = sum(len(one.payload) for one in packets(path, Tally()))
        result = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert total == count * 100
        return result
    assert peak(8000) < peak(1000) + 256_000


def test_corrupt_gzip_data_is_counted(tmp_path: Path) -> None:
    data = bytearray(gzipped(pcap_bytes([framed(one) for one in CONVERSATION])))
    data[len(data) // 2:len(data) // 2 + 8] = b"\xff" * 8
    _, tally = read(write(tmp_path / "bad.gz", bytes(data)))
    assert set(tally) <= {"gzip data corrupt (rest of capture unread)", TRUNCATED} and sum(tally.values()) == 1


def test_mutated_captures_never_raise_but_capture_error(tmp_path: Path) -> None:
    """Random bytes changed in valid captures of every framing: counted problems, never another exception."""
    conv = conversation(payload(1200), payload(300), mss=200) + conversation(payload(300), client=CLIENT6,
                                                                              broker=BROKER6)
    bases = [pcap_bytes([framed(one, "sll2") for one in conv], 276), pcap_bytes([framed(one, "null") for one in conv], 0),
             pcapng_bytes([(index % 2, framed(one, ("vlan", "sll")[index % 2])) for index, one in enumerate(conv)],
                          (1, 113))]
    rng, path, read_any = random.Random(27), tmp_path / "fuzz", 0
    for _ in range(300):
        data = bytearray(rng.choice(bases))
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            flows = reassembled(read(write(path, bytes(data[:rng.randrange(len(data) // 2, len(data) + 1)])))[0])
        except CaptureError:
            continue
        read_any += bool(flows)
    assert read_any > 200


def test_ipv6_extension_headers_are_walked_to_tcp(tmp_path: Path) -> None:
    tcp = bytes(ip_packet(CLIENT6, BROKER6, 1, b"after options").data)
    hop_by_hop = struct.pack(">BB6x", 60, 0)  # then destination options
    destination = struct.pack(">BB6x", 6, 0)  # then TCP
    body = hop_by_hop + destination + tcp
    ip6 = dpkt.ip6.IP6(src=b"\1" * 16, dst=b"\2" * 16, nxt=0, hlim=1, plen=len(body), data=body)
    frame = framed(ip6)
    [one], tally = read(write(tmp_path / "ext", pcap_bytes([frame])))
    assert (one.payload, one.missing, one.flow.src, tally) == (b"after options", 0, ("101:" * 7 + "101", 51000), Tally())
    read_packets, tally = read(write(tmp_path / "ext-cut", pcap_bytes([frame[:-5]])))
    assert [(one.payload, one.missing) for one in read_packets] == [(b"after op", 5)] and tally == Tally({SNAPLEN: 1})
