"""What the ``krpc-lint codec`` commands share: their errors and options, the specs they load, and how they
read and write data (linter/cli/codec_cmd.py has the commands).

Imports only click at start-up, as ``main`` does: the codec loads inside the commands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, ParamSpec, TypeVar

import click

from linter.cli.common import ALLOW_INVALID_HELP, CliError, NonEmptyPath, skipped_line
from linter.escape import json_safe
from linter.parse.bounded_json import NestingError, NumberTooLong, load_json
from linter.parse.files import MAX_INPUT_BYTES, InputError, open_regular, read_capped

if TYPE_CHECKING:
    from linter.codec import Codec
    from linter.model.spec import MessageSpec

UNKNOWN_TAGS = "_unknownTaggedFields"  # linter.codec.UNKNOWN_TAGS, without importing the codec
_ALLOW_INVALID = "krpc-lint.allow-invalid"

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
T = TypeVar("T")


def usage_error(message: str) -> CliError:
    """A ``krpc-lint: error: ...`` line on stderr and exit code 2: the command was asked something wrong."""
    return CliError(message)


class BadData(CliError):
    """JSON or bytes the command or the codec refuses: one line on stderr, exit code 1 (not 2, a usage error)."""

    exit_code = 1


class BadInput(ValueError):
    """Input that is not what the command reads (not JSON, not hex, wrong shape). Always caught inside the
    codec commands (bad data, exit 1, or a ``batch`` error line), so not a ``KrpcLintError``, whose exit
    code is 2."""


@contextmanager
def data_errors() -> Iterator[None]:
    """Bad input and codec errors (JSON or bytes the codec refuses) as ``BadData``."""
    from linter.codec import CodecError

    try:
        yield
    except (BadInput, CodecError) as exc:
        raise BadData(str(exc)) from None


# --- options ----------------------------------------------------------------------------------------


def _remember_allow_invalid(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.meta[_ALLOW_INVALID] = value


def specs_option(command: F) -> F:
    """``--specs DIR`` and ``--allow-invalid`` (kept in the context for ``load``, not a parameter of each
    command)."""
    command = click.option("--allow-invalid", is_flag=True, expose_value=False, callback=_remember_allow_invalid,
                           help=ALLOW_INVALID_HELP)(command)
    return click.option("--specs", required=True, type=NonEmptyPath(), metavar="DIR",
                        help="The message specs: a spec file or a directory searched for *.json.")(command)


input_option = click.option(
    "--input", "-i", "input_file", type=NonEmptyPath(dir_okay=False, allow_dash=True), default=None, metavar="FILE",
    help="Read this file instead of standard input.")
hex_option = click.option(
    "--hex/--binary", "hex_mode", default=True,
    help="Bytes as hex text (default; one line out, whitespace ignored in) or raw bytes.")
frame_option = click.option(
    "--frame", is_flag=True,
    help="A whole frame (int32 size, header, body) of a request or response; "
         'the JSON is {"header": {...}, "body": {...}}.')
pretty_option = click.option("--pretty", is_flag=True, help="Indented JSON instead of one compact line.")


# --- specs, messages, versions ----------------------------------------------------------------------


def load(specs: str) -> Codec:
    """The codec of ``--specs``; its unusable specs a usage error, or skipped with ``--allow-invalid``."""
    from linter.codec import Codec, SpecError

    allow_invalid = bool(click.get_current_context().meta.get(_ALLOW_INVALID))
    try:
        codec = Codec.load(specs, allow_invalid=allow_invalid)
    except SpecError as exc:
        raise usage_error(str(exc)) from None
    if codec.skipped:
        click.echo(skipped_line(codec.skipped), err=True)
    return codec


def message_spec(codec: Codec, name: str) -> MessageSpec:
    try:
        return codec.spec(name)
    except KeyError:
        from linter.codec.errors import unknown_message

        raise usage_error(unknown_message(codec.names, name)) from None


def check_version(codec: Codec, name: str, version: int) -> None:
    """A version the message does not have is a usage error (so is a spec the codec cannot compile)."""
    try:
        codec.plan(name, version)
    except ValueError as exc:  # not a valid version, or a SpecError (a SpecError is a ValueError)
        raise usage_error(str(exc)) from None


def header_spec(codec: Codec, kind: str) -> str:
    """The name of the header spec of a ``request`` or ``response`` frame, which ``--specs`` must have."""
    name = "RequestHeader" if kind == "request" else "ResponseHeader"
    if name not in codec.names:
        raise usage_error(f"--frame needs the {name} spec, and --specs has none")
    return name


def name_of(spec: MessageSpec) -> str:
    """The name of a spec the codec holds (it keys its specs by name, so every one has a name)."""
    assert spec.name is not None
    return spec.name


# --- reading and writing ----------------------------------------------------------------------------


def open_input(path: str | None) -> BinaryIO:
    """``--input`` opened (standard input for none or ``-``); the caller closes it with ``close_input``."""
    if path is None or path == "-":
        return sys.stdin.buffer
    try:
        return open_regular(path)
    except InputError as exc:
        raise usage_error(str(exc)) from None


def close_input(stream: BinaryIO) -> None:
    if stream is not sys.stdin.buffer:
        stream.close()


def read_input(path: str | None) -> bytes:
    """The whole input, refused beyond MAX_INPUT_BYTES (one message is far smaller)."""
    stream = open_input(path)
    try:
        data = read_capped(stream, MAX_INPUT_BYTES)
    finally:
        close_input(stream)
    if len(data) > MAX_INPUT_BYTES:
        raise usage_error(f"{path or 'standard input'}: more than {MAX_INPUT_BYTES} bytes; one message is far "
                          "smaller")
    return data


def parse_json(data: bytes, what: str = "input") -> Any:
    """JSON text; ``BadInput`` when it is not (a hostile nesting depth included)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what} is not UTF-8 text (byte {exc.start})") from None
    try:
        value = load_json(text, f"{what}: ")  # the one nesting limit; integers refused by length before int()
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}" if "\n" in text.rstrip() else f"column {exc.colno}"
        raise BadInput(f"{what} is not valid JSON: {exc.msg} ({where})") from None
    except (NestingError, NumberTooLong) as exc:
        raise BadInput(str(exc)) from None
    _refuse_unknown_tags(value)
    return value


