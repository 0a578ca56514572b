"""``krpc-lint replay``: decode captured frames under two spec revisions and report what changes.

Input (FRAMES): Parquet (a file, or a directory of Parquet files) or JSON Lines (``.jsonl``,
``.json``, ``.ndjson``), one row per frame, with the columns of ``frames.py``:

- ``bytes`` (binary; base64 text in JSON Lines) or ``hex`` (text): the whole frame as captured,
  int32 size, header, body. ``bytes`` wins when a row has both.
- ``direction``: ``request`` or ``response``.
- ``api_key``, ``api_version``: for a request, optional (the request header holds them) but, when
  given, they must agree with the header. A response's header holds only the correlation id, so a
  response needs the API key and version *of the request it answers*.
- ``correlation_id``: optional; when given, it must agree with the header.

Every frame is decoded under both revisions (header and body; ``decode_request`` and
``decode_response`` semantics) and gets one outcome: ``same``, ``differs`` (both decode, to
different values), ``old_fails``, ``new_fails`` or ``both_fail``. A frame that cannot be replayed at
all (no bytes, not hex, a size prefix that does not match, an unknown direction, columns that
contradict the header) is ``both_fail`` with the same error on both sides: bad input is a row,
never a failed job. Where the two revisions compile a frame kind to identical plans (equal
``StructPlan.signature`` of header and body: the same names, types, encodings, tags and tagged
defaults), the two decodings would be one computation, so that frame is decoded once.

``path`` is where the two decodings first differ, or where decoding failed, in the codec's terms:
``body.Topics[0].Partitions[2].MaxBytes``, ``header.ClientId`` (as ``krpc-lint codec decode --frame``
names them). Values are compared field by field, by name, exactly as the bytes see them (``True`` is
not ``1``, ``-0.0`` is not ``0.0``). A field only one revision has at that version is not on the
wire (a tagged field at its default) unless the other side has a field only it has: then the two
are a rename and their values are compared (paired in field order).

Output (``--out``, written atomically): ``mismatches/`` (every frame that is not ``same``, schema
``REPLAY_MISMATCHES``; ``frame`` is the row's 0-based position in FRAMES, in Spark's reading
order, which is the file's order for one file; an unreadable Parquet row group is one row there, see
``parquet_input``), ``counts/`` (``REPLAY_COUNTS``) and
``summary.json``.

The per-frame work (``replay_frame``) is plain Python, usable and tested without Spark. The
Spark job runs it with ``mapInArrow``: Arrow batches in and out, each Python worker building the
two codecs once (from the spec texts shipped with the job, cached by their digest).
"""

from __future__ import annotations

import gc
import hashlib
import json
import struct
import tempfile
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple

from linter.codec import Codec, DecodeError
from linter.codec.codec import collector_paused
from linter.codec.compiler import UNKNOWN_TAGS
from linter.pipeline import schema
from linter.pipeline.frames import JSON_SUFFIXES, REQUEST, RESPONSE
from linter.pipeline.output import atomic_directory

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

OUTCOMES = ("same", "differs", "old_fails", "new_fails", "both_fail")
SAME, DIFFERS, OLD_FAILS, NEW_FAILS, BOTH_FAIL = OUTCOMES
HEADERS = {REQUEST: "RequestHeader", RESPONSE: "ResponseHeader"}
HEX_BYTES = 256  # a mismatch row keeps the frame's first 256 bytes as hex


class Replayed(NamedTuple):
    """What one frame did under the two revisions (the per-frame part of a REPLAY_MISMATCHES row)."""

    outcome: str
    api_key: int | None
    api_name: str | None  # the request or response message (the old revision's name when it has one)
    api_version: int | None
    correlation_id: int | None
    path: str | None
    old_error: str | None
    new_error: str | None


class BadFrame(ValueError):
    """A row that is not a frame at all, whatever the specs: replayed as ``both_fail``."""


# --- one revision ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Api:
    """How one revision decodes one (direction, API key, version) of frame."""

    name: str  # the request or response message
    decode: Callable[[bytes], tuple[dict[str, Any], dict[str, Any]]]  # payload (after the size) -> header, body
    types: object  # the type trees of header and body, interned: the same object when they are equal


class Revision:
    """A spec revision as the replay uses it: its codec and, per (direction, API key, version), an
    ``Api`` or the reason there is none (cached: a corpus repeats the same few thousand).

    ``freeze``: the process is a replay worker of its own, so what compiles (kept until the process
    ends) is moved out of the cyclic collector's reach with ``gc.freeze``; a library caller's
    process is left as it is."""

    def __init__(self, codec: Codec, *, freeze: bool = False) -> None:
        for header in HEADERS.values():
            if header not in codec.names:
                raise ValueError(f"replay needs Kafka's {header} spec, and the specs have none")
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


