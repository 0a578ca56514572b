"""``krpc-lint frames extract``: the Kafka frames of packet captures, as a corpus every frames command reads.

Captures are read in the order of their first packet (rotated files, ``tcpdump -C``/``-W``, continue one
another's connections), through one reassembler and one stream cutter for all of them:

    captures ─▶ capture.packets ─▶ tcp.Reassembler ─▶ streams.KafkaStreams ─▶ rows ─▶ .parquet / .jsonl / stdout

A capture is recognised by its content (pcap, pcapng, either gzipped: ``capture.is_capture``), never by its name. What
cannot be used (non-TCP packets, bytes lost in gaps, non-Kafka flows, TLS...) is counted in one ``Tally`` and
said in one summary line; nothing in a capture stops the run but a file that is not a capture at all.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.frames.capture import is_capture, packets
from linter.frames.corpus import WRITTEN
from linter.frames.traffic import KAFKA_PORTS, Tally
from linter.parse.discovery import TooDeep, regular_files
from linter.vocabulary import plural

if TYPE_CHECKING:
    from linter.codec import Codec

# The columns a corpus extracted from captures has: the corpus's own, then where each frame was seen. Parquet
# is written with this DDL's schema (``linter.spark.schema.arrow_schema``), JSON Lines with these keys.
SEEN = ("ts DOUBLE, connection STRING, client_id STRING, software_name STRING, software_version STRING, "
        "problem STRING")  # where and from whom each frame was seen: the columns a capture adds to a corpus's
EXTRACTED = f"{WRITTEN}, {SEEN}"
WRITE_BATCH = 16384  # rows per Parquet row group


def capture_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The captures named: files as given, directories searched (one walker), keeping the files that are
    captures by content, in the order of their first packet (then their names)."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found.extend(name for name in regular_files(path) if is_capture(name))
        else:
            found.append(os.fspath(path))
    return in_reading_order(found)


def in_reading_order(captures: Iterable[str]) -> list[str]:
    """Captures in the order of their first packet (then their names), each once: rotated files in turn."""
    return sorted(dict.fromkeys(captures), key=lambda name: (_first_ts(name), name))


def _first_ts(path: str) -> float:
    """The timestamp of a capture's first TCP packet (infinity for none)."""
    for packet in packets(path, Tally()):
        return packet.ts
    return math.inf


def captures_at(frames_path: str | os.PathLike[str]) -> list[str]:
    """The captures FRAMES names, in reading order: itself when it is a capture, the captures of a directory
    that holds no Parquet (a directory of rotated captures), else none (FRAMES is a corpus of rows)."""
    path = Path(frames_path)
    if path.is_dir():
        try:
            names = regular_files(path)
        except TooDeep:  # not captures: the corpus reader says what is wrong with FRAMES, in its words
            return []
        if any(name.endswith(".parquet") for name in names):
            return []
        return in_reading_order(name for name in names if is_capture(name))
    return [str(path)] if is_capture(path) else []


@contextmanager
def as_corpus(frames_path: str | os.PathLike[str], codec: Codec, captures: list[str],
              ports: frozenset[int] | None = KAFKA_PORTS) -> Iterator[tuple[Path, str | None]]:
    """FRAMES as a corpus of rows, and the summary line of what its captures held: ``captures``
    (``captures_at(frames_path)``) are extracted once into a temporary JSON Lines file (the one corpus reader then
    serves them as any corpus); without captures, FRAMES itself and no summary."""
    if not captures:
        yield Path(frames_path), None
        return
    extraction = Extraction(captures, codec, ports)
    with tempfile.TemporaryDirectory(prefix="krpc-lint-capture-") as scratch:
        corpus = Path(scratch) / "frames.jsonl"
        with open(corpus, "w", encoding="ascii") as stream:
            write_jsonl(extraction.rows(), stream)
        yield corpus, extraction.summary()


