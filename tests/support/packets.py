"""Real-looking packets and captures for the capture and TCP tests (issue 27), built with dpkt's own writers:
a TCP conversation cut into segments, framed by Ethernet (with or without a VLAN tag), Linux cooked headers
(SLL, SLL2), a loopback header or nothing (raw IP), written as pcap, pcapng or gzip."""

from __future__ import annotations

import gzip
import io
import socket
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import dpkt

from linter.frames.tcp import Reassembler
from linter.frames.traffic import Flow, Packet, Segment, Tally

SYN, FIN, RST, PSH, ACK = 0x02, 0x01, 0x04, 0x08, 0x10
CLIENT, BROKER = ("10.0.0.1", 51000), ("10.0.0.2", 9092)
CLIENT6, BROKER6 = ("fd00::1", 51000), ("fd00::2", 9092)
LINKTYPES = {"ethernet": 1, "vlan": 1, "sll": 113, "sll2": 276, "null": 0, "loop": 108, "raw": 101}


def ip_packet(src: tuple[str, int], dst: tuple[str, int], seq: int, payload: bytes = b"",
              flags: int = ACK | PSH) -> Any:
    """An IPv4 or IPv6 (by the address) packet holding one TCP segment, lengths filled in by dpkt."""
    tcp = dpkt.tcp.TCP(sport=src[1], dport=dst[1], seq=seq % (1 << 32), ack=1, flags=flags, win=65535,
                       data=payload)
    if ":" in src[0]:
        return dpkt.ip6.IP6(src=socket.inet_pton(socket.AF_INET6, src[0]),
                            dst=socket.inet_pton(socket.AF_INET6, dst[0]), nxt=dpkt.ip.IP_PROTO_TCP, hlim=64,
                            plen=len(tcp), data=tcp)
    return dpkt.ip.IP(src=socket.inet_aton(src[0]), dst=socket.inet_aton(dst[0]), p=dpkt.ip.IP_PROTO_TCP,
                      ttl=64, data=tcp)


def framed(packet: Any, link: str = "ethernet") -> bytes:
    """``packet`` (an IP packet) under the link header of ``link`` (a key of ``LINKTYPES``)."""
    v6 = isinstance(packet, dpkt.ip6.IP6)
    ethertype = dpkt.ethernet.ETH_TYPE_IP6 if v6 else dpkt.ethernet.ETH_TYPE_IP
    body = bytes(packet)
    if link == "ethernet":
        return bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=ethertype, data=body))
    if link == "vlan":
        return b"\x04" * 6 + b"\x02" * 6 + struct.pack(">HHH", 0x8100, 42, ethertype) + body
    if link == "sll":
        return struct.pack(">HHH8sH", 0, 1, 6, b"\x02" * 6, ethertype) + body
    if link == "sll2":  # protocol type, reserved, interface index, ARPHRD, packet type, address length, address
        return struct.pack(">HHiHBB8s", ethertype, 0, 1, 1, 4, 6, b"\x02" * 6) + body
    if link == "null":  # the capturing host's byte order
        return struct.pack("<I", 30 if v6 else 2) + body
    if link == "loop":
        return struct.pack(">I", 24 if v6 else 2) + body
    return body


def conversation(data: bytes, reply: bytes = b"", mss: int = 100, isn: int = 1000, server_isn: int = 5000,
                 client: tuple[str, int] = CLIENT, broker: tuple[str, int] = BROKER, fin: bool = True) -> list[Any]:
    """The IP packets of a connection: handshake, ``data`` from the client in ``mss``-byte segments, ``reply``
    from the broker, then the client's FIN."""
    packets = [ip_packet(client, broker, isn, flags=SYN), ip_packet(broker, client, server_isn, flags=SYN | ACK)]
    packets += segments(client, broker, isn + 1, data, mss)
    packets += segments(broker, client, server_isn + 1, reply, mss)
    if fin:
        packets.append(ip_packet(client, broker, isn + 1 + len(data), flags=FIN | ACK))
    return packets


def segments(src: tuple[str, int], dst: tuple[str, int], seq: int, data: bytes, mss: int) -> list[Any]:
    """``data`` from ``src`` cut into ``mss``-byte segments from sequence number ``seq``."""
    return [ip_packet(src, dst, seq + start, data[start:start + mss]) for start in range(0, len(data), mss)]


def pcap_bytes(frames: Iterable[bytes], linktype: int = 1, nano: bool = False, snaplen: int = 262144) -> bytes:
    """A pcap file of ``frames`` (timestamps 1700000000 + n ms), written by ``dpkt.pcap.Writer``."""
    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, snaplen=snaplen, linktype=linktype, nano=nano)
    for number, frame in enumerate(frames):
        writer.writepkt(frame, ts=1_700_000_000 + number / 1000)
    return out.getvalue()


def big_endian_pcap(frames: Iterable[bytes], linktype: int = 1, nano: bool = False) -> bytes:
    """A big-endian pcap (as a SPARC or a PowerPC wrote them), which dpkt's writer cannot make."""
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(">IHHiIII", magic, 2, 4, 0, 0, 262144, linktype)]
    for number, frame in enumerate(frames):
        out.append(struct.pack(">IIII", 1_700_000_000, number * (1000 if nano else 1), len(frame), len(frame)))
        out.append(frame)
    return b"".join(out)


def pcapng_bytes(frames: Iterable[tuple[int, bytes]], linktypes: Sequence[int] = (1,)) -> bytes:
    """A pcapng file with one interface per link type of ``linktypes``; ``frames`` are (interface, bytes)."""
    out = io.BytesIO()
    idbs = [dpkt.pcapng.InterfaceDescriptionBlockLE(snaplen=262144, linktype=linktype) for linktype in linktypes]
    writer = dpkt.pcapng.Writer(out, idb=idbs)
    for number, (interface, frame) in enumerate(frames):
        ticks = 1_700_000_000_000_000 + number * 1000
        writer.writepkt(dpkt.pcapng.EnhancedPacketBlockLE(iface_id=interface, caplen=len(frame),
                                                          pkt_len=len(frame), pkt_data=frame,
                                                          ts_high=ticks >> 32, ts_low=ticks & 0xFFFFFFFF))
    return out.getvalue()


def pcapng_block(kind: int, body: bytes) -> bytes:
    """A little-endian pcapng block of type ``kind`` (``body`` padded to 4 bytes)."""
    body += b"\0" * (-len(body) % 4)
    return struct.pack("<II", kind, len(body) + 12) + body + struct.pack("<I", len(body) + 12)


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def payload(size: int) -> bytes:
    """Bytes no two offsets of which repeat a short pattern: a misplaced byte shows."""
    return bytes((index * 7 + index // 251) % 256 for index in range(size))


def reassembled(packets: Iterable[Packet], tally: Tally | None = None, **options: int) -> dict[Flow, list[Segment]]:
    """The Segments of each flow after ``packets`` and the end of input, through one ``Reassembler``."""
    reassembler = Reassembler(tally if tally is not None else Tally(), **options)
    flows: dict[Flow, list[Segment]] = {}
    for packet in packets:
        for segment in reassembler.feed(packet):
            flows.setdefault(segment.flow, []).append(segment)
    for segment in reassembler.finish():
        flows.setdefault(segment.flow, []).append(segment)
    return flows


def joined(segments: Iterable[Segment]) -> bytes:
    return b"".join(segment.data for segment in segments)