def _frame_decoder(codec: Codec, header_name: str, header_version: int, name: str,
                   version: int) -> Callable[[bytes], tuple[dict[str, Any], dict[str, Any]]]:
    """``decode(payload) -> (header, body)`` of a frame's bytes after the size. ``DecodeError``
    offsets count from the frame's first byte and paths start with ``header`` or ``body``, as
    ``krpc-lint codec decode --frame`` reports them. The C accelerator decodes when it is built; the
    reference plans decide anything it declines (every error included), as in ``Codec.decode``."""
    from linter.codec import codec as codec_module

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


_TYPES: dict[tuple, tuple] = {}  # interned type trees, compared by identity per frame
# Frame decoders by the signatures of their header and body plans, whichever revision compiled them:
# where two revisions' plans agree (most frame kinds in a change) both get the same function, and a
# frame of that kind is decoded once, since a second decoding would be the same computation.
_DECODERS: dict[tuple, Callable[[bytes], tuple[dict[str, Any], dict[str, Any]]]] = {}


def _types(codec: Codec, name: str, version: int) -> tuple | None:
    """The value's type tree (field keys, nullability, leaf kinds), or ``None`` when it holds a
    float64. Two decoded values of equal trees are identical exactly when they are ``==``: no
    ``True == 1`` or ``0 == 0.0`` across types, and no ``-0.0 == 0.0`` without floats."""
    from linter.codec.values import Array, Struct, shape

    def tree(node: Any) -> Any:
        if isinstance(node, Struct):
            return tuple((slot.key, slot.nullable, tree(slot.shape)) for slot in node.slots)
        if isinstance(node, Array):
            return ("[]", tree(node.element))
        if node.kind == "float64":
            raise _HasFloat
        return node.kind

    try:
        return tree(shape(codec, name, version))
    except _HasFloat:
        return None


class _HasFloat(Exception):
    """A float64 in a type tree: its values need ``first_difference`` (``-0.0 == 0.0``)."""


_REVISIONS: weakref.WeakKeyDictionary[Codec, Revision] = weakref.WeakKeyDictionary()


def revision(codec: Codec | Revision) -> Revision:
    """The ``Revision`` of a codec (one per codec)."""
    if isinstance(codec, Revision):
        return codec
    found = _REVISIONS.get(codec)
    if found is None:
        found = _REVISIONS[codec] = Revision(codec)
    return found


# --- one frame -------------------------------------------------------------------------------------


def replay_frame(old: Codec | Revision, new: Codec | Revision, row: Mapping[str, Any]) -> Replayed:
    """Decode one frame (a row of FRAMES: ``bytes`` or ``hex``, ``direction``, ``api_key``,
    ``api_version``, ``correlation_id``) under both revisions and say how they compare."""
    return _replay(revision(old), revision(new), row.get("direction"), row.get("api_key"), row.get("api_version"),
                   row.get("correlation_id"), row.get("bytes"), row.get("hex"))


def _replay(old: Revision, new: Revision, direction: Any, api_key: Any, api_version: Any, correlation_id: Any,
            data: Any, hex_text: Any) -> Replayed:
    try:
        payload, api_key, api_version, correlation_id = _frame(direction, api_key, api_version, correlation_id,
                                                               data, hex_text)
    except BadFrame as exc:
        return Replayed(BOTH_FAIL, _int(api_key), None, _int(api_version), _int(correlation_id), None,
                        str(exc), str(exc))
    old_api, new_api = old.api(direction, api_key, api_version), new.api(direction, api_key, api_version)
    if type(old_api) is Api and type(new_api) is Api:
        try:  # the usual cases, kept short: the same plans and it decodes, or both decode
            if old_api.decode is new_api.decode:
                old_api.decode(payload)
                return Replayed(SAME, api_key, old_api.name, api_version, correlation_id, None, None, None)
            old_value, new_value = old_api.decode(payload), new_api.decode(payload)
        except Exception:  # noqa: BLE001, S110 - one fails: said below, with the error
            pass
        else:
            if old_api.types is new_api.types and old_value == new_value:  # same types: == is exact
                return Replayed(SAME, api_key, old_api.name, api_version, correlation_id, None, None, None)
            path = first_difference(old_value[0], new_value[0], "header") or \
                first_difference(old_value[1], new_value[1], "body")
            return Replayed(SAME if path is None else DIFFERS, api_key, old_api.name, api_version, correlation_id,
                            path, None, None)
    name = old_api.name if type(old_api) is Api else new_api.name if type(new_api) is Api else None
    old_error, old_path = _failure(old_api, payload)
    new_error, new_path = _failure(new_api, payload)
    if new_error is None:
        outcome, path = OLD_FAILS, old_path
    elif old_error is None:
        outcome, path = NEW_FAILS, new_path
    else:
        outcome, path = BOTH_FAIL, old_path or new_path
    return Replayed(outcome, api_key, name, api_version, correlation_id, path, old_error, new_error)


