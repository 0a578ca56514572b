"""What a packet capture becomes on its way to frames: the types the capture reader, the TCP reassembler and the
Kafka stream cutter hand one another (issue 27).

    capture file ─▶ capture.packets() ─▶ Packet ─▶ tcp.Reassembler ─▶ Segment ─▶ streams.KafkaStreams ─▶ rows
                    (pcap, pcapng, gzip;          (per flow, in order;          (frames cut by their size,
                     link and IP layers)           gaps counted, never glued)    responses matched to requests)

Each stage counts what it cannot use in a ``Tally`` (a reason and how many), so a run ends with one summary line
and never stops at the first bad packet. Addresses are ``(host, port)`` with the host as text (IPv6 without
brackets).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

Address = tuple[str, int]
KAFKA_PORTS = frozenset({9092})  # Kafka's default listener port: the flows read as Kafka unless --port says


class Flow(NamedTuple):
    """One direction of one TCP connection: bytes from ``src`` to ``dst``."""

    src: Address
    dst: Address

    def reverse(self) -> Flow:
        return Flow(self.dst, self.src)


class Packet(NamedTuple):
    """A TCP segment as captured: where it was in the capture, its flow, and its payload as far as captured."""

    file: str  # the capture it came from (as named to the command)
    number: int  # its number in that capture, from 1 (the frame number tshark shows)
    ts: float  # capture timestamp, seconds since the epoch
    flow: Flow
    seq: int  # TCP sequence number of the first payload byte
    flags: int  # TCP flags (SYN 0x02, FIN 0x01, RST 0x04, ACK 0x10)
    payload: bytes  # the captured payload (shorter than the segment's when the capture's snaplen cut it)
    missing: int = 0  # payload bytes on the wire that the capture did not keep (snaplen)


class Segment(NamedTuple):
    """Bytes of one flow in stream order, as the reassembler releases them.

    ``gap`` is how many bytes of the stream are missing right before ``data`` (0: it follows the previous segment
    of the flow exactly; -1: unknown, the flow was picked up mid-stream without its SYN). A reader of frames never
    joins bytes across a gap: it must find a provable frame boundary again."""

    flow: Flow
    ts: float  # the timestamp of the packet that completed this run of bytes
    data: bytes
    gap: int = 0
    opened: bool = False  # this flow's SYN was seen: ``flow.src`` opened the connection (the client)


class Tally(Counter[str]):
    """What a stage could not use, by reason (``"not TCP"``, ``"bytes lost (gaps)"``...), summed over a run."""

    def line(self) -> str:
        """``not TCP: 3, bytes lost (gaps): 120``, the reasons in the order first met, each with its count after it
        (a reason reads right for one or many); empty when nothing.

        >>> Tally({"not TCP": 3, "TLS connections": 1}).line()
        'not TCP: 3, TLS connections: 1'
        """
        return ", ".join(f"{reason}: {count:,}" for reason, count in self.items() if count)


__all__ = ["KAFKA_PORTS", "Address", "Flow", "Packet", "Segment", "Tally"]
