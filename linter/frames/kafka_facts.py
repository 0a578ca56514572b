"""What a reader of Kafka traffic must know that the specs do not say, and the header reads it does per frame
(``linter.frames.streams`` cuts the frames; this module looks inside their first bytes).

Each fact is Kafka's own, from apache/kafka (files and commits as the search index holds them):

- A request is at most ``socket.request.max.bytes``, 100 MiB by default:
  ``SOCKET_REQUEST_MAX_BYTES_DEFAULT = 100 * 1024 * 1024`` in
  server/src/main/java/org/apache/kafka/network/SocketServerConfigs.java (commit 116f7cdb8e8a). A size field
  above it (or ≤ 0) is not a frame: its stream lost sync.
- ApiVersions responses always use response header v0 ("ApiVersionsResponse always includes a v0 header. See
  KIP-511": generator/src/main/java/org/apache/kafka/message/ApiMessageTypeGenerator.java, commit
  df04f30e5cab); ControlledShutdown v0's request header is v0, without a client id (the same generator:
  "Version 0 of ControlledShutdownRequest has a non-standard request header which does not include
  clientId"). ``Codec.request_header_version``/``response_header_version`` apply both (model/traits.py).
- A broker answers an ApiVersions request of a version it does not support in version 0's layout with
  UNSUPPORTED_VERSION (35), and the client parses the body at the request's version, then falls back to
  version 0 when that fails: ``ApiVersionsResponse.parse`` in
  clients/src/main/java/org/apache/kafka/common/requests/ApiVersionsResponse.java (commit 033c12710b42).
  ``v0_error_layout`` recognises such a response; its row keeps the request's version and says so.
- After a SaslHandshake v0 request, the client sends raw SASL tokens (int32 size + token, no Kafka header)
  and the broker answers with size-prefixed raw tokens; SaslHandshake v1+ switches to SaslAuthenticate
  requests instead (``handleHandshakeRequest``: ``if (version >= 1) enableKafkaSaslAuthenticateHeaders(true)``;
  ``handleSaslToken``: without those headers, ``ByteBufferSend.sizePrefixed(response)``, in
  clients/src/main/java/org/apache/kafka/common/security/authenticator/SaslServerAuthenticator.java, commit
  0282c0876acb). Raw tokens are counted, never rows.
- A Produce request with acks=0 gets no response (ProduceRequest.json: ``Acks``, "0 for no
  acknowledgments"); acks is the int16 after ``TransactionalId`` in v3+ and the first field before.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from linter.codec import Codec
from linter.codec.wire import read_uvarint
from linter.frames.corpus import REQUEST_START

MAX_FRAME = 100 * 1024 * 1024  # socket.request.max.bytes' default (SocketServerConfigs, above)
PRODUCE, API_VERSIONS, SASL_HANDSHAKE = 0, 18, 17
UNSUPPORTED_VERSION = 35
VERSIONS_AHEAD = 3  # a version this far above the specs' highest is still plausible (a newer client)
TLS_RECORD = 0x16  # a TLS handshake record: 0x16 0x03 0x00-0x04
INT16 = struct.Struct(">h")
API_VERSIONS_V0 = struct.Struct(">ihi")  # correlationId, errorCode, array length (after the size)


class Header(NamedTuple):
    """What a request frame's first bytes say."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    end: int  # where the header ends in the frame (from the size's first byte)


