"""``krpc-lint frames generate``: a synthetic corpus of captured frames, for tests and benchmarks.

A corpus is a table with one row per frame, the input of ``krpc-lint replay`` and ``krpc-lint size --frames``
(its columns: ``linter.frames.corpus``); this writes ``bytes`` (Parquet) or ``hex`` (JSON Lines).

Frames are real Kafka frames (``Codec.encode_request`` / ``encode_response``) of every API and
version in the specs, with values drawn to look like traffic (``linter.frames.values``:
topic names, ids, offsets, skewed array counts, nulls and tagged fields, each field by its name and
type). The mix is meant to look like traffic too: Fetch, Produce, Metadata, Heartbeat and
OffsetCommit dominate, recent versions are more common than old ones, and most messages are small
(a few partitions) with a tail of larger ones (hundreds of elements, up to tens of KB).

Speed: a new value costs ~10-20 us (compiled per message shape; encoding ~4 us), so the corpus is
built from a pool of distinct frames (every API, version and direction at least once, plus
weighted extras: all ``count`` frames up to ``POOL``, then ``FRESH_SHARE`` of them) that the corpus
samples with the same seeded RNG; the repeats are traffic's repeats (the same heartbeat, the same
metadata request). Each sampled frame gets its own correlation id (``i`` for the ``i``-th frame,
increasing) by rewriting the header's 4 correlation-id bytes, which sit at a fixed place in every
header version: bytes 8..12 of a request frame (after the int32 size, int16 apiKey and int16
apiVersion) and bytes 4..8 of a response frame (right after the size). Every pool frame appears
at least once, so every API, version and direction does. Same specs, count and seed: same bytes,
row for row, and the same file (Parquet writing is deterministic too).
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from linter.frames.corpus import (
    CORRELATION_OFFSET,
    JSON_SUFFIXES,
    REQUEST,
    RESPONSE,
    WRITTEN,
)
from linter.frames.errors import FramesInputError
from linter.frames.values import Traffic
from linter.memory import collector_paused
from linter.spark.output import atomic_file
from linter.spark.schema import arrow_schema

if TYPE_CHECKING:
    from linter.codec import Codec

POOL = 4096  # a corpus of up to this many frames is all new values (every API version once even if more)
FRESH_SHARE = 0.6  # of a larger corpus, the share of frames with new values (the rest repeat them)
FRESH_MAX = 100_000  # new values at most (~2 s): a bigger corpus repeats more, to stay fast
BATCH = 16384  # rows per written batch, and per Parquet row group (Spark splits a file by row groups)

# Relative traffic of the busiest APIs (by API key); every other API weighs OTHER_API.
API_WEIGHTS = {0: 20.0, 1: 25.0, 2: 3.0, 3: 10.0, 8: 5.0, 9: 3.0, 10: 2.0, 11: 1.0, 12: 10.0, 14: 1.0, 18: 3.0}
OTHER_API = 0.2
RECENT = 3  # an API's latest versions, each RECENT_WEIGHT times as common as an older one
RECENT_WEIGHT = 4.0


@dataclass(frozen=True)
class Kind:
    """One API version in one direction: what a frame of the pool is."""

    api_key: int
    api_version: int
    direction: str
    name: str  # the request or response message
    weight: float


def kinds(codec: Codec) -> list[Kind]:
    """Every (API, version, direction) of the specs, with its share of the traffic."""
    found = []
    for name in codec.names:
        spec = codec.spec(name)
        if spec.type != REQUEST or spec.api_key is None or spec.versions is None:
            continue
        try:
            answer = codec.response_for(spec.api_key)
            response, answered = answer.name, answer.versions
        except KeyError:
            response, answered = None, None
        versions = list(spec.versions)
        for version in versions:
            weight = API_WEIGHTS.get(spec.api_key, OTHER_API) * (RECENT_WEIGHT if version in versions[-RECENT:] else 1.0)
            found.append(Kind(spec.api_key, version, REQUEST, name, weight))
            if response is not None and answered is not None and answered.contains(version):
                # a request version its response lacks (a vendor's copy bumped on one side) has no reply frame
                found.append(Kind(spec.api_key, version, RESPONSE, response, weight))
    return found


def pool_size(count: int) -> int:
    """How many distinct frames a corpus of ``count`` frames samples from."""
    return count if count <= POOL else max(POOL, min(math.ceil(count * FRESH_SHARE), FRESH_MAX))


def pool(codec: Codec, rng: random.Random, size: int = POOL) -> list[tuple[Kind, bytes]]:
    """Frames of new values (correlation id 0): every kind once, then weighted extras up to ``size``."""
    every = kinds(codec)
    if not every:
        raise FramesInputError("the specs have no request with an apiKey: nothing to generate frames of")
    chosen = every + rng.choices(every, weights=[kind.weight for kind in every], k=max(0, size - len(every)))
    traffic = Traffic(codec, rng)
    frames = []
    with collector_paused():  # values are acyclic (freed by reference counts): collections only cost ~15%
        for kind in chosen:
            frame = _frame(codec, kind, traffic)
            if frame is not None:
                frames.append((kind, frame))
    return frames


def _frame(codec: Codec, kind: Kind, traffic: Traffic) -> bytes | None:
    from linter.codec import CodecError

    traffic.set_size()
    body = traffic.value(kind.name, kind.api_version)
    try:
        if kind.direction == REQUEST:
            header = {"correlationId": 0, "clientId": traffic.client_id()}
            return codec.encode_request(kind.api_version, header, body, kind.name)
        return codec.encode_response(kind.api_key, kind.api_version, {"correlationId": 0}, body)
    except CodecError:  # a value the generator should not have made: leave it out of the pool
        return None


def with_correlation_id(frame: bytes, direction: str, correlation_id: int) -> bytes:
    """The frame with its header's correlation id replaced (see the module docstring for where it is).

    >>> with_correlation_id(bytes.fromhex("0000000c000000070000000000000000"), "response", 8).hex()
    '0000000c000000080000000000000000'
    """
    at = CORRELATION_OFFSET[direction]
    return frame[:at] + correlation_id.to_bytes(4, "big", signed=True) + frame[at + 4:]


def sample(frames: list[tuple[Kind, bytes]], count: int, rng: random.Random) -> list[int]:
    """Which pool frame each of ``count`` corpus frames is: weighted by kind, every frame at least
    once when ``count`` allows."""
    per_kind: dict[Kind, int] = {}
    for kind, _ in frames:
        per_kind[kind] = per_kind.get(kind, 0) + 1
    weights = [kind.weight / per_kind[kind] for kind, _ in frames]
    picks = rng.choices(range(len(frames)), weights=weights, k=count)
    if count >= len(frames):
        for index, position in enumerate(rng.sample(range(count), len(frames))):
            picks[position] = index
    return picks


def generate(specs_dir: str | os.PathLike[str], count: int, out: str | os.PathLike[str], *, seed: int = 0,
             overwrite: bool = False, allow_invalid: bool = False,
             on_skipped: Callable[[tuple[str, ...]], object] = lambda files: None) -> int:
    """Write ``count`` synthetic frames of the specs to ``out`` and return how many were written.

    ``out`` is a Parquet file (``bytes`` column), or JSON Lines (``hex`` column) when it ends with
    ``.jsonl``, ``.json`` or ``.ndjson``. The specs need Kafka's ``RequestHeader`` and ``ResponseHeader``. The
    file appears whole or not at all; an existing one is replaced only with ``overwrite``. ``allow_invalid``:
    the spec files Kafka's generator refuses are left out (``Codec.load``), and ``on_skipped`` is told which.
    """
    from linter.codec import Codec

    if count < 0:
        raise FramesInputError(f"the frame count must be 0 or more, got {count}")
    codec = Codec.load(specs_dir, allow_invalid=allow_invalid)
    if codec.skipped:
        on_skipped(codec.skipped)
    for header in ("RequestHeader", "ResponseHeader"):
        if header not in codec.names:
            raise FramesInputError(f"{specs_dir}: frames need Kafka's {header} spec, and these specs have none")
    rng = random.Random(seed)
    frames = pool(codec, rng, pool_size(count))
    if not frames:
        raise FramesInputError(f"{specs_dir}: no frame of these specs could be encoded")
    picks = sample(frames, count, rng)
    jsonl = Path(out).suffix.lower() in JSON_SUFFIXES
    with atomic_file(out, overwrite=overwrite, inputs=[specs_dir]) as partial:
        (_write_jsonl if jsonl else _write_parquet)(partial, _batches(frames, picks))
    return count


Columns = tuple[list[int], list[int], list[str], list[int], list[bytes]]  # api_key ... bytes, as written


def _batches(frames: list[tuple[Kind, bytes]], picks: list[int]) -> Iterator[Columns]:
    """Columns (api_key, api_version, direction, correlation_id, bytes) of BATCH frames at a time."""
    for start in range(0, len(picks), BATCH):
        keys: list[int] = []
        versions: list[int] = []
        directions: list[str] = []
        ids: list[int] = []
        data: list[bytes] = []
        for number in range(start, min(start + BATCH, len(picks))):
            kind, frame = frames[picks[number]]
            correlation_id = number & 0x7FFFFFFF
            keys.append(kind.api_key)
            versions.append(kind.api_version)
            directions.append(kind.direction)
            ids.append(correlation_id)
            data.append(with_correlation_id(frame, kind.direction, correlation_id))
        yield keys, versions, directions, ids, data


def _write_parquet(path: Path, batches: Iterator[Columns]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(WRITTEN)
    # No dictionary for the frames: all but distinct, so building one only costs (~4x the write time).
    with pq.ParquetWriter(path, schema, use_dictionary=["api_key", "api_version", "direction"]) as writer:
        for columns in batches:
            writer.write_batch(pa.record_batch([pa.array(c, f.type) for c, f in zip(columns, schema)], schema=schema),
                               row_group_size=BATCH)


def _write_jsonl(path: Path, batches: Iterator[Columns]) -> None:
    with open(path, "w", encoding="ascii") as file:
        for keys, versions, directions, ids, data in batches:
            file.writelines(f'{{"api_key":{k},"api_version":{v},"direction":"{d}","correlation_id":{c},'
                            f'"hex":"{b.hex()}"}}\n' for k, v, d, c, b in zip(keys, versions, directions, ids, data))


__all__ = ["FRESH_MAX", "FRESH_SHARE", "POOL", "Kind", "generate", "kinds", "pool", "pool_size",
           "sample", "with_correlation_id"]
