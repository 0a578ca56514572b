"""One frame checked: its size prefix, its header and body as Kafka reads them, what the capture says of it.

Most frames are exactly what Kafka's writer writes: decoded (the C accelerator when built) and encoded again, they
give their own bytes back, and that is the whole check (``FrameKind.canonical``). Only a frame that does not is
walked byte by byte (``linter.wirecheck.reader``) to say where and why, and read in the other ways the protocol
allows before it is blamed: KIP-511's ApiVersions fallback (an UNSUPPORTED_VERSION answer in version 0's
layout, correct by the protocol) and the other header versions (a header written in the wrong one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from linter.codec import Codec, DecodeError
from linter.codec import codec as codec_module
from linter.codec.plans import StructPlan
from linter.codec.tagged import UNKNOWN_TAGS
from linter.codec.wire import INT16, INT32
from linter.frames.corpus import REQUEST, RESPONSE, BadFrame
from linter.frames.decode import HEADERS
from linter.frames.errors import FramesInputError
from linter.frames.streams import ACKS_ZERO_PROBLEM, unmatched
from linter.vocabulary import plural
from linter.wirecheck.reader import (
    BEYOND_FRAME,
    FALLBACK_LAYOUT,
    FRAME_SIZE,
    HEADER_VERSION,
    SHOWN,
    TRAILING_BYTES,
    UNKNOWN_API,
    UNKNOWN_VERSION,
    UNMATCHED_RESPONSE,
    Deviation,
    KafkaReader,
    Refused,
)

API_VERSIONS, UNSUPPORTED_VERSION = 18, 35
HEADER_VERSIONS = {REQUEST: (0, 1, 2), RESPONSE: (0, 1)}  # every header version Kafka has had
MAX_LAYOUTS = 64  # other versions a misfit frame is tried at, nearest first (a spec may claim 32,767)
UNKNOWN_KEPT = 4096  # kinds of frame remembered, unknown ones included (a hostile capture may name 2^32)
EXPLAINED_KEPT = 4096  # explanations remembered by the bytes they explain (a deviation repeats, byte for byte) ...
EXPLAINED_BYTES = 4096  # ... of frames up to this size: the memory they take stays a few tens of MB


@dataclass(frozen=True)
class FrameKind:
    """One (direction, API key, version) under the specs: its header and body plans, and the fast check."""

    direction: str
    api_key: int
    api_version: int
    name: str  # the body's message
    header_version: int
    header: StructPlan
    body: StructPlan
    canonical: Callable[[bytes], bool]  # the payload is what Kafka's writer writes for its own value


class FrameChecker:
    """Checks frames against one spec set; what each (direction, API key, version) compiles to is kept."""

    def __init__(self, codec: Codec) -> None:
        for header in HEADERS.values():
            if header not in codec.names:
                raise FramesInputError(f"checking frames needs Kafka's {header} spec, and the specs have none")
        self.codec = codec
        self._kinds: dict[tuple[str, int, int], FrameKind | Deviation] = {}
        self.unexplained = 0  # frames not canonical in which the walk found nothing: a disagreement to look into
        self.unlisted = 0  # deviations past the first MAX_NOTED of a frame: counted, not listed
        self._explained: dict[tuple[str, int, int, bytes], tuple[tuple[Deviation, ...], int]] = {}  # see explain

    def api_name(self, api_key: int) -> str:
        """An API's name (``Metadata``), or its key when the specs lack it."""
        try:
            return (self.codec.request_for(api_key).name or "").removesuffix("Request") or str(api_key)
        except KeyError:
            return f"API {api_key}"

    def kind(self, direction: str, api_key: int, api_version: int) -> FrameKind | Deviation:
        """The ``FrameKind``, or the ``info`` deviation saying the specs lack the API or the version."""
        key = (direction, api_key, api_version)
        found = self._kinds.get(key)
        if found is None:
            found = self._build(direction, api_key, api_version)
            if isinstance(found, FrameKind) or len(self._kinds) < UNKNOWN_KEPT:  # bounded: the wire names any key
                self._kinds[key] = found
        return found

    def _build(self, direction: str, api_key: int, api_version: int) -> FrameKind | Deviation:
        codec = self.codec
        request = direction == REQUEST  # a request names its API at bytes 4-7; a response is its request's
        try:
            message = codec.request_for(api_key) if request else codec.response_for(api_key)
        except KeyError:
            return Deviation(UNKNOWN_API, 4, "header.RequestApiKey" if request else "header",
                             f"API key {api_key} is not in the specs", b"")
        if message.versions is None or not message.versions.contains(api_version) or message.name is None:
            return Deviation(UNKNOWN_VERSION, 6 if request else 4, "header.RequestApiVersion" if request else "header",
                             f"{message.name} has no version {api_version} in the specs (valid versions: "
                             f"{message.versions})", b"")
        header_version = _header_version(codec, direction, api_key, api_version)
        header = codec.plan(HEADERS[direction], header_version)
        body = codec.plan(message.name, api_version)
        return FrameKind(direction, api_key, api_version, message.name, header_version, header, body,
                         _canonical(header, body))

    # --- one frame --------------------------------------------------------------------------------------

    def check(self, direction: str, api_key: int | None, api_version: int | None, frame: bytes,
              problem: str | None = None) -> list[Deviation]:
        """Every deviation of one frame (``problem``: what the capture reader said of it); ``BadFrame`` for a row
        that cannot be checked at all (a response whose request's API is not given)."""
        if direction not in (REQUEST, RESPONSE):
            raise BadFrame(f"direction must be {REQUEST!r} or {RESPONSE!r}, got {direction!r}")
        if len(frame) < 4 or INT32.unpack_from(frame)[0] != len(frame) - 4:
            return [_size_deviation(frame)]
        found = _capture_problem(frame, problem) if direction == RESPONSE else []
        if direction == REQUEST:
            if len(frame) < 8:
                return [Deviation(BEYOND_FRAME, 4, "header", "a request header needs 4 bytes for its API key and "
                                  "version", frame[4:])]
            api_key, api_version = INT16.unpack_from(frame, 4)[0], INT16.unpack_from(frame, 6)[0]
        if api_key is None or api_version is None:
            if found:
                return found
            if isinstance(problem, str) and problem:  # a capture that lacks the request: the API is unknown
                raise BadFrame(problem)
            raise BadFrame("a response row needs api_key and api_version: those of the request it answers")
        kind = self.kind(direction, api_key, api_version)
        if isinstance(kind, Deviation):
            return [*found, kind]
        payload = frame[4:]
        if kind.canonical(payload):
            return found
        return found + self.explain(kind, payload)

    def explain(self, kind: FrameKind, payload: bytes) -> list[Deviation]:
        """The deviations of a payload that is not canonical, remembered by its bytes but for its correlation id:
        a sender's deviation repeats frame after frame (a witness showing the correlation id is not remembered)."""
        if len(payload) > EXPLAINED_BYTES:
            return self._explain(kind, payload)
        where = 4 if kind.direction == REQUEST else 0  # the correlation id's 4 bytes in the payload
        key = (kind.direction, kind.api_key, kind.api_version, payload[:where] + payload[where + 4:])
        found = self._explained.get(key)
        if found is not None:
            self.unexplained += found[1]
            return list(found[0])
        before, unlisted = self.unexplained, self.unlisted
        deviations = self._explain(kind, payload)
        correlation = where + 4  # its first byte in the frame
        if self.unlisted == unlisted and not any(d.offset < correlation + 4 and d.offset + len(d.found) > correlation
                                                 for d in deviations):
            if len(self._explained) >= EXPLAINED_KEPT:
                self._explained.clear()
            self._explained[key] = (tuple(deviations), self.unexplained - before)
        return deviations

    def _explain(self, kind: FrameKind, payload: bytes) -> list[Deviation]:
        """The walk's deviations, unless another reading the protocol allows fits the payload."""
        reader = KafkaReader(payload)
        try:
            return self._walk(kind, payload, reader)
        finally:
            self.unlisted += reader.unnoted

    def _walk(self, kind: FrameKind, payload: bytes, reader: KafkaReader) -> list[Deviation]:
        try:
            _, pos = reader.message(kind.header, 0, "header")
            _, pos = reader.message(kind.body, pos, "body")
            if pos != len(payload):
                reader.parts = []
                raise reader.refuse(TRAILING_BYTES, pos, len(payload), f"{plural(len(payload) - pos, 'byte')} "
                                    f"after the message, inside its frame (the message ends at byte {pos + 4} "
                                    f"of {len(payload) + 4})", b"")
        except Refused as exc:
            other = self.other_reading(kind, payload)
            if other is not None:
                return other
            return [*reader.found, self.with_layouts(kind, payload, exc.deviation)]
        if not reader.found and not reader.unknown_tags:  # unknown tags alone are no deviation (forward compatibility)
            self.unexplained += 1
        return reader.found

    def other_reading(self, kind: FrameKind, payload: bytes) -> list[Deviation] | None:
        """What a payload the walk refused is under a reading the protocol allows: none for KIP-511's fallback;
        a header-version deviation when another header version reads the whole frame; else ``None``."""
        if kind.api_key == API_VERSIONS and kind.direction == RESPONSE and kind.api_version > 0:
            fallback = self._whole(HEADERS[RESPONSE], 0, kind.name, 0, payload)
            if fallback is not None:  # the client falls back to version 0 whatever failed (KIP-511)
                error = fallback[1].get("errorCode")
                return [] if error == UNSUPPORTED_VERSION else [
                    Deviation(FALLBACK_LAYOUT, 8, "body.ErrorCode", f"an ApiVersions v{kind.api_version} response in "
                              f"version 0's layout with error {error}: Kafka's client reads it by its fallback to "
                              "version 0, but Kafka's broker answers in that layout only with UNSUPPORTED_VERSION "
                              f"({UNSUPPORTED_VERSION})", payload[4:6])]
        nearest = sorted(HEADER_VERSIONS[kind.direction], key=lambda v: (abs(v - kind.header_version), -v))
        for version in nearest:  # the version a sender most likely took by mistake first
            if version == kind.header_version or not self._has(HEADERS[kind.direction], version):
                continue
            read = self._whole(HEADERS[kind.direction], version, kind.name, kind.api_version, payload)
            if read is not None:
                return [self._header_deviation(kind, version, read[0], payload)]
        return None

    def _header_deviation(self, kind: FrameKind, written: int, header: dict[str, Any], payload: bytes) -> Deviation:
        plan = self.codec.plan(HEADERS[kind.direction], written)
        _, end = plan.decode(payload, 0)
        try:
            expected: bytes | None = self.codec.encode(HEADERS[kind.direction], kind.header_version,
                                                       {**kind.header.default(), **header})
        except ValueError:
            expected = None
        return Deviation(HEADER_VERSION, 4, "header", f"the header is written in version {written}, but "
                         f"{kind.name} version {kind.api_version} takes header version {kind.header_version}; "
                         "Kafka reads the header and everything after it from the wrong bytes",
                         payload[:min(end, SHOWN)], expected)

    def with_layouts(self, kind: FrameKind, payload: bytes, deviation: Deviation) -> Deviation:
        """A refusal that may be a layout mix-up (bytes left over or missing) says which versions' layouts fit."""
        if deviation.check not in (TRAILING_BYTES, BEYOND_FRAME):
            return deviation
        fits = self.layouts(kind, payload)
        said = (f"the bytes fit the layout of {'version' if len(fits) == 1 else 'versions'} "
                f"{', '.join(map(str, fits))}" if fits else "the bytes fit no version's layout")
        return deviation._replace(message=f"{deviation.message}; {said}")

    def layouts(self, kind: FrameKind, payload: bytes) -> list[int]:
        """The other versions of the message whose layout (with their header) reads the whole payload."""
        message = self.codec.spec(kind.name)
        versions = message.versions
        if versions is None:
            return []
        nearest = sorted((v for v in range(max(versions.lowest, kind.api_version - MAX_LAYOUTS),
                                           min(versions.highest, kind.api_version + MAX_LAYOUTS) + 1)
                          if v != kind.api_version), key=lambda v: abs(v - kind.api_version))[:MAX_LAYOUTS]
        return sorted(v for v in nearest
                      if self._whole(HEADERS[kind.direction], _header_version(self.codec, kind.direction, kind.api_key, v),
                                     kind.name, v, payload) is not None)

    def _has(self, name: str, version: int) -> bool:
        versions = self.codec.spec(name).versions
        return versions is not None and versions.contains(version)

    def _whole(self, header: str, header_version: int, body: str, version: int,
               payload: bytes) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """(header, body) when the plans read exactly the whole payload, strictly; else ``None``."""
        try:
            head, pos = self.codec.plan(header, header_version).decode(payload, 0)
            value, end = self.codec.plan(body, version).decode(payload, pos)
        except (DecodeError, ValueError):
            return None
        return (head, value) if end == len(payload) else None


