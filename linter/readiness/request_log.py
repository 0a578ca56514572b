"""Kafka broker request logs read as the requests clients really sent, for operators without packet captures.

The logger ``kafka.request.logger``, at DEBUG or TRACE, writes one line per completed request (log4j's pattern
``[%d] %p %m (%c)%n``). Two forms are read:

- JSON (2.8 and later): ``Completed request:`` then the compact JSON of ``RequestConvertToJson.requestDescMetrics``,
  ``{"isForwarded":false,"requestHeader":{"requestApiKey":0,"requestApiVersion":9,"correlationId":5,
  "clientId":"p-1","requestApiKeyName":"PRODUCE"},"request":...,"response":...,"connection":"B:9092-C:51234-0",...,
  "clientInformation":{"softwareName":"apache-kafka-java","softwareVersion":"3.7.0"}}``; since 3.7 the header
  has ``"requestApiVersionDeprecated":true`` when the version is deprecated (apache/kafka PR #15032).
- text (2.7 and older): ``Completed request:RequestHeader(apiKey=PRODUCE, apiVersion=8, clientId=p-1,
  correlationId=5) -- {...},response:... from connection B:9092-C:51234-0;totalTime:...,listener:PLAINTEXT``, from
  2.4 with ``,clientInformation:ClientInformation(softwareName=..., softwareVersion=...)``.

Only the header (the front of a line) and the connection and client software (its end) are needed, so each line
is streamed in chunks keeping its first ``HEAD_BYTES`` and last ``TAIL_BYTES``: a line of any length (a Metadata
response of thousands of partitions) costs bounded memory and its bodies are never parsed. Lines of other
loggers are counted under one reason; a completion line that cannot be read under another; neither stops a run.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from linter.errors import KrpcLintError
from linter.frames.kafka_facts import endpoint
from linter.frames.traffic import Tally
from linter.parse.bounded_json import load_json
from linter.parse.files import open_uncompressed
from linter.parse.linear import linear
from linter.parse.scanner import value_end

MARKER = "Completed request:"
HEAD_BYTES = 256 * 1024  # a header's clientId is at most 32,767 characters, 6 bytes each when JSON-escaped
TAIL_BYTES = 64 * 1024  # connection, timings, principal, listener and client software: a few hundred bytes
CHUNK = 64 * 1024
SNIFF_BYTES = 1 << 20  # a request log shows a completion line within its first MiB
SIGNS = (b"Completed request:{", b"Completed request:RequestHeader(")

OTHER = "log lines that are not completed requests"
UNREADABLE = "request log lines unreadable"
UNKNOWN_API = "request log lines naming an API unknown to 2.x"
TRUNCATED = "request logs truncated (gzip data ended early)"
CORRUPT = "gzip data corrupt (rest of log unread)"

UNKNOWN = "unknown"  # ClientInformation.UNKNOWN_NAME_OR_VERSION: the client did not say (ApiVersions before v3)
INT16_MAX = 32767

# ApiKeys' constant names by key as the text form (2.7 and older) prints them; 2.2 and 2.3 named key 43
# ELECT_PREFERRED_LEADERS. From 2.8 the JSON form carries the key itself.
_NAMES_2X = (
    "PRODUCE", "FETCH", "LIST_OFFSETS", "METADATA", "LEADER_AND_ISR", "STOP_REPLICA", "UPDATE_METADATA",
    "CONTROLLED_SHUTDOWN", "OFFSET_COMMIT", "OFFSET_FETCH", "FIND_COORDINATOR", "JOIN_GROUP", "HEARTBEAT",
    "LEAVE_GROUP", "SYNC_GROUP", "DESCRIBE_GROUPS", "LIST_GROUPS", "SASL_HANDSHAKE", "API_VERSIONS",
    "CREATE_TOPICS", "DELETE_TOPICS", "DELETE_RECORDS", "INIT_PRODUCER_ID", "OFFSET_FOR_LEADER_EPOCH",
    "ADD_PARTITIONS_TO_TXN", "ADD_OFFSETS_TO_TXN", "END_TXN", "WRITE_TXN_MARKERS", "TXN_OFFSET_COMMIT",
    "DESCRIBE_ACLS", "CREATE_ACLS", "DELETE_ACLS", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALTER_REPLICA_LOG_DIRS",
    "DESCRIBE_LOG_DIRS", "SASL_AUTHENTICATE", "CREATE_PARTITIONS", "CREATE_DELEGATION_TOKEN",
    "RENEW_DELEGATION_TOKEN", "EXPIRE_DELEGATION_TOKEN", "DESCRIBE_DELEGATION_TOKEN", "DELETE_GROUPS",
    "ELECT_LEADERS", "INCREMENTAL_ALTER_CONFIGS", "ALTER_PARTITION_REASSIGNMENTS", "LIST_PARTITION_REASSIGNMENTS",
    "OFFSET_DELETE", "DESCRIBE_CLIENT_QUOTAS", "ALTER_CLIENT_QUOTAS", "DESCRIBE_USER_SCRAM_CREDENTIALS",
    "ALTER_USER_SCRAM_CREDENTIALS", "VOTE", "BEGIN_QUORUM_EPOCH", "END_QUORUM_EPOCH", "DESCRIBE_QUORUM",
    "ALTER_ISR", "UPDATE_FEATURES",
)
API_KEYS_2X = {name: key for key, name in enumerate(_NAMES_2X)} | {"ELECT_PREFERRED_LEADERS": 43}

_TEXT_HEADER = (r"RequestHeader\(apiKey=([A-Z_]{1,64}), apiVersion=([0-9]{1,5}), clientId=(.*?), "
                r"correlationId=-?[0-9]{1,10}(?:, headerVersion=[0-9]{1,5})?\)")
_TEXT_SOFTWARE = r"softwareName=([A-Za-z0-9.\-]*), softwareVersion=([A-Za-z0-9.\-]*)[,)]"
_JSON_HEADER, _JSON_CONNECTION = '"requestHeader":{', '"connection":"'
_TEXT_CONNECTION, _TEXT_CLIENT = " from connection ", ",clientInformation:ClientInformation("


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One completed request as the broker logged it: what the client sent and, when the line says, from where
    and which client software (as its ApiVersions request named it)."""

    api_key: int
    api_version: int
    client_id: str | None
    software_name: str | None
    software_version: str | None
    connection: str | None  # "CLIENT_HOST:PORT > BROKER_HOST:PORT", as frames extract's column
    deprecated: bool | None  # the line's requestApiVersionDeprecated, None when absent


