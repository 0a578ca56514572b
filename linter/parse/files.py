"""The one way krpc-lint reads a file it is given: regular files only, never more than a cap; and the one way
it replaces a file it writes (``replace_file``).

Hooks and the GitHub Action run on pull requests, so a path may name a FIFO (reading it would wait
forever), a device such as ``/dev/zero`` (never ends) or a symbolic link to one. The file is opened
without blocking, its type checked on the open descriptor (no window between a check and the open),
and at most ``limit + 1`` bytes are read, so the caller can say "too large" without holding more.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, cast

from linter.errors import KrpcLintError

MAX_INPUT_BYTES = 64 * 1024 * 1024  # configs, baselines, rule packs, codec inputs: far above any real one
GZIP_MAGIC = b"\x1f\x8b"

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class InputError(KrpcLintError, OSError):
    """A path that cannot be read as a regular file; the message names it and says why."""


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words ("a FIFO"); "a special file" when it is none of the usual."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


class OutputOverInput(KrpcLintError, ValueError):
    """The output path is an input of the run, contains one, or lies where the run reads."""


def refuse_overlap(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str] | None],
                   what: str = "an input", reads: Callable[[Path, Path], bool] | None = None) -> None:
    """``OutputOverInput`` when the output would replace or land in what the run reads: it is an input, it
    contains one, or it lies inside an input directory where ``reads(target, directory)`` says the run reads
    (default: anywhere). So ``lint . -o krpc.sarif`` is allowed, ``lint specs -o specs/Foo.json`` is not."""
    target = Path(output).resolve()
    for item in inputs:
        if item is None:
            continue
        source = Path(item).resolve()
        if target == source:
            why = f"it is {what} ({os.fspath(item)})"
        elif source.is_relative_to(target):
            why = f"it contains {what} ({os.fspath(item)})"
        elif source.is_dir() and target.is_relative_to(source) and (reads is None or reads(target, source)):
            why = f"it lies inside {os.fspath(item)}, where the run reads it as a spec or input"
        else:
            continue
        raise OutputOverInput(f"{os.fspath(output)}: refusing to write there: {why}; choose another output path")


def open_regular(path: str | os.PathLike[str], shown: str | None = None) -> BinaryIO:
    """The regular file at ``path`` opened for reading (a link to one is followed); ``InputError`` for a
    missing or unreadable file and for anything but a regular file, which is never read."""
    return os.fdopen(_open_descriptor(path, shown)[0], "rb")


@contextmanager
def open_uncompressed(path: str | os.PathLike[str], shown: str | None = None) -> Iterator[io.BufferedIOBase]:
    """A regular file's own bytes (``open_regular``): the file itself, or read through gzip when it starts with
    gzip's magic, as rotated captures and logs often are (judged by content, never by a ``.gz`` name). gzip's
    errors (a cut or corrupt stream) come from the reads."""
    with open_regular(path, shown) as raw:
        if raw.read(2) != GZIP_MAGIC:
            raw.seek(0)
            yield cast(io.BufferedIOBase, raw)  # os.fdopen's "rb": a BufferedReader
            return
        raw.seek(0)
        with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
            yield unpacked


def _open_descriptor(path: str | os.PathLike[str], shown: str | None) -> tuple[int, int]:
    """(descriptor, size) of the regular file at ``path``: opened without blocking (a FIFO would wait for a
    writer), its type checked on the open descriptor, so no other file can be swapped in after the check."""
    name = shown if shown is not None else os.fspath(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputError(f"{name}: cannot read file: {exc.strerror or exc}") from None
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        raise InputError(f"{name}: not a regular file ({kind_of(status.st_mode)}); give a file or a directory of "
                         "files")
    return descriptor, status.st_size


def read_regular(path: str | os.PathLike[str], limit: int = MAX_INPUT_BYTES, shown: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit + 1`` of them (``open_regular``'s errors).
    Plain reads on the descriptor: a spec is one read of its size (see ``_read_up_to``)."""
    descriptor, size = _open_descriptor(path, shown)
    try:
        return _read_up_to(functools.partial(os.read, descriptor), limit, size)
    except OSError as exc:
        name = shown if shown is not None else os.fspath(path)
        raise InputError(f"{name}: cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)


def read_capped(stream: BinaryIO, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of a stream (a pipe, standard input, /proc's sizeless files)."""
    return _read_up_to(stream.read, limit)


def _read_up_to(read: Callable[[int], bytes], limit: int, size: int | None = None) -> bytes:
    """Up to ``limit + 1`` bytes from ``read(n)``. With ``size`` (what a regular file reports) the first read
    asks for all of it, and a short read once that much is in is the end, so no second read is needed to see
    it (a file that grew is read on); without it, reads go on until one gives nothing."""
    chunks, total = [], 0
    while total <= limit:
        want = min(max((size or 0) + 1 - total, 1 << 16), limit + 1 - total)
        chunk = read(want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if size is not None and len(chunk) < want and total >= size:
            break
    return b"".join(chunks)


def replace_file(path: str | os.PathLike[str], text: str) -> None:
    """Replace (or create) ``path`` with ``text`` (UTF-8) in one step: a temporary sibling, given the file's
    permission bits (0o644 for a new file, not mkstemp's 0o600), renamed over it, so a reader only ever sees the
    old text or the whole new one (a report, a fixed spec)."""
    import tempfile  # only when writing: it costs a cold start milliseconds

    target = Path(path)
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.chmod(partial, target.stat().st_mode & 0o777 if target.exists() else 0o644)
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def bounded_lines(stream: BinaryIO) -> Iterator[bytes | None]:
    """The stream's lines, each at most MAX_INPUT_BYTES long: a longer one is ``None`` (and skipped to its
    end), so a line without end (``/dev/zero`` through a pipe) costs bounded memory."""
    while True:
        line = stream.readline(MAX_INPUT_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_INPUT_BYTES and not line.endswith(b"\n"):
            while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield None
            continue
        yield line