@dataclass
class Extraction:
    """A run's rows come from ``rows()``; ``tally`` says what was not used, ``frames`` and ``files`` what was."""

    captures: Sequence[str]
    codec: Codec
    ports: frozenset[int] | None = KAFKA_PORTS
    tally: Tally = field(default_factory=Tally)
    frames: int = 0
    reading: str = ""  # the capture being read when a row comes: where its frame's last byte was captured

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every frame of the captures, as a row of ``EXTRACTED``'s columns."""
        from linter.frames.streams import KafkaStreams
        from linter.frames.tcp import Reassembler

        reassembler = Reassembler(self.tally)
        streams = KafkaStreams(self.codec, self.tally, self.ports)
        feed, cut = reassembler.feed, streams.feed
        for capture in self.captures:
            self.reading = capture
            for packet in packets(capture, self.tally):
                for segment in feed(packet):
                    for row in cut(segment):
                        self.frames += 1
                        yield row
        for segment in reassembler.finish():
            for row in cut(segment):
                self.frames += 1
                yield row
        for row in streams.finish():
            self.frames += 1
            yield row

    def summary(self) -> str:
        """``2 captures, 1,206 frames; not TCP: 3, bytes lost (gaps): 120``: the stderr line of a run."""
        return summary_line(len(self.captures), self.frames, self.tally)


def summary_line(captures: int, frames: int, tally: Tally) -> str:
    """A run's summary line, wherever its captures were read (here, or a Spark task per file).

    >>> summary_line(2, 1206, Tally({"not TCP": 3}))
    '2 captures, 1,206 frames; not TCP: 3'
    """
    line = f"{plural(captures, 'capture')}, {plural(frames, 'frame', grouped=True)}"
    lost = tally.line()
    return f"{line}; {lost}" if lost else line


def json_line(row: dict[str, Any]) -> str:
    """A row of ``EXTRACTED``'s columns as one JSON Lines record, the frame's bytes as ``hex`` (JSON has no binary
    type). Written column by column, 5x faster than ``json.dumps`` of a dict, which was most of a large
    extraction's time; the same text as ``json.dumps(..., separators=(",", ":"))`` (a test compares them).

    >>> json_line({"api_key": 18, "api_version": 3, "direction": "request", "correlation_id": 1, "ts": 1.5,
    ...            "connection": "a > b", "client_id": None, "software_name": "k\\u00e9", "software_version": "1",
    ...            "problem": None, "bytes": b"\\x00\\x01"})[-28:]
    '"problem":null,"hex":"0001"}'
    """
    data = row["bytes"]
    return (f'{{"api_key":{_number(row["api_key"])},"api_version":{_number(row["api_version"])},'
            f'"direction":{_text(row["direction"])},"correlation_id":{_number(row["correlation_id"])},'
            f'"ts":{_finite(row["ts"])},"connection":{_text(row["connection"])},'
            f'"client_id":{_text(row["client_id"])},"software_name":{_text(row["software_name"])},'
            f'"software_version":{_text(row["software_version"])},"problem":{_text(row["problem"])},'
            f'"hex":{"null" if data is None else _QUOTE + data.hex() + _QUOTE}}}')


_QUOTE = '"'
_escaped = json.encoder.encode_basestring_ascii


def _number(value: int | None) -> str:
    return "null" if value is None else int.__repr__(value)


def _text(value: str | None) -> str:
    return "null" if value is None else _escaped(value)


def _finite(value: float | None) -> str:
    return "null" if value is None else float.__repr__(value) if math.isfinite(value) else json.dumps(value)


def write_jsonl(rows: Iterable[dict[str, Any]], stream: Any) -> None:
    """Rows to a text stream, one JSON object a line."""
    for row in rows:
        stream.write(json_line(row) + "\n")


def write_parquet(rows: Iterable[dict[str, Any]], path: Path) -> None:
    """Rows to one Parquet file of ``EXTRACTED``'s schema, a row group per ``WRITE_BATCH`` rows."""
    import pyarrow.parquet as pq

    from linter.spark.schema import arrow_batches, arrow_schema

    with pq.ParquetWriter(path, arrow_schema(EXTRACTED)) as writer:
        for batch in arrow_batches(rows, EXTRACTED, WRITE_BATCH):
            writer.write_batch(batch)


__all__ = ["EXTRACTED", "SEEN", "Extraction", "as_corpus", "capture_files", "captures_at", "in_reading_order", "json_line", "summary_line",
           "write_jsonl", "write_parquet"]
