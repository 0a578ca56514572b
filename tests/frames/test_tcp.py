"""TCP reassembly (issue 27): each byte once and in order whatever the packets' order, duplicates and overlaps;
holes reported as gaps and never glued over; memory and time bounded by open flows, not by segments."""

from __future__ import annotations

import random
import time
import tracemalloc
from collections.abc import Iterator

from support.packets import ACK, FIN, PSH, RST, SYN, joined, payload, reassembled

from linter.frames.tcp import EVICTED, LOST, Reassembler
from linter.frames.traffic import Flow, Packet, Tally

FLOW = Flow(("10.0.0.1", 51000), ("10.0.0.2", 9092))
BACK = FLOW.reverse()
ISN = 1000
DATA = payload(3000)


def packet(seq: int, data: bytes = b"", flags: int = ACK | PSH, flow: Flow = FLOW, missing: int = 0,
           number: int = 0) -> Packet:
    return Packet("t.pcap", number, float(number), flow, seq % (1 << 32), flags, data, missing)


def syn(isn: int = ISN, flow: Flow = FLOW, flags: int = SYN) -> Packet:
    return packet(isn, flags=flags, flow=flow)


def cut(data: bytes, size: int, isn: int = ISN) -> list[Packet]:
    """``data`` in ``size``-byte segments after a SYN with ``isn``."""
    return [packet(isn + 1 + start, data[start:start + size]) for start in range(0, len(data), size)]


def test_in_order_and_shuffled_duplicated_overlapping_give_the_same_bytes() -> None:
    in_order = cut(DATA, 100)
    shuffled = in_order[:]
    random.Random(27).shuffle(shuffled)
    duplicated = [one for pair in zip(in_order, in_order, strict=True) for one in pair]
    overlapping = cut(DATA, 100) + cut(DATA, 150)  # a retransmission resegmented
    random.Random(9).shuffle(overlapping)
    for packets in (in_order, shuffled, duplicated, overlapping):
        tally = Tally()
        segments = reassembled([syn(), *packets], tally)[FLOW]
        assert joined(segments) == DATA
        assert [segment.gap for segment in segments] == [0] * len(segments)
        assert all(segment.opened for segment in segments)
        assert tally[LOST] == 0


def test_runs_are_released_as_soon_as_in_order_and_coalesced() -> None:
    tcp = Reassembler(Tally())
    list(tcp.feed(syn()))
    reverse = cut(DATA, 100)[::-1]
    released = [list(tcp.feed(one)) for one in reverse]
    assert released[:-1] == [[]] * (len(reverse) - 1)  # all held until the first segment comes
    assert [segment.data for segment in released[-1]] == [DATA]  # then one Segment, joined once
    [more] = tcp.feed(packet(ISN + 1 + len(DATA), b"more"))
    assert more.data == b"more"  # no holding once in order


def test_the_first_copy_of_a_byte_wins() -> None:
    first, later = packet(ISN + 1, b"abcdef"), packet(ISN + 1, b"ABCDEFGH")
    assert joined(reassembled([syn(), first, later])[FLOW]) == b"abcdefGH"
    held, in_order = packet(ISN + 4, b"xyz"), packet(ISN + 1, b"ABCDEF")  # held first, then overlapped
    assert joined(reassembled([syn(), held, in_order])[FLOW]) == b"ABCDEF"[:6]  # released bytes stay
    assert joined(reassembled([syn(), packet(ISN + 4, b"xyz"), packet(ISN + 1, b"ab"), packet(ISN + 3, b"c")])
                  [FLOW]) == b"abcxyz"


def test_a_dropped_segment_is_a_gap_never_glued() -> None:
    packets = cut(DATA, 100)
    del packets[5]
    tally = Tally()
    segments = reassembled([syn(), *packets, packet(ISN + 1 + len(DATA), flags=FIN | ACK)], tally)[FLOW]
    assert [segment.gap for segment in segments] == [0] * 5 + [100]  # a Segment per packet, then the rest at the end
    assert (joined(segments[:5]), joined(segments[5:])) == (DATA[:500], DATA[600:])
    assert tally[LOST] == 100


def test_a_lost_first_segment_after_the_syn_is_a_known_gap() -> None:
    segments = reassembled([syn(), *cut(DATA, 100)[1:]])[FLOW]
    assert [(segment.gap, segment.data) for segment in segments] == [(100, DATA[100:])]


def test_a_flow_picked_up_mid_stream_starts_with_an_unknown_gap() -> None:
    segments = reassembled(cut(DATA, 100)[3:])[FLOW]
    assert segments[0].gap == -1 and not segments[0].opened
    assert joined(segments) == DATA[300:]


def test_the_client_is_the_side_whose_syn_had_no_ack() -> None:
    flows = reassembled([syn(), syn(5000, BACK, SYN | ACK), packet(ISN + 1, b"req"),
                         packet(5001, b"resp", flow=BACK)])
    assert flows[FLOW][0].opened and not flows[BACK][0].opened