class NotARequestLog(KrpcLintError, ValueError):
    """A file read as a request log that is none; the message names it and says why."""


class RequestLogError(KrpcLintError, OSError):
    """A request log the system cannot read (a failing disk); the message names it."""


class _Line(NamedTuple):
    """One line of a log as far as it is kept: its first ``HEAD_BYTES`` and its last ``TAIL_BYTES``."""

    head: bytes
    tail: bytes


def is_request_log(path: str | os.PathLike[str]) -> bool:
    """Whether a regular file (gzip-compressed or not) shows a completion line of ``kafka.request.logger`` within
    its first MiB: by content, never by name; never raises."""
    try:
        with open_uncompressed(path) as stream:
            return _refusal(stream) is None
    except (OSError, ValueError):
        return False


def read_request_log(path: str | os.PathLike[str], tally: Tally) -> Iterator[LoggedRequest]:
    """The requests a broker request log recorded, in file order. What cannot be used is counted in ``tally``;
    ``NotARequestLog`` (at the first ``next``) for a file that is no request log, ``InputError`` for one that
    cannot be opened (not a regular file, missing)."""
    name = os.fspath(path)
    try:
        with open_uncompressed(path) as stream:
            yield from _read(stream, name, tally)
    except OSError as exc:
        if isinstance(exc, KrpcLintError):
            raise
        raise RequestLogError(f"{name}: cannot read: {exc.strerror or exc}") from None


