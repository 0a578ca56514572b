"""Packet captures read as TCP segments (issue 27): pcap and pcapng, gzip-compressed or not, recognised by their
first bytes, never by their name.

The files are framed here, record by record with bounded reads, and each packet's link, IP and TCP headers are
parsed by dpkt. dpkt's own file readers are not used: ``pcapng.Reader`` applies the first interface's link type
and clock to every packet (a capture of ``-i any`` plus ``lo`` has several), ``pcap.Reader`` gives nanosecond
timestamps as ``Decimal`` and reads whatever length a record claims (a 4 GB claim is a 4 GB allocation), and
neither tells a file cut mid-record from its end. What cannot become a segment (another protocol, an IP
fragment, a packet cut before its TCP payload, an unknown pcapng block) is counted in the ``Tally`` by reason;
only a file that is not a capture at all raises (``CaptureError``).
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import socket
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from linter.errors import KrpcLintError
from linter.frames.traffic import Flow, Packet, Tally
from linter.parse.files import open_uncompressed

MAX_SNAPLEN = 262_144  # tcpdump's largest snaplen: no honest record holds more
MAX_RECORD = MAX_SNAPLEN + 4_096  # a record or pcapng block with its headers and options
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
PCAP_MAGICS = {  # magic -> (byte order, ticks per second)
    b"\xd4\xc3\xb2\xa1": ("<", 1e6), b"\xa1\xb2\xc3\xd4": (">", 1e6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e9), b"\xa1\xb2\x3c\x4d": (">", 1e9),
}
PCAPNG_SKIPPED = {4, 5, 9, 10, 0xBAD, 0x40000BAD}  # name resolution, statistics, journal, secrets, custom
LOOPBACK_FAMILIES = {2, 24, 28, 30}  # AF_INET and the BSDs' AF_INET6 values
TCP = 6

TRUNCATED = "captures truncated at the end"
TOO_LONG = f"records over {MAX_SNAPLEN // 1024} KiB (rest of their capture unread)"
CUT = "packets cut before the TCP payload"
SNAPLEN = "packets cut by the snaplen"
INVALID = "pcapng blocks of invalid length (rest of capture unread)"
SKIPPED = "pcapng blocks of invalid length (skipped)"


class CaptureError(KrpcLintError, ValueError):
    """A file that is not a packet capture at all; the message names it and its first bytes."""


class _Truncated(Exception):
    """The capture ends inside a record or block."""


class _Stop(Exception):
    """A problem that ends the reading of one capture; the message is its reason in the tally."""


# (link type, timestamp, captured bytes) of each packet record, in file order
Records = Iterator[tuple[int, float, bytes]]


def is_capture(path: str | os.PathLike[str]) -> bool:
    """Whether a regular file is a packet capture by its first bytes: pcap or pcapng, or gzip of one (a gzipped
    log is no capture); never raises."""
    try:
        with open_uncompressed(path) as stream:
            magic = stream.read(4)
    except (OSError, ValueError, EOFError, zlib.error):
        return False
    return magic in PCAP_MAGICS or magic == PCAPNG_MAGIC


def packets(path: str | os.PathLike[str], tally: Tally) -> Iterator[Packet]:
    """The TCP segments of the capture at ``path``, in file order, streamed record by record.

    ``CaptureError`` (at the first ``next``) for a file that is not a pcap or pcapng capture; anything else
    wrong is counted in ``tally`` and the packets before it are still yielded."""
    name = os.fspath(path)
    decode = _decoder()
    with open_uncompressed(path) as stream:
        number = 0
        for linktype, ts, frame in _guarded(_records(stream, name, tally), name, tally):
            number += 1
            parsed = decode(linktype, frame)
            if isinstance(parsed, str):
                tally[parsed] += 1
                continue
            flow, seq, flags, payload, missing = parsed
            if missing:
                tally[SNAPLEN] += 1
            yield Packet(name, number, ts, flow, seq, flags, payload, missing)


def _guarded(records: Records, name: str, tally: Tally) -> Records:
    """``records`` until the first problem that ends the file, which is counted (a truncated end, a record
    longer than any snaplen, corrupt compressed data); a failing disk is a ``CaptureError``."""
    try:
        yield from records
    except _Truncated:
        tally[TRUNCATED] += 1
    except _Stop as stop:
        tally[str(stop)] += 1
    except EOFError:  # gzip's stream ended before its end marker
        tally[TRUNCATED] += 1
    except (gzip.BadGzipFile, zlib.error):
        tally["gzip data corrupt (rest of capture unread)"] += 1
    except OSError as exc:
        raise CaptureError(f"{name}: cannot read: {exc.strerror or exc}") from None


def _read(stream: io.BufferedIOBase, size: int, boundary: bool = False) -> bytes:
    """Exactly ``size`` bytes; ``b""`` at the end of the file when ``boundary`` (between records), else
    ``_Truncated``. ``size`` is always bounded by ``MAX_RECORD`` before this is called."""
    data = stream.read(size)
    if len(data) == size or (boundary and not data):
        return data
    raise _Truncated


def _records(stream: io.BufferedIOBase, name: str, tally: Tally) -> Records:
    """The packet records of a pcap or pcapng capture, by its magic number (read here, inside ``_guarded``:
    a gzip file may already be cut or corrupt there)."""
    magic = stream.read(4)
    if magic in PCAP_MAGICS:
        yield from _pcap(stream, *PCAP_MAGICS[magic])
        return
    if magic == PCAPNG_MAGIC:
        yield from _pcapng(stream, tally)
        return
    shown = f"magic {magic.hex(' ')}" if magic else "empty"
    raise CaptureError(f"{name}: not a pcap or pcapng capture ({shown})")


def _pcap(stream: io.BufferedIOBase, order: str, ticks: float) -> Records:
    """Records of a pcap file after its magic: a 20-byte header, then a 16-byte header before each record."""
    linktype = struct.unpack(order + "16xI", _read(stream, 20))[0] & 0xFFFF  # upper bits: FCS length
    record = struct.Struct(order + "IIII")
    while header := _read(stream, 16, boundary=True):
        seconds, fraction, caplen, _ = record.unpack(header)
        if caplen > MAX_RECORD:
            raise _Stop(TOO_LONG)
        yield linktype, seconds + fraction / ticks, _read(stream, caplen)


class _Interface:
    """A pcapng interface: its link type, clock (ticks per second and offset) and snapshot length."""

    __slots__ = ("linktype", "offset", "snaplen", "ticks")

    def __init__(self, body: bytes, order: str) -> None:
        if len(body) < 12:
            raise _Stop(INVALID)
        self.linktype, _, self.snaplen = struct.unpack_from(order + "HHI", body)
        self.ticks, self.offset = 1e6, 0
        for code, value in _options(body, 8, order):
            if code == 9 and value:  # if_tsresol: a power of 10, or of 2 when its top bit is set
                self.ticks = float(2 ** (value[0] & 0x7F) if value[0] & 0x80 else 10 ** (value[0] & 0x7F))
            elif code == 14 and len(value) == 8:  # if_tsoffset, seconds
                self.offset = struct.unpack(order + "q", value)[0]

    def ts(self, high: int, low: int) -> float:
        return self.offset + ((high << 32) | low) / self.ticks


def _options(body: bytes, start: int, order: str) -> Iterator[tuple[int, bytes]]:
    """(code, value) of a pcapng block's options from ``start`` (the block's trailing length excluded)."""
    end, header = len(body) - 4, struct.Struct(order + "HH")
    while start + 4 <= end:
        code, length = header.unpack_from(body, start)
        if code == 0:
            return
        yield code, body[start + 4:start + 4 + length]
        start += 4 + (length + 3) // 4 * 4


def _pcapng(stream: io.BufferedIOBase, tally: Tally) -> Records:
    """Records of a pcapng file after the first block type: sections (each restarting byte order and
    interfaces), interface descriptions, and packet blocks (enhanced, simple, obsolete); other blocks skipped."""
    order, interfaces, head, ts = "<", list[_Interface](), PCAPNG_MAGIC, 0.0
    while head:
        if head == PCAPNG_MAGIC:
            order = _section(stream)
            interfaces = []
        else:
            (kind,) = struct.unpack(order + "I", head)
            body = _block(stream, order)
            if kind == 1:
                interfaces.append(_Interface(body, order))
            elif kind in (2, 3, 6):
                record = _packet_block(kind, body, order, interfaces)
                if isinstance(record, str):
                    tally[record] += 1
                else:
                    ts = record[1] if record[1] is not None else ts
                    yield record[0], ts, record[2]
            elif kind not in PCAPNG_SKIPPED:
                tally["pcapng blocks of unknown type skipped"] += 1
        head = _read(stream, 4, boundary=True)


def _section(stream: io.BufferedIOBase) -> str:
    """Reads a section header block after its type; its byte order (from the byte-order magic)."""
    length, magic = _read(stream, 4), _read(stream, 4)
    orders = {b"\x4d\x3c\x2b\x1a": "<", b"\x1a\x2b\x3c\x4d": ">"}
    if magic not in orders:
        raise _Stop("pcapng sections of unknown byte order (rest of capture unread)")
    order = orders[magic]
    _body(stream, struct.unpack(order + "I", length)[0], 12)
    return order


def _block(stream: io.BufferedIOBase, order: str) -> bytes:
    """A block's body after its type: what follows its length, up to and with its trailing length."""
    return _body(stream, struct.unpack(order + "I", _read(stream, 4))[0], 8)


