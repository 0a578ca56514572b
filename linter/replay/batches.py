"""The replay's worker side: spec revisions shipped to the executors as bytes (``SpecTexts``), loaded
once per Python worker, and ``mapInArrow``'s function over Arrow batches of frames (``replay_batch``):
a row for each frame that does not replay the same, and per partition the counts of every frame."""

from __future__ import annotations

import gc
import hashlib
import tempfile
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from linter.codec import Codec, SpecError
from linter.codec.codec import collector_paused
from linter.frames.corpus import INPUT_COLUMNS
from linter.frames.decode import Api, FrameDecoder, Revision
from linter.frames.generate import REQUEST, RESPONSE
from linter.replay.frame import (
    BOTH_FAIL,
    REQUEST_START,
    RESPONSE_START,
    SAME,
    Replayed,
    replay_columns,
)
from linter.spark import schema

if TYPE_CHECKING:
    import pyarrow as pa

HEX_BYTES = 256  # a mismatch row keeps the frame's first 256 bytes as hex


# --- the spec revisions, shipped to the executors ---------------------------------------------------


@dataclass(frozen=True)
class SpecTexts:
    """The spec files of a revision as bytes, so an executor builds the same Codec without the
    driver's disk; ``digest`` names the revision in each worker's cache."""

    source: str  # the path given
    files: tuple[tuple[str, bytes], ...]  # (path below the source, bytes)
    digest: str
    allow_invalid: bool = False  # Codec.load's: skip the files Kafka's generator refuses

    @classmethod
    def read(cls, path: str | Path, allow_invalid: bool = False) -> SpecTexts:
        """Every spec file ``Codec.load(path)`` would read (a directory is searched for ``*.json``)."""
        from linter.engine.config import Config
        from linter.engine.runner import UsageError, collect_files

        root = Path(path)
        try:
            found = collect_files([root], Config(profile="kafka")).files
        except UsageError as exc:
            raise SpecError(str(exc)) from None
        files = tuple((file.relative_to(root).as_posix() if root.is_dir() else file.name, file.read_bytes())
                      for file in found)
        digest = hashlib.sha256(b"allow-invalid\0" if allow_invalid else b"")
        for name, data in files:
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
        return cls(str(path), files, digest.hexdigest(), allow_invalid)

    def codec(self) -> Codec:
        """The codec of these texts, loaded from a temporary copy of the files."""
        with tempfile.TemporaryDirectory(prefix="krpc-lint-specs-") as directory:
            for name, data in self.files:
                target = Path(directory, *PurePosixPath(name).parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            return Codec.load(directory, allow_invalid=self.allow_invalid)


_LOADED: dict[str, Revision] = {}  # per Python worker: revisions by SpecTexts.digest


def loaded(texts: SpecTexts, *, freeze: bool = False) -> Revision:
    """The revision of spec texts, built once per process (``freeze``: see ``Revision``)."""
    found = _LOADED.get(texts.digest)
    if found is None:
        with collector_paused():
            found = _LOADED[texts.digest] = Revision(texts.codec(), freeze=freeze)
            if freeze:
                gc.freeze()
    return found


# --- Arrow batches ------------------------------------------------------------------------------

# What the Spark job's mapInArrow writes: a row per frame that is not ``same`` (``frames`` null),
# with the frame's partition and row there (its number in FRAMES, once the partitions' sizes are
# known), then, at the end of each partition, its counts (``row`` null, ``frames`` set, only the
# REPLAY_COUNTS columns). Frames that replay the same are only counted: most frames cross back
# to the JVM as a count, not a row.
RESULTS = ("part INT, row BIGINT, frames BIGINT, api_key INT, api_name STRING, api_version INT, direction STRING, "
           "correlation_id INT, outcome STRING, path STRING, old_error STRING, new_error STRING, hex STRING")
CountKey = tuple[Any, Any, Any, Any, str]  # api_key, api_name, api_version, direction, outcome


def replay_batches(old: SpecTexts, new: SpecTexts) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function: one partition's frames in (``INPUT_COLUMNS``), ``RESULTS`` out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        old_side, new_side = loaded(old, freeze=True), loaded(new, freeze=True)
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


def replay_batch(old: Revision, new: Revision, batch: pa.RecordBatch, counts: dict[CountKey, int], part: int = 0,
                 first: int = 0) -> pa.RecordBatch:
    """The ``RESULTS`` rows of a batch's frames that are not ``same``; every frame is counted in ``counts``."""
    columns = batch_columns(batch)
    rows: list[tuple[Any, ...]] = []
    shared = _SHARED.setdefault(old, weakref.WeakKeyDictionary()).setdefault(new, {})
    for index, (key, version, direction, correlation_id, data, hex_text, corrupt) in enumerate(zip(*columns), first):
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
    return _record_batch(rows)


def batch_columns(batch: pa.RecordBatch) -> list[list[Any]]:
    """A batch's ``INPUT_COLUMNS`` as Python lists (all ``None`` for a column it lacks)."""
    return [batch.column(name).to_pylist() if name in batch.schema.names else [None] * batch.num_rows
            for name in INPUT_COLUMNS]


# Per pair of revisions: (direction, API key, version) -> (the decoder both share, the count key of
# a frame it decodes), or None when the revisions decode that kind differently (or cannot).
Shared = dict[tuple[str, int, int], tuple[FrameDecoder, CountKey] | None]
_SHARED: weakref.WeakKeyDictionary[Revision, weakref.WeakKeyDictionary[Revision, Shared]] = weakref.WeakKeyDictionary()


def _shared_decoder(old: Revision, new: Revision, direction: str, api_key: int,
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
    import pyarrow as pa

    types = (pa.int32(), pa.int64(), pa.int64(), pa.int32(), pa.string(), pa.int32(), pa.string(), pa.int32(),
             pa.string(), pa.string(), pa.string(), pa.string(), pa.string())
    columns: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [()] * len(types)
    return pa.RecordBatch.from_arrays([pa.array(column, kind) for column, kind in zip(columns, types)],
                                      names=schema.columns(RESULTS))


def _hex(data: Any, hex_text: Any) -> str | None:
    if data is not None:
        return bytes(data[:HEX_BYTES]).hex()
    return hex_text[:2 * HEX_BYTES] if isinstance(hex_text, str) else None


__all__ = ["RESULTS", "CountKey", "SpecTexts", "batch_columns", "count_batch", "loaded", "replay_batch", "replay_batches"]