def _read(stream: io.BufferedIOBase, name: str, tally: Tally) -> Iterator[LoggedRequest]:
    """The requests of an open log, refused by its first MiB when it is none; a gzip stream cut short or corrupt
    ends the reading of the file, counted."""
    refusal = _refusal(stream)
    if refusal is not None:
        raise NotARequestLog(f"{name}: not a Kafka request log: {refusal} (turn the logger on at DEBUG: "
                             "docs/readiness.md)")
    stream.seek(0)
    try:
        for line in _lines(stream):
            request = _request(line, tally)
            if request is not None:
                yield request
    except EOFError:  # gzip's stream ended before its end marker
        tally[TRUNCATED] += 1
    except (gzip.BadGzipFile, zlib.error):
        tally[CORRUPT] += 1


def _refusal(stream: io.BufferedIOBase) -> str | None:
    """Why the stream is no request log (``None`` when a completion line starts within its first ``SNIFF_BYTES``),
    read in ``read1`` chunks (a gzip stream cut short gives what came before the cut) keeping only the bytes a
    sign could span."""
    carry, total, keep = b"", 0, max(map(len, SIGNS)) - 1
    try:
        while total < SNIFF_BYTES and (chunk := stream.read1(CHUNK)):
            window = carry + chunk
            if any(sign in window for sign in SIGNS):
                return None
            carry, total = window[-keep:], total + len(chunk)
    except (EOFError, gzip.BadGzipFile, zlib.error):
        return f"its gzip data is cut short or corrupt before any '{MARKER}' line"
    return f"no '{MARKER}' line of kafka.request.logger in its first MiB"


