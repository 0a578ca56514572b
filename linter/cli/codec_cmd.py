"""``krpc-lint codec``: encode and decode Kafka messages from the command line.

- ``codec encode``: Kafka's JSON form (as its JsonConverter writes it) to bytes (hex or raw);
- ``codec decode``: bytes (hex or raw) to the JSON form;
- ``codec batch``: JSON Lines of encode/decode jobs, one answer line per job, streamed.

``--frame`` works on whole request and response frames (int32 size, header, body).

Exit codes: 0 on success, 1 for bad data (JSON or bytes the codec refuses; in ``batch``, when
any line failed), 2 for usage problems (unknown message, version not valid, unusable specs).
Like ``main``, this module imports only click at start-up: the codec loads inside the commands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from linter.cli.common import ALLOW_INVALID_HELP, skipped_line  # click only
from linter.parse.files import MAX_INPUT_BYTES, InputError, open_regular, read_capped

if TYPE_CHECKING:
    from linter.codec import Codec, CodecError
    from linter.model.spec import MessageSpec

FRAMED_TYPES = ("request", "response")
UNKNOWN_TAGS = "_unknownTaggedFields"  # linter.codec.UNKNOWN_TAGS, without importing the codec


def _error(message: str, exit_code: int = 2) -> click.ClickException:
    """A ``krpc-lint: error: ...`` line on stderr; exit code 2 (usage) unless told 1 (bad data)."""
    from linter.cli.common import CliError

    error = CliError(message)
    error.exit_code = exit_code
    return error


def _bad_data(message: str) -> click.ClickException:
    return _error(message, 1)


class _BadInput(ValueError):
    """Input that is not what the command reads (not JSON, not hex, wrong shape)."""


# --- specs, messages, versions ------------------------------------------------------------------


def _load(specs: str) -> Codec:
    from linter.codec import Codec, SpecError

    allow_invalid = bool(click.get_current_context().meta.get(_ALLOW_INVALID))
    try:
        codec = Codec.load(specs, allow_invalid=allow_invalid)
    except SpecError as exc:
        raise _error(str(exc)) from None
    if codec.skipped:
        click.echo(skipped_line(codec.skipped), err=True)
    return codec


def _spec(codec: Codec, name: str) -> MessageSpec:
    try:
        return codec.spec(name)
    except KeyError:
        raise _error(_unknown_message(codec, name)) from None


def _unknown_message(codec: Codec, name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, codec.names, n=3)
    suggestion = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"unknown message {name!r}{suggestion} (the specs define {len(codec.names)} messages)"


def _check_version(codec: Codec, name: str, version: int) -> None:
    """A version the message does not have is a usage error (so is a spec the codec cannot compile)."""
    try:
        codec.plan(name, version)
    except ValueError as exc:  # not a valid version, or a SpecError (a SpecError is a ValueError)
        raise _error(str(exc)) from None


def _header_spec(codec: Codec, kind: str) -> str:
    name = "RequestHeader" if kind == "request" else "ResponseHeader"
    if name not in codec.names:
        raise _error(f"--frame needs the {name} spec, and --specs has none")
    return name


def _framed_spec(codec: Codec, name: str) -> MessageSpec:
    spec = _spec(codec, name)
    if spec.type not in FRAMED_TYPES or spec.api_key is None:
        raise _error(f"--frame needs a request or response, and {name} is a {spec.type} spec")
    _header_spec(codec, spec.type)
    return spec


# --- reading and writing --------------------------------------------------------------------------


def _open_input(path: str | None) -> BinaryIO:
    if path is None or path == "-":
        return sys.stdin.buffer
    try:
        return open_regular(path)  # the caller closes it
    except InputError as exc:
        raise _error(str(exc)) from None


def _read_input(path: str | None) -> bytes:
    stream = _open_input(path)
    try:
        data = read_capped(stream, MAX_INPUT_BYTES)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if len(data) > MAX_INPUT_BYTES:
        raise _error(f"{path or 'standard input'}: more than {MAX_INPUT_BYTES} bytes; one message is far smaller")
    return data


def _lines(stream: BinaryIO) -> Iterator[bytes | None]:
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


def _parse_json(data: bytes, what: str = "input") -> Any:
    """JSON text; ``_BadInput`` when it is not (a hostile nesting depth included)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _BadInput(f"{what} is not UTF-8 text (byte {exc.start})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}" if "\n" in text.rstrip() else f"column {exc.colno}"
        raise _BadInput(f"{what} is not valid JSON: {exc.msg} ({where})") from None
    except (ValueError, RecursionError) as exc:  # integers too long for int(), nesting too deep
        raise _BadInput(f"{what} is not valid JSON: {exc}") from None
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
                raise _BadInput(f"{UNKNOWN_TAGS}: unknown tagged fields are not part of the JSON form")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _parse_hex(data: bytes | str, what: str = "input") -> bytes:
    text = data.decode("ascii", "replace") if isinstance(data, bytes) else data
    digits = "".join(text.split())
    bad = next((index for index, char in enumerate(digits) if char not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise _BadInput(f"{what} is not hex: {digits[bad]!r} at digit {bad + 1}")
    if len(digits) % 2:
        raise _BadInput(f"{what} is not hex: an odd number of digits ({len(digits)})")
    return bytes.fromhex(digits)


def _dumps(value: Any, pretty: bool = False) -> str:
    if pretty:
        return json.dumps(value, indent=2)
    return json.dumps(value, separators=(",", ":"))


def _write_bytes(data: bytes, hex_output: bool) -> None:
    if hex_output:
        click.echo(data.hex())
        return
    stdout = sys.stdout.buffer
    stdout.write(data)
    stdout.flush()


def _in_part(part: str, call: Any, *args: Any) -> Any:
    """``call(*args)``, with a codec error's path starting at ``part`` (``header`` or ``body``)."""
    from linter.codec import CodecError

    try:
        return call(*args)
    except CodecError as exc:
        raise exc.at(part) from None


def _fail(exc: CodecError) -> click.ClickException:
    return _bad_data(str(exc))


# --- the commands ---------------------------------------------------------------------------------

_ALLOW_INVALID = "krpc-lint.allow-invalid"


def _remember_allow_invalid(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.meta[_ALLOW_INVALID] = value


def specs_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--specs DIR`` and ``--allow-invalid`` (kept in the context for ``_load``, not a parameter of each
    command)."""
    command = click.option("--allow-invalid", is_flag=True, expose_value=False, callback=_remember_allow_invalid,
                           help=ALLOW_INVALID_HELP)(command)
    return click.option("--specs", required=True, type=click.Path(), metavar="DIR",
                        help="The message specs: a spec file or a directory searched for *.json.")(command)
input_option = click.option(
    "--input", "-i", "input_file", type=click.Path(dir_okay=False, allow_dash=True), default=None, metavar="FILE",
    help="Read this file instead of standard input.")
hex_option = click.option(
    "--hex/--binary", "hex_mode", default=True,
    help="Bytes as hex text (default; one line out, whitespace ignored in) or raw bytes.")
frame_option = click.option(
    "--frame", is_flag=True,
    help="A whole frame (int32 size, header, body) of a request or response; "
         'the JSON is {"header": {...}, "body": {...}}.')


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
    from linter.codec import CodecError

    codec = _load(specs)
    spec = _framed_spec(codec, name) if frame else _spec(codec, name)
    _check_version(codec, name, version)
    try:
        value = _parse_json(_read_input(input_file))
        if frame:
            data = _encode_frame(codec, spec, version, value)
        else:
            data = codec.encode(name, version, codec.from_json(name, version, value))
    except _BadInput as exc:
        raise _bad_data(str(exc)) from None
    except CodecError as exc:
        raise _fail(exc) from None
    _write_bytes(data, hex_mode)


def _frame_parts(value: Any, name: str, version: int) -> tuple[Any, Any]:
    """The header and body of a frame's JSON; ``message`` and ``version`` (as ``decode --frame``
    writes them) may be there too, and must then agree with NAME and VERSION."""
    if not isinstance(value, dict) or "header" not in value or "body" not in value:
        raise _BadInput('a frame must be a JSON object {"header": {...}, "body": {...}}')
    extra = sorted(set(value) - {"header", "body", "message", "version"})
    if extra:
        raise _BadInput(f"a frame has no key {extra[0]!r} (only header, body, message and version)")
    if value.get("message", name) != name or value.get("version", version) != version:
        raise _BadInput(f"the frame is for {value.get('message', name)} v{value.get('version', version)}, "
                        f"not {name} v{version}")
    return value["header"], value["body"]


def _encode_frame(codec: Codec, spec: MessageSpec, version: int, value: Any) -> bytes:
    header_json, body_json = _frame_parts(value, spec.name, version)
    body = _in_part("body", codec.from_json, spec.name, version, body_json)
    if spec.type == "request":
        header_version = codec.request_header_version(spec.api_key, version)
        header = _in_part("header", codec.from_json, "RequestHeader", header_version, header_json)
        for key, expected in (("requestApiKey", spec.api_key), ("requestApiVersion", version)):
            if header.get(key, expected) != expected:
                raise _BadInput(f"header.{key}: {header[key]!r}, but {spec.name} v{version} needs {expected}")
        header = {**header, "requestApiKey": spec.api_key, "requestApiVersion": version}
        _in_part("header", codec.encode, "RequestHeader", header_version, header)  # header errors say so
        return _in_part("body", codec.encode_request, version, header, body, spec.name)
    header_version = codec.response_header_version(spec.api_key, version)
    header = _in_part("header", codec.from_json, "ResponseHeader", header_version, header_json)
    _in_part("header", codec.encode, "ResponseHeader", header_version, header)
    return _in_part("body", codec.encode_response, spec.api_key, version, header, body)


@codec_group.command("decode")
@specs_option
@click.argument("name", required=False)
@click.argument("version", type=int, required=False)
@hex_option
@frame_option
@input_option
@click.option("--pretty", is_flag=True, help="Indented JSON instead of one compact line.")
def decode_command(specs: str, name: str | None, version: int | None, hex_mode: bool, frame: bool,
                   input_file: str | None, pretty: bool) -> None:
    """Decode message NAME at VERSION to its JSON form.

    With --frame, the input is a whole frame and the output
    {"message", "version", "header", "body"}. For a request frame NAME and VERSION are
    optional (the header says them; given, they must match); a response frame needs both,
    NAME being the response.
    """
    from linter.codec import CodecError

    codec = _load(specs)
    if not frame and (name is None or version is None):
        raise _error("decode needs NAME and VERSION (only a request --frame says them itself)")
    spec = None
    if name is not None:
        spec = _framed_spec(codec, name) if frame else _spec(codec, name)
        if version is not None:
            _check_version(codec, name, version)
    if frame and spec is None:
        _header_spec(codec, "request")
    elif frame and spec.type == "response" and version is None:
        raise _error(f"decoding a response frame needs VERSION (the API version of the request {name} answers)")
    try:
        raw = _read_input(input_file)
        data = _parse_hex(raw) if hex_mode else raw
        if not frame:
            result = codec.to_json(name, version, codec.decode(name, version, data))
        elif spec is not None and spec.type == "response":
            result = _decode_response(codec, spec, version, data)
        else:
            result = _decode_request(codec, spec, version, data)
    except _BadInput as exc:
        raise _bad_data(str(exc)) from None
    except CodecError as exc:
        raise _fail(exc) from None
    click.echo(_dumps(result, pretty))


def _decode_request(codec: Codec, spec: MessageSpec | None, version: int | None, data: bytes) -> dict[str, Any]:
    from linter.codec import DecodeError

    try:
        name, api_version, header, body = codec.decode_request(data)
    except DecodeError as exc:
        raise _place(exc, codec, data, "request") from None
    api_key = codec.spec(name).api_key
    if spec is not None and spec.name != name:
        raise _BadInput(f"the frame holds {name} (apiKey {api_key}), not {spec.name} (apiKey {spec.api_key})")
    if version is not None and version != api_version:
        raise _BadInput(f"the frame holds {name} v{api_version}, not v{version}")
    header_version = codec.request_header_version(api_key, api_version)
    return {"message": name, "version": api_version,
            "header": codec.to_json("RequestHeader", header_version, header),
            "body": codec.to_json(name, api_version, body)}


def _decode_response(codec: Codec, spec: MessageSpec, version: int, data: bytes) -> dict[str, Any]:
    from linter.codec import DecodeError

    try:
        header, body = codec.decode_response(spec.api_key, version, data)
    except DecodeError as exc:
        raise _place(exc, codec, data, "response", spec.api_key, version) from None
    header_version = codec.response_header_version(spec.api_key, version)
    return {"message": spec.name, "version": version,
            "header": codec.to_json("ResponseHeader", header_version, header),
            "body": codec.to_json(spec.name, version, body)}


def _place(exc: CodecError, codec: Codec, frame: bytes, kind: str, api_key: int | None = None,
           api_version: int | None = None) -> CodecError:
    """Start the path of a field error inside a frame with ``header`` or ``body``: the error is in
    the header exactly when the header alone does not decode. Errors outside fields (frame size,
    unknown API, trailing bytes) have no path and keep none."""
    from linter.codec import DecodeError
    from linter.codec.wire import INT16

    if not exc.parts:
        return exc
    if kind == "request":  # a field error: the frame is long enough for the API key and version
        api_key, api_version = INT16.unpack_from(frame, 4)[0], INT16.unpack_from(frame, 6)[0]
        header_version = codec.request_header_version(api_key, api_version)
    else:
        header_version = codec.response_header_version(api_key, api_version)
    try:
        codec.plan(_header_spec(codec, kind), header_version).decode(frame[4:], 0)
    except DecodeError:
        return exc.at("header")
    return exc.at("body")


# --- batch ----------------------------------------------------------------------------------------


@codec_group.command("batch")
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
    codec = _load(specs)
    stream = _open_input(input_file)
    failed = 0
    try:
        for line in _lines(stream):
            answer = _batch_line(codec, line) if line is not None else \
                {"error": {"message": f"line longer than {MAX_INPUT_BYTES} bytes", "offset": None, "path": None}}
            failed += "error" in answer
            click.echo(_dumps(answer))
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    click.get_current_context().exit(1 if failed else 0)


def _batch_line(codec: Codec, line: bytes) -> dict[str, Any]:
    from linter.codec import CodecError, DecodeError

    try:
        if not line.strip():
            raise _BadInput("empty line")
        job = _parse_json(line.rstrip(b"\r\n"), "line")
        if not isinstance(job, dict):
            raise _BadInput("expected a JSON object with op, message, version and json or hex")
        op, name, version = job.get("op"), job.get("message"), job.get("version")
        if op not in ("encode", "decode"):
            raise _BadInput(f'op must be "encode" or "decode", not {op!r}')
        if not isinstance(name, str):
            raise _BadInput(f"message must be a message name, not {name!r}")
        if type(version) is not int:
            raise _BadInput(f"version must be an integer, not {version!r}")
        if name not in codec.names:
            raise _BadInput(_unknown_message(codec, name))
        try:
            codec.plan(name, version)
        except ValueError as exc:
            raise _BadInput(str(exc)) from None
        data_key = "json" if op == "encode" else "hex"
        if data_key not in job:
            raise _BadInput(f"an {op} line needs a {data_key!r} key")
        if op == "encode":
            return {"hex": codec.encode(name, version, codec.from_json(name, version, job["json"])).hex()}
        if not isinstance(job["hex"], str):
            raise _BadInput(f"hex must be a string, not {type(job['hex']).__name__}")
        data = _parse_hex(job["hex"], 'the "hex" value')
        return {"json": codec.to_json(name, version, codec.decode(name, version, data))}
    except _BadInput as exc:
        return {"error": {"message": str(exc), "offset": None, "path": ""}}
    except CodecError as exc:
        offset = exc.offset if isinstance(exc, DecodeError) else None
        return {"error": {"message": exc.reason, "offset": offset, "path": exc.path}}


# --- coordinator records --------------------------------------------------------------------------


@codec_group.group("record")
def record_group() -> None:
    """Coordinator records (Kafka 4.1+ coordinator-key / coordinator-value specs) as their log stores
    them: key = int16 record type + the key at version 0; value = int16 version + the value, or none
    (a tombstone). The JSON is {"recordType": N, "key": {...}, "valueVersion": V, "value": {...} or null}.
    """


@record_group.command("encode")
@specs_option
@input_option
def record_encode_command(specs: str, input_file: str | None) -> None:
    """Encode a record's JSON: two lines of hex, the key and the value ("null" for a tombstone)."""
    from linter.codec import CodecError

    codec = _load(specs)
    try:
        record = _parse_json(_read_input(input_file))
        if not isinstance(record, dict) or type(record.get("recordType")) is not int or "key" not in record:
            raise _BadInput('a record is a JSON object {"recordType": N, "key": {...}, "valueVersion": V, "value": ...}')
        api_key, value, version = record["recordType"], record.get("value"), record.get("valueVersion")
        key_name = _record_spec(codec, "coordinator-key", api_key).name
        key = _in_part("key", codec.from_json, key_name, 0, record["key"])
        if value is not None:
            value_spec = _record_spec(codec, "coordinator-value", api_key)
            version = value_spec.versions.highest if version is None else version
            if type(version) is not int or not value_spec.versions.contains(version):
                raise _BadInput(f"valueVersion {version!r}: {value_spec.name} has versions {value_spec.versions}")
            value = _in_part("value", codec.from_json, value_spec.name, version, value)
        key_bytes = _in_part("key", codec.encode_record, api_key, key, None)[0]
        value_bytes = None if value is None else _in_part("value", codec.encode_record, api_key, key, value, version)[1]
    except _BadInput as exc:
        raise _bad_data(str(exc)) from None
    except CodecError as exc:
        raise _fail(exc) from None
    click.echo(key_bytes.hex())
    click.echo("null" if value_bytes is None else value_bytes.hex())


@record_group.command("decode")
@specs_option
@click.argument("key_hex", metavar="KEY")
@click.argument("value_hex", metavar="[VALUE]", required=False)
@click.option("--pretty", is_flag=True, help="Indented JSON instead of one compact line.")
def record_decode_command(specs: str, key_hex: str, value_hex: str | None, pretty: bool) -> None:
    """Decode a record from the hex of its KEY and VALUE (no VALUE, or "null": a tombstone)."""
    from linter.codec import CodecError

    codec = _load(specs)
    try:
        key = _parse_hex(key_hex, "KEY")
        value = None if value_hex in (None, "null") else _parse_hex(value_hex, "VALUE")
        record = codec.decode_record(key, value)
    except _BadInput as exc:
        raise _bad_data(str(exc)) from None
    except CodecError as exc:
        raise _fail(exc) from None
    click.echo(_dumps({
        "recordType": record.api_key, "keyName": record.key_name, "key": codec.to_json(record.key_name, 0, record.key),
        "valueName": record.value_name, "valueVersion": record.value_version,
        "value": None if record.value is None else codec.to_json(record.value_name, record.value_version, record.value),
    }, pretty))


def _record_spec(codec: Codec, kind: str, api_key: int) -> MessageSpec:
    try:
        return codec.key_for(api_key) if kind == "coordinator-key" else codec.value_for(api_key)
    except KeyError as exc:
        raise _BadInput(f"recordType {api_key}: {exc.args[0]}") from None