def _failure(api: Api | str, payload: bytes) -> tuple[str | None, str | None]:
    """Why a revision cannot decode the payload, and where: (error, path), or (None, None)."""
    if type(api) is not Api:
        return api, None
    try:
        api.decode(payload)
    except DecodeError as exc:
        return str(exc), exc.path or None
    except Exception as exc:  # noqa: BLE001 - a frame that breaks the codec is a row, not a failed job
        return f"{type(exc).__name__}: {exc}", None
    return None, None


_REQUEST_START = struct.Struct(">ihhi")  # size, apiKey, apiVersion, correlationId
_RESPONSE_START = struct.Struct(">ii")  # size, correlationId


def _frame(direction: Any, api_key: Any, api_version: Any, correlation_id: Any, data: Any,
           hex_text: Any) -> tuple[bytes, int, int, int]:
    """(payload after the size, API key, API version, correlation id) of a row, the columns checked
    against the header; ``BadFrame`` when the row is not a frame at all."""
    if data is None:
        if hex_text is None:
            raise BadFrame("no frame: bytes and hex are both null")
        try:
            data = bytes.fromhex(hex_text)
        except (TypeError, ValueError) as exc:
            raise BadFrame(f"hex is not hexadecimal text: {exc}") from None
    elif type(data) is not bytes:
        if not isinstance(data, (bytearray, memoryview)):
            raise BadFrame(f"bytes must be binary, got {type(data).__name__}")
        data = bytes(data)
    if direction == REQUEST:
        if len(data) < _REQUEST_START.size:
            raise BadFrame(f"a request frame needs 12 bytes at least (size, apiKey, apiVersion, correlationId), "
                           f"got {len(data)}")
        size, key, version, wire_id = _REQUEST_START.unpack_from(data)
        if api_key is not None and api_key != key:
            raise BadFrame(f"the api_key column ({api_key}) does not match the header's requestApiKey ({key})")
        if api_version is not None and api_version != version:
            raise BadFrame(f"the api_version column ({api_version}) does not match the header's "
                           f"requestApiVersion ({version})")
        api_key, api_version = key, version
    elif direction == RESPONSE:
        if type(api_key) is not int or type(api_version) is not int:
            raise BadFrame("a response frame needs api_key and api_version: those of the request it answers")
        if len(data) < _RESPONSE_START.size:
            raise BadFrame(f"a response frame needs 8 bytes at least (size, correlationId), got {len(data)}")
        size, wire_id = _RESPONSE_START.unpack_from(data)
    else:
        raise BadFrame(f"direction must be {REQUEST!r} or {RESPONSE!r}, got {direction!r}")
    if size != len(data) - 4:
        raise BadFrame(f"frame size {size} does not match the {len(data) - 4} bytes that follow")
    if correlation_id is not None and correlation_id != wire_id:
        raise BadFrame(f"the correlation_id column ({correlation_id}) does not match the header's ({wire_id})")
    return data[4:], api_key, api_version, wire_id


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


# --- comparing decoded values ---------------------------------------------------------------------


