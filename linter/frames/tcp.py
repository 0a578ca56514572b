"""TCP reassembly (issue 27): the packets of each flow (one direction of a connection) put back in stream
order, each byte once, released as soon as they are in order, and never glued across a hole.

Sequence numbers are unwrapped into stream offsets (0 is the byte after the SYN, or the first byte seen of a
flow picked up mid-stream), so wrapping at 2**32 is invisible past ``_Flow.offset``. Segments ahead of a hole
wait in a dict by offset with a heap of their offsets, and a run is joined once when it is released: a
connection of a million tiny segments costs O(log held) per segment, never a join per segment. Where copies
overlap, the first copy of a byte wins, as Wireshark's default: bytes already released are never replaced, a
later copy at a held offset only adds what reaches past the held one; among held copies at different offsets,
the one starting first wins the overlap. Memory is bounded by open flows: at most ``window`` bytes (and
``MAX_HELD`` segments) held per flow, at most ``max_flows`` flows (the least recently active is released and
forgotten).

    >>> from linter.frames.traffic import Flow, Packet, Tally
    >>> flow, tally = Flow(("10.0.0.1", 51000), ("10.0.0.2", 9092)), Tally()
    >>> tcp = Reassembler(tally)
    >>> def packet(seq, data, flags=0x18): return Packet("x.pcap", 1, 0.0, flow, seq, flags, data)
    >>> list(tcp.feed(packet(100, b"", 0x02)))  # SYN: offset 0 is sequence number 101
    []
    >>> list(tcp.feed(packet(104, b"defg")))  # ahead of a hole: held
    []
    >>> [(s.data, s.gap, s.opened) for s in tcp.feed(packet(101, b"abc"))]
    [(b'abcdefg', 0, True)]
    >>> list(tcp.feed(packet(120, b"xyz")))
    []
    >>> [(s.data, s.gap) for s in tcp.finish()], tally.line()
    ([(b'xyz', 12)], 'bytes lost (gaps): 12')
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Iterator

from linter.frames.traffic import Flow, Packet, Segment, Tally

SYN, FIN, RST, ACK = 0x02, 0x01, 0x04, 0x10
WRAP, HALF = 1 << 32, 1 << 31
WINDOW = 4 << 20  # bytes held ahead of a hole per flow before the hole is given up as lost
MAX_FLOWS = 100_000  # flows tracked at once; the least recently active goes first
MAX_HELD = 65_536  # segments held per flow: tiny segments must not cost far more than their bytes
LOST = "bytes lost (gaps)"
EVICTED = "flows evicted (too many open)"


class _Flow:
    """One flow's reassembly: the offset of the next byte to release, the segments held ahead of it, the run
    being built by the current packet, and the gap to report before that run."""

    __slots__ = ("base", "closed", "fin", "gap", "heap", "held", "held_bytes", "isn", "next", "opened", "run",
                 "ts")

    def __init__(self, base: int, gap: int, opened: bool = False, isn: int | None = None) -> None:
        self.base = base  # the sequence number of offset 0
        self.next = 0
        self.held: dict[int, tuple[bytes, int]] = {}  # offset -> (bytes, bytes the capture cut after them)
        self.heap: list[int] = []  # the offsets of ``held``
        self.held_bytes = 0
        self.run: list[bytes] = []
        self.gap = gap  # -1 until the first bytes of a flow picked up mid-stream are out
        self.opened, self.isn = opened, isn
        self.fin: int | None = None  # the offset the FIN ends the stream at
        self.closed = False
        self.ts = 0.0  # the timestamp of the flow's latest packet: the one completing what is released

    def offset(self, seq: int) -> int:
        """The stream offset of sequence number ``seq``: the nearest to ``next`` modulo 2**32."""
        delta = (seq - self.base - self.next) % WRAP
        return self.next + (delta - WRAP if delta >= HALF else delta)


class Reassembler:
    """Packets in, ``Segment``s of in-order bytes out, per flow; what could not be recovered is counted in
    ``tally`` (``bytes lost (gaps)``, ``flows evicted (too many open)``)."""

    def __init__(self, tally: Tally, window: int = WINDOW, max_flows: int = MAX_FLOWS) -> None:
        self.tally, self.window, self.max_flows = tally, window, max_flows
        self.flows: OrderedDict[Flow, _Flow] = OrderedDict()
        self._out: list[Segment] = []

    def feed(self, packet: Packet) -> Iterator[Segment]:
        """The runs of bytes ``packet`` puts in order (none when it is ahead of a hole or a retransmission)."""
        out, self._out = self._out, []
        state = self._state(packet)
        if state is not None:
            state.ts = packet.ts
            start = state.offset(packet.seq + 1 if packet.flags & SYN else packet.seq)
            if packet.payload or packet.missing:
                self._data(state, packet.flow, start, packet)
            self._flush(state, packet.flow)
            if packet.flags & (FIN | RST) or state.fin is not None:
                self._end(state, packet.flow, packet.flags, start + len(packet.payload) + packet.missing)
        out, self._out = self._out, out
        return iter(out)

    def finish(self) -> Iterator[Segment]:
        """The bytes still held at the end of the input, each flow's after its holes (counted as lost)."""
        out, self._out = self._out, []
        for flow, state in self.flows.items():
            if not state.closed:
                self._close(state, flow)
        self.flows.clear()
        out, self._out = self._out, out
        return iter(out)

    def _state(self, packet: Packet) -> _Flow | None:
        """The flow state ``packet`` belongs to: a SYN starts one (after flushing a previous connection of the
        same addresses), data without one is picked up mid-stream; None for a bare ACK, FIN or RST of a flow
        not followed, or a retransmission into a closed flow."""
        flow, state = packet.flow, self.flows.get(packet.flow)
        if packet.flags & SYN:
            if state is not None and state.isn == packet.seq:  # the SYN again
                self.flows.move_to_end(flow)
                return None if state.closed else state
            if state is not None and not state.closed:
                self._close(state, flow)
            return self._start(flow, _Flow(packet.seq + 1, 0, not packet.flags & ACK, packet.seq))
        if state is not None and not state.closed:
            self.flows.move_to_end(flow)
            return state
        if not packet.payload and not packet.missing:
            return None
        if state is not None and state.offset(packet.seq) + len(packet.payload) + packet.missing <= state.next:
            return None  # bytes the closed flow already gave
        return self._start(flow, _Flow(packet.seq, -1))

    def _start(self, flow: Flow, state: _Flow) -> _Flow:
        self.flows[flow] = state
        self.flows.move_to_end(flow)
        while len(self.flows) > self.max_flows:
            old_flow, old = self.flows.popitem(last=False)
            if not old.closed:
                self.tally[EVICTED] += 1
                self._close(old, old_flow)
        return state

    def _data(self, state: _Flow, flow: Flow, start: int, packet: Packet) -> None:
        """Places ``packet``'s bytes at ``start``: what was released already is dropped (the first copy wins),
        the rest is released when it starts at ``next``, held otherwise."""
        data, missing = packet.payload, packet.missing
        if start < state.next:
            skip = min(state.next - start, len(data))
            data, start = data[skip:], start + skip
            if start < state.next:  # only the cut part reaches past what was released
                missing, start = missing - (state.next - start), state.next
                if missing <= 0:
                    return
        if start == state.next:
            self._release(state, flow, data, missing)
            self._pull(state, flow)
        else:
            self._hold(state, start, data, missing)
            while state.held_bytes > self.window or len(state.held) > MAX_HELD:
                self._skip_hole(state, flow)

    def _hold(self, state: _Flow, start: int, data: bytes, missing: int) -> None:
        held = state.held.get(start)
        if held is None:
            state.held[start] = (data, missing)
            heapq.heappush(state.heap, start)
            state.held_bytes += len(data)
        elif len(data) > len(held[0]):  # the first copy keeps its bytes; the longer one adds its tail
            state.held[start] = (held[0] + data[len(held[0]):], missing)
            state.held_bytes += len(data) - len(held[0])

    def _release(self, state: _Flow, flow: Flow, data: bytes, missing: int) -> None:
        """Bytes at ``next`` join the run; bytes the capture cut after them end it with a gap."""
        if data:
            state.run.append(data)
            state.next += len(data)
        if missing > 0:
            self._jump(state, flow, state.next + missing)

    def _pull(self, state: _Flow, flow: Flow) -> None:
        """Releases the held segments that now start at or before ``next``."""
        heap, held = state.heap, state.held
        while heap and heap[0] <= state.next:
            start = heapq.heappop(heap)
            data, missing = held.pop(start)
            state.held_bytes -= len(data)
            end = start + len(data)
            if end > state.next:
                self._release(state, flow, data[state.next - start:], missing)
            elif end + missing > state.next:
                self._jump(state, flow, end + missing)

    def _skip_hole(self, state: _Flow, flow: Flow) -> None:
        """Gives up the hole before the first held segment as lost and releases what follows it."""
        self._jump(state, flow, state.heap[0])
        self._pull(state, flow)

    def _jump(self, state: _Flow, flow: Flow, offset: int) -> None:
        """Ends the run at a hole up to ``offset``: its bytes are counted lost and reported as the next gap."""
        self._flush(state, flow)
        lost = offset - state.next
        self.tally[LOST] += lost
        if state.gap >= 0:
            state.gap += lost
        state.next = offset

    def _flush(self, state: _Flow, flow: Flow) -> None:
        """The run so far as one Segment (joined once)."""
        if state.run:
            data = state.run[0] if len(state.run) == 1 else b"".join(state.run)
            self._out.append(Segment(flow, state.ts, data, state.gap, state.opened))
            state.run, state.gap = [], 0

    def _end(self, state: _Flow, flow: Flow, flags: int, end: int) -> None:
        """A RST closes the flow now; a FIN once every byte before it is out (a retransmission may still fill
        a hole before it)."""
        if flags & RST:
            self._close(state, flow)
            return
        if flags & FIN:
            state.fin = end if state.fin is None else min(state.fin, end)
        if state.fin is not None and state.next >= state.fin:
            self._close(state, flow)

    def _close(self, state: _Flow, flow: Flow) -> None:
        """Releases what is held (holes counted lost) and marks the flow closed; it stays known so a late
        retransmission is not taken for a new flow."""
        while state.heap:
            self._skip_hole(state, flow)
        self._flush(state, flow)
        state.closed = True