def test_sequence_numbers_wrap_at_2_to_the_32() -> None:
    isn = (1 << 32) - 450
    packets = cut(DATA, 100, isn)
    random.Random(3).shuffle(packets)
    assert joined(reassembled([syn(isn), *packets])[FLOW]) == DATA


def test_snaplen_cut_bytes_are_a_gap() -> None:
    tally = Tally()
    packets = [packet(ISN + 1, DATA[:60], missing=40), packet(ISN + 101, DATA[100:200])]
    segments = reassembled([syn(), *packets], tally)[FLOW]
    assert [(segment.data, segment.gap) for segment in segments] == [(DATA[:60], 0), (DATA[100:200], 40)]
    assert tally[LOST] == 40


def test_a_full_window_gives_up_the_hole() -> None:
    tally = Tally()
    tcp = Reassembler(tally, window=1000)
    list(tcp.feed(syn()))
    released = [segment for one in cut(DATA, 100)[1:] for segment in tcp.feed(one)]
    assert released and released[0].gap == 100 and released[0].data.startswith(DATA[100:1100])
    assert joined(released) + joined(tcp.finish()) == DATA[100:]
    assert tally[LOST] == 100


def test_a_new_syn_flushes_the_old_connection_first() -> None:
    old = [syn(), packet(ISN + 1, b"old"), packet(ISN + 10, b"held")]
    segments = reassembled([*old, syn(77), packet(78, b"new")])[FLOW]
    assert [(segment.data, segment.gap) for segment in segments] == [(b"old", 0), (b"held", 6), (b"new", 0)]


def test_a_retransmitted_syn_restarts_nothing() -> None:
    assert joined(reassembled([syn(), packet(ISN + 1, b"abc"), syn(), packet(ISN + 4, b"def")])[FLOW]) == b"abcdef"


def test_rst_releases_what_is_held() -> None:
    tcp = Reassembler(Tally())
    list(tcp.feed(syn()))
    list(tcp.feed(packet(ISN + 1, b"abc")))
    assert list(tcp.feed(packet(ISN + 9, b"late"))) == []
    [segment] = tcp.feed(packet(ISN + 13, flags=RST))
    assert (segment.data, segment.gap) == (b"late", 5)


def test_a_fin_waits_for_the_retransmission_before_it() -> None:
    packets = cut(DATA, 100)
    fin = packet(ISN + 1 + len(DATA), flags=FIN | ACK)
    segments = reassembled([syn(), *packets[:4], *packets[5:], fin, packets[4]])[FLOW]
    assert joined(segments) == DATA and all(segment.gap == 0 for segment in segments)


def test_a_late_retransmission_after_the_close_is_not_a_new_flow() -> None:
    packets = cut(DATA, 100)
    fin = packet(ISN + 1 + len(DATA), flags=FIN | ACK)
    segments = reassembled([syn(), *packets, fin, packets[3], fin])[FLOW]
    assert joined(segments) == DATA


def test_too_many_open_flows_evict_the_oldest() -> None:
    tally = Tally()
    flows = [Flow(("10.0.0.1", port), ("10.0.0.2", 9092)) for port in range(1000, 1004)]
    packets = [packet(1, b"x", flow=flow) for flow in flows] + [packet(5, b"held", flow=flows[0])]
    out = reassembled(packets, tally, max_flows=2)
    assert tally[EVICTED] == 3
    assert sorted(out) == sorted(flows) and out[flows[0]][-1].gap == -1


def _tiny(count: int) -> Iterator[Packet]:
    """One connection of ``count`` one-byte segments, every other pair swapped and every tenth sent twice."""
    yield syn()
    for index in range(0, count, 2):
        first, second = packet(ISN + 1 + index, b"a"), packet(ISN + 2 + index, b"b")
        yield second
        yield first
        if index % 10 == 0:
            yield first


def _cost(count: int) -> tuple[float, int, int]:
    """CPU seconds, bytes out and peak traced memory of reassembling ``_tiny(count)``."""
    tcp, total = Reassembler(Tally()), 0
    tracemalloc.start()
    start = time.process_time()
    for one in _tiny(count):
        for segment in tcp.feed(one):
            total += len(segment.data)
    elapsed = time.process_time() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, total, peak


def test_a_million_tiny_segments_cost_linear_time_and_constant_memory() -> None:
    small_time, small_bytes, small_peak = _cost(50_000)
    large_time, large_bytes, large_peak = _cost(400_000)
    assert (small_bytes, large_bytes) == (50_000, 400_000)
    assert large_time / max(small_time, 1e-3) < 8 * 2.5  # 8 times the segments: linear, with room for noise
    assert large_peak < small_peak + 64_000  # nothing grows with the count of segments
