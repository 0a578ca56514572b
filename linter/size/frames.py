"""``krpc-lint size --frames``: the bytes of a captured frames corpus per message version and field path.

FRAMES is what ``krpc-lint replay`` reads (Parquet, a directory of Parquet files, or JSON Lines; the
columns of ``linter.frames.generate``). Each frame is split and checked as replay does
(``replay_frame.split_frame``) and decoded by the same per-(direction, API key, version) decoders
(``replay_decode.Revision``); its body is then measured as ``krpc-lint size`` measures a value
(``linter.size.measure.measure``: re-encoded and attributed per field path) and, with a what-if, encoded
again with the edited spec. The header and the size prefix are not counted: a message's bytes are its
body's, as for ``--values``.

A frame that cannot be sized (not a frame, an API the specs lack, bytes that do not decode) stops the run
with one line naming FRAMES, the frame's number and the byte: sizes of a corpus with holes would mislead.

``FrameSizer`` is the per-frame work, the same in this process (``size_in_process``) and on Spark
(``linter.size.on_spark``), so both give the same totals; ``linter.size.run`` chooses.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter.codec import Codec
from linter.errors import KrpcLintError
from linter.frames.corpus import INPUT_COLUMNS, spark_files
from linter.frames.decode import Api, Revision
from linter.frames.errors import PipelineInputError
from linter.frames.generate import JSON_SUFFIXES, REQUEST
from linter.parse.bounded_json import load_json
from linter.replay.batches import batch_columns
from linter.replay.frame import BadFrame, split_frame
from linter.size.measure import Sizes, measure, what_if_bytes
from linter.size.whatif import WhatIf

PARQUET_MAGIC = b"PAR1"
READ_BATCH = 16384  # frames per Parquet batch read in this process
Key = tuple[str, int]  # (message, version)


class FrameRefused(KrpcLintError, ValueError):
    """A frame that cannot be sized, and why (the callers add which frame: ``refused``)."""


@dataclass
class Tally:
    """Sizes per message version, the what-if bytes beside them, and how many frames were read."""

    sizes: dict[Key, Sizes] = field(default_factory=dict)
    what_if: dict[Key, int] = field(default_factory=dict)
    frames: int = 0

    def merge(self, other: Tally) -> None:
        """Add another tally (a Spark partition's) to this one."""
        self.frames += other.frames
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

    def __init__(self, revision: Revision, what_if: WhatIf, message: str | None = None,
                 version: int | None = None) -> None:
        self.revision, self.what_if, self.message, self.version = revision, what_if, message, version
        self._seen: dict[tuple[Any, ...], Measured] = {}
        self._seen_bytes = 0

    @property
    def codec(self) -> Codec:
        return self.revision.codec

    def add(self, tally: Tally, row: Sequence[Any]) -> None:
        """Size one row; ``FrameRefused`` when it is not a frame these specs decode."""
        api_key, api_version, direction, correlation_id, data, hex_text, corrupt = row
        tally.frames += 1
        if corrupt is not None:
            raise FrameRefused(f"not a frame record: {str(corrupt)[:200]!r}")
        try:
            payload, api_key, api_version, _ = split_frame(direction, api_key, api_version, correlation_id, data,
                                                           hex_text)
        except BadFrame as exc:
            raise FrameRefused(str(exc)) from None
        api = self.revision.api(direction, api_key, api_version)
        if type(api) is not Api:
            raise FrameRefused(f"{direction} of API key {api_key} v{api_version}: {api}")
        if self.message is not None and (api.name != self.message or self.version not in (None, api_version)):
            return
        # the payload without its correlation id (bytes 4-8 of a request's header, 0-4 of a response's)
        seen = (direction, api_key, api_version, payload[:4] + payload[8:] if direction == REQUEST else payload[4:])
        measured = self._seen.get(seen)
        if measured is None:
            measured = self._measure(api, api_version, payload)
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

    def _measure(self, api: Api, version: int, payload: bytes) -> Measured:
        """A frame's body decoded, measured, and encoded with the what-if's spec."""
        try:
            body = api.decode(payload)[1]
        except Exception as exc:  # noqa: BLE001 - a frame that breaks the codec is refused in one line
            raise FrameRefused(f"{api.name} v{version}: {exc}") from None
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


# --- FRAMES: checked on the driver, read here for a run in this process ------------------------------


def count_frames(frames_path: str | Path) -> int:
    """How many frames FRAMES holds (rows: Parquet footers; non-blank lines of JSON Lines), after checking
    that it looks like a corpus at all: ``PipelineInputError`` naming the file and the byte otherwise."""
    path = Path(frames_path)
    if path.is_dir():
        files = spark_files(path)
        if not files:
            raise PipelineInputError(f"{frames_path}: a directory of FRAMES needs Parquet files; it has none")
        return sum(_parquet_rows(file) for file in files)
    _regular(path)
    if path.suffix.lower() in JSON_SUFFIXES:
        return _json_lines(path)
    if path.suffix.lower() == ".parquet":
        return _parquet_rows(path)
    raise PipelineInputError(f"{frames_path}: FRAMES must be Parquet (.parquet, or a directory of Parquet files) "
                             f"or JSON Lines ({', '.join(JSON_SUFFIXES)})")


def _regular(path: Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise PipelineInputError(f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise PipelineInputError(f"{path}: not a regular file")


def _parquet_rows(file: Path) -> int:
    """The rows of a Parquet file, from its footer; its magic bytes checked first (``byte 0`` or the last 4)."""
    _regular(file)
    size = file.stat().st_size
    with open(file, "rb") as stream:
        head = stream.read(4)
        stream.seek(max(0, size - 4))
        tail = stream.read(4)
    for offset, magic in ((0, head), (max(0, size - 4), tail)):
        if magic != PARQUET_MAGIC:
            raise PipelineInputError(f"{file}: byte {offset}: not a Parquet file (no {PARQUET_MAGIC.decode()} "
                                     "magic there)")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise PipelineInputError("reading Parquet needs pyarrow: pip install 'krpc-lint[spark]'") from None
    try:
        parquet = pq.ParquetFile(file)
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors vary: any failure means unreadable
        raise PipelineInputError(f"{file}: byte {size - 8}: not a readable Parquet footer ({_line(exc)})") from None
    if not {"bytes", "hex"} & set(parquet.schema_arrow.names):
        raise PipelineInputError(f"{file}: FRAMES needs a bytes or a hex column; it has "
                                 f"{', '.join(parquet.schema_arrow.names)}")
    rows: int = parquet.metadata.num_rows
    return rows


def _json_lines(file: Path) -> int:
    """The non-blank lines of a JSON Lines file, the first checked to be a frame record."""
    frames, checked = 0, False
    for offset, number, line in _lines(file):
        if not checked:
            _json_row(file, offset, number, line, strict=True)
            checked = True
        frames += 1
    return frames


def _lines(file: Path) -> Iterator[tuple[int, int, bytes]]:
    """(byte offset, line number, line) of every non-blank line."""
    offset = 0
    with open(file, "rb") as stream:
        for number, line in enumerate(stream, 1):
            if line.strip():
                yield offset, number, line
            offset += len(line)


def _json_row(file: Path, offset: int, number: int, line: bytes, strict: bool = False) -> tuple[Any, ...]:
    """A JSON line as a row of ``INPUT_COLUMNS`` (base64 ``bytes`` decoded, as Spark reads them); one that is
    not a frame record has ``corrupt`` set, or, ``strict``, is ``PipelineInputError`` at its byte."""
    try:
        record = load_json(line.decode(json.detect_encoding(line), "surrogatepass"))  # as json.loads(bytes)
        if not isinstance(record, dict) or not {"bytes", "hex"} & record.keys():
            raise ValueError("a frame record is a JSON object with bytes or hex")
        data = record.get("bytes")
        if data is not None:
            data = base64.b64decode(data, validate=True) if isinstance(data, str) else data
        return (record.get("api_key"), record.get("api_version"), record.get("direction"),
                record.get("correlation_id"), data, record.get("hex"), None)
    except (ValueError, binascii.Error) as exc:
        if strict:
            raise PipelineInputError(f"{file}: byte {offset} (line {number}): not a frame record: {exc}") from None
        return (None,) * 6 + (f"line {number} at byte {offset}: {exc}",)


def read_rows(frames_path: str | Path) -> Iterator[tuple[int | None, tuple[Any, ...]]]:
    """Every row of FRAMES in Spark's order, with its byte offset when it has one (JSON Lines)."""
    path = Path(frames_path)
    if path.is_file() and path.suffix.lower() in JSON_SUFFIXES:
        for offset, number, line in _lines(path):
            yield offset, _json_row(path, offset, number, line)
        return
    import pyarrow.parquet as pq

    for file in spark_files(path) if path.is_dir() else [path]:
        parquet = pq.ParquetFile(file)
        columns = [name for name in parquet.schema_arrow.names if name in INPUT_COLUMNS]
        try:
            for batch in parquet.iter_batches(batch_size=READ_BATCH, columns=columns):
                for row in zip(*batch_columns(batch)):
                    yield None, row
        except OSError as exc:
            raise PipelineInputError(f"{file}: cannot be read: {_line(exc)}") from None


def _line(exc: BaseException) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


def refused(frames_path: str | Path, frame: int, reason: str, offset: int | None = None) -> PipelineInputError:
    """The one-line error of a frame that cannot be sized (``frame`` counts from 0, as replay's rows)."""
    where = f" (byte {offset} of the file)" if offset is not None else ""
    return PipelineInputError(f"{frames_path}: frame {frame}{where}: {reason}")


def size_in_process(frames_path: str | Path, sizer: FrameSizer) -> Tally:
    """Size every frame of FRAMES here, in order; the first that cannot be sized stops the run."""
    tally = Tally()
    for offset, row in read_rows(frames_path):
        try:
            sizer.add(tally, row)
        except FrameRefused as exc:
            raise refused(frames_path, tally.frames - 1, str(exc), offset) from None
    return tally


__all__ = ["FrameRefused", "FrameSizer", "Tally", "count_frames", "read_rows", "refused", "size_in_process"]