def first_difference(old: Any, new: Any, path: str = "") -> str | None:
    """The path of the first place two decoded values differ, or ``None`` when they are identical.

    Paths use spec field names: ``Topics[0].Partitions[2].MaxBytes``. Lists of different lengths
    differ at the first index only one has. Dict fields are matched by name; those only one side
    has are left out (a field a version does not have on one side is not on the wire), unless both
    sides have such fields: those are paired in order, as a rename.

    >>> first_difference({"topics": [{"name": "t", "maxBytes": 1}]}, {"topics": [{"name": "t", "maxBytes": 2}]})
    'Topics[0].MaxBytes'
    >>> first_difference({"a": [1, 2]}, {"a": [1]}, "body"), first_difference({"x": True}, {"x": 1})
    ('body.A[1]', 'X')
    >>> first_difference({"rackId": "r", "epoch": -1.0}, {"clientRackId": "r", "epoch": -1.0, "tag": None}) is None
    True
    """
    if type(old) is dict and type(new) is dict:
        for key, value in old.items():
            if key in new:
                found = first_difference(value, new[key], _field(path, key))
                if found is not None:
                    return found
        renamed = zip((key for key in old if key not in new), (key for key in new if key not in old))
        for old_key, new_key in renamed:
            found = first_difference(old[old_key], new[new_key], _field(path, old_key))
            if found is not None:
                return found
        return None
    if type(old) is list and type(new) is list:
        for index, (left, right) in enumerate(zip(old, new)):
            found = first_difference(left, right, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(old) == len(new) else f"{path}[{min(len(old), len(new))}]"
    from linter.codec.values import identical

    return None if identical(old, new) else path


def _field(path: str, key: str) -> str:
    name = key if key == UNKNOWN_TAGS else key[:1].upper() + key[1:]
    return f"{path}.{name}" if path else name


# --- the spec revisions, shipped to the executors ---------------------------------------------------


@dataclass(frozen=True)
class SpecTexts:
    """The spec files of a revision as bytes, so an executor builds the same Codec without the
    driver's disk; ``digest`` names the revision in each worker's cache."""

    source: str  # the path given
    files: tuple[tuple[str, bytes], ...]  # (path below the source, bytes)
    digest: str
    allow_invalid: bool = False  # Codec.load's: skip the files Kafka's generator refuses

    @classmethod
    def read(cls, path: str | Path, allow_invalid: bool = False) -> SpecTexts:
        """Every spec file ``Codec.load(path)`` would read (a directory is searched for ``*.json``)."""
        from linter.codec import SpecError
        from linter.engine.config import Config
        from linter.engine.runner import UsageError, collect_files

        root = Path(path)
        try:
            found = collect_files([root], Config(profile="kafka")).files
        except UsageError as exc:
            raise SpecError(str(exc)) from None
        files = tuple((file.relative_to(root).as_posix() if root.is_dir() else file.name, file.read_bytes())
                      for file in found)
        digest = hashlib.sha256(b"allow-invalid\0" if allow_invalid else b"")
        for name, data in files:
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
        return cls(str(path), files, digest.hexdigest(), allow_invalid)

    def codec(self) -> Codec:
        """The codec of these texts, loaded from a temporary copy of the files."""
        with tempfile.TemporaryDirectory(prefix="krpc-lint-specs-") as directory:
            for name, data in self.files:
                target = Path(directory, *PurePosixPath(name).parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            return Codec.load(directory, allow_invalid=self.allow_invalid)


_LOADED: dict[str, Revision] = {}  # per Python worker: revisions by SpecTexts.digest


def loaded(texts: SpecTexts, *, freeze: bool = False) -> Revision:
    """The revision of spec texts, built once per process (``freeze``: see ``Revision``)."""
    found = _LOADED.get(texts.digest)
    if found is None:
        with collector_paused():
            found = _LOADED[texts.digest] = Revision(texts.codec(), freeze=freeze)
            if freeze:
                gc.freeze()
    return found


# --- Arrow batches ------------------------------------------------------------------------------

# What the Spark job's mapInArrow writes: a row per frame that is not ``same`` (``frames`` null),
# with the frame's partition and row there (its number in FRAMES, once the partitions' sizes are
# known), then, at the end of each partition, its counts (``row`` null, ``frames`` set, only the
# REPLAY_COUNTS columns). Frames that replay the same are only counted: most frames cross back
# to the JVM as a count, not a row.
RESULTS = ("part INT, row BIGINT, frames BIGINT, api_key INT, api_name STRING, api_version INT, direction STRING, "
           "correlation_id INT, outcome STRING, path STRING, old_error STRING, new_error STRING, hex STRING")
INPUT_COLUMNS = ("api_key", "api_version", "direction", "correlation_id", "bytes", "hex", "corrupt")
CountKey = tuple[Any, Any, Any, Any, str]  # api_key, api_name, api_version, direction, outcome


def replay_batches(old: SpecTexts, new: SpecTexts) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function: one partition's frames in (``INPUT_COLUMNS``), ``RESULTS`` out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        old_side, new_side = loaded(old, freeze=True), loaded(new, freeze=True)
        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        counts: dict[CountKey, int] = {}
        row = 0
        for batch in batches:
            mismatches = replay_batch(old_side, new_side, batch, counts, part, row)
            row += batch.num_rows
            if mismatches.num_rows:
                yield mismatches
        if counts:
            yield count_batch(counts, part)

    return run


def replay_batch(old: Revision, new: Revision, batch: pa.RecordBatch, counts: dict[CountKey, int], part: int = 0,
                 first: int = 0) -> pa.RecordBatch:
    """The ``RESULTS`` rows of a batch's frames that are not ``same``; every frame is counted in ``counts``."""
    columns = [batch.column(name).to_pylist() if name in batch.schema.names else [None] * batch.num_rows
               for name in INPUT_COLUMNS]
    rows = []
    shared = _SHARED.setdefault(old, weakref.WeakKeyDictionary()).setdefault(new, {})
    for index, (key, version, direction, correlation_id, data, hex_text, corrupt) in enumerate(zip(*columns), first):
        # The common case first, inline: a well-formed frame of a kind both revisions decode with one
        # decoder, which decodes it. Anything else takes _replay, which checks and explains everything.
        if type(data) is bytes and corrupt is None:
            if direction == REQUEST and len(data) >= 12:
                size, wire_key, wire_version, wire_id = _REQUEST_START.unpack_from(data)
                kind = (REQUEST, wire_key, wire_version)
                usual = (key is None or key == wire_key) and (version is None or version == wire_version)
            elif direction == RESPONSE and len(data) >= 8 and type(key) is int and type(version) is int:
                size, wire_id = _RESPONSE_START.unpack_from(data)
                kind, usual = (RESPONSE, key, version), True
            else:
                usual = False
            if usual and size == len(data) - 4 and (correlation_id is None or correlation_id == wire_id):
                decoder = shared.get(kind, _UNSEEN)
                if decoder is _UNSEEN:
                    decoder = shared[kind] = _shared_decoder(old, new, *kind)
                if decoder is not None:
                    try:
                        decoder[0](data[4:])
                    except Exception:  # noqa: BLE001, S110 - a frame it refuses: _replay says how
                        pass
                    else:
                        counts[decoder[1]] = counts.get(decoder[1], 0) + 1
                        continue
        if corrupt is not None:
            error = f"not a frame record: {corrupt[:200]!r}"
            result = Replayed(BOTH_FAIL, key, None, version, correlation_id, None, error, error)
        else:
            result = _replay(old, new, direction, key, version, correlation_id, data, hex_text)
        count_key = (result.api_key, result.api_name, result.api_version, direction, result.outcome)
        counts[count_key] = counts.get(count_key, 0) + 1
        if result.outcome != SAME:
            rows.append((part, index, None, result.api_key, result.api_name, result.api_version, direction,
                         result.correlation_id, result.outcome, result.path, result.old_error, result.new_error,
                         _hex(data, hex_text)))
    return _record_batch(rows)


_UNSEEN = object()
# Per pair of revisions: (direction, API key, version) -> (the decoder both share, the count key of
# a frame it decodes), or None when the revisions decode that kind differently (or cannot).
_SHARED: weakref.WeakKeyDictionary[Revision, weakref.WeakKeyDictionary[Revision, dict]] = weakref.WeakKeyDictionary()


def _shared_decoder(old: Revision, new: Revision, direction: str, api_key: int,
                    api_version: int) -> tuple[Callable, CountKey] | None:
    old_api, new_api = old.api(direction, api_key, api_version), new.api(direction, api_key, api_version)
    if type(old_api) is Api and type(new_api) is Api and old_api.decode is new_api.decode:
        return old_api.decode, (api_key, old_api.name, api_version, direction, SAME)
    return None


def count_batch(counts: dict[CountKey, int], part: int = 0) -> pa.RecordBatch:
    """The count rows of a partition."""
    return _record_batch([(part, None, frames, key, name, version, direction, None, outcome, None, None, None, None)
                          for (key, name, version, direction, outcome), frames in counts.items()])


def _record_batch(rows: list[tuple]) -> pa.RecordBatch:
    import pyarrow as pa

    types = (pa.int32(), pa.int64(), pa.int64(), pa.int32(), pa.string(), pa.int32(), pa.string(), pa.int32(),
             pa.string(), pa.string(), pa.string(), pa.string(), pa.string())
    columns = list(zip(*rows)) if rows else [()] * len(types)
    return pa.RecordBatch.from_arrays([pa.array(column, kind) for column, kind in zip(columns, types)],
                                      names=schema.columns(RESULTS))


def _hex(data: Any, hex_text: Any) -> str | None:
    if data is not None:
        return bytes(data[:HEX_BYTES]).hex()
    return hex_text[:2 * HEX_BYTES] if isinstance(hex_text, str) else None


# --- the Spark job -------------------------------------------------------------------------------


@dataclass
class ReplaySummary:
    """What a replay did: frames per outcome, and how fast."""

    out: str
    frames: int
    outcomes: dict[str, int]
    mismatches: int
    seconds: float  # the Spark job: reading, decoding, writing (not the session's start or loading specs)
    frames_per_second: float
    master: str
    meta: dict[str, Any] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # spec files --allow-invalid left out, of either revision


# Spark reads a file in about as many splits as there are cores; more (and so smaller) splits keep
# every core busy to the end, as frames of different APIs take very different times to decode.
SPLIT_CONF, SPLITS_PER_CORE = "spark.sql.files.minPartitionNum", 4
JSON_INPUT = ("api_key INT, api_version INT, direction STRING, correlation_id INT, bytes BINARY, hex STRING, "
              "corrupt STRING")
INPUT_TYPES = dict(schema.fields(JSON_INPUT))  # each input column's Spark type: what it is cast to


def read_frames(spark: SparkSession, frames_path: str | Path, parquet: list[str] | None = None) -> DataFrame:
    """FRAMES as a DataFrame of ``INPUT_COLUMNS`` (columns it lacks are null; types are cast, a value
    that does not fit is null, after ``parquet_input`` refused a Parquet column of the wrong kind; ``corrupt`` holds a JSON line that does not parse, or says which Parquet
    row group could not be read). ``parquet``: the files to read in place of FRAMES (``parquet_input``)."""
    from pyspark.sql import functions as F

    path = Path(frames_path)
    if not path.exists():
        raise FileNotFoundError(f"{frames_path}: no such file or directory")
    if path.is_file() and path.suffix.lower() in JSON_SUFFIXES:
        return (spark.read.schema(JSON_INPUT).option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", "corrupt").json(str(path)))
    if path.is_file() and path.suffix.lower() != ".parquet":
        raise ValueError(f"{frames_path}: FRAMES must be Parquet (.parquet, or a directory of Parquet files) "
                         f"or JSON Lines ({', '.join(JSON_SUFFIXES)})")
    if parquet is None:
        known = _parquet_schema(path)
        frames = (spark.read.schema(known) if known else spark.read).parquet(str(path))
    else:  # repaired copies beside the readable files: their schemas merged (a repair adds ``corrupt``)
        frames = spark.read.option("mergeSchema", "true").parquet(*parquet)
    present = set(frames.columns)
    if not present & {"bytes", "hex"}:
        raise ValueError(f"{frames_path}: FRAMES needs a bytes or a hex column; it has {', '.join(frames.columns)}")
    return frames.select(*[F.expr(f"try_cast(`{name}` AS {INPUT_TYPES[name]})").alias(name) if name in present
                           else F.lit(None).cast(INPUT_TYPES[name]).alias(name) for name in INPUT_COLUMNS])


_SPARK_TYPES = {"int8": "TINYINT", "int16": "SMALLINT", "int32": "INT", "int64": "BIGINT", "string": "STRING",
                "large_string": "STRING", "binary": "BINARY", "large_binary": "BINARY"}


def parquet_input(frames_path: str | Path, scratch: Path) -> list[str] | None:
    """Read each Parquet file of FRAMES here, row group by row group (the input columns only, as Spark
    would), before Spark does: a file whose footer or pages cannot be read would fail a Spark task with a
    Java stack trace and end the job. ``None`` when everything reads (Spark reads FRAMES as given);
    otherwise the files Spark reads instead: the readable ones as they are, and for each damaged one a copy
    in ``scratch`` with its readable row groups and, in place of each unreadable row group (or file), one
    row whose ``corrupt`` column names it and says why. That row is replayed as a ``both_fail`` frame; the
    job and the other frames go on. A single FRAMES file whose footer cannot be read has nothing to
    replay: ``ValueError``, one line."""
    path = Path(frames_path)
    if not path.exists() or (path.is_file() and path.suffix.lower() != ".parquet"):
        return None  # JSON Lines, or what read_frames refuses
    files = _spark_files(path) if path.is_dir() else [path]
    readable, repaired = [], False
    for number, file in enumerate(files):
        damage = _damage(file)
        if damage is None:
            readable.append(str(file))
            continue
        if isinstance(damage, str) and not path.is_dir():
            raise ValueError(f"{file}: not a readable Parquet file ({damage})")
        copy = scratch / f"repaired-{number}.parquet"
        _repair(file, damage, copy)
        readable.append(str(copy))
        repaired = True
    return readable if repaired else None


def _spark_files(directory: Path) -> list[Path]:
    """The files Spark reads of a directory: every regular file below it, none under a name starting
    with ``_`` or ``.`` (``_SUCCESS``, ``.crc``), as Spark's file index leaves those out."""
    return sorted(file for file in directory.rglob("*") if file.is_file()
                  and not any(part.startswith(("_", ".")) for part in file.relative_to(directory).parts))


def _damage(file: Path) -> dict[int, str] | str | None:
    """``None`` when ``file`` reads; the reason when its footer does not; else {row group: reason}."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(file)
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors vary: any failure means unreadable
        return _first_line(str(exc)) or type(exc).__name__
    _check_types(file, parquet.schema_arrow)
    columns = [name for name in parquet.schema_arrow.names if name in INPUT_COLUMNS]
    damaged = {}
    for group in range(parquet.num_row_groups):
        try:
            parquet.read_row_group(group, columns=columns)
        except Exception as exc:  # noqa: BLE001 - as above
            damaged[group] = _first_line(str(exc)) or type(exc).__name__
    return damaged or None


_KINDS = {"INT": "integer", "STRING": "string", "BINARY": "binary"}  # ... and what a Parquet column must hold


def _check_types(file: Path, arrow_schema: Any) -> None:
    """``ValueError`` (one line, before Spark) for an input column whose type cannot hold what it must: any
    integer width is read as INT, but a ``bytes`` column of numbers or a ``direction`` of integers is a
    mistake in how FRAMES was written, not a few odd frames."""
    import pyarrow as pa

    tests = {"integer": pa.types.is_integer, "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
             "binary": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t)
             or pa.types.is_fixed_size_binary(t)}
    for column in arrow_schema:
        if column.name not in INPUT_TYPES:
            continue
        kind = _KINDS[INPUT_TYPES[column.name]]
        type_ = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if not (pa.types.is_null(type_) or tests[kind](type_)):
            raise ValueError(f"{file}: column {column.name} is {type_}; replay reads {kind} values there "
                             "(docs/pipeline.md, replay)")


def _repair(file: Path, damage: dict[int, str] | str, copy: Path) -> None:
    """Write ``copy``: ``file``'s readable row groups, one ``corrupt`` row per unreadable one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(damage, str):
        table = pa.table({"corrupt": [f"{file.name}: not a readable Parquet file ({damage})"]})
        pq.write_table(table, copy)
        return
    parquet = pq.ParquetFile(file)
    columns = [name for name in parquet.schema_arrow.names if name in INPUT_COLUMNS and name != "corrupt"]
    fields = [parquet.schema_arrow.field(name) for name in columns]
    out_schema = pa.schema([*fields, pa.field("corrupt", pa.string())])
    first = 0
    with pq.ParquetWriter(copy, out_schema) as writer:
        for group in range(parquet.num_row_groups):
            rows = parquet.metadata.row_group(group).num_rows
            if group in damage:
                reason = (f"{file.name}: row group {group} of {parquet.num_row_groups} (rows {first}-"
                          f"{first + rows - 1}) cannot be read: {damage[group]}")
                table = pa.table([pa.nulls(1, field.type) for field in fields] + [pa.array([reason])],
                                 schema=out_schema)
            else:
                table = parquet.read_row_group(group, columns=columns)
                table = table.append_column("corrupt", pa.nulls(table.num_rows, pa.string()))
            writer.write_table(table)
            first += rows


def spark_reason(exc: Exception) -> str:
    """What Spark says went wrong, in one line: the error's first line and that of its deepest Java cause
    (``FAILED_TO_UNCOMPRESS``, a missing footer), without any stack trace."""
    lines = [_first_line(getattr(exc, "desc", None) or str(exc))]
    error = getattr(exc, "java_exception", None)
    causes = []
    while error is not None and len(causes) < 50:
        causes.append(_first_line(str(error.toString())))
        error = error.getCause()
    if causes:
        lines = [causes[0]] if "Job aborted" not in causes[0] or len(causes) < 2 else [causes[1]]
        if causes[-1] not in lines:
            lines.append(f"cause: {causes[-1]}")
    return "; ".join(line[:300] for line in lines if line) or type(exc).__name__


def _first_line(text: str) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def _parquet_schema(path: Path) -> str | None:
    """The DDL of a Parquet file's input columns, read from its footer here, which spares Spark a job
    that would read it; ``None`` (Spark infers it, and reports what is wrong) for a directory, an
    unreadable file or a type outside the plain ones."""
    if not path.is_file():
        return None
    import pyarrow.parquet as pq

    try:
        columns = [(column.name, str(column.type)) for column in pq.read_schema(path)]
    except Exception:  # noqa: BLE001 - not Parquet: Spark says so, as for any input
        return None
    wanted = [(name, _SPARK_TYPES.get(kind)) for name, kind in columns if name in INPUT_COLUMNS]
    if not {"bytes", "hex"} & {name for name, _ in wanted} or any(kind is None for _, kind in wanted):
        return None
    return ", ".join(f"`{name}` {kind}" for name, kind in wanted)


def replay(frames_path: str | Path, old_specs: str | Path, new_specs: str | Path, out: str | Path, *,
           master: str | None = None, overwrite: bool = False, spark: SparkSession | None = None,
           allow_invalid: bool = False) -> ReplaySummary:
    """Replay FRAMES under OLD and NEW into ``out``: ``mismatches/``, ``counts/``, ``summary.json``.

    ``spark``: a session to use (and leave running); otherwise one is started for ``master``.
    Raises ``SpecError`` or ``ValueError`` for unusable specs (before any Spark work),
    ``OutputExists`` when ``out`` exists and ``overwrite`` is false.
    """
    from linter.pipeline.spark import require_pyspark, session

    if spark is None:
        require_pyspark()
    old, new = SpecTexts.read(old_specs, allow_invalid), SpecTexts.read(new_specs, allow_invalid)
    skipped = tuple(sorted({Path(name).name for texts in (old, new) for name in loaded(texts).codec.skipped}))
    # (bad specs fail in loaded, before any Spark work)
    with tempfile.TemporaryDirectory(prefix="krpc-lint-replay-") as scratch, \
            atomic_directory(out, overwrite=overwrite, inputs=[frames_path, old_specs, new_specs]) as work_dir:
        parquet = parquet_input(frames_path, Path(scratch))  # damaged Parquet: before Spark starts
        spark = spark or session(master)
        started = time.monotonic()
        split = spark.conf.get(SPLIT_CONF, None)
        spark.conf.set(SPLIT_CONF, str(SPLITS_PER_CORE * spark.sparkContext.defaultParallelism))
        try:
            counts = _run(spark, read_frames(spark, frames_path, parquet), old, new, work_dir)
        except Exception as exc:
            if type(exc).__module__.split(".")[0] not in ("pyspark", "py4j"):
                raise
            raise ValueError(f"{frames_path}: Spark could not read the frames: {spark_reason(exc)}") from None
        finally:
            spark.conf.unset(SPLIT_CONF) if split is None else spark.conf.set(SPLIT_CONF, split)
        outcomes = dict.fromkeys(OUTCOMES, 0)
        for key, frames in counts.items():
            outcomes[key[-1]] += frames
        seconds = time.monotonic() - started
        total = sum(outcomes.values())
        summary = ReplaySummary(str(out), total, outcomes, total - outcomes[SAME], round(seconds, 3),
                                round(total / seconds, 1), spark.sparkContext.master, skipped=skipped)
        summary.meta = {"frames_path": str(frames_path), "old_specs": old.source, "new_specs": new.source,
                        "frames": total, "outcomes": outcomes, "mismatches": summary.mismatches,
                        "seconds": summary.seconds, "frames_per_second": summary.frames_per_second,
                        "master": summary.master, "skipped_specs": list(skipped)}
        (work_dir / "summary.json").write_text(json.dumps(summary.meta, indent=2) + "\n")
    return summary


def _run(spark: SparkSession, frames: DataFrame, old: SpecTexts, new: SpecTexts, work_dir: Path) -> dict[CountKey, int]:
    """The job: replay every frame once (the small results kept), number the mismatches and write
    both tables; returns the counts. Two Spark jobs, no shuffle: the replay (collecting each
    partition's count rows, a few per frame kind), then writing the mismatches from the cache.
    The counts are summed and written here, on the driver."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from linter.pipeline.output import write_parquet

    results = frames.mapInArrow(replay_batches(old, new), RESULTS).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        keys = schema.columns(schema.REPLAY_COUNTS)[:-1]
        sizes: dict[int, int] = {}
        counts: dict[CountKey, int] = {}
        for row in results.where(F.col("row").isNull()).select("part", *keys, "frames").collect():
            sizes[row["part"]] = sizes.get(row["part"], 0) + row["frames"]
            key = tuple(row[name] for name in keys)
            counts[key] = counts.get(key, 0) + row["frames"]
        offsets = list(accumulate((sizes.get(part, 0) for part in range(max(sizes, default=0))), initial=0))
        first = F.element_at(F.array(*[F.lit(offset) for offset in offsets]).cast("array<bigint>"), F.col("part") + 1)
        mismatches = results.where(F.col("row").isNotNull()).select(
            (first + F.col("row")).alias("frame"), *schema.columns(schema.REPLAY_MISMATCHES)[1:])
        mismatches.write.parquet(str(work_dir / "mismatches"))
    finally:
        results.unpersist()
    ordered = sorted(counts.items(), key=lambda item: [(value is None, value) for value in item[0]])
    write_parquet([dict(zip(keys, key), frames=frames) for key, frames in ordered], schema.REPLAY_COUNTS,
                  work_dir / "counts")
    return counts


__all__ = [
    "OUTCOMES",
    "Api",
    "BadFrame",
    "ReplaySummary",
    "Replayed",
    "Revision",
    "SpecTexts",
    "first_difference",
    "loaded",
    "read_frames",
    "replay",
    "replay_batch",
    "replay_batches",
    "replay_frame",
    "revision",
]