def _lines(stream: io.BufferedIOBase) -> Iterator[_Line]:
    """Each line as its head and tail, split from ``read1`` chunks (so a gzip stream cut short gives every line
    before the cut); the middle of a longer line is dropped as it goes by: bounded memory, each byte read once.
    A last line without its newline is a line too."""
    head, tail = b"", b""
    while chunk := stream.read1(CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            head, tail = _kept(head, tail, chunk[start:end + 1])
            yield _Line(head, tail)
            head, tail, start = b"", b"", end + 1
        head, tail = _kept(head, tail, chunk[start:])
    if head:
        yield _Line(head, tail)


def _kept(head: bytes, tail: bytes, piece: bytes) -> tuple[bytes, bytes]:
    """A line's head and tail once ``piece`` of it has been read."""
    if len(head) < HEAD_BYTES:
        head += piece[:HEAD_BYTES - len(head)]
    return head, (tail + piece)[-TAIL_BYTES:] if tail else piece[-TAIL_BYTES:]


def _request(line: _Line, tally: Tally) -> LoggedRequest | None:
    """The request of a completion line; ``None`` (counted) for any other line and for one that cannot be read."""
    head = line.head.decode("utf-8", "replace")
    at = head.find(MARKER)
    if at < 0:
        if head.strip():
            tally[OTHER] += 1
        return None
    start, tail = at + len(MARKER), line.tail.decode("utf-8", "replace")
    try:
        if head.startswith("{", start):
            request = _json_form(head, start, tail)
        else:
            request = _text_form(head, start, tail)
    except _UnknownApi:
        tally[UNKNOWN_API] += 1
        return None
    except ValueError:  # JSON syntax, nesting past the limit, a number too long
        request = None
    if request is None:
        tally[UNREADABLE] += 1
    return request


class _UnknownApi(Exception):
    """A text-form header naming an API that 2.x's ApiKeys did not have."""


def _json_form(head: str, start: int, tail: str) -> LoggedRequest | None:
    """The JSON form: the header object near the front (parsed alone), the connection and client software from
    the last top-level ``"connection"`` key on (the keys after the response, parsed alone)."""
    key = head.find(_JSON_HEADER, start)
    if key < 0:
        return None
    opening = key + len(_JSON_HEADER) - 1
    header = load_json(head[opening:value_end(head, opening)])
    if type(header) is not dict:
        return None
    api_key, api_version = _int16(header.get("requestApiKey")), _int16(header.get("requestApiVersion"))
    client_id, deprecated = header.get("clientId"), header.get("requestApiVersionDeprecated")
    if api_key is None or api_version is None or not _text_or_none(client_id) or \
            (deprecated is not None and type(deprecated) is not bool):
        return None
    trailer = _json_trailer(tail)
    if trailer is None:
        return None
    connection, name, version = trailer
    return LoggedRequest(api_key, api_version, client_id, name, version, connection, deprecated)


def _json_trailer(tail: str) -> tuple[str | None, str | None, str | None] | None:
    """(connection, software name, software version) from the keys after the response, which Kafka always writes
    (``None`` when they are missing, a line cut short, or cannot be read). The last ``"connection":"`` is the
    top-level key: the bodies come before it, and a quote inside any later string is escaped."""
    at = tail.rfind(_JSON_CONNECTION)
    if at < 0:
        return None
    text = "{" + tail[at:]
    fields = load_json(text[:value_end(text, 0)])
    if type(fields) is not dict or type(fields.get("connection")) is not str:
        return None
    info = fields.get("clientInformation", {})
    if type(info) is not dict:
        return None
    name, version = info.get("softwareName"), info.get("softwareVersion")
    if not (_text_or_none(name) and _text_or_none(version)):
        return None
    return connection_of(fields["connection"]), _known(name), _known(version)


def _text_form(head: str, start: int, tail: str) -> LoggedRequest | None:
    """The text form of 2.7 and older: ``RequestHeader(...)`` at the front, `` from connection ID;`` and
    ``ClientInformation(...)`` (2.4 on) at the end."""
    header = linear(_TEXT_HEADER).match(head, start)
    if header is None:
        return None
    api_name, version, client_id = header.group(1), int(header.group(2)), header.group(3)
    api_key = API_KEYS_2X.get(api_name)
    if api_key is None:
        raise _UnknownApi(api_name)
    if version > INT16_MAX:
        return None
    at = tail.rfind(_TEXT_CONNECTION)
    if at < 0:  # always written: a line without it was cut short
        return None
    begin = at + len(_TEXT_CONNECTION)
    end = tail.find(";", begin)
    connection = connection_of(tail[begin:end if end >= 0 else len(tail)].strip())
    name = software = None
    at = tail.rfind(_TEXT_CLIENT)
    if at >= 0:
        found = linear(_TEXT_SOFTWARE).match(tail, at + len(_TEXT_CLIENT))
        if found is None:
            return None
        name, software = _known(found.group(1)), _known(found.group(2))
    return LoggedRequest(api_key, version, None if client_id == "null" else client_id, name, software, connection,
                         None)


def connection_of(connection_id: str) -> str | None:
    """A broker's connection id (``BROKER_HOST:PORT-CLIENT_HOST:PORT-INDEX``, SocketServer's ConnectionId) as
    frames extract names a connection, client first; ``None`` when it is not of that form.

    >>> connection_of("10.0.0.5:9092-10.0.0.9:51234-7"), connection_of("0:0:0:0:0:0:0:1:9092-0:0:0:0:0:0:0:1:4-0")
    ('10.0.0.9:51234 > 10.0.0.5:9092', '[0:0:0:0:0:0:0:1]:4 > [0:0:0:0:0:0:0:1]:9092')
    """
    parts = connection_id.split("-")
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    broker, client = _address(parts[0]), _address(parts[1])
    if broker is None or client is None:
        return None
    return f"{endpoint(client)} > {endpoint(broker)}"


def _address(text: str) -> tuple[str, int] | None:
    """``host:port`` split at the last colon (an IPv6 host, as Java's getHostAddress writes it, has no brackets)."""
    host, _, port = text.rpartition(":")
    if not host or not port.isascii() or not port.isdigit() or len(port) > 5 or int(port) > 65535:
        return None
    return host, int(port)


def _int16(value: Any) -> int | None:
    """An int16 that can be an API key or version (never negative), else ``None`` (a bool is no number here)."""
    return value if type(value) is int and 0 <= value <= INT16_MAX else None


def _text_or_none(value: Any) -> bool:
    return value is None or type(value) is str


def _known(value: str | None) -> str | None:
    """``None`` for the broker's "unknown" (the client did not say, as a capture without ApiVersions v3 has it)."""
    return None if value is None or value == UNKNOWN else value


__all__ = ["API_KEYS_2X", "LoggedRequest", "NotARequestLog", "RequestLogError", "connection_of", "is_request_log",
           "read_request_log"]