def _refuse_unknown_tags(value: Any) -> None:
    """Kafka's JSON form has no unknown tagged fields, and the library's Python form of them
    (``[(tag, bytes)]``) is not taken from JSON, where an integer would be read as a size."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if UNKNOWN_TAGS in item:
                raise BadInput(f"{UNKNOWN_TAGS}: unknown tagged fields are not part of the JSON form")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def parse_hex(data: bytes | str, what: str = "input") -> bytes:
    """Hex digits, whitespace ignored; ``BadInput`` naming the first bad digit."""
    text = data.decode("ascii", "replace") if isinstance(data, bytes) else data
    digits = "".join(text.split())
    bad = next((index for index, char in enumerate(digits) if char not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise BadInput(f"{what} is not hex: {digits[bad]!r} at digit {bad + 1}")
    if len(digits) % 2:
        raise BadInput(f"{what} is not hex: an odd number of digits ({len(digits)})")
    return bytes.fromhex(digits)


def dumps(value: Any, pretty: bool = False) -> str:
    """``value`` as JSON, with what JSON leaves raw (DEL, C1 and bidi controls, ``##[``) escaped: decoded strings are
    the input's, and this goes to terminals and CI logs."""
    if pretty:
        return json_safe(json.dumps(value, indent=2))
    return json_safe(json.dumps(value, separators=(",", ":")))


def write_bytes(data: bytes, hex_output: bool) -> None:
    if hex_output:
        click.echo(data.hex())
        return
    stdout = sys.stdout.buffer
    stdout.write(data)
    stdout.flush()


def in_part(part: str, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``call(*args)``, with a codec error's path starting at ``part`` (``header``, ``body``, ``key``...)."""
    from linter.codec import CodecError

    try:
        return call(*args, **kwargs)
    except CodecError as exc:
        raise exc.at(part) from None