def _body(stream: io.BufferedIOBase, length: int, read: int) -> bytes:
    if length > MAX_RECORD:
        raise _Stop(TOO_LONG)
    if length < 12 or length % 4:
        raise _Stop(INVALID)
    return _read(stream, length - read)


def _packet_block(kind: int, body: bytes, order: str,
                  interfaces: list[_Interface]) -> tuple[int, float | None, bytes] | str:
    """(link type, timestamp or None, bytes) of an enhanced (6), obsolete (2) or simple (3) packet block, or the
    reason it is unusable."""
    if kind == 3:  # simple: interface 0, no timestamp, the original length cut at the interface's snaplen
        if not interfaces or len(body) < 8:
            return "pcapng packets of an undeclared interface"
        length = struct.unpack_from(order + "I", body)[0]
        snaplen = interfaces[0].snaplen or length
        return interfaces[0].linktype, None, body[4:4 + min(length, snaplen, len(body) - 8)]
    if len(body) < 24:
        return SKIPPED
    if kind == 2:  # obsolete packet block: a 2-byte interface and a drop count
        index, _, high, low, caplen = struct.unpack_from(order + "HHIII", body)
    else:
        index, high, low, caplen = struct.unpack_from(order + "IIII", body)
    if index >= len(interfaces):
        return "pcapng packets of an undeclared interface"
    if caplen > len(body) - 24:
        return SKIPPED
    interface = interfaces[index]
    return interface.linktype, interface.ts(high, low), body[20:20 + caplen]