def _header_version(codec: Codec, direction: str, api_key: int, api_version: int) -> int:
    """The header version a request or a response of that API version takes."""
    choose = codec.request_header_version if direction == REQUEST else codec.response_header_version
    return choose(api_key, api_version)


def _size_deviation(frame: bytes) -> Deviation:
    """Why a frame's int32 size prefix is not the number of bytes after it."""
    if len(frame) < 4:
        return Deviation(FRAME_SIZE, 0, "", f"a frame starts with its 4-byte size; this one has {len(frame)} bytes",
                         frame)
    size = INT32.unpack_from(frame)[0]
    return Deviation(FRAME_SIZE, 0, "", f"the size prefix says {size} bytes follow, but the frame holds "
                     f"{len(frame) - 4}; Kafka reads the next frame from the wrong byte", frame[:4],
                     INT32.pack(len(frame) - 4))


def _capture_problem(frame: bytes, problem: str | None) -> list[Deviation]:
    """What the capture reader saw of a response that makes it a deviation: no request asked for it."""
    if not isinstance(problem, str):
        return []
    if problem == ACKS_ZERO_PROBLEM:
        message = ("a response to a Produce request sent with acks=0: Kafka's broker sends none, and the client "
                   "expects none")
    elif unmatched(problem):
        message = f"{problem}: the client has no request awaiting it"
    else:
        return []
    return [Deviation(UNMATCHED_RESPONSE, 4, "header.CorrelationId", message, frame[4:8])]


