"""Codec speed: ``linter.codec.Codec`` side by side with kio (PyPI ``kio``, Rust decoder) in one run.

Cases (same logical value for both codecs; the two encodings are checked to be byte-identical):

* MetadataResponse v12, 100 topics x 10 partitions (and 5 brokers)
* FetchRequest v16, 50 topics x 20 partitions (tagged ClusterId set, 2 forgotten topics)
* ApiVersionsRequest v3

Each of encode and decode is timed in batches of a calibrated size, ours and kio's in turns,
until each has run for at least ``--min-time`` seconds and ``--batches`` batches; the median
batch gives messages/s and MB/s (10^6 bytes of encoded message). The garbage collector stays on,
as in real use, with the setup frozen out of it (``gc.freeze``). Goals: encode >= 5x kio, decode >= 1x kio.

Usage: python bench/codec.py [--min-time S] [--batches N] [--specs DIR] [--profile]

Needs kio (``.venv/bin/pip install kio``) and the Kafka specs in ../shared; exits 2 without them.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from random import Random
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10"
ENCODE_GOAL, DECODE_GOAL = 5.0, 1.0
PROFILE_CASE = "MetadataResponse"


@dataclass
class Case:
    label: str
    name: str  # message name in the specs
    version: int
    ours: dict[str, Any]  # our codec's value
    kio_type: type
    kio_value: Any  # the same value as a kio entity


# --- the cases: one generator of field values feeds both codecs ----------------------------------


def _uuids(count: int, seed: int) -> list[uuid.UUID]:
    rng = Random(seed)
    return [uuid.UUID(int=rng.getrandbits(128)) for _ in range(count)]


def metadata_response() -> Case:
    from kio.schema.errors import ErrorCode
    from kio.schema.metadata.v12 import response as k
    from kio.static.primitive import i32Timedelta

    brokers = [(node, f"broker-{node}.kafka.example.com", 9092, f"rack-{node % 3}") for node in range(5)]
    topic_ids = _uuids(100, seed=12)
    topics = []
    for t, topic_id in enumerate(topic_ids):
        partitions = []
        for p in range(10):
            replicas = [(p + r) % 5 for r in range(3)]
            partitions.append((p, replicas[0], 7 + p % 3, replicas, replicas[:2 + p % 2], [] if p % 4 else [replicas[2]]))
        topics.append((f"topic-{t:03d}.events", topic_id, t % 17 == 0, partitions, 0x0FF8))
    throttle, cluster_id, controller = 0, "kAfKa-cLuStEr-Id-0001", 1

    ours = {
        "throttleTimeMs": throttle,
        "brokers": [{"nodeId": n, "host": h, "port": port, "rack": rack} for n, h, port, rack in brokers],
        "clusterId": cluster_id,
        "controllerId": controller,
        "topics": [{
            "errorCode": 0, "name": name, "topicId": topic_id, "isInternal": internal,
            "partitions": [{
                "errorCode": 0, "partitionIndex": index, "leaderId": leader, "leaderEpoch": epoch,
                "replicaNodes": list(replicas), "isrNodes": list(isr), "offlineReplicas": list(offline),
            } for index, leader, epoch, replicas, isr, offline in partitions],
            "topicAuthorizedOperations": ops,
        } for name, topic_id, internal, partitions, ops in topics],
    }
    kio_value = k.MetadataResponse(
        throttle_time=i32Timedelta.parse(timedelta(milliseconds=throttle)),
        brokers=tuple(k.MetadataResponseBroker(node_id=n, host=h, port=port, rack=rack) for n, h, port, rack in brokers),
        cluster_id=cluster_id,
        controller_id=controller,
        topics=tuple(k.MetadataResponseTopic(
            error_code=ErrorCode(0), name=name, topic_id=topic_id, is_internal=internal,
            partitions=tuple(k.MetadataResponsePartition(
                error_code=ErrorCode(0), partition_index=index, leader_id=leader, leader_epoch=epoch,
                replica_nodes=tuple(replicas), isr_nodes=tuple(isr), offline_replicas=tuple(offline),
            ) for index, leader, epoch, replicas, isr, offline in partitions),
            topic_authorized_operations=ops,
        ) for name, topic_id, internal, partitions, ops in topics),
    )
    return Case("MetadataResponse v12 (100x10)", "MetadataResponse", 12, ours, k.MetadataResponse, kio_value)


def fetch_request() -> Case:
    from kio.schema.fetch.v16 import request as k
    from kio.static.primitive import i32Timedelta

    topic_ids = _uuids(52, seed=16)
    topics = [(topic_id, [(p, 5 + p % 2, 1_000_000 * t + 4_096 * p, 4, -1, 1_048_576) for p in range(20)])
              for t, topic_id in enumerate(topic_ids[:50])]
    forgotten = [(topic_id, [0, 1, 2]) for topic_id in topic_ids[50:]]
    cluster_id, max_wait, min_bytes, max_bytes, isolation, session, epoch, rack = \
        "kAfKa-cLuStEr-Id-0001", 500, 1, 52_428_800, 1, 1_234_567, 3, "rack-1"

    ours = {
        "clusterId": cluster_id,  # tag 0: set, so both codecs write a tagged field
        "replicaState": {"replicaId": -1, "replicaEpoch": -1},  # tag 1: default, written by neither
        "maxWaitMs": max_wait, "minBytes": min_bytes, "maxBytes": max_bytes, "isolationLevel": isolation,
        "sessionId": session, "sessionEpoch": epoch,
        "topics": [{"topicId": topic_id, "partitions": [{
            "partition": index, "currentLeaderEpoch": leader_epoch, "fetchOffset": offset,
            "lastFetchedEpoch": last_epoch, "logStartOffset": log_start, "partitionMaxBytes": limit,
        } for index, leader_epoch, offset, last_epoch, log_start, limit in partitions]}
            for topic_id, partitions in topics],
        "forgottenTopicsData": [{"topicId": topic_id, "partitions": list(parts)} for topic_id, parts in forgotten],
        "rackId": rack,
    }
    kio_value = k.FetchRequest(
        cluster_id=cluster_id,
        replica_state=k.ReplicaState(replica_id=-1, replica_epoch=-1),
        max_wait=i32Timedelta.parse(timedelta(milliseconds=max_wait)), min_bytes=min_bytes, max_bytes=max_bytes,
        isolation_level=isolation, session_id=session, session_epoch=epoch,
        topics=tuple(k.FetchTopic(topic_id=topic_id, partitions=tuple(k.FetchPartition(
            partition=index, current_leader_epoch=leader_epoch, fetch_offset=offset,
            last_fetched_epoch=last_epoch, log_start_offset=log_start, partition_max_bytes=limit,
        ) for index, leader_epoch, offset, last_epoch, log_start, limit in partitions))
            for topic_id, partitions in topics),
        forgotten_topics_data=tuple(k.ForgottenTopic(topic_id=topic_id, partitions=tuple(parts))
                                    for topic_id, parts in forgotten),
        rack_id=rack,
    )
    return Case("FetchRequest v16 (50x20)", "FetchRequest", 16, ours, k.FetchRequest, kio_value)


def api_versions_request() -> Case:
    from kio.schema.api_versions.v3.request import ApiVersionsRequest

    name, version = "apache-kafka-java", "3.9.0"
    ours = {"clientSoftwareName": name, "clientSoftwareVersion": version}
    kio_value = ApiVersionsRequest(client_software_name=name, client_software_version=version)
    return Case("ApiVersionsRequest v3", "ApiVersionsRequest", 3, ours, ApiVersionsRequest, kio_value)


CASES = (metadata_response, fetch_request, api_versions_request)


# --- timing ----------------------------------------------------------------------------------------


def calibrate(fn: Callable[[], Any], target: float) -> int:
    """How many calls of ``fn`` take about ``target`` seconds."""
    count = 1
    while True:
        start = time.perf_counter()
        for _ in range(count):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= target / 2:
            return max(1, round(count * target / elapsed))
        count *= 2 if elapsed == 0 else max(2, min(100, int(target / elapsed) + 1))


def per_call_seconds(fns: list[Callable[[], Any]], min_time: float, batches: int) -> list[float]:
    """Median seconds per call of each function, over batches of a calibrated size run in turns
    (so a change of machine load hits all of them alike), each for at least ``min_time`` seconds."""
    target = min_time / batches
    counts = [calibrate(fn, target) for fn in fns]
    samples: list[list[float]] = [[] for _ in fns]
    spent = [0.0 for _ in fns]
    while min(map(len, samples)) < batches or min(spent) < min_time:
        for fn, count, own, index in zip(fns, counts, samples, range(len(fns))):
            start = time.perf_counter()
            for _ in range(count):
                fn()
            elapsed = time.perf_counter() - start
            spent[index] += elapsed
            own.append(elapsed / count)
    return [statistics.median(own) for own in samples]


def first_difference(a: bytes, b: bytes) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


# --- main ------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per measurement, at least (0.5)")
    parser.add_argument("--batches", type=int, default=7, help="timed batches per measurement, at least (7)")
    parser.add_argument("--specs", type=Path, default=SPEC_DIR, help="Kafka spec directory (trunk-2024-10 in ../shared)")
    parser.add_argument("--profile", action="store_true",
                        help=f"also cProfile our encode and decode of {PROFILE_CASE} (top 8 by tottime)")
    args = parser.parse_args()

    if not args.specs.is_dir():
        print(f"bench/codec.py: the Kafka specs are missing: {args.specs} (../shared beside the repo)",
              file=sys.stderr)
        return 2
    try:
        from kio.serial import entity_reader, entity_writer
    except ImportError as exc:
        print(f"bench/codec.py: kio is not installed ({exc}); install it with: .venv/bin/pip install kio",
              file=sys.stderr)
        return 2
    from importlib.metadata import version as dist_version

    from linter.codec import Codec

    codec = Codec.load(args.specs)
    cases = [build() for build in CASES]
    gc.collect()
    gc.freeze()  # the long-lived setup (specs, cases) is not traversed by the collections timed below
    print(f"codec speed: linter.codec vs kio {dist_version('kio')} (Rust decoder), Python "
          f"{sys.version.split()[0]}; median of >= {args.batches} batches, >= {args.min_time} s per measurement; "
          "MB = 10^6 bytes")

    rows = []
    for case in cases:
        name, version, value = case.name, case.version, case.ours
        write, read = entity_writer(case.kio_type), entity_reader(case.kio_type)

        def kio_encode(write=write, entity=case.kio_value) -> bytes:
            with io.BytesIO() as buffer:
                write(buffer, entity)
                return buffer.getvalue()

        ours_data, kio_data = codec.encode(name, version, value), kio_encode()
        if ours_data != kio_data:
            at = first_difference(ours_data, kio_data)
            print(f"WARNING: {case.label}: encodings differ ({len(ours_data)} vs {len(kio_data)} bytes, first at "
                  f"offset {at}: ours {ours_data[at:at + 8].hex()} kio {kio_data[at:at + 8].hex()})")
        if codec.decode(name, version, kio_data) != value:
            print(f"WARNING: {case.label}: our decode of kio's bytes is not the value encoded")
        if read(ours_data, 0) != (case.kio_value, len(ours_data)):
            print(f"WARNING: {case.label}: kio's decode of our bytes is not the value encoded")

        pairs = {
            "encode": (lambda name=name, version=version, value=value: codec.encode(name, version, value),
                       kio_encode),
            "decode": (lambda name=name, version=version, data=ours_data: codec.decode(name, version, data),
                       lambda read=read, data=kio_data: read(data, 0)),
        }
        for op, goal in (("encode", ENCODE_GOAL), ("decode", DECODE_GOAL)):
            ours_s, kio_s = per_call_seconds(list(pairs[op]), args.min_time, args.batches)
            rows.append((case.label, len(ours_data), op, ours_s, kio_s, goal))

    print()
    print(f"{'case':30} {'bytes':>6} {'op':6} {'ours msg/s':>11} {'ours MB/s':>9} {'kio msg/s':>11} "
          f"{'kio MB/s':>9} {'ours/kio':>8}  goal")
    failed = 0
    for label, size, op, ours_s, kio_s, goal in rows:
        ratio = kio_s / ours_s  # throughput ratio ours/kio
        met = ratio >= goal
        failed += not met
        print(f"{label:30} {size:6} {op:6} {1 / ours_s:11,.0f} {size / ours_s / 1e6:9.1f} {1 / kio_s:11,.0f} "
              f"{size / kio_s / 1e6:9.1f} {ratio:7.2f}x  >= {goal:g}x {'met' if met else 'NOT MET'}")
    print(f"\ngoals: encode >= {ENCODE_GOAL:g}x kio, decode >= {DECODE_GOAL:g}x kio: "
          f"{len(rows) - failed} of {len(rows)} met")

    if args.profile:
        case = next(c for c in cases if c.name == PROFILE_CASE)
        data = codec.encode(case.name, case.version, case.ours)
        profile(f"our encode of {case.label}", lambda: codec.encode(case.name, case.version, case.ours))
        profile(f"our decode of {case.label}", lambda: codec.decode(case.name, case.version, data))
    return 0


def profile(title: str, fn: Callable[[], Any], top: int = 8, seconds: float = 1.0) -> None:
    """cProfile ``fn`` repeated for about ``seconds`` (unprofiled time); the top functions by tottime,
    named by their qualified name (``_fixed_array_codec.<locals>.encode``) and first line."""
    count = max(1, calibrate(fn, seconds))
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(count):
        fn()
    profiler.disable()
    entries = profiler.getstats()
    total = sum(entry.inlinetime for entry in entries)
    print(f"\nprofile: {title}, {count} calls, {total:.2f} s profiled; top {top} by tottime")
    print(f"{'ncalls':>10} {'tottime':>8} {'%':>5} {'percall us':>10} {'cumtime':>8}  function")
    for entry in sorted(entries, key=lambda entry: entry.inlinetime, reverse=True)[:top]:
        code = entry.code
        place = code if isinstance(code, str) else f"{_short(code.co_filename)}:{code.co_firstlineno} {code.co_qualname}"
        print(f"{entry.callcount:10} {entry.inlinetime:8.3f} {100 * entry.inlinetime / total:5.1f} "
              f"{1e6 * entry.inlinetime / entry.callcount:10.3f} {entry.totaltime:8.3f}  {place}")


def _short(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return Path(path).name


if __name__ == "__main__":
    sys.exit(main())
