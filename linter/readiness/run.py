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
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from linter.frames.corpus import BadFrame, frame_of, read_rows
from linter.frames.decode import loaded
from linter.frames.errors import FramesInputError
from linter.frames.extract import Extraction
from linter.frames.inputs import Inputs
from linter.frames.inputs import sorted_inputs as frames_inputs
from linter.frames.traffic import KAFKA_PORTS
from linter.readiness.request_log import is_request_log, read_request_log
from linter.readiness.usage import FrameReader, Usage
from linter.spark.session import session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from linter.codec import Codec
    from linter.compat.revision import Revision

ON_SPARK_BYTES = 1 << 30  # above this much input, Spark without --master (a capture reads at ~20 MB/s a core)
CORRUPT = "corpus rows not readable"


def sorted_inputs(paths: Iterable[str | os.PathLike[str]]) -> Inputs:
    """Each path's files by kind (``linter.frames.inputs``), request logs among them."""
    return frames_inputs(paths, is_request_log)


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
        try:
            frame = frame_of(data, hex_text)
        except BadFrame:
            frame = None
        if corrupt is not None or frame is None:
            reader.usage.tally[CORRUPT] += 1
            continue
        reader.row(direction, api_key, api_version, frame, has_client=False)


def gather(inputs: Inputs, specs: Revision | None, *, master: str | None = None,
           ports: frozenset[int] | None = KAFKA_PORTS) -> Usage:
    """The usage of every input: in this process unless ``master`` is given or the inputs are large. ``specs``
    cut captures and corpora (None: request logs only); they only read headers and ApiVersions, so a spec file
    the codec refuses is left out (``allow_invalid``) rather than refusing the run."""
    if not inputs.files():
        raise FramesInputError("no capture, request log or frames corpus in the inputs")
    if specs is None and (inputs.captures or inputs.corpora):
        raise FramesInputError("captures and frames corpora are cut with spec files: give the specs to cut them "
                               "with (--specs DIR with --kafka-version)")
    if master is None and inputs.size() <= ON_SPARK_BYTES:
        return read_here(inputs, loaded(specs, allow_invalid=True).codec if specs is not None else None, ports)
    return read_on_spark(session(master), inputs, specs, ports)


def read_on_spark(spark: SparkSession, inputs: Inputs, specs: Revision | None,
                  ports: frozenset[int] | None) -> Usage:
    """The usage of every input on Spark: a task per file, each reading its file as ``read_here`` does."""
    files = inputs.files()
    tasks = spark.sparkContext.parallelize(files, len(files))
    usage = Usage()
    for part in tasks.mapPartitions(_task(specs, ports)).collect():
        usage.merge(part)
    usage.files = len(files)
    return usage


def _task(specs: Revision | None,
          ports: frozenset[int] | None) -> Callable[[Iterator[tuple[str, str]]], Iterator[Usage]]:
    """The function a Spark task runs on its (kind, path) pairs: one ``Usage`` for them."""

    def run(files: Iterator[tuple[str, str]]) -> Iterator[Usage]:
        codec = loaded(specs, allow_invalid=True, freeze=True).codec if specs is not None else None
        yield read_here(Inputs.of(files), codec, ports)

    return run


__all__ = ["ON_SPARK_BYTES", "Inputs", "gather", "read_here", "read_on_spark", "sorted_inputs"]
