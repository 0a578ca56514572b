"""Kafka frames from reassembled TCP streams (issue 27): the last stage of reading a capture.

``KafkaStreams`` takes the ``Segment``s the TCP reassembler releases (``linter.frames.traffic``) and yields one
row per frame, a request or a response matched to its request by correlation id on its connection:

- **Roles.** A flow that opened its connection (``Segment.opened``) is the client's; else the side whose
  destination port is in ``ports``; on any other port (or with ``ports=None``), a flow whose first bytes are a
  request header the specs know. Other flows are "non-Kafka flows"; a stream that starts with a TLS record is one of the "TLS connections".
- **Cutting.** A frame is an int32 size and that many bytes, the size at most ``MAX_FRAME`` (Kafka's default
  ``socket.request.max.bytes``): a larger one (2 GB on the wire) is refused at once, never buffered, and the
  flow loses sync. Bytes are never joined across a gap: after a gap or a bad size the flow waits for a
  boundary it can prove (a client's: a plausible request whose frame ends exactly where the bytes held end or
  where another plausible request starts; a server's: a size then a correlation id an outstanding request of
  its connection has), and what it skips is counted. A flow holds at most one incomplete frame.
- **Matching.** Outstanding requests per connection, at most ``MAX_OUTSTANDING`` (oldest dropped, counted);
  Produce with acks=0 is never outstanding; a response without its request is a row with a ``problem``.

The protocol facts this relies on, with their sources in Kafka, are in ``linter.frames.kafka_facts``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from linter.codec import Codec
from linter.frames.corpus import REQUEST, REQUEST_START, RESPONSE, RESPONSE_START
from linter.frames.kafka_facts import (
    API_VERSIONS,
    MAX_FRAME,
    PRODUCE,
    SASL_HANDSHAKE,
    Header,
    Requests,
    endpoint,
    is_tls,
    v0_error_layout,
)
from linter.frames.traffic import KAFKA_PORTS, Flow, Segment, Tally

MAX_OUTSTANDING = 10_000  # requests awaiting a response, per connection
NON_KAFKA, TLS, SASL = "non-Kafka flows", "TLS connections", "SASL raw tokens"
SKIPPED, REFUSED = "bytes skipped (no frame boundary)", f"frame sizes refused (≤ 0 or above {MAX_FRAME:,})"
CUT, UNFINISHED = "frames cut by a gap", "frames unfinished at the end"
ORPHANS, UNANSWERED = "responses without a request", "requests without a response"
DROPPED = f"requests dropped (over {MAX_OUTSTANDING:,} outstanding)"
MAX_EARLY = 64  # responses held per connection for a request the capture shows after them
MAX_SILENT = 1_000  # Produce requests with acks=0 remembered per connection, in case a broker answers anyway
ACKS_ZERO_ANSWERED = "responses to Produce with acks=0"
# Kafka's broker sends nothing back for acks=0 (core/src/main/scala/kafka/server/KafkaApis.scala, handleProduceRequest:
# "if (produceRequest.acks == 0)" ... sendNoOpResponseExemptThrottle; apache/kafka e3f44351a100);
# librdkafka's mock cluster answers anyway: a row says so, matched to its request.
ACKS_ZERO_PROBLEM = "a response to a Produce request with acks=0, which Kafka's broker does not send"
# A response no request asked for, on a connection whose every request the capture holds: the sender's doing.
UNMATCHED = "no request with correlation id {} on this connection"
V0_LAYOUT = "ApiVersions UNSUPPORTED_VERSION response in version 0's layout (KIP-511): decode it at version 0"
_JUDGED = 14  # bytes a request header's plausibility is judged on (size, key, version, id, client id length)
UNDECIDED, CLIENT, SERVER, OFF, TLS_ROLE = "?", "client", "server", "off", "tls"


class _Connection:
    """One TCP connection: its name, outstanding requests by correlation id, what its client said it is."""

    __slots__ = ("early", "name", "outstanding", "sasl_client", "sasl_server", "silent", "software", "whole")

    def __init__(self, name: str) -> None:
        self.name = name
        self.outstanding: dict[int, tuple[int, int, str | None]] = {}  # correlation id: key, version, client id
        self.silent: dict[int, tuple[int, int, str | None]] = {}  # Produce with acks=0: no response expected
        self.early: dict[int, tuple[bytes, float]] = {}  # responses seen before their request (capture reordered)
        self.software: tuple[str | None, str | None] = (None, None)
        self.sasl_client = self.sasl_server = False  # raw SASL tokens flow (after SaslHandshake v0)
        self.whole = False  # every request it carried was seen: its client flow from the SYN on, never out of sync


class _Stream:
    """One direction of a connection: its role, sync state and the one incomplete frame it holds."""

    __slots__ = ("buf", "conn", "dropped", "need", "opened", "role", "search", "synced")

    def __init__(self) -> None:
        self.role = UNDECIDED
        self.conn: _Connection | None = None
        self.buf = bytearray()
        self.need = 4  # bytes ``buf`` must hold before a frame can be cut
        self.synced = True
        self.opened = False
        self.dropped = 0  # bytes seen before its role was known
        self.search: _Search | None = None  # a client flow's search for a boundary, while unsynced


class _Search:
    """A client flow's search for a provable request boundary, incremental over the bytes held: each position is
    looked at once, and a candidate whose proof lies beyond the bytes held waits (``pending``) until it can be
    judged, so feeding a long run of unsynced bytes segment by segment stays linear."""

    __slots__ = ("judged", "pending", "scanned")

    def __init__(self, judged: int = _JUDGED) -> None:
        self.judged = judged  # bytes a frame start is judged on
        self.scanned = 0  # positions before this were looked at
        self.pending: list[tuple[int, int]] = []  # (start, end) of candidates not judged yet

    def advance(self, buf: bytes | bytearray, plausible: Callable[[Any, int, int], bool]) -> int | None:
        """The first candidate proven: its frame ends where the bytes held end, or where another plausible
        frame starts."""
        n, still = len(buf), []
        for pos, stop in self.pending:
            proven = self._proven(buf, stop, plausible)
            if proven:
                return pos
            if proven is None:
                still.append((pos, stop))
        self.pending = still
        for pos in range(self.scanned, n - self.judged + 1):
            if plausible(buf, pos, n):
                stop = pos + 4 + int.from_bytes(buf[pos:pos + 4], "big")
                proven = self._proven(buf, stop, plausible)
                if proven:
                    return pos
                if proven is None:
                    still.append((pos, stop))
        self.scanned = max(self.scanned, n - self.judged + 1)
        return None

    def _proven(self, buf: bytes | bytearray, stop: int, plausible: Callable[[Any, int, int], bool]) -> bool | None:
        """Whether a candidate frame ending at ``stop`` is proven (it ends where the bytes held end, or another
        plausible frame starts there), refuted (False), or cannot be judged yet (None: its end, or the header after
        it, lies beyond the bytes held)."""
        n = len(buf)
        if stop == n or (n - stop >= self.judged and plausible(buf, stop, n)):
            return True
        return None if stop > n or n - stop < self.judged else False

    def keep(self) -> int:
        """How many bytes can go (none of them starts a frame), the positions shifted to the bytes kept."""
        cut = self.pending[0][0] if self.pending else self.scanned
        self.pending = [(pos - cut, stop - cut) for pos, stop in self.pending]
        self.scanned -= cut
        return cut


class KafkaStreams:
    """Rows of Kafka frames from the segments of any number of TCP flows (see the module docstring).

    >>> codec = Codec.load("fixtures/valid")
    >>> streams = KafkaStreams(codec, Tally())
    >>> flow = Flow(("10.0.0.1", 40000), ("10.0.0.2", 9092))
    >>> frame = bytes.fromhex("0000001903e800020000000700026d6500ffffffff01000001f4000100")  # Codec's example
    >>> [(r["direction"], r["api_key"], r["correlation_id"], r["connection"], r["client_id"])
    ...  for r in streams.feed(Segment(flow, 1.0, frame[:5] , opened=True))]
    []
    >>> [(r["direction"], r["api_key"], r["correlation_id"], r["connection"], r["client_id"])
    ...  for r in streams.feed(Segment(flow, 1.5, frame[5:]))]
    [('request', 1000, 7, '10.0.0.1:40000 > 10.0.0.2:9092', 'me')]
    """

    def __init__(self, codec: Codec, tally: Tally, ports: frozenset[int] | None = KAFKA_PORTS) -> None:
        self.requests = Requests(codec)
        self.tally = tally
        self.ports = ports
        self._streams: dict[Flow, _Stream] = {}

    def feed(self, segment: Segment) -> list[dict[str, Any]]:
        """The rows of the frames this segment completes (a list: generators nested per frame were a fifth of
        the cutting time)."""
        out: list[dict[str, Any]] = []
        stream = self._streams.get(segment.flow)
        if stream is None:
            stream = self._streams[segment.flow] = _Stream()
        stream.opened = stream.opened or segment.opened
        if stream.role == UNDECIDED and (segment.data or stream.opened):
            self._decide(segment, stream)
        if not segment.data or stream.role in (OFF, TLS_ROLE):
            return out
        if stream.role == UNDECIDED:
            stream.dropped += len(segment.data)
            return out
        self._cut(stream, segment, out)
        return out

    def finish(self) -> Iterator[dict[str, Any]]:
        """Count what the run ends with: undecided flows, unfinished frames, requests never answered."""
        connections = {id(s.conn): s.conn for s in self._streams.values() if s.conn is not None}
        for stream in self._streams.values():
            if stream.role == UNDECIDED:
                self.tally[NON_KAFKA] += 1
            elif stream.buf and stream.synced and stream.role in (CLIENT, SERVER):
                self.tally[UNFINISHED] += 1
            elif stream.buf:
                self.tally[SKIPPED] += len(stream.buf)  # held while looking for a boundary that never came
        for conn in connections.values():
            self.tally[UNANSWERED] += len(conn.outstanding)
            for correlation, (frame, ts) in conn.early.items():
                yield self._orphan(conn, correlation, frame, ts)
            conn.early.clear()
        self._streams.clear()

    # --- roles ---------------------------------------------------------------------------------------

    def _decide(self, segment: Segment, stream: _Stream) -> None:
        """Set a flow's role from its reverse flow, its SYN, the ports or its first bytes."""
        flow, data = segment.flow, segment.data
        reverse = self._streams.get(flow.reverse())
        if reverse is not None and reverse.role in (CLIENT, SERVER):
            self._assign(flow, stream, SERVER if reverse.role == CLIENT else CLIENT, reverse.conn)
        elif reverse is not None and reverse.role in (OFF, TLS_ROLE):
            self._off(stream, reverse.role, count=reverse.role == OFF)
        elif segment.gap == 0 and is_tls(data):
            self._off(stream, TLS_ROLE)
        elif self.ports is not None:
            self._by_port(segment, stream)
        elif data and self._starts_requests(data, segment.gap):
            self._assign(flow, stream, CLIENT, None)
        elif stream.opened and data:
            self._off(stream, OFF)

    def _by_port(self, segment: Segment, stream: _Stream) -> None:
        """The client is the side sending to a Kafka port; on other ports, a flow whose first bytes are requests
        (a listener the ports do not name)."""
        flow, ports = segment.flow, self.ports or frozenset()
        if flow.dst[1] in ports:
            self._assign(flow, stream, CLIENT, None)
        elif flow.src[1] in ports and not stream.opened:
            self._assign(flow, stream, SERVER, None)
        elif segment.data and self._starts_requests(segment.data, segment.gap):
            self._assign(flow, stream, CLIENT, None)
        else:
            self._off(stream, OFF)

    def _starts_requests(self, data: bytes, gap: int) -> bool:
        """Whether a flow's first bytes are requests: a plausible one at 0, or after a gap a provable boundary."""
        if gap == 0:
            return self.requests.plausible(data, 0, len(data))
        return _Search().advance(data, self.requests.plausible) is not None

    def _assign(self, flow: Flow, stream: _Stream, role: str, conn: _Connection | None) -> None:
        if conn is None:
            client, broker = (flow.src, flow.dst) if role == CLIENT else (flow.dst, flow.src)
            conn = _Connection(f"{endpoint(client)} > {endpoint(broker)}")
        stream.role, stream.conn = role, conn
        if role == CLIENT:
            conn.whole = stream.opened and not stream.dropped
        if stream.dropped:
            self.tally[SKIPPED] += stream.dropped
            stream.synced, stream.dropped = False, 0

    def _off(self, stream: _Stream, role: str, count: bool = True) -> None:
        """Not framed: a non-Kafka flow (each counted) or a TLS connection (counted once, by its first flow)."""
        stream.role = role
        if count:
            self.tally[NON_KAFKA if role == OFF else TLS] += 1

    # --- cutting -------------------------------------------------------------------------------------

    def _cut(self, stream: _Stream, segment: Segment, out: list[dict[str, Any]]) -> None:
        """Rows of a segment's frames onto ``out``: the segment appended to the incomplete frame held, or
        searched for a boundary after a gap."""
        if segment.gap != 0:
            self._lose_sync(stream, CUT if stream.synced and stream.buf else None)
        if stream.synced and not stream.buf:  # the common case: no copy of the segment's bytes
            self._frames(stream, segment.data, segment.ts, out)
            if stream.synced:
                return
        else:
            stream.buf += segment.data
        while True:
            if not stream.synced and not self._resync(stream):
                return
            if len(stream.buf) < stream.need:
                return
            data, stream.buf = bytes(stream.buf), bytearray()
            self._frames(stream, data, segment.ts, out)
            if stream.synced:
                return

    def _lose_sync(self, stream: _Stream, reason: str | None) -> None:
        _requests_lost(stream)
        if reason is not None:
            self.tally[reason] += 1
        self.tally[SKIPPED] += len(stream.buf)
        stream.buf, stream.need, stream.synced, stream.search = bytearray(), 4, False, None

    def _frames(self, stream: _Stream, data: bytes, ts: float, out: list[dict[str, Any]]) -> None:
        """Cut whole frames from ``data`` (starting at a boundary) onto ``out``; keep the incomplete rest, or lose
        sync."""
        pos, end, conn = 0, len(data), stream.conn
        assert conn is not None
        while end - pos >= 4:
            size = int.from_bytes(data[pos:pos + 4], "big", signed=True)
            if not 0 < size <= MAX_FRAME:
                if size == 0 and stream.role == SERVER and conn.sasl_server:
                    self.tally[SASL] += 1  # an empty raw token (SASL/PLAIN's answer)
                    pos += 4
                    continue
                self.tally[REFUSED] += 1
                _requests_lost(stream)
                stream.buf, stream.synced = bytearray(data[pos + 1:]), False
                self.tally[SKIPPED] += 1
                return
            stop = pos + 4 + size
            if stop > end:
                stream.buf, stream.need = bytearray(data[pos:]), 4 + size
                return
            frame, pos = data[pos:stop], stop
            self._rows(stream, conn, frame, ts, out)
        stream.buf, stream.need = bytearray(data[pos:]), 4

    # --- resynchronising ---------------------------------------------------------------------------------

    def _resync(self, stream: _Stream) -> bool:
        """Find a provable frame boundary in the bytes held; drop (and count) what comes before it."""
        buf = stream.buf
        if stream.role == CLIENT:
            search = stream.search = stream.search or _Search()
            start = search.advance(buf, self.requests.plausible)
            cut = start if start is not None else search.keep()
        else:  # a response: a size then an outstanding request's correlation id, proven by where it ends
            assert stream.conn is not None
            outstanding = stream.conn.outstanding
            search = stream.search = stream.search or _Search(RESPONSE_START.size)
            start = search.advance(buf, lambda data, pos, end: _response_start(data, pos, end, outstanding))
            cut = start if start is not None else search.keep()
        self.tally[SKIPPED] += cut
        del buf[:cut]
        stream.synced, stream.need = start is not None, 4
        if start is not None:
            stream.search = None
        return start is not None


    # --- rows ------------------------------------------------------------------------------------------

    def _rows(self, stream: _Stream, conn: _Connection, frame: bytes, ts: float, out: list[dict[str, Any]]) -> None:
        """A frame's row, and after a request the response the capture showed before it (held in ``early``)."""
        row = self._row(stream, conn, frame, ts)
        if row is None:
            return
        out.append(row)
        if conn.early and stream.role == CLIENT and row["correlation_id"] in conn.early:
            late = self._response(conn, *conn.early.pop(row["correlation_id"]))
            if late is not None:
                out.append(late)

    def _row(self, stream: _Stream, conn: _Connection, frame: bytes, ts: float) -> dict[str, Any] | None:
        if stream.role == CLIENT:
            return self._request(conn, frame, ts)
        return self._response(conn, frame, ts)

    def _request(self, conn: _Connection, frame: bytes, ts: float) -> dict[str, Any] | None:
        requests = self.requests
        if conn.sasl_client:
            if not requests.plausible(frame, 0, len(frame)):
                self.tally[SASL] += 1
                return None
            conn.sasl_client = False
        header = requests.header(frame) if len(frame) >= REQUEST_START.size else None
        if header is None:
            return _row(conn, REQUEST, None, None, None, frame, ts, None, "a request needs 12 bytes at least")
        if header.api_key == API_VERSIONS and header.api_version >= 3:
            conn.software = requests.software(frame)
        elif header.api_key == SASL_HANDSHAKE and header.api_version == 0:
            conn.sasl_client = conn.sasl_server = True
        if header.api_key != PRODUCE or requests.acks(frame, header) != 0:
            self._expect(conn, header)
        else:  # kept aside, bounded and uncounted: a broker that answers anyway is matched, and told
            if len(conn.silent) >= MAX_SILENT:
                del conn.silent[next(iter(conn.silent))]
            conn.silent[header.correlation_id] = (header.api_key, header.api_version, header.client_id)
        return _row(conn, REQUEST, header.api_key, header.api_version, header.correlation_id, frame, ts,
                    header.client_id, None)

    def _expect(self, conn: _Connection, header: Header) -> None:
        outstanding = conn.outstanding
        if len(outstanding) >= MAX_OUTSTANDING and header.correlation_id not in outstanding:
            del outstanding[next(iter(outstanding))]
            self.tally[DROPPED] += 1
        outstanding[header.correlation_id] = (header.api_key, header.api_version, header.client_id)

    def _response(self, conn: _Connection, frame: bytes, ts: float) -> dict[str, Any] | None:
        correlation = RESPONSE_START.unpack_from(frame)[1] if len(frame) >= RESPONSE_START.size else None
        request = conn.outstanding.pop(correlation, None) if correlation is not None else None
        if request is None and correlation in conn.silent:
            self.tally[ACKS_ZERO_ANSWERED] += 1
            api_key, api_version, client_id = conn.silent.pop(correlation)
            return _row(conn, RESPONSE, api_key, api_version, correlation, frame, ts, client_id, ACKS_ZERO_PROBLEM)
        if request is None:
            if conn.sasl_server:
                self.tally[SASL] += 1
                return None
            if correlation is not None and correlation not in conn.early and len(conn.early) < MAX_EARLY:
                conn.early[correlation] = (frame, ts)  # its request may still come (a capture reordered)
                return None
            return self._orphan(conn, correlation, frame, ts)
        api_key, api_version, client_id = request
        if api_key != SASL_HANDSHAKE:
            conn.sasl_server = False
        layout = V0_LAYOUT if api_key == API_VERSIONS and api_version > 0 and v0_error_layout(frame) else None
        return _row(conn, RESPONSE, api_key, api_version, correlation, frame, ts, client_id, layout)

    def _orphan(self, conn: _Connection, correlation: int | None, frame: bytes, ts: float) -> dict[str, Any]:
        """A response no request of its connection asked for (the capture began after it was sent)."""
        self.tally[ORPHANS] += 1
        if correlation is None:
            problem = "a response needs 8 bytes at least"
        elif conn.whole:
            problem = UNMATCHED.format(correlation)
        else:
            problem = f"no request with correlation id {correlation} in the capture (it lacks some of this connection)"
        return _row(conn, RESPONSE, None, None, correlation, frame, ts, None, problem)


