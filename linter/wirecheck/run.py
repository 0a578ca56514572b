"""A ``frames check`` run: every frame of the inputs checked, in this process or a Spark task per file.

Inputs are captures and frames corpora (``linter.frames.inputs``). In this process the captures are read as one
stream (``Extraction``: rotated files continue one another's connections) and each frame is numbered within the
capture its last byte came from; a corpus's rows are numbered from 0 in its file, and a corpus ``frames extract``
wrote keeps what the capture said of each frame (connection, sender, a response without request). On Spark
(``--master``, or inputs over ``ON_SPARK_BYTES``) each file is a task running the same checks and handing back its
``Collector``; the driver merges them (the same report, but for a connection astride two rotated captures).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from linter.frames.corpus import (
    INPUT_COLUMNS,
    REQUEST,
    REQUEST_START,
    RESPONSE,
    RESPONSE_START,
    BadFrame,
    check_corpus,
    frame_of,
    read_rows,
)
from linter.frames.decode import loaded
from linter.frames.errors import FramesInputError
from linter.frames.extract import Extraction, summary_line
from linter.frames.inputs import Inputs
from linter.frames.kafka_facts import Requests
from linter.frames.traffic import KAFKA_PORTS, Tally
from linter.spark.session import session
from linter.wirecheck.findings import Collector, RuleRef, Seen
from linter.wirecheck.frame import FrameChecker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from linter.codec import Codec
    from linter.compat.revision import Revision

ON_SPARK_BYTES = 1 << 30  # above this much input, Spark without --master (a capture checks at ~10 MB/s a core)
SEEN_COLUMNS = ("ts", "connection", "client_id", "software_name", "software_version", "problem")


class Run:
    """What a run reads its inputs with: the checker and the collector; ``tally`` and ``captures`` say what the
    captures held that is not a frame."""

    def __init__(self, codec: Codec, rules: dict[str, RuleRef], baseline: frozenset[tuple[Any, ...]] = frozenset(),
                 ports: frozenset[int] | None = KAFKA_PORTS) -> None:
        self.checker = FrameChecker(codec)
        self.requests = Requests(codec)
        self.collector = Collector(rules, baseline)
        self.ports = ports
        self.tally = Tally()
        self.captures = 0
        self.capture_frames = 0

    def read(self, inputs: Inputs) -> Collector:
        """Every frame of ``inputs`` into the collector."""
        if inputs.captures:
            self.read_captures(inputs.captures)
        for corpus in inputs.corpora:
            self.read_corpus(corpus)
        self.collector.unexplained = self.checker.unexplained
        self.collector.unlisted = self.checker.unlisted
        return self.collector

    def frame(self, seen: Seen, data: bytes, problem: str | None) -> None:
        try:
            deviations = self.checker.check(seen.direction or "", seen.api_key, seen.api_version, data, problem)
        except BadFrame as exc:
            self.collector.not_a_frame(seen, str(exc))
            return
        names = self.collector.names
        if seen.api_key is not None and seen.api_key not in names:
            names[seen.api_key] = self.checker.api_name(seen.api_key)
        self.collector.add(seen, deviations)

    def read_captures(self, captures: list[str]) -> None:
        extraction = Extraction(captures, self.checker.codec, self.ports)
        numbers: Counter[str] = Counter()
        for row in extraction.rows():
            capture = extraction.reading
            number, numbers[capture] = numbers[capture], numbers[capture] + 1
            data, direction = row["bytes"], row["direction"]
            api_key, api_version = row["api_key"], row["api_version"]
            seen = Seen(capture, number, direction, api_key, api_version, row["correlation_id"], row["connection"],
                        row["ts"], row["client_id"], row["software_name"], row["software_version"])
            self.frame(seen, data, row["problem"])
        self.tally.update(extraction.tally)
        self.captures += len(captures)
        self.capture_frames += extraction.frames

    def read_corpus(self, corpus: str) -> None:
        check_corpus(corpus)  # a file that is no corpus at all is refused, naming it, before any row
        requests = self.requests
        for number, (offset, row) in enumerate(read_rows(corpus, extra=SEEN_COLUMNS)):
            (api_key, api_version, direction, correlation_id, data, hex_text, corrupt, ts, connection, client_id,
             software_name, software_version, problem) = row
            try:
                if corrupt is not None:
                    raise BadFrame(f"not a frame record: {corrupt}")
                _typed(row)
                frame = frame_of(data, hex_text)
            except BadFrame as exc:
                self.collector.not_a_frame(Seen(corpus, number, direction, api_key, api_version, correlation_id,
                                                connection, ts, client_id, offset=offset), str(exc))
                continue
            if direction == REQUEST and len(frame) >= REQUEST_START.size:  # a corpus may give a request's bytes alone
                header = requests.header(frame)
                api_key, api_version, correlation_id = header.api_key, header.api_version, header.correlation_id
                client_id = header.client_id if client_id is None else client_id
            elif direction == RESPONSE and correlation_id is None and len(frame) >= RESPONSE_START.size:
                correlation_id = RESPONSE_START.unpack_from(frame)[1]
            seen = Seen(corpus, number, direction, api_key, api_version, correlation_id, connection, ts, client_id,
                        software_name, software_version, offset)
            self.frame(seen, frame, problem)

    def capture_line(self) -> str | None:
        """The captures' summary line (as ``frames extract`` says it), or ``None`` without captures."""
        return summary_line(self.captures, self.capture_frames, self.tally) if self.captures else None


