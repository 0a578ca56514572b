"""``krpc-lint codec batch``: JSON Lines of encode and decode jobs, one answer line per job, streamed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import click

from linter.cli.codec_io import (
    BadInput,
    close_input,
    dumps,
    input_option,
    load,
    open_input,
    parse_hex,
    parse_json,
    specs_option,
)
from linter.parse.files import MAX_INPUT_BYTES, bounded_lines

if TYPE_CHECKING:
    from linter.codec import Codec


@click.command("batch")
@specs_option
@input_option
def batch_command(specs: str, input_file: str | None) -> None:
    """Run encode and decode jobs read as JSON Lines: one answer line per line, in order.

    \b
    in:  {"op": "encode", "message": NAME, "version": N, "json": {...}}
         {"op": "decode", "message": NAME, "version": N, "hex": "..."}
    out: {"hex": "..."}  or  {"json": {...}}
         {"error": {"message": "...", "offset": N or null, "path": "..."}}

    Lines are read and answered one at a time. A bad line gets an error answer and the batch
    goes on; the exit code is 1 when any line failed, else 0.
    """
    codec = load(specs)
    stream = open_input(input_file)
    failed = 0
    try:
        for line in bounded_lines(stream):
            answer = _answer(codec, line) if line is not None else \
                {"error": {"message": f"line longer than {MAX_INPUT_BYTES} bytes", "offset": None, "path": None}}
            failed += "error" in answer
            click.echo(dumps(answer))
    finally:
        close_input(stream)
    click.get_current_context().exit(1 if failed else 0)


class _Job(NamedTuple):  # not a dataclass: cheaper to define, and every krpc-lint start defines it
    """One line's job: encode ``data`` (JSON) or decode it (hex) as message ``name`` at ``version``."""

    op: str
    name: str
    version: int
    data: Any


def _answer(codec: Codec, line: bytes) -> dict[str, Any]:
    """The answer line to one input line: the result, or the error (never raised: the batch goes on)."""
    from linter.codec import CodecError, DecodeError

    try:
        return _run(codec, _job(codec, line))
    except BadInput as exc:
        return {"error": {"message": str(exc), "offset": None, "path": ""}}
    except CodecError as exc:
        offset = exc.offset if isinstance(exc, DecodeError) else None
        return {"error": {"message": exc.reason, "offset": offset, "path": exc.path}}


def _job(codec: Codec, line: bytes) -> _Job:
    """The job of a line, checked: ``BadInput`` says what is wrong with it."""
    if not line.strip():
        raise BadInput("empty line")
    job = parse_json(line.rstrip(b"\r\n"), "line")
    if not isinstance(job, dict):
        raise BadInput("expected a JSON object with op, message, version and json or hex")
    op, name, version = job.get("op"), job.get("message"), job.get("version")
    if op not in ("encode", "decode"):
        raise BadInput(f'op must be "encode" or "decode", not {op!r}')
    if not isinstance(name, str):
        raise BadInput(f"message must be a message name, not {name!r}")
    if type(version) is not int:
        raise BadInput(f"version must be an integer, not {version!r}")
    if name not in codec.names:
        from linter.codec.errors import unknown_message

        raise BadInput(unknown_message(codec.names, name))
    try:
        codec.plan(name, version)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    data_key = "json" if op == "encode" else "hex"
    if data_key not in job:
        raise BadInput(f"an {op} line needs a {data_key!r} key")
    return _Job(op, name, version, job[data_key])


def _run(codec: Codec, job: _Job) -> dict[str, Any]:
    if job.op == "encode":
        return {"hex": codec.encode(job.name, job.version, codec.from_json(job.name, job.version, job.data)).hex()}
    if not isinstance(job.data, str):
        raise BadInput(f"hex must be a string, not {type(job.data).__name__}")
    data = parse_hex(job.data, 'the "hex" value')
    return {"json": codec.to_json(job.name, job.version, codec.decode(job.name, job.version, data))}
