"""The inputs of a command that reads traffic (``frames check``, ``readiness``): files sorted by content.

Captures (``linter.frames.capture.is_capture``), frames corpora (``linter.frames.corpus``) and, for a command that
reads them, broker request logs (``is_log``): each recognised by its first bytes. A directory gives its files (the
one walker): captures and logs by content, JSON Lines corpora by their suffix and first record, the rest skipped
and counted; a directory that holds Parquet files is a Parquet corpus (a Spark task per file).
Captures are kept in the order of their first packet, so rotated files continue one another's connections.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from linter.frames.capture import is_capture
from linter.frames.corpus import JSON_SUFFIXES, check_corpus, spark_files
from linter.frames.errors import FramesInputError
from linter.frames.extract import in_reading_order
from linter.parse.discovery import regular_files

CAPTURE, LOG, CORPUS = "capture", "log", "corpus"


@dataclass
class Inputs:
    """The files of a run by kind, in reading order (captures by their first packet)."""

    captures: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    corpora: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files of a directory that are none of them

    def files(self) -> list[tuple[str, str]]:
        """(kind, path) of every input, one Spark task each."""
        return ([(CAPTURE, path) for path in self.captures] + [(LOG, path) for path in self.logs]
                + [(CORPUS, path) for path in self.corpora])

    def size(self) -> int:
        return sum(os.path.getsize(path) for _, path in self.files())

    @staticmethod
    def of(files: Iterable[tuple[str, str]]) -> Inputs:
        """The inputs of (kind, path) pairs, as ``files()`` gives them (a Spark task's share)."""
        inputs = Inputs()
        for kind, path in files:
            {CAPTURE: inputs.captures, LOG: inputs.logs, CORPUS: inputs.corpora}[kind].append(path)
        return inputs


def sorted_inputs(paths: Iterable[str | os.PathLike[str]],
                  is_log: Callable[[str], bool] | None = None) -> Inputs:
    """Each path's files by kind; a file that is none of them is a corpus for the corpus reader to judge (its
    error names the file). ``is_log``: what a request log is, for a command that reads them."""
    inputs, captures = Inputs(), []
    for path in (os.fspath(given) for given in paths):
        files = regular_files(path) if os.path.isdir(path) else [path]
        if os.path.isdir(path) and any(name.endswith(".parquet") for name in files):
            inputs.corpora.extend(str(file) for file in spark_files(Path(path)))  # a Spark task each
            continue
        for file in files:
            if is_capture(file):
                captures.append(file)
            elif is_log is not None and is_log(file):
                inputs.logs.append(file)
            elif file == path or _json_corpus(file):  # a file named is a corpus or an error naming it
                inputs.corpora.append(file)
            else:
                inputs.skipped.append(file)
    inputs.captures = in_reading_order(captures)
    return inputs


def _json_corpus(file: str) -> bool:
    """Whether a file found in a directory is a JSON Lines frames corpus (by its name, then its first record)."""
    if not file.lower().endswith(JSON_SUFFIXES):
        return False
    try:
        check_corpus(file)
    except FramesInputError:
        return False
    return True


__all__ = ["CAPTURE", "CORPUS", "LOG", "Inputs", "sorted_inputs"]
