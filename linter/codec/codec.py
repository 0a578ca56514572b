"""``Codec``: encode and decode any Kafka message at any version, straight from the JSON specs.

>>> codec = Codec.load("fixtures/valid")
>>> data = codec.encode("WidgetFetchRequest", 0, codec.default("WidgetFetchRequest", 0))
>>> codec.decode("WidgetFetchRequest", 0, data) == codec.default("WidgetFetchRequest", 0)
True
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from linter.codec.arrays import ALLOWANCE
from linter.codec.compiler import UNKNOWN_TAGS, MessageCompiler, StructPlan
from linter.codec.errors import DecodeError, EncodeError, SpecError
from linter.codec.wire import INT16, INT32, need
from linter.memory import collector_paused
from linter.model.spec import MessageSpec
from linter.model.traits import header_version

if TYPE_CHECKING:
    from linter.engine.context import FileContext
    from linter.engine.findings import Report


def _accelerator() -> ModuleType | None:
    """The optional C accelerator (built by setup.py when a compiler is there), unless it is turned off
    or was built from another version of the source: then the Python plans decide alone."""
    if os.environ.get("KRPC_LINT_PURE_PYTHON"):
        return None
    try:
        from linter.codec import _speedups as module
    except ImportError:
        return None
    return module if getattr(module, "UNKNOWN_TAGS", None) == UNKNOWN_TAGS else None


_speedups = _accelerator()
_NO_PLANS: dict[int, Any] = {}
_KEYED = ("request", "response", "coordinator-key", "coordinator-value")


class CoordinatorRecord(NamedTuple):
    """A decoded coordinator record; a tombstone has ``None`` for its value, value name and version."""

    api_key: int
    key_name: str
    key: dict[str, Any]
    value_name: str | None
    value_version: int | None
    value: dict[str, Any] | None


class Codec:
    """Encoders and decoders for a set of message specs, compiled per (message, version) on first use.

    Values are plain dicts keyed by field name with the first letter lower-cased
    (``ReplicaId`` -> ``replicaId``); docs/codec.md lists the Python form of every type.
    Frames (``encode_request`` and friends) also need Kafka's ``RequestHeader`` and
    ``ResponseHeader`` specs; here two minimal copies join the fixtures' texts (``from_files``):

    >>> import pathlib
    >>> headers = {"RequestHeader.json": b'''{"name": "RequestHeader", "type": "header", "validVersions": "0-2",
    ...     "flexibleVersions": "2+", "fields": [
    ...         {"name": "RequestApiKey", "type": "int16", "versions": "0+"},
    ...         {"name": "RequestApiVersion", "type": "int16", "versions": "0+"},
    ...         {"name": "CorrelationId", "type": "int32", "versions": "0+"},
    ...         {"name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+",
    ...          "flexibleVersions": "none"}]}''', "ResponseHeader.json": b'''{"name": "ResponseHeader", "type": "header",
    ...     "validVersions": "0-1", "flexibleVersions": "1+", "fields": [{"name": "CorrelationId", "type": "int32",
    ...     "versions": "0+"}]}'''}
    >>> fixtures = {path.name: path.read_bytes() for path in pathlib.Path("fixtures/valid").glob("*.json")}
    >>> codec = Codec.from_files({**fixtures, **headers})
    >>> frame = codec.encode_request(2, {"requestApiKey": 1000, "correlationId": 7, "clientId": "me"},
    ...                              codec.default("WidgetFetchRequest", 2))
    >>> frame.hex()
    '0000001903e800020000000700026d6500ffffffff01000001f4000100'
    >>> name, version, header, body = codec.decode_request(frame)
    >>> name, version, header["correlationId"], body["maxWaitMs"]
    ('WidgetFetchRequest', 2, 7, 500)
    >>> response = codec.encode_response(1000, 2, {"correlationId": 7}, codec.default("WidgetFetchResponse", 2))
    >>> response.hex()
    '0000000e0000000700000000000000000100'
    >>> codec.decode_response(1000, 2, response)[0]
    {'correlationId': 7}
    """

    def __init__(self, messages: Iterable[MessageSpec]) -> None:
        self._messages: dict[str, MessageSpec] = {}
        # (name, spec) by kind, then apiKey; looked up with whatever a request header holds, as given
        self._by_key: dict[str, dict[Hashable, tuple[str, MessageSpec]]] = {kind: {} for kind in _KEYED}
        for message in messages:
            name = message.name
            if name is None:
                raise SpecError(f"{message.path}: the spec has no name")
            if name in self._messages:
                raise SpecError(f"two specs define {name}: {self._messages[name].path} and {message.path}")
            self._messages[name] = message
            if message.type in _KEYED and message.api_key is not None:
                self._by_key[message.type][message.api_key] = (name, message)
        self._compilers: dict[str, MessageCompiler] = {}
        self._plans: dict[tuple[str, int], StructPlan] = {}
        self._natives: dict[str, dict[int, Any]] = {}  # compiled C plans by name, then version

    skipped: tuple[str, ...] = ()  # the spec files ``load(..., allow_invalid=True)`` left out

    @classmethod
    def load(cls, *paths: str | os.PathLike[str], allow_invalid: bool = False) -> Codec:
        """Load spec files and directories; specs with errors (``krpc-lint --profile kafka``) are refused.

        A spec Kafka's own generator would reject has no well-defined encoding, so ``SpecError``
        says so in one line instead of encoding something Kafka never would; ``allow_invalid`` leaves
        those files out instead (their names in ``skipped``) and loads the rest.

        >>> Codec.load("fixtures/valid").names[:3]
        ['BlobPushRequest', 'BlobPushResponse', 'WidgetFetchRequest']
        >>> try:
        ...     Codec.load("fixtures/invalid/KL301-field-name-pattern.json")
        ... except SpecError as exc:
        ...     print(str(exc).split(" (first")[0])
        1 spec file has errors Kafka's generator refuses, so its encoding is undefined
        >>> Codec.load("fixtures/invalid/KL301-field-name-pattern.json", allow_invalid=True).skipped
        ('fixtures/invalid/KL301-field-name-pattern.json',)
        """
        from linter.engine.config import Config
        from linter.engine.runner import UsageError, lint_with_contexts

        if not paths:
            raise SpecError("no spec files or directories given")
        try:
            return cls._checked(*lint_with_contexts(list(paths), Config(profile="kafka")), allow_invalid)
        except UsageError as exc:
            raise SpecError(str(exc)) from None

    @classmethod
    def from_files(cls, files: Mapping[str, bytes], *, allow_invalid: bool = False) -> Codec:
        """``load`` of spec files in memory (relative path -> bytes) as one complete directory, with no disk: a Spark
        worker's codec, from the texts shipped with its job (example: the class docstring)."""
        from linter.engine.config import Config
        from linter.engine.runner import lint_files

        if not files:
            raise SpecError("no spec files or directories given")
        return cls._checked(*lint_files(files, Config(profile="kafka")), allow_invalid)

    @classmethod
    def _checked(cls, report: Report, contexts: list[FileContext], allow_invalid: bool) -> Codec:
        """The codec of linted specs: refused when one has an error, else those left out (``allow_invalid``)."""
        errors = [f for f in report.findings if f.severity == "error"]
        broken = tuple(sorted({f.path for f in errors}))
        if broken and not allow_invalid:
            first, (s, have, its) = errors[0], ("", "has", "its") if len(broken) == 1 else ("s", "have", "their")
            raise SpecError(f"{len(broken)} spec file{s} {have} errors Kafka's generator refuses, so {its} encoding is "
                            f"undefined (first: {os.path.basename(first.path)}:{first.line}:{first.col} {first.rule} "
                            f"{first.message}); run krpc-lint lint on the specs, or pass --allow-invalid to skip them")
        codec = cls(ctx.message for ctx in contexts if ctx.message is not None and ctx.path not in broken)
        codec.skipped = broken
        return codec

    @property
    def names(self) -> list[str]:
        """Every message name, sorted."""
        return sorted(self._messages)

    def spec(self, name: str) -> MessageSpec:
        """The parsed spec of a message; ``KeyError`` for an unknown name.

        >>> spec = Codec.load("fixtures/valid").spec("WidgetFetchRequest")
        >>> spec.api_key, spec.type, str(spec.versions), str(spec.flexible)
        (1000, 'request', '0-3', '2+')
        """
        try:
            return self._messages[name]
        except KeyError:
            raise KeyError(f"no spec named {name!r}") from None

    def request_for(self, api_key: int) -> MessageSpec:
        """The request spec with this apiKey; ``KeyError`` when there is none.

        >>> Codec.load("fixtures/valid").request_for(1000).name
        'WidgetFetchRequest'
        """
        return self._keyed("request", api_key)[1]

    def response_for(self, api_key: int) -> MessageSpec:
        """The response spec with this apiKey; ``KeyError`` when there is none.

        >>> Codec.load("fixtures/valid").response_for(1000).name
        'WidgetFetchResponse'
        """
        return self._keyed("response", api_key)[1]

    def key_for(self, record_type: int) -> MessageSpec:
        """The coordinator-key spec of a coordinator record type; ``KeyError`` when there is none.

        >>> Codec.load("fixtures/valid").key_for(7).name
        'WidgetLedgerKey'
        """
        return self._keyed("coordinator-key", record_type)[1]

    def value_for(self, record_type: int) -> MessageSpec:
        """The coordinator-value spec of a coordinator record type; ``KeyError`` when there is none."""
        return self._keyed("coordinator-value", record_type)[1]

    def _keyed(self, kind: str, api_key: Hashable) -> tuple[str, MessageSpec]:
        """(name, spec) of the ``kind`` spec with this apiKey; ``KeyError`` when there is none (or
        ``api_key`` is not an apiKey at all: a request header given to encode may hold anything)."""
        try:
            return self._by_key[kind][api_key]
        except KeyError:
            raise KeyError(f"no {kind} spec with apiKey {api_key}") from None

    def plan(self, name: str, version: int) -> StructPlan:
        """The compiled layout of a message at a version (cached); ``ValueError`` for a version
        the spec does not have."""
        key = (name, version)
        plan = self._plans.get(key)
        if plan is None:
            message = self.spec(name)
            if message.removed:
                raise ValueError(f"{name} was removed (validVersions none): it has no version to encode or decode")
            if message.versions is None or not message.versions.contains(version):
                raise ValueError(f"{name} has no version {version} (valid versions: {message.versions})")
            compiler = self._compilers.get(name)
            if compiler is None:
                compiler = self._compilers[name] = MessageCompiler(message)
            with collector_paused():
                plan = self._plans[key] = compiler.compile(version)
        return plan

    def _native(self, name: str, version: int) -> Any:
        """The C accelerator's compiled plan of a message version (cached by name, then version)."""
        native = self.plan(name, version).native_plan(_speedups)
        self._natives.setdefault(name, {})[version] = native
        return native

    def default(self, name: str, version: int) -> dict[str, Any]:
        """The default-constructed message: every field holds its spec or type default.

        >>> Codec.load("fixtures/valid").default("WidgetFetchRequest", 1)
        {'replicaId': -1, 'groupId': '', 'maxWaitMs': 500, 'rackId': None, 'topics': []}
        """
        return self.plan(name, version).default()

    def encode(self, name: str, version: int, value: dict[str, Any]) -> bytes:
        """The bytes of a message at a version (no size prefix, no header), as Kafka writes them.

        Tagged fields may be left out (they mean their default); a field the version does not
        have must be ignorable or hold its default. Anything else is an ``EncodeError`` naming
        the field path.

        >>> codec = Codec.load("fixtures/valid")
        >>> value = {"replicaId": -1, "groupId": "g", "maxWaitMs": 500, "rackId": "r1",
        ...          "topics": [{"name": "t", "partitions": [0, 1]}]}
        >>> codec.encode("WidgetFetchRequest", 1, value).hex()
        'ffffffff000167000001f40002723100000001000174000000020000000000000001'
        >>> value["topics"][0]["partitions"][0] = 2**40
        >>> try:
        ...     codec.encode("WidgetFetchRequest", 1, value)
        ... except EncodeError as exc:
        ...     print(exc)
        Topics[0].Partitions[0]: 1099511627776 is out of the int32 range -2147483648 to 2147483647
        """
        if _speedups is not None:
            native = self._natives.get(name, _NO_PLANS).get(version) or self._native(name, version)
            try:
                encoded: bytes = _speedups.encode_struct(native, value)
                return encoded
            except Exception:  # noqa: BLE001, S110 - anything unusual: the reference path decides, precisely
                pass
        plan = self.plan(name, version)
        out = bytearray()
        plan.encode(value, out)
        return bytes(out)

    def decode(self, name: str, version: int, data: bytes | bytearray | memoryview) -> dict[str, Any]:
        """The value of a message's bytes at a version; the message must use every byte.

        Bytes that are not a valid encoding raise ``DecodeError`` with the byte ``offset`` and the
        field ``path`` where reading failed.

        >>> codec = Codec.load("fixtures/valid")
        >>> data = bytes.fromhex("ffffffff000167000001f40002723100000001000174000000020000000000000001")
        >>> codec.decode("WidgetFetchRequest", 1, data)["topics"]
        [{'name': 't', 'partitions': [0, 1]}]
        >>> try:
        ...     codec.decode("WidgetFetchRequest", 1, data[:-3])
        ... except DecodeError as exc:
        ...     print(exc.offset, exc.path)
        22 Topics[0].Partitions
        """
        buf = data if type(data) is bytes else bytes(data)
        if _speedups is not None:
            native = self._natives.get(name, _NO_PLANS).get(version) or self._native(name, version)
            try:
                decoded: dict[str, Any] = _speedups.decode_message(native, buf)
                return decoded
            except Exception:  # noqa: BLE001, S110 - anything unusual: the reference path decides, precisely
                pass
        return self._whole(self.plan(name, version), buf, 0)

    def to_json(self, name: str, version: int, value: dict[str, Any]) -> dict[str, Any]:
        """Kafka's JsonConverter form of a value (base64 bytes, base64url uuids, tagged defaults left out).

        >>> codec = Codec.load("fixtures/valid")
        >>> codec.to_json("WidgetFetchRequest", 2, codec.default("WidgetFetchRequest", 2))
        {'replicaId': -1, 'groupId': '', 'maxWaitMs': 500, 'rackId': None, 'topics': []}
        """
        return self.plan(name, version).to_json(value)

    def from_json(self, name: str, version: int, data: Any) -> dict[str, Any]:
        """The value of Kafka's JSON form (as ``json.loads`` returns it); missing tagged fields get
        their defaults.

        >>> codec = Codec.load("fixtures/valid")
        >>> value = codec.from_json("WidgetFetchRequest", 2, {"replicaId": 1, "groupId": "g", "maxWaitMs": 0,
        ...                                                   "rackId": None, "topics": []})
        >>> value["clientSoftwareLabel"] is None
        True
        """
        return self.plan(name, version).from_json(data)

    def request_header_version(self, api_key: int, api_version: int) -> int:
        """The request header version: the API's ``headerVersions`` entry (KIP-1313), else 2 in its
        flexible versions and 1 in the others (KIP-482).

        >>> codec = Codec.load("fixtures/valid")
        >>> codec.request_header_version(1000, 1), codec.request_header_version(1000, 2)
        (1, 2)
        """
        return self._header_version("request", api_key, api_version)

    def response_header_version(self, api_key: int, api_version: int) -> int:
        """The response header version: the API's ``headerVersions`` entry (KIP-1313), else 1 in its
        flexible versions and 0 in the others (ApiVersions: always 0, KIP-511).

        >>> codec = Codec.load("fixtures/valid")
        >>> codec.response_header_version(1000, 1), codec.response_header_version(1000, 2)
        (0, 1)
        """
        return self._header_version("response", api_key, api_version)

    def _header_version(self, kind: str, api_key: Hashable, api_version: int) -> int:
        version = header_version(self._keyed(kind, api_key)[1], api_version)
        if version is None:  # not reached: every request and response has a header version
            raise SpecError(f"no {kind} header version for apiKey {api_key}")
        return version

    def encode_request(self, api_version: int, header: dict[str, Any], body: dict[str, Any],
                       name: str | None = None) -> bytes:
        """A whole request frame: int32 size, request header, body (example: the class docstring).

        The API comes from ``name``, else from the header's ``requestApiKey``; the header's
        ``requestApiKey`` and ``requestApiVersion`` are then set from it and ``api_version``."""
        if name is None:
            name, message = self._keyed("request", header.get("requestApiKey"))
        else:
            message = self.spec(name)
        header = {**header, "requestApiKey": message.api_key, "requestApiVersion": api_version}
        payload = self.encode("RequestHeader", self._header_version("request", message.api_key, api_version), header)
        payload += self.encode(name, api_version, body)
        return INT32.pack(len(payload)) + payload

    def decode_request(self, frame: bytes) -> tuple[str, int, dict[str, Any], dict[str, Any]]:
        """(name, API version, header, body) of a request frame; ``DecodeError`` offsets count from its start."""
        buf = self._unframe(frame)
        with _frame_offsets():
            need(buf, 0, 4, "request header")
            api_key, api_version = INT16.unpack_from(buf, 0)[0], INT16.unpack_from(buf, 2)[0]
            name = self._decoded_name("request", api_key)
            version = self.request_header_version(api_key, api_version)
            header, pos = self.plan("RequestHeader", version).decode(buf, 0)
            return name, api_version, header, self._decode_at(name, api_version, buf, pos)

    def encode_response(self, api_key: int, api_version: int, header: dict[str, Any], body: dict[str, Any]) -> bytes:
        """A whole response frame: int32 size, response header, body. A response does not name its
        API, so the key and version are those of its request (example: the class docstring)."""
        name = self._keyed("response", api_key)[0]
        payload = self.encode("ResponseHeader", self.response_header_version(api_key, api_version), header)
        payload += self.encode(name, api_version, body)
        return INT32.pack(len(payload)) + payload

    def decode_response(self, api_key: int, api_version: int, frame: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """(header, body) of a response frame; the API key and version are its request's (see the class docstring)."""
        buf = self._unframe(frame)
        with _frame_offsets():
            name = self._decoded_name("response", api_key)
            version = self.response_header_version(api_key, api_version)
            header, pos = self.plan("ResponseHeader", version).decode(buf, 0)
            return header, self._decode_at(name, api_version, buf, pos)

    def _decoded_name(self, kind: str, api_key: int) -> str:
        """The message a frame's API key names; an unknown key is a ``DecodeError`` (at the payload), not a KeyError."""
        try:
            return self._keyed(kind, api_key)[0]
        except KeyError as exc:
            raise DecodeError(str(exc.args[0]), 0) from None

    def encode_record(self, api_key: int, key: dict[str, Any], value: dict[str, Any] | None,
                      value_version: int | None = None) -> tuple[bytes, bytes | None]:
        """A coordinator record as its log stores it (Kafka 4.1+ ``coordinator-key``/``-value`` specs):
        the key is the record type (``api_key``) as an int16 then the key at version 0; the value is its
        version as an int16 (default: the highest) then the value at that version; a ``None`` value
        is a tombstone and stays ``None``.

        >>> codec = Codec.load("fixtures/valid")
        >>> key, value = codec.encode_record(7, {"groupId": "g", "widgetId": 3}, {"count": 5}, value_version=0)
        >>> key.hex(), value.hex()  # type 7, "g", 3; version 0, count 5, no tagged fields
        ('000700016700000003', '0000000000000000000500')
        >>> codec.decode_record(key, value).value
        {'count': 5}
        """
        key_name = self._keyed("coordinator-key", api_key)[0]
        key_bytes = INT16.pack(api_key) + self.encode(key_name, 0, key)
        if value is None:
            return key_bytes, None
        value_name, value_spec = self._keyed("coordinator-value", api_key)
        version = value_version
        if version is None:
            if value_spec.versions is None:
                raise SpecError(f"{value_name} has no valid versions")
            version = value_spec.versions.highest
        return key_bytes, INT16.pack(version) + self.encode(value_name, version, value)

    def decode_record(self, key: bytes | bytearray | memoryview, value: bytes | bytearray | memoryview | None
                      ) -> CoordinatorRecord:
        """A coordinator record from its key and value bytes (``None``: a tombstone). ``DecodeError``
        offsets count from the start of the key or of the value, and the path starts with ``key`` or
        ``value``; an unknown record type or value version is a ``DecodeError`` at byte 0."""
        key_buf, api_key = bytes(key), None
        try:
            need(key_buf, 0, 2, "record type")
            api_key = INT16.unpack_from(key_buf, 0)[0]
            key_name = self._spec_at("coordinator-key", api_key, 0, "record type")
            key_value = self._whole(self.plan(key_name, 0), key_buf, 2)  # offsets from the type's first byte
        except DecodeError as exc:
            raise exc.at("key") from None
        if value is None:
            return CoordinatorRecord(api_key, key_name, key_value, None, None, None)
        value_buf = bytes(value)
        try:
            need(value_buf, 0, 2, "value version")
            version = INT16.unpack_from(value_buf, 0)[0]
            value_name = self._spec_at("coordinator-value", api_key, version, "value version")
            decoded = self._whole(self.plan(value_name, version), value_buf, 2)
        except DecodeError as exc:
            raise exc.at("value") from None
        return CoordinatorRecord(api_key, key_name, key_value, value_name, version, decoded)

    def _spec_at(self, kind: str, api_key: int, version: int, what: str) -> str:
        """The name of the ``kind`` spec of a record type that has ``version``, or a ``DecodeError`` at byte 0."""
        try:
            name, spec = self._keyed(kind, api_key)
        except KeyError:
            raise DecodeError(f"{what} {api_key}: no {kind} spec with apiKey {api_key}", 0) from None
        if spec.versions is None or not spec.versions.contains(version):
            raise DecodeError(f"{what}: {name} has no version {version} (valid versions: {spec.versions})", 0)
        return name

    def _decode_at(self, name: str, version: int, buf: bytes, pos: int) -> dict[str, Any]:
        try:
            plan = self.plan(name, version)
        except ValueError as exc:
            raise DecodeError(str(exc), pos) from None
        return self._whole(plan, buf, pos)

    @staticmethod
    def _whole(plan: StructPlan, buf: bytes, pos: int) -> dict[str, Any]:
        """Decode with the reference plan; the message must use every remaining byte."""
        ALLOWANCE.fresh()
        value, end = plan.decode(buf, pos)
        if end != len(buf):
            raise DecodeError(f"{len(buf) - end} trailing bytes after the message", end)
        return value

    @staticmethod
    def _unframe(frame: bytes | bytearray | memoryview) -> bytes:
        buf = bytes(frame)
        need(buf, 0, 4, "frame size")
        size = INT32.unpack_from(buf, 0)[0]
        if size < 0 or size != len(buf) - 4:
            raise DecodeError(f"frame size {size} does not match the {len(buf) - 4} bytes that follow", 0)
        return buf[4:]


@contextmanager
def _frame_offsets() -> Iterator[None]:
    """Decode errors inside a frame report offsets from the frame's first byte (the size's first byte)."""
    try:
        yield
    except DecodeError as exc:
        exc.offset += 4
        raise


__all__ = ["Codec", "CoordinatorRecord", "DecodeError", "EncodeError", "SpecError"]
