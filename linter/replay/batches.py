"""The replay's worker side: ``mapInArrow``'s function over Arrow batches of frames (``replay_batch``), with
the two spec revisions shipped to the executors as bytes (``linter.compat.revision.Revision``, loaded once per
Python worker: ``linter.frames.decode.loaded``): a row for each frame that does not replay the same, and per
partition the counts of every frame."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from linter.frames.corpus import (
    REQUEST,
    REQUEST_START,
    RESPONSE,
    RESPONSE_START,
    batch_columns,
)
from linter.frames.decode import Api, Decoders, FrameDecoder, loaded
from linter.replay.frame import BOTH_FAIL, SAME, Replayed, replay_columns
from linter.spark import schema

if TYPE_CHECKING:
    import pyarrow as pa

    from linter.compat.revision import Revision

HEX_BYTES = 256  # a mismatch row keeps the frame's first 256 bytes as hex


# --- Arrow batches ------------------------------------------------------------------------------

# What the Spark job's mapInArrow writes: a row per frame that is not ``same`` (``frames`` null),
# with the frame's partition and row there (its number in FRAMES, once the partitions' sizes are
# known), then, at the end of each partition, its counts (``row`` null, ``frames`` set, only the
# REPLAY_COUNTS columns). Frames that replay the same are only counted: most frames cross back
# to the JVM as a count, not a row.
RESULTS = ("part INT, row BIGINT, frames BIGINT, api_key INT, api_name STRING, api_version INT, direction STRING, "
           "correlation_id INT, outcome STRING, path STRING, old_error STRING, new_error STRING, hex STRING")
CountKey = tuple[Any, Any, Any, Any, str]  # api_key, api_name, api_version, direction, outcome


def replay_batches(old: Revision, new: Revision,
                   allow_invalid: bool = False) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function: one partition's frames in (``INPUT_COLUMNS``), ``RESULTS`` out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        old_side, new_side = loaded(old, allow_invalid, freeze=True), loaded(new, allow_invalid, freeze=True)
        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        counts: dict[CountKey, int] = {}
        row = 0
        for batch in batches:
            mismatches = replay_batch(old_side, new_side, batch, counts, part, row)
            row += batch.num_rows
            if mismatches.num_rows:
                yield mismatches
        if counts:
            yield count_batch(counts, part)

    return run


def replay_batch(old: Decoders, new: Decoders, batch: pa.RecordBatch, counts: dict[CountKey, int], part: int = 0,
                 first: int = 0) -> pa.RecordBatch:
    """The ``RESULTS`` rows of a batch's frames that are not ``same``; every frame is counted in ``counts``."""
    return _record_batch(replay_rows(old, new, zip(*batch_columns(batch)), counts, part, first))


def replay_rows(old: Decoders, new: Decoders, frames: Iterable[tuple[Any, ...]], counts: dict[CountKey, int],
                part: int = 0, first: int = 0) -> list[tuple[Any, ...]]:
    """``replay_batch`` of rows of ``INPUT_COLUMNS`` (as ``linter.frames.corpus.read_rows`` gives them): the
    per-frame code Spark's batches and an in-process replay share, so both find the same outcomes."""
    rows: list[tuple[Any, ...]] = []
    shared = _SHARED.setdefault(old, weakref.WeakKeyDictionary()).setdefault(new, {})
    for index, (key, version, direction, correlation_id, data, hex_text, corrupt) in enumerate(frames, first):
        # The common case first, inline: a well-formed frame of a kind both revisions decode with one
        # decoder, which decodes it. Anything else takes _replay, which checks and explains everything.
        if type(data) is bytes and corrupt is None:
            if direction == REQUEST and len(data) >= 12:
                size, wire_key, wire_version, wire_id = REQUEST_START.unpack_from(data)
                kind = (REQUEST, wire_key, wire_version)
                usual = (key is None or key == wire_key) and (version is None or version == wire_version)
            elif direction == RESPONSE and len(data) >= 8 and type(key) is int and type(version) is int:
                size, wire_id = RESPONSE_START.unpack_from(data)
                kind, usual = (RESPONSE, key, version), True
            else:
                usual = False
            if usual and size == len(data) - 4 and (correlation_id is None or correlation_id == wire_id):
                try:
                    decoder = shared[kind]
                except KeyError:
                    decoder = shared[kind] = _shared_decoder(old, new, *kind)
                if decoder is not None:
                    try:
                        decoder[0](data[4:])
                    except Exception:  # noqa: BLE001, S110 - a frame it refuses: _replay says how
                        pass
                    else:
                        counts[decoder[1]] = counts.get(decoder[1], 0) + 1
                        continue
        if corrupt is not None:
            error = f"not a frame record: {corrupt[:200]!r}"
            result = Replayed(BOTH_FAIL, key, None, version, correlation_id, None, error, error)
        else:
            result = replay_columns(old, new, direction, key, version, correlation_id, data, hex_text)
        count_key = (result.api_key, result.api_name, result.api_version, direction, result.outcome)
        counts[count_key] = counts.get(count_key, 0) + 1
        if result.outcome != SAME:
            rows.append((part, index, None, result.api_key, result.api_name, result.api_version, direction,
                         result.correlation_id, result.outcome, result.path, result.old_error, result.new_error,
                         _hex(data, hex_text)))
    return rows


# Per pair of revisions: (direction, API key, version) -> (the decoder both share, the count key of
# a frame it decodes), or None when the revisions decode that kind differently (or cannot).
Shared = dict[tuple[str, int, int], tuple[FrameDecoder, CountKey] | None]
_SHARED: weakref.WeakKeyDictionary[Decoders, weakref.WeakKeyDictionary[Decoders, Shared]] = weakref.WeakKeyDictionary()


def _shared_decoder(old: Decoders, new: Decoders, direction: str, api_key: int,
                    api_version: int) -> tuple[FrameDecoder, CountKey] | None:
    old_api, new_api = old.api(direction, api_key, api_version), new.api(direction, api_key, api_version)
    if type(old_api) is Api and type(new_api) is Api and old_api.decode is new_api.decode:
        return old_api.decode, (api_key, old_api.name, api_version, direction, SAME)
    return None


def count_batch(counts: dict[CountKey, int], part: int = 0) -> pa.RecordBatch:
    """The count rows of a partition."""
    return _record_batch([(part, None, frames, key, name, version, direction, None, outcome, None, None, None, None)
                          for (key, name, version, direction, outcome), frames in counts.items()])


def _record_batch(rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    """``RESULTS`` rows as an Arrow batch, of the types the DDL says."""
    return schema.arrow_batch(rows, RESULTS)


def _hex(data: Any, hex_text: Any) -> str | None:
    if data is not None:
        return bytes(data[:HEX_BYTES]).hex()
    return hex_text[:2 * HEX_BYTES] if isinstance(hex_text, str) else None


__all__ = ["RESULTS", "CountKey", "count_batch", "replay_batch", "replay_batches", "replay_rows"]
