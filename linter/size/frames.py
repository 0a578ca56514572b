"""``krpc-lint size --frames``: the bytes of a captured frames corpus per message version and field path.

FRAMES is what ``krpc-lint replay`` reads (Parquet, a directory of Parquet files, or JSON Lines), read by the
same reader (``linter.frames.corpus``). Each frame is split and checked as replay does
(``linter.frames.corpus.split_frame``) and decoded by the same per-(direction, API key, version) decoders
(``linter.frames.decode.Decoders``); its body is then measured as ``krpc-lint size`` measures a value
(``linter.size.measure.measure``: re-encoded and attributed per field path) and, with a what-if, encoded
again with the edited spec. The header and the size prefix are not counted: a message's bytes are its
body's, as for ``--values``.

A frame that cannot be sized (not a frame record, not a frame, an API the specs lack, bytes that do not
decode) is counted, not the end of the run: real captures hold such frames (a broker's malformed error
response, an API the specs lack, trailing bytes), and the figures of the others are still worth having. The
``Tally`` keeps them per kind (``Refused``: how many, and the first's number and reason), so the report can
say what its figures leave out.

``FrameSizer`` is the per-frame work, the same in this process (``size_in_process``) and on Spark
(``linter.size.on_spark``), so both give the same totals; ``linter.size.run`` chooses.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from linter.codec import Codec
from linter.errors import KrpcLintError
from linter.frames.corpus import (
    CORRELATION_OFFSET,
    BadFrame,
    parquet_input,
    read_rows,
    split_frame,
)
from linter.frames.decode import Api, Decoders
from linter.frames.errors import FramesInputError
from linter.size.measure import Sizes, measure, what_if_bytes
from linter.size.whatif import WhatIf

Key = tuple[str, int]  # (message, version)


Kind = tuple[str | None, int | None, int | None]  # refused frames': (direction, API key, API version)
NOT_A_FRAME: Kind = (None, None, None)  # a row that is no frame record, or does not split into a frame


class FrameRefused(KrpcLintError, ValueError):
    """A frame that cannot be sized, its kind, and why (``add`` counts it: the caller knows which frame)."""

    def __init__(self, reason: str, kind: Kind = NOT_A_FRAME) -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass
class Refused:
    """The frames of one kind that could not be sized: how many, and the first of them (its number in
    FRAMES, from 0 as replay counts rows) with its reason, so that one can be looked at."""

    frames: int
    first_frame: int
    first_error: str


@dataclass
class Tally:
    """Sizes per message version, the what-if bytes beside them, how many frames were read, and those
    refused, per kind.

    >>> tally = Tally()
    >>> tally.refuse(NOT_A_FRAME, 7, "no frame: bytes and hex are both null")
    >>> tally.merge(Tally(refused={NOT_A_FRAME: Refused(2, 3, "not a frame record: 'line 4'")}))
    >>> tally.refused[NOT_A_FRAME], tally.refused_frames
    (Refused(frames=3, first_frame=3, first_error="not a frame record: 'line 4'"), 3)
    """

    sizes: dict[Key, Sizes] = field(default_factory=dict)
    what_if: dict[Key, int] = field(default_factory=dict)
    frames: int = 0
    refused: dict[Kind, Refused] = field(default_factory=dict)

    @property
    def refused_frames(self) -> int:
        """How many frames were refused, of every kind."""
        return sum(refused.frames for refused in self.refused.values())

    def refuse(self, kind: Kind, frame: int, reason: str, frames: int = 1) -> None:
        """Count ``frames`` refused frames of ``kind``, the first of them ``frame`` (kept when it comes first)."""
        known = self.refused.get(kind)
        if known is None:
            self.refused[kind] = Refused(frames, frame, reason)
            return
        known.frames += frames
        if frame < known.first_frame:
            known.first_frame, known.first_error = frame, reason

    def merge(self, other: Tally) -> None:
        """Add another tally (a Spark partition's, its frame numbers made FRAMES-wide) to this one."""
        self.frames += other.frames
        for kind, refused in other.refused.items():
            self.refuse(kind, refused.first_frame, refused.first_error, refused.frames)
        for key, sizes in other.sizes.items():
            mine = self.sizes.setdefault(key, Sizes(*key))
            mine.count += sizes.count
            mine.bytes += sizes.bytes
            for path, size in sizes.fields.items():
                mine.fields[path] = mine.fields.get(path, 0) + size
        for key, size in other.what_if.items():
            self.what_if[key] = self.what_if.get(key, 0) + size


Measured = tuple[tuple[tuple[str, int], ...], int, int]  # a body's (path, bytes)s, its bytes, its what-if's


class FrameSizer:
    """Sizes frames with one spec revision: ``add`` decodes a row of ``INPUT_COLUMNS`` and measures its
    body, into a ``Tally``; ``message`` / ``version`` keep only those frames (others are read, not sized).

    Traffic repeats itself (the same heartbeat, the same metadata request), so a frame whose bytes equal
    an earlier one's but for the correlation id adds that one's measure again: the same bytes decode to
    the same body, so that is exact (up to ``MEMO_BYTES`` of such frames are kept, then forgotten)."""

    MEMO_BYTES = 64 << 20

    def __init__(self, decoders: Decoders, what_if: WhatIf, message: str | None = None,
                 version: int | None = None) -> None:
        self.decoders, self.what_if, self.message, self.version = decoders, what_if, message, version
        self._seen: dict[tuple[Any, ...], Measured] = {}
        self._seen_bytes = 0

    @property
    def codec(self) -> Codec:
        return self.decoders.codec

    def add(self, tally: Tally, row: Sequence[Any]) -> None:
        """Size one row into ``tally``, its frame numbered ``tally.frames``; a row that is not a frame these
        specs decode is counted there as refused, by kind."""
        frame = tally.frames
        tally.frames += 1
        try:
            self._size(tally, row)
        except FrameRefused as exc:
            tally.refuse(exc.kind, frame, str(exc))

    def _size(self, tally: Tally, row: Sequence[Any]) -> None:
        """Size one row; ``FrameRefused`` when it is not a frame these specs decode."""
        api_key, api_version, direction, correlation_id, data, hex_text, corrupt = row
        if corrupt is not None:
            raise FrameRefused(f"not a frame record: {str(corrupt)[:200]!r}")
        try:
            payload, api_key, api_version, _ = split_frame(direction, api_key, api_version, correlation_id, data,
                                                           hex_text)
        except BadFrame as exc:
            raise FrameRefused(str(exc)) from None
        kind = (direction, api_key, api_version)
        api = self.decoders.api(direction, api_key, api_version)
        if type(api) is not Api:
            raise FrameRefused(f"{direction} of API key {api_key} v{api_version}: {api}", kind)
        if self.message is not None and (api.name != self.message or self.version not in (None, api_version)):
            return
        at = CORRELATION_OFFSET[direction] - 4  # the payload without its correlation id (it follows the size)
        seen = (direction, api_key, api_version, payload[:at] + payload[at + 4:])
        measured = self._seen.get(seen)
        if measured is None:
            measured = self._measure(api, api_version, payload, kind)
            self._remember(seen, measured, len(payload))
        key = (api.name, api_version)
        sizes = tally.sizes.get(key)
        if sizes is None:
            sizes = tally.sizes[key] = Sizes(*key)
        sizes.count += 1
        sizes.bytes += measured[1]
        fields = sizes.fields
        for path, size in measured[0]:
            fields[path] = fields.get(path, 0) + size
        if self.what_if.active:
            tally.what_if[key] = tally.what_if.get(key, 0) + measured[2]

    def _measure(self, api: Api, version: int, payload: bytes, kind: Kind) -> Measured:
        """A frame's body decoded, measured, and encoded with the what-if's spec."""
        try:
            body = api.decode(payload)[1]
        except Exception as exc:  # noqa: BLE001 - a frame that breaks the codec is refused in one line
            raise FrameRefused(f"{api.name} v{version}: {exc}", kind) from None
        sizes = measure(self.codec, api.name, version, [body])
        edited = self.what_if.codec_for(self.codec, api.name, version)
        after = 0 if edited is None else what_if_bytes(edited, api.name, version, [body])
        return tuple(sizes.fields.items()), sizes.bytes, after

    def _remember(self, seen: tuple[Any, ...], measured: Measured, size: int) -> None:
        if self._seen_bytes + size > self.MEMO_BYTES:
            self._seen.clear()
            self._seen_bytes = 0
        self._seen[seen] = measured
        self._seen_bytes += size


def size_in_process(frames_path: str | Path, sizer: FrameSizer) -> Tally:
    """Size every frame of FRAMES here, in order (those that cannot be sized counted in the tally). A Parquet
    row group that cannot be read is one row that is not a frame, as on Spark: only then is FRAMES read
    again, from the copies ``parquet_input`` repairs (the rows Spark reads), so an intact corpus is read once."""
    try:
        return _sized(read_rows(frames_path), sizer)
    except FramesInputError:
        with tempfile.TemporaryDirectory(prefix="krpc-lint-size-") as scratch:
            repaired = parquet_input(frames_path, Path(scratch))
            if repaired is None:
                raise
            return _sized(chain.from_iterable(read_rows(file) for file in repaired), sizer)


def _sized(rows: Iterable[tuple[int | None, Sequence[Any]]], sizer: FrameSizer) -> Tally:
    tally = Tally()
    for _, row in rows:
        sizer.add(tally, row)
    return tally


__all__ = ["NOT_A_FRAME", "FrameRefused", "FrameSizer", "Kind", "Refused", "Tally", "size_in_process"]
