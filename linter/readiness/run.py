"""A readiness run: its inputs sorted by content, read into one ``Usage``, in this process or on Spark.

Inputs are packet captures (``linter.frames.capture``), broker request logs (``linter.readiness.request_log``) and
frames corpora (``linter.frames.corpus``), each recognised by its first bytes, never by its name; a directory
gives its files (the one walker), or is a Parquet corpus when it holds Parquet files. In this process the
captures are read as one stream (rotated files continue one another's connections). On Spark (``--master``, or
inputs over ``ON_SPARK_BYTES``) each file is a task that runs the same reader on its file and hands back its
``Usage``, merged on the driver: the same totals, but for a connection astride two rotated captures.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from linter.frames.corpus import read_rows, spark_files
from linter.frames.decode import loaded
from linter.frames.errors import FramesInputError
from linter.frames.extract import Extraction, capture_files, is_capture
from linter.parse.discovery import files_below
from linter.readiness.request_log import is_request_log, read_request_log
from linter.readiness.usage import FrameReader, Usage
from linter.spark.session import IN_PROCESS, session

if TYPE_CHECKING:
    from linter.codec import Codec
    from linter.compat.revision import Revision

ON_SPARK_BYTES = 1 << 30  # above this much input, Spark without --master (a capture reads at ~20 MB/s a core)
CORRUPT = "corpus rows not readable"


@dataclass
class Inputs:
    """The files of a run by kind, in reading order (captures by their first packet)."""

    captures: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    corpora: list[str] = field(default_factory=list)

    def files(self) -> list[tuple[str, str]]:
        """(kind, path) of every input, one Spark task each."""
        return ([("capture", path) for path in self.captures] + [("log", path) for path in self.logs]
                + [("corpus", path) for path in self.corpora])

    def size(self) -> int:
        return sum(_size(path) for _, path in self.files())


def sorted_inputs(paths: Iterable[str | os.PathLike[str]]) -> Inputs:
    """Each path's files by kind; a file that is none of them is a corpus for the corpus reader to judge (its
    error names the file)."""
    inputs, captures = Inputs(), []
    for path in (os.fspath(given) for given in paths):
        if os.path.isdir(path) and _parquet_dir(path):
            inputs.corpora.extend(str(file) for file in spark_files(Path(path)))  # a Spark task each
        elif os.path.isdir(path):
            for file in _files(path):
                if is_capture(file):
                    captures.append(file)
                elif is_request_log(file):
                    inputs.logs.append(file)
        elif os.path.isfile(path) and is_capture(path):
            captures.append(path)
        elif os.path.isfile(path) and is_request_log(path):
            inputs.logs.append(path)
        else:
            inputs.corpora.append(path)
    inputs.captures = capture_files(captures)
    return inputs


def _files(top: str) -> list[str]:
    return sorted(os.path.join(directory, name) for directory, names, _ in files_below(top) for name in names)


def _parquet_dir(path: str) -> bool:
    return any(name.endswith(".parquet") for _, names, _ in files_below(path) for name in names)


def _size(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(file) for file in _files(path))
    return os.path.getsize(path)


def read_here(inputs: Inputs, codec: Codec | None, ports: frozenset[int] | None) -> Usage:
    """The usage of every input, read in this process (``codec``: for captures and corpora)."""
    usage = Usage(files=len(inputs.files()))
    for log in inputs.logs:
        for request in read_request_log(log, usage.tally):
            usage.logged(request)
    if codec is None:
        return usage
    reader = FrameReader(usage, codec)
    if inputs.captures:
        extraction = Extraction(inputs.captures, codec, ports)
        for row in extraction.rows():
            reader.row(row["direction"], row["api_key"], row["api_version"], row["bytes"], row["client_id"],
                       row["software_name"], row["software_version"], row["connection"])
        usage.tally.update(extraction.tally)
    for corpus in inputs.corpora:
        _read_corpus(corpus, reader)
    return usage


def _read_corpus(corpus: str, reader: FrameReader) -> None:
    """A frames corpus's rows (the client id read from each request's header)."""
    for _, (api_key, api_version, direction, _, data, hex_text, corrupt) in read_rows(corpus):
        frame = _frame(data, hex_text)
        if corrupt is not None or frame is None:
            reader.usage.tally[CORRUPT] += 1
            continue
        reader.row(direction, api_key, api_version, frame, has_client=False)


def _frame(data: object, hex_text: object) -> bytes | None:
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    if isinstance(hex_text, str):
        try:
            return bytes.fromhex(hex_text)
        except ValueError:
            return None
    return None


@dataclass
class Gathered:
    """A run's usage and where it ran."""

    usage: Usage
    master: str
    seconds: float


def gather(inputs: Inputs, specs: Revision | None, *, master: str | None = None,
           ports: frozenset[int] | None = frozenset({9092})) -> Gathered:
    """The usage of every input: in this process unless ``master`` is given or the inputs are large. ``specs``
    cut captures and corpora (None: request logs only); they only read headers and ApiVersions, so a spec file
    the codec refuses is left out (``allow_invalid``) rather than refusing the run."""
    if not inputs.files():
        raise FramesInputError("no capture, request log or frames corpus in the inputs")
    if specs is None and (inputs.captures or inputs.corpora):
        raise FramesInputError("captures and frames corpora are cut with spec files: give their specs")
    started = time.monotonic()
    if master is None and inputs.size() <= ON_SPARK_BYTES:
        codec = loaded(specs, allow_invalid=True).codec if specs is not None else None
        return Gathered(read_here(inputs, codec, ports), IN_PROCESS, time.monotonic() - started)
    spark = session(master)
    usage = read_on_spark(spark, inputs, specs, ports)
    return Gathered(usage, spark.sparkContext.master, time.monotonic() - started)


def read_on_spark(spark: object, inputs: Inputs, specs: Revision | None, ports: frozenset[int] | None) -> Usage:
    """The usage of every input on Spark: a task per file, each reading its file as ``read_here`` does."""
    files = inputs.files()
    tasks = spark.sparkContext.parallelize(files, len(files))  # type: ignore[attr-defined]
    usage = Usage()
    for part in tasks.mapPartitions(_task(specs, ports)).collect():
        usage.merge(part)
    usage.files = len(files)
    return usage


def _task(specs: Revision | None, ports: frozenset[int] | None):  # type: ignore[no-untyped-def]
    """The function a Spark task runs on its (kind, path) pairs: one ``Usage`` for them."""

    def run(files: Iterator[tuple[str, str]]) -> Iterator[Usage]:
        codec = loaded(specs, allow_invalid=True, freeze=True).codec if specs is not None else None
        mine = Inputs()
        for kind, path in files:
            {"capture": mine.captures, "log": mine.logs, "corpus": mine.corpora}[kind].append(path)
        yield read_here(mine, codec, ports)

    return run


__all__ = ["ON_SPARK_BYTES", "Gathered", "Inputs", "gather", "read_here", "read_on_spark", "sorted_inputs"]
