"""``codec encode --frame`` and ``codec decode --frame``: whole request and response frames (int32 size,
header, body), their JSON ``{"header": {...}, "body": {...}}``, and which part an error lies in."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from linter.cli.codec_io import (
    BadInput,
    check_version,
    header_spec,
    in_part,
    message_spec,
    usage_error,
)

if TYPE_CHECKING:
    from linter.codec import Codec, CodecError

FRAMED_TYPES = ("request", "response")


class Framed(NamedTuple):
    """A request or response spec, the body of a frame: its name, type and API key. (A named tuple, not a
    dataclass: cheaper to define, and every ``krpc-lint`` start defines it.)"""

    name: str
    kind: str  # "request" | "response"
    api_key: int


def framed_spec(codec: Codec, name: str) -> Framed:
    """Message NAME as a frame's body; a usage error unless it is a request or response whose header spec
    ``--specs`` has."""
    spec = message_spec(codec, name)
    if spec.type not in FRAMED_TYPES or spec.api_key is None:
        raise usage_error(f"--frame needs a request or response, and {name} is a {spec.type} spec")
    header_spec(codec, spec.type)
    return Framed(name, spec.type, spec.api_key)


# --- encode -----------------------------------------------------------------------------------------


def frame_parts(value: Any, name: str, version: int) -> tuple[Any, Any]:
    """The header and body of a frame's JSON; ``message`` and ``version`` (as ``decode --frame``
    writes them) may be there too, and must then agree with NAME and VERSION."""
    if not isinstance(value, dict) or "header" not in value or "body" not in value:
        raise BadInput('a frame must be a JSON object {"header": {...}, "body": {...}}')
    extra = sorted(set(value) - {"header", "body", "message", "version"})
    if extra:
        raise BadInput(f"a frame has no key {extra[0]!r} (only header, body, message and version)")
    if value.get("message", name) != name or value.get("version", version) != version:
        raise BadInput(f"the frame is for {value.get('message', name)} v{value.get('version', version)}, "
                       f"not {name} v{version}")
    return value["header"], value["body"]


def encode_frame(codec: Codec, framed: Framed, version: int, value: Any) -> bytes:
    """The frame whose JSON is ``value``; a header error's path starts with ``header``, a body's with ``body``."""
    header_json, body_json = frame_parts(value, framed.name, version)
    body = in_part("body", codec.from_json, framed.name, version, body_json)
    if framed.kind == "request":
        return _encode_request(codec, framed, version, header_json, body)
    header_version = codec.response_header_version(framed.api_key, version)
    header = in_part("header", codec.from_json, "ResponseHeader", header_version, header_json)
    in_part("header", codec.encode, "ResponseHeader", header_version, header)
    return in_part("body", codec.encode_response, framed.api_key, version, header, body)


def _encode_request(codec: Codec, framed: Framed, version: int, header_json: Any, body: dict[str, Any]) -> bytes:
    """A request frame: the header's API key and version, when given, must be those of NAME and VERSION."""
    header_version = codec.request_header_version(framed.api_key, version)
    header = in_part("header", codec.from_json, "RequestHeader", header_version, header_json)
    for key, expected in (("requestApiKey", framed.api_key), ("requestApiVersion", version)):
        if header.get(key, expected) != expected:
            raise BadInput(f"header.{key}: {header[key]!r}, but {framed.name} v{version} needs {expected}")
    header = {**header, "requestApiKey": framed.api_key, "requestApiVersion": version}
    in_part("header", codec.encode, "RequestHeader", header_version, header)  # header errors say so
    return in_part("body", codec.encode_request, version, header, body, framed.name)


# --- decode -----------------------------------------------------------------------------------------


def frame_decoder(codec: Codec, name: str | None, version: int | None) -> Callable[[bytes], dict[str, Any]]:
    """How to decode the frames NAME and VERSION (both optional for a request) describe, to
    ``{"message", "version", "header", "body"}``; the usage errors come here, before any input is read."""
    framed = framed_spec(codec, name) if name is not None else None
    if name is not None and version is not None:
        check_version(codec, name, version)
    if framed is None:
        header_spec(codec, "request")
    elif framed.kind == "response":
        if version is None:
            raise usage_error(f"decoding a response frame needs VERSION (the API version of the request {name} "
                              "answers)")
        return functools.partial(_decode_response, codec, framed, version)
    return functools.partial(_decode_request, codec, framed, version)


def _decode_request(codec: Codec, framed: Framed | None, version: int | None, data: bytes) -> dict[str, Any]:
    """A request frame; the header says which API and version it holds, which must be NAME's and VERSION."""
    from linter.codec import DecodeError

    try:
        name, api_version, header, body = codec.decode_request(data)
    except DecodeError as exc:
        if not exc.parts:  # not in a field (frame size, unknown API, trailing bytes): no part to name
            raise
        raise _place(exc, codec, data, "request", _request_header_version(codec, data)) from None
    api_key = framed_spec(codec, name).api_key  # the header named a request: a frame's body
    if framed is not None and framed.name != name:
        raise BadInput(f"the frame holds {name} (apiKey {api_key}), not {framed.name} (apiKey {framed.api_key})")
    if version is not None and version != api_version:
        raise BadInput(f"the frame holds {name} v{api_version}, not v{version}")
    header_version = codec.request_header_version(api_key, api_version)
    return {"message": name, "version": api_version,
            "header": codec.to_json("RequestHeader", header_version, header),
            "body": codec.to_json(name, api_version, body)}


def _decode_response(codec: Codec, framed: Framed, version: int, data: bytes) -> dict[str, Any]:
    from linter.codec import DecodeError

    try:
        header, body = codec.decode_response(framed.api_key, version, data)
    except DecodeError as exc:
        if not exc.parts:
            raise
        raise _place(exc, codec, data, "response", codec.response_header_version(framed.api_key, version)) from None
    header_version = codec.response_header_version(framed.api_key, version)
    return {"message": framed.name, "version": version,
            "header": codec.to_json("ResponseHeader", header_version, header),
            "body": codec.to_json(framed.name, version, body)}


def _request_header_version(codec: Codec, frame: bytes) -> int:
    """The header version of a request frame with a field error: long enough for the API key and version."""
    from linter.codec.wire import INT16

    api_key, api_version = INT16.unpack_from(frame, 4)[0], INT16.unpack_from(frame, 6)[0]
    return codec.request_header_version(api_key, api_version)


def _place(exc: CodecError, codec: Codec, frame: bytes, kind: str, header_version: int) -> CodecError:
    """Start the path of a field error inside a frame with ``header`` or ``body``: the error is in the header
    exactly when the header alone does not decode."""
    from linter.codec import DecodeError

    try:
        codec.plan(header_spec(codec, kind), header_version).decode(frame[4:], 0)
    except DecodeError:
        return exc.at("header")
    return exc.at("body")