def _unknown_tags(value: Any) -> bool:
    """Whether a decoded value holds unknown tagged fields anywhere (iterative: values nest as deep as specs)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if UNKNOWN_TAGS in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _canonical(header: StructPlan, body: StructPlan) -> Callable[[bytes], bool]:
    """``canonical(payload)``: the payload decodes (header, then body, every byte) and encodes to itself. The C
    accelerator decides when it is built; what it declines (unknown tags, anything unusual) the plans decide, as in
    ``Codec.encode`` and ``Codec.decode``."""

    def plain(payload: bytes) -> bool:
        try:
            head, pos = header.decode(payload, 0)
            value, end = body.decode(payload, pos)
            if end != len(payload):
                return False
            out = bytearray()
            header.encode(head, out)
            body.encode(value, out)
        except Exception:  # noqa: BLE001 - anything the strict codec declines is for the walk to explain
            return False
        # unknown tags round-trip, but one may be a tag the struct has in other versions (KL2011): the walk decides
        return out == payload and not _unknown_tags(head) and not _unknown_tags(value)

    speedups = codec_module._speedups
    if speedups is None:
        return plain
    decode, encode = speedups.decode_struct, speedups.encode_struct
    native_header, native_body = header.native_plan(speedups), body.native_plan(speedups)

    def fast(payload: bytes) -> bool:
        try:
            head, pos = decode(native_header, payload, 0)
            value, end = decode(native_body, payload, pos)
            if end != len(payload):
                return False
            return bool(encode(native_header, head) + encode(native_body, value) == payload)
        except Exception:  # noqa: BLE001 - declined: the plans decide, precisely
            return plain(payload)

    return fast


__all__ = ["FrameChecker", "FrameKind"]