def _requests_lost(stream: _Stream) -> None:
    """A client flow that lost bytes or sync: its connection's responses without a request may have had one."""
    if stream.role == CLIENT and stream.conn is not None:
        stream.conn.whole = False


def _response_start(buf: bytes | bytearray, pos: int, end: int, outstanding: dict[int, Any]) -> bool:
    """Whether a response may start at ``pos``: a size Kafka allows, then a correlation id awaiting its response."""
    if end - pos < RESPONSE_START.size:
        return False
    size, correlation = RESPONSE_START.unpack_from(buf, pos)
    return 4 <= size <= MAX_FRAME and correlation in outstanding


def _row(conn: _Connection, direction: str, api_key: int | None, api_version: int | None, correlation: int | None,
         frame: bytes, ts: float, client_id: str | None, problem: str | None) -> dict[str, Any]:
    name, version = conn.software
    return {"api_key": api_key, "api_version": api_version, "direction": direction, "correlation_id": correlation,
            "bytes": frame, "ts": ts, "connection": conn.name, "client_id": client_id, "software_name": name,
            "software_version": version, "problem": problem}

def unmatched(problem: str) -> bool:
    """Whether a row's problem says its response answers no request of a connection seen whole.

    >>> unmatched(UNMATCHED.format(9)), unmatched("no request with correlation id 9 in the capture (...)")
    (True, False)
    """
    head, _, tail = UNMATCHED.partition("{}")
    return problem.startswith(head) and problem.endswith(tail) and problem[len(head):-len(tail)].lstrip("-").isdigit()


__all__ = ["ACKS_ZERO_PROBLEM", "MAX_OUTSTANDING", "UNMATCHED", "V0_LAYOUT", "KafkaStreams", "unmatched"]