Decoded = tuple[Flow, int, int, bytes, int]  # flow, seq, flags, payload, missing

# Link types whose header is a fixed length with the EtherType at a fixed offset: (EtherType offset, header
# length). An IPv4 or IPv6 packet behind one goes straight to dpkt's IP parser, without the link-layer object
# dpkt would build first (a third of the reading time of a capture); anything else (a VLAN tag, 802.3) goes
# through dpkt's link parser as before.
_DIRECT = {1: (12, 14), 113: (14, 16), 276: (0, 20)}  # Ethernet, Linux cooked SLL, SLL2


@functools.cache
def _decoder() -> Callable[[int, bytes], Decoded | str]:
    """``decode(linktype, frame)``: the TCP segment in a captured frame, or the reason there is none. dpkt is
    imported here, the first time a capture is read."""
    import dpkt  # type: ignore[import-untyped]  # no stubs; pyproject lists no override for it

    def raw(frame: bytes) -> Any:
        version = frame[0] >> 4 if frame else 0
        return dpkt.ip.IP(frame) if version == 4 else dpkt.ip6.IP6(frame) if version == 6 else frame

    links: dict[int, Callable[[bytes], Any]] = {
        0: dpkt.loopback.Loopback, 108: dpkt.loopback.Loopback, 1: dpkt.ethernet.Ethernet,
        113: dpkt.sll.SLL, 276: dpkt.sll2.SLL2, 101: raw, 12: raw, 14: raw, 228: dpkt.ip.IP, 229: dpkt.ip6.IP6,
    }
    ip_types = (dpkt.ip.IP, dpkt.ip6.IP6)

    ip_parsers = {b"\x08\x00": dpkt.ip.IP, b"\x86\xdd": dpkt.ip6.IP6}

    def parsed(linktype: int, link: Callable[[bytes], Any], frame: bytes) -> Any:
        at, length = _DIRECT.get(linktype, (0, 0))
        parse = ip_parsers.get(frame[at:at + 2]) if length else None
        return parse(frame[length:]) if parse is not None else link(frame)

    def decode(linktype: int, frame: bytes) -> Decoded | str:
        link = links.get(linktype)
        if link is None:
            return f"link type {linktype} unsupported"
        try:
            layer = parsed(linktype, link, frame)
            if not isinstance(layer, ip_types):
                layer = getattr(layer, "data", layer)
            if isinstance(layer, dpkt.ip.IP):
                return _ipv4(layer)
            if isinstance(layer, dpkt.ip6.IP6):
                return _ipv6(layer, dpkt.ip6.IP6FragmentHeader)
            return _not_ip(layer)
        except dpkt.NeedData:
            return CUT
        except (dpkt.UnpackError, struct.error, IndexError, ValueError, KeyError, AttributeError, TypeError):
            return "malformed packets"  # dpkt's parsers raise these on hostile headers

    return decode