# A corpus row's columns (``read_rows``' INPUT_COLUMNS, then SEEN_COLUMNS), and the positions of those that must
# hold integers, text, and seconds.
_NAMES = (*INPUT_COLUMNS, *SEEN_COLUMNS)
_INTEGERS = tuple(_NAMES.index(name) for name in ("api_key", "api_version", "correlation_id"))
_TEXTS = tuple(_NAMES.index(name) for name in ("direction", *SEEN_COLUMNS) if name != "ts")
_TS = _NAMES.index("ts")


def _typed(row: tuple[Any, ...]) -> None:
    """``BadFrame`` for a corpus row whose columns hold the wrong kind of value (a corpus may come from anywhere)."""
    for index in _INTEGERS:
        if row[index] is not None and (type(row[index]) is not int or not -(1 << 31) <= row[index] < 1 << 31):
            raise BadFrame(f"{_NAMES[index]} must be a 32-bit integer, got {row[index]!r:.40}")
    for index in _TEXTS:
        if row[index] is not None and type(row[index]) is not str:
            raise BadFrame(f"{_NAMES[index]} must be text, got {type(row[index]).__name__}")
    ts = row[_TS]
    if ts is not None and (type(ts) not in (int, float) or not math.isfinite(ts)):
        raise BadFrame(f"ts must be a finite number of seconds, got {ts!r:.40}")


def check(inputs: Inputs, specs: Revision, rules: dict[str, RuleRef], *,
          baseline: frozenset[tuple[Any, ...]] = frozenset(), master: str | None = None,
          ports: frozenset[int] | None = KAFKA_PORTS, allow_invalid: bool = False) -> tuple[Collector, str | None]:
    """The report of every frame of ``inputs`` against ``specs``, and the captures' summary line: in this process
    unless ``master`` is given or the inputs are large."""
    if not inputs.captures and not inputs.corpora:
        raise FramesInputError("no capture or frames corpus in the inputs")
    if master is None and inputs.size() <= ON_SPARK_BYTES:
        run = Run(loaded(specs, allow_invalid).codec, rules, baseline, ports)
        return run.read(inputs), run.capture_line()
    return check_on_spark(session(master), inputs, specs, rules, baseline, ports, allow_invalid)


def check_on_spark(spark: SparkSession, inputs: Inputs, specs: Revision, rules: dict[str, RuleRef],
                   baseline: frozenset[tuple[Any, ...]], ports: frozenset[int] | None,
                   allow_invalid: bool = False) -> tuple[Collector, str | None]:
    """The report on Spark: a task per file, each checking its file as a run in this process does."""
    files = inputs.files()
    tasks = spark.sparkContext.parallelize(files, len(files))
    collector = Collector(rules, baseline)
    tally, captures, frames = Tally(), 0, 0
    for part, part_tally, part_captures, part_frames in tasks.mapPartitions(
            _task(specs, rules, baseline, ports, allow_invalid)).collect():
        collector.merge(part)
        tally.update(part_tally)
        captures, frames = captures + part_captures, frames + part_frames
    return collector, summary_line(captures, frames, tally) if captures else None


def _task(specs: Revision, rules: dict[str, RuleRef], baseline: frozenset[tuple[Any, ...]],
          ports: frozenset[int] | None, allow_invalid: bool
          ) -> Callable[[Iterator[tuple[str, str]]], Iterator[tuple[Collector, Tally, int, int]]]:
    """The function a Spark task runs on its (kind, path) pairs: one collector for them."""

    def run(files: Iterator[tuple[str, str]]) -> Iterator[tuple[Collector, Tally, int, int]]:
        task = Run(loaded(specs, allow_invalid, freeze=True).codec, rules, baseline, ports)
        collector = task.read(Inputs.of(files))
        yield collector, task.tally, task.captures, task.capture_frames

    return run


__all__ = ["ON_SPARK_BYTES", "SEEN_COLUMNS", "Run", "check", "check_on_spark"]
