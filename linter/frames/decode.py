"""A spec revision's frame decoders (``Decoders``), as ``krpc-lint replay`` and ``size --frames`` use them: per
(direction, API key, version) of frame, the function that decodes its header and body, shared between revisions
whose plans agree; and, per Python worker of a Spark job, those of each revision shipped with it (``loaded``).

Where the two revisions compile a frame kind to identical plans (equal ``StructPlan.signature`` of
header and body: the same names, types, encodings, tags and tagged defaults), both get the same
function, so a frame of that kind is decoded once.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from linter.codec import Codec, DecodeError, SpecError
from linter.codec import codec as codec_module
from linter.codec.values import Array, Shape, Struct, shape
from linter.frames.corpus import REQUEST, RESPONSE
from linter.frames.errors import FramesInputError
from linter.memory import collector_paused

if TYPE_CHECKING:
    from linter.compat.revision import Revision

HEADERS = {REQUEST: "RequestHeader", RESPONSE: "ResponseHeader"}

FrameDecoder = Callable[[bytes], tuple[dict[str, Any], dict[str, Any]]]  # payload (after the size) -> header, body


@dataclass(frozen=True)
class Api:
    """How one revision decodes one (direction, API key, version) of frame."""

    name: str  # the request or response message
    decode: FrameDecoder
    types: object  # the type trees of header and body, interned: the same object when they are equal


class Decoders:
    """A spec revision's codec and, per (direction, API key, version), an ``Api`` or the reason there is
    none (cached: a corpus repeats the same few thousand).

    ``freeze``: the process is a replay worker of its own, so what compiles (kept until the process
    ends) is moved out of the cyclic collector's reach with ``gc.freeze``; a library caller's
    process is left as it is."""

    def __init__(self, codec: Codec, *, freeze: bool = False) -> None:
        for header in HEADERS.values():
            if header not in codec.names:
                raise FramesInputError(f"replay needs Kafka's {header} spec, and the specs have none")
        self.codec = codec
        self.freeze = freeze
        self._apis: dict[tuple[str, int, int], Api | str] = {}

    def api(self, direction: str, api_key: int, api_version: int) -> Api | str:
        """The ``Api`` of a frame kind, or why this revision cannot decode it."""
        key = (direction, api_key, api_version)
        found = self._apis.get(key)
        if found is None:
            with collector_paused():
                found = self._apis[key] = self._build(direction, api_key, api_version)
                if self.freeze:
                    gc.freeze()
        return found

    def _build(self, direction: str, api_key: int, api_version: int) -> Api | str:
        codec = self.codec
        try:
            if direction == REQUEST:
                message, header_version = codec.request_for(api_key), codec.request_header_version(api_key, api_version)
            else:
                message, header_version = codec.response_for(api_key), codec.response_header_version(api_key, api_version)
            header, body = HEADERS[direction], message.name
            if body is None:  # not reached: a Codec refuses a spec without a name
                raise SpecError(f"{message.path}: the spec has no name")
            trees = (_types(codec, header, header_version), _types(codec, body, api_version))
            types = _TYPES.setdefault(trees, trees) if None not in trees else object()  # object(): never "is"
            signature = (codec.plan(header, header_version).signature, codec.plan(body, api_version).signature)
            decode = _DECODERS.get(signature)
            if decode is None:
                decode = _DECODERS[signature] = _frame_decoder(codec, header, header_version, body, api_version)
            return Api(body, decode, types)
        except (KeyError, ValueError) as exc:  # no such API or version in this revision
            return str(exc.args[0]) if exc.args else str(exc)
        except Exception as exc:  # noqa: BLE001 - a spec the codec cannot compile: that kind fails, not the job
            return f"{type(exc).__name__}: {exc}"


def _frame_decoder(codec: Codec, header_name: str, header_version: int, name: str, version: int) -> FrameDecoder:
    """``decode(payload) -> (header, body)`` of a frame's bytes after the size. ``DecodeError``
    offsets count from the frame's first byte and paths start with ``header`` or ``body``, as
    ``krpc-lint codec decode --frame`` reports them. The C accelerator decodes when it is built; the
    reference plans decide anything it declines (every error included), as in ``Codec.decode``."""
    header_plan, body_plan = codec.plan(header_name, header_version), codec.plan(name, version)

    def reference(payload: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        try:
            header, pos = header_plan.decode(payload, 0)
        except DecodeError as exc:
            raise _placed(exc, "header") from None
        try:
            body, end = body_plan.decode(payload, pos)
        except DecodeError as exc:
            raise _placed(exc, "body") from None
        if end != len(payload):
            raise DecodeError(f"{len(payload) - end} trailing bytes after the message", end + 4)
        return header, body

    speedups = codec_module._speedups
    if speedups is None:
        return reference
    fast, native_header, native_body = (speedups.decode_struct, header_plan.native_plan(speedups),
                                        body_plan.native_plan(speedups))

    def decode(payload: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        try:
            header, pos = fast(native_header, payload, 0)
            body, end = fast(native_body, payload, pos)
        except Exception:  # noqa: BLE001 - declined: the reference plans decide, precisely
            return reference(payload)
        return (header, body) if end == len(payload) else reference(payload)

    return decode


def _placed(exc: DecodeError, part: str) -> DecodeError:
    exc.offset += 4
    return exc.at(part) if exc.parts else exc


TypeTree = tuple[Any, ...]  # field keys, nullability and leaf kinds, nested
_TYPES: dict[tuple[TypeTree | None, TypeTree | None], tuple[TypeTree | None, TypeTree | None]] = {}  # interned
# Frame decoders by the signatures of their header and body plans, whichever revision compiled them:
# where two revisions' plans agree (most frame kinds in a change) both get the same function, and a
# frame of that kind is decoded once, since a second decoding would be the same computation.
_DECODERS: dict[tuple[tuple[Any, ...], tuple[Any, ...]], FrameDecoder] = {}


def _types(codec: Codec, name: str, version: int) -> TypeTree | None:
    """The value's type tree (field keys, nullability, leaf kinds), or ``None`` when it holds a
    float64. Two decoded values of equal trees are identical exactly when they are ``==``: no
    ``True == 1`` or ``0 == 0.0`` across types, and no ``-0.0 == 0.0`` without floats."""

    def tree(node: Shape) -> Any:
        if isinstance(node, Struct):
            return tuple((slot.key, slot.nullable, tree(slot.shape)) for slot in node.slots)
        if isinstance(node, Array):
            return ("[]", tree(node.element))
        if node.kind == "float64":
            raise _HasFloat
        return node.kind

    try:
        return tuple(tree(shape(codec, name, version)))
    except _HasFloat:
        return None


class _HasFloat(Exception):
    """A float64 in a type tree: its values need ``first_difference`` (``-0.0 == 0.0``)."""


_DECODERS_OF: weakref.WeakKeyDictionary[Codec, Decoders] = weakref.WeakKeyDictionary()


def decoders(codec: Codec | Decoders) -> Decoders:
    """The ``Decoders`` of a codec (one per codec)."""
    if isinstance(codec, Decoders):
        return codec
    found = _DECODERS_OF.get(codec)
    if found is None:
        found = _DECODERS_OF[codec] = Decoders(codec)
    return found


_LOADED: dict[tuple[str, bool], Decoders] = {}  # per Python worker: by the revision's digest and allow_invalid


def loaded(revision: Revision, allow_invalid: bool = False, *, freeze: bool = False) -> Decoders:
    """The decoders of a spec revision shipped as bytes, its codec built once per process (``Codec.from_files``;
    ``allow_invalid``: its spec files Kafka's generator refuses left out; ``freeze``: see ``Decoders``)."""
    key = (revision.digest, allow_invalid)
    found = _LOADED.get(key)
    if found is None:
        with collector_paused():
            found = _LOADED[key] = Decoders(Codec.from_files(revision.files, allow_invalid=allow_invalid),
                                            freeze=freeze)
            if freeze:
                gc.freeze()
    return found


__all__ = ["HEADERS", "Api", "Decoders", "FrameDecoder", "decoders", "loaded"]