class Requests:
    """The request APIs a codec knows, their version ranges and header versions, cached for per-frame reads.

    >>> requests = Requests(Codec.load("fixtures/valid"))
    >>> frame = bytes.fromhex("0000001903e800020000000700026d6500ffffffff01000001f4000100")  # Codec's example
    >>> requests.plausible(frame, 0, len(frame))
    True
    >>> requests.header(frame)
    Header(api_key=1000, api_version=2, correlation_id=7, client_id='me', end=17)
    """

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.highest: dict[int, int] = {}
        for name in codec.names:
            spec = codec.spec(name)
            if spec.type == "request" and spec.api_key is not None and spec.versions is not None:
                self.highest[spec.api_key] = spec.versions.highest + VERSIONS_AHEAD
        self._headers: dict[tuple[int, int], int] = {}

    def header_version(self, api_key: int, api_version: int) -> int:
        key = (api_key, api_version)
        version = self._headers.get(key)
        if version is None:
            version = self._headers[key] = self.codec.request_header_version(api_key, api_version)
        return version

    def plausible(self, buf: bytes | bytearray | memoryview, pos: int, end: int) -> bool:
        """Whether ``buf[pos:end]`` starts with a request header the specs know: a size within the cap, a known
        API at a plausible version, a non-negative correlation id, a client id that fits in the frame."""
        if end - pos < REQUEST_START.size:
            return False
        size: int
        size, key, version, correlation = REQUEST_START.unpack_from(buf, pos)
        if not 8 <= size <= MAX_FRAME or correlation < 0 or not 0 <= version <= self.highest.get(key, -1):
            return False
        if self.header_version(key, version) == 0:
            return True
        if end - pos < 14:
            return size >= 10
        length: int = INT16.unpack_from(buf, pos + 12)[0]
        return length >= -1 and 10 + max(length, 0) <= size

    def header(self, frame: bytes) -> Header:
        """The request header of a whole frame (its plausibility checked before); the client id decoded as
        UTF-8, undecodable bytes replaced."""
        _, key, version, correlation = REQUEST_START.unpack_from(frame)
        header_version = self.header_version(key, version) if key in self.highest else 1
        if header_version == 0 or len(frame) < 14:
            return Header(key, version, correlation, None, 12)
        length = INT16.unpack_from(frame, 12)[0]
        if length < 0:
            return Header(key, version, correlation, None, 14)
        end = 14 + length
        client_id = frame[14:end].decode("utf-8", "replace")
        if header_version >= 2 and end < len(frame):
            end = skip_tagged(frame, end)
        return Header(key, version, correlation, client_id, end)

    def acks(self, frame: bytes, header: Header) -> int | None:
        """A Produce request's acks, ``None`` when the frame is too short or odd to tell."""
        pos = header.end
        try:
            if header.api_version >= 3:
                if self.header_version(PRODUCE, header.api_version) >= 2:
                    length, pos = read_uvarint(frame, pos)
                    pos += max(length - 1, 0)
                else:
                    pos += 2 + max(INT16.unpack_from(frame, pos)[0], 0)
            return int(INT16.unpack_from(frame, pos)[0])
        except (ValueError, struct.error):
            return None

    def software(self, frame: bytes) -> tuple[str | None, str | None]:
        """(ClientSoftwareName, ClientSoftwareVersion) of an ApiVersions request v3+; nulls when it does not
        decode (once per connection: the whole codec is affordable here)."""
        try:
            body = self.codec.decode_request(frame)[3]
        except (ValueError, KeyError):
            return None, None
        return body.get("clientSoftwareName"), body.get("clientSoftwareVersion")


def skip_tagged(frame: bytes, pos: int) -> int:
    """The end of a tagged-fields section starting at ``pos`` (``len(frame)`` when it runs past the end)."""
    try:
        count, pos = read_uvarint(frame, pos)
        for _ in range(count):
            _, pos = read_uvarint(frame, pos)
            size, pos = read_uvarint(frame, pos)
            pos += size
    except ValueError:
        return len(frame)
    return min(pos, len(frame))


def v0_error_layout(frame: bytes) -> bool:
    """Whether an ApiVersions response is version 0's layout with UNSUPPORTED_VERSION (KIP-511): error code 35,
    then an int32 count of 6-byte entries that fills the frame exactly.

    >>> v0_error_layout(bytes.fromhex("0000000a00000007002300000000"))  # correlation id 7, error 35, no entries
    True
    >>> v0_error_layout(bytes.fromhex("0000000a00000007000000000000"))  # error 0: the request's own version
    False
    """
    if len(frame) < 14:
        return False
    error: int
    count: int
    _, error, count = API_VERSIONS_V0.unpack_from(frame, 4)
    return error == UNSUPPORTED_VERSION and count >= 0 and 14 + 6 * count == len(frame)


def is_tls(data: bytes) -> bool:
    """Whether a stream starts with a TLS handshake record (content type 22, version 3.0-3.4)."""
    return len(data) >= 3 and data[0] == TLS_RECORD and data[1] == 3 and data[2] <= 4


def endpoint(address: tuple[str, int]) -> str:
    """``host:port``, an IPv6 host in brackets.

    >>> endpoint(("::1", 9092)), endpoint(("10.0.0.1", 9092))
    ('[::1]:9092', '10.0.0.1:9092')
    """
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


__all__ = ["API_VERSIONS", "MAX_FRAME", "PRODUCE", "SASL_HANDSHAKE", "Header", "Requests",
           "endpoint", "is_tls", "skip_tagged", "v0_error_layout"]
