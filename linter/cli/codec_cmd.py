"""``krpc-lint codec``: encode and decode Kafka messages from the command line.

- ``codec encode``: Kafka's JSON form (as its JsonConverter writes it) to bytes (hex or raw);
- ``codec decode``: bytes (hex or raw) to the JSON form;
- ``codec batch``: JSON Lines of encode/decode jobs, one answer line per job, streamed (codec_batch.py);
- ``codec record encode|decode``: coordinator records (codec_records.py).

``--frame`` works on whole request and response frames (int32 size, header, body; codec_frames.py).

Exit codes: 0 on success, 1 for bad data (JSON or bytes the codec refuses; in ``batch``, when
any line failed), 2 for usage problems (unknown message, version not valid, unusable specs).
Like ``main``, these modules import only click at start-up: the codec loads inside the commands
(codec_io.py holds what they share).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from linter.cli.codec_batch import batch_command
from linter.cli.codec_frames import encode_frame, frame_decoder, framed_spec
from linter.cli.codec_io import (
    check_version,
    data_errors,
    dumps,
    frame_option,
    hex_option,
    input_option,
    load,
    message_spec,
    parse_hex,
    parse_json,
    pretty_option,
    read_input,
    specs_option,
    usage_error,
    write_bytes,
)
from linter.cli.codec_records import record_group

if TYPE_CHECKING:
    from linter.codec import Codec


@click.group("codec")
def codec_group() -> None:
    """Encode and decode Kafka messages with the reference codec.

    Values are in Kafka's JSON form (what its JsonConverter writes): camelCase keys, base64
    bytes, base64url uuids, tagged fields only when not default. See docs/codec.md.
    """


@codec_group.command("encode")
@specs_option
@click.argument("name")
@click.argument("version", type=int)
@hex_option
@frame_option
@input_option
def encode_command(specs: str, name: str, version: int, hex_mode: bool, frame: bool, input_file: str | None) -> None:
    """Encode the JSON form of message NAME at VERSION.

    With --frame, NAME is a request or a response and the input is
    {"header": {...}, "body": {...}}; the header version follows from the API version.
    """
    codec = load(specs)
    framed = framed_spec(codec, name) if frame else None
    if framed is None:
        message_spec(codec, name)
    check_version(codec, name, version)
    with data_errors():
        value = parse_json(read_input(input_file))
        if framed is not None:
            data = encode_frame(codec, framed, version, value)
        else:
            data = codec.encode(name, version, codec.from_json(name, version, value))
    write_bytes(data, hex_mode)


@codec_group.command("decode")
@specs_option
@click.argument("name", required=False)
@click.argument("version", type=int, required=False)
@hex_option
@frame_option
@input_option
@pretty_option
def decode_command(specs: str, name: str | None, version: int | None, hex_mode: bool, frame: bool,
                   input_file: str | None, pretty: bool) -> None:
    """Decode message NAME at VERSION to its JSON form.

    With --frame, the input is a whole frame and the output
    {"message", "version", "header", "body"}. For a request frame NAME and VERSION are
    optional (the header says them; given, they must match); a response frame needs both,
    NAME being the response.
    """
    codec = load(specs)
    decode: Callable[[bytes], dict[str, Any]]
    if frame:
        decode = frame_decoder(codec, name, version)
    elif name is None or version is None:
        raise usage_error("decode needs NAME and VERSION (only a request --frame says them itself)")
    else:
        message_spec(codec, name)
        check_version(codec, name, version)
        decode = functools.partial(_decode_message, codec, name, version)
    with data_errors():
        raw = read_input(input_file)
        result = decode(parse_hex(raw) if hex_mode else raw)
    click.echo(dumps(result, pretty))


def _decode_message(codec: Codec, name: str, version: int, data: bytes) -> dict[str, Any]:
    return codec.to_json(name, version, codec.decode(name, version, data))


codec_group.add_command(batch_command)
codec_group.add_command(record_group)