def _not_ip(layer: Any) -> str:
    """Why a link's payload is no IP packet: IP cut short (dpkt leaves the bytes), or another protocol."""
    if not isinstance(layer, bytes) or not layer or layer[0] >> 4 not in (4, 6):
        return "not IP"
    needed = max(20, (layer[0] & 0xF) * 4) if layer[0] >> 4 == 4 else 40
    return CUT if len(layer) < needed else "malformed packets"


def _ipv4(ip: Any) -> Decoded | str:
    if ip.mf or ip.offset:
        return "IP fragments"
    if ip.p != TCP:
        return "not TCP"
    headers = 20 + len(ip.opts)  # dpkt keeps the options the header length gives
    return _segment(ip.data, ip.len - headers if ip.len else None, socket.AF_INET, ip.src, ip.dst)


def _ipv6(ip: Any, fragment: type) -> Decoded | str:
    """IPv6 after dpkt walked its extension headers (bounded: each takes at least 8 of the payload's bytes)."""
    extensions = ip.all_extension_headers
    if any(isinstance(header, fragment) for header in extensions):
        return "IP fragments"
    if ip.p != TCP:
        return "not TCP"
    wire = ip.plen - sum(header.length for header in extensions) if ip.plen else None
    return _segment(ip.data, wire, socket.AF_INET6, ip.src, ip.dst)


def _segment(tcp: Any, wire: int | None, family: int, src: bytes, dst: bytes) -> Decoded | str:
    """The segment of a TCP header and payload; ``wire`` is the TCP length the IP header gives (None: unknown,
    as with segmentation offload), so what the snaplen cut is known."""
    if isinstance(tcp, bytes):  # dpkt keeps the bytes of a TCP header it could not parse
        return CUT if len(tcp) < 20 or len(tcp) < (tcp[12] >> 4) * 4 else "malformed packets"
    header = tcp.off * 4
    if len(tcp.opts) < header - 20:
        return CUT
    payload = bytes(tcp.data)
    missing = max(0, wire - header - len(payload)) if wire is not None else 0
    return _flow(family, src, tcp.sport, dst, tcp.dport), tcp.seq, tcp.flags, payload, missing


@functools.lru_cache(maxsize=65536)
def _flow(family: int, src: bytes, sport: int, dst: bytes, dport: int) -> Flow:
    """The flow of packed addresses and ports; cached (a capture holds each flow many times): the same ``Flow``
    object for each packet of a flow, its addresses as text once."""
    return Flow((socket.inet_ntop(family, src), sport), (socket.inet_ntop(family, dst), dport))


__all__ = ["MAX_RECORD", "MAX_SNAPLEN", "CaptureError", "is_capture", "packets"]
