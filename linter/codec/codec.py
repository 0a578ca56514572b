"""``Codec``: encode and decode any Kafka message at any version, straight from the JSON specs.

>>> codec = Codec.load("fixtures/valid")
>>> data = codec.encode("WidgetFetchRequest", 0, codec.default("WidgetFetchRequest", 0))
>>> codec.decode("WidgetFetchRequest", 0, data) == codec.default("WidgetFetchRequest", 0)
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import contextmanager
from typing import Any

from linter.codec.compiler import MessageCompiler, StructPlan
from linter.codec.errors import DecodeError, EncodeError, SpecError
from linter.codec.wire import INT16, INT32, need
from linter.model.spec import MessageSpec

_speedups = None
if not os.environ.get("KRPC_LINT_PURE_PYTHON"):
    try:  # the optional C accelerator (built by setup.py when a compiler is there)
        from linter.codec import _speedups
    except ImportError:
        _speedups = None

_NO_PLANS: dict[int, Any] = {}

# Header versions are derived from the API version, with two historical exceptions.
API_VERSIONS_KEY = 18  # ApiVersionsResponse always uses response header v0 (KIP-511)
CONTROLLED_SHUTDOWN_KEY = 7  # ControlledShutdownRequest v0 uses request header v0


class Codec:
    """Encoders and decoders for a set of message specs, compiled per (message, version) on first use."""

    def __init__(self, messages: Iterable[MessageSpec]) -> None:
        self._messages: dict[str, MessageSpec] = {}
        self._requests: dict[int, MessageSpec] = {}
        self._responses: dict[int, MessageSpec] = {}
        for message in messages:
            if message.name in self._messages:
                raise SpecError(f"two specs define {message.name}: {self._messages[message.name].path} and {message.path}")
            self._messages[message.name] = message
            if message.type == "request" and message.api_key is not None:
                self._requests[message.api_key] = message
            elif message.type == "response" and message.api_key is not None:
                self._responses[message.api_key] = message
        self._compilers: dict[str, MessageCompiler] = {}
        self._plans: dict[tuple[str, int], StructPlan] = {}
        self._natives: dict[str, dict[int, Any]] = {}  # compiled C plans by name, then version

    @classmethod
    def load(cls, *paths: str | os.PathLike) -> Codec:
        """Load spec files and directories; specs with errors (``krpc-lint --profile kafka``) are refused."""
        from linter.engine.config import Config
        from linter.engine.runner import UsageError, lint_with_contexts

        if not paths:
            raise SpecError("no spec files or directories given")
        try:
            report, contexts = lint_with_contexts(list(paths), Config(profile="kafka"))
        except UsageError as exc:
            raise SpecError(str(exc)) from None
        errors = [f for f in report.findings if f.severity == "error"]
        if errors:
            shown = "\n".join(f"  {f.path}:{f.line}:{f.col}: {f.rule} {f.message}" for f in errors[:10])
            more = f"\n  ... and {len(errors) - 10} more" if len(errors) > 10 else ""
            raise SpecError(f"the specs have {len(errors)} error(s); fix them first (krpc-lint lint):\n{shown}{more}")
        return cls(ctx.message for ctx in contexts if ctx.message is not None)

    # --- lookup -----------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return sorted(self._messages)

    def spec(self, name: str) -> MessageSpec:
        try:
            return self._messages[name]
        except KeyError:
            raise KeyError(f"no spec named {name!r}") from None

    def request_for(self, api_key: int) -> MessageSpec:
        try:
            return self._requests[api_key]
        except KeyError:
            raise KeyError(f"no request spec with apiKey {api_key}") from None

    def response_for(self, api_key: int) -> MessageSpec:
        try:
            return self._responses[api_key]
        except KeyError:
            raise KeyError(f"no response spec with apiKey {api_key}") from None

    def plan(self, name: str, version: int) -> StructPlan:
        """The compiled layout of a message at a version (cached)."""
        key = (name, version)
        plan = self._plans.get(key)
        if plan is None:
            message = self.spec(name)
            if message.versions is None or not message.versions.contains(version):
                raise ValueError(f"{name} has no version {version} (valid versions: {message.versions})")
            compiler = self._compilers.get(name)
            if compiler is None:
                compiler = self._compilers[name] = MessageCompiler(message)
            plan = self._plans[key] = compiler.compile(version)
        return plan

    def _native(self, name: str, version: int) -> Any:
        """The C accelerator's compiled plan of a message version (cached by name, then version)."""
        native = self.plan(name, version).native_plan(_speedups)
        self._natives.setdefault(name, {})[version] = native
        return native

    # --- values -----------------------------------------------------------------------------

    def default(self, name: str, version: int) -> dict[str, Any]:
        """The default-constructed message: every field holds its spec or type default."""
        return self.plan(name, version).default()

    def encode(self, name: str, version: int, value: dict[str, Any]) -> bytes:
        if _speedups is not None:
            native = self._natives.get(name, _NO_PLANS).get(version) or self._native(name, version)
            try:
                return _speedups.encode_struct(native, value)
            except Exception:  # noqa: BLE001 - anything unusual: the reference path decides, precisely
                pass
        plan = self.plan(name, version)
        out = bytearray()
        plan.encode(value, out)
        return bytes(out)

    def decode(self, name: str, version: int, data: bytes | bytearray | memoryview) -> dict[str, Any]:
        buf = data if type(data) is bytes else bytes(data)
        if _speedups is not None:
            native = self._natives.get(name, _NO_PLANS).get(version) or self._native(name, version)
            try:
                return _speedups.decode_message(native, buf)
            except Exception:  # noqa: BLE001 - anything unusual: the reference path decides, precisely
                pass
        return self._whole(self.plan(name, version), buf, 0)

    def to_json(self, name: str, version: int, value: dict[str, Any]) -> dict[str, Any]:
        """Kafka's JsonConverter form of a value (base64 bytes, base64url uuids, tagged defaults left out)."""
        return self.plan(name, version).to_json(value)

    def from_json(self, name: str, version: int, data: Any) -> dict[str, Any]:
        return self.plan(name, version).from_json(data)

    # --- headers and frames -------------------------------------------------------------------

    def request_header_version(self, api_key: int, api_version: int) -> int:
        if api_key == CONTROLLED_SHUTDOWN_KEY and api_version == 0:
            return 0
        return 2 if self.request_for(api_key).flexible.contains(api_version) else 1

    def response_header_version(self, api_key: int, api_version: int) -> int:
        if api_key == API_VERSIONS_KEY:
            return 0
        return 1 if self.response_for(api_key).flexible.contains(api_version) else 0

    def encode_request(self, api_version: int, header: dict[str, Any], body: dict[str, Any],
                       name: str | None = None) -> bytes:
        """A whole request frame: int32 size, request header, body. The API comes from the header."""
        api_key = header.get("requestApiKey")
        message = self.request_for(api_key) if name is None else self.spec(name)
        header = {**header, "requestApiKey": message.api_key, "requestApiVersion": api_version}
        payload = self.encode("RequestHeader", self.request_header_version(message.api_key, api_version), header)
        payload += self.encode(message.name, api_version, body)
        return INT32.pack(len(payload)) + payload

    def decode_request(self, frame: bytes) -> tuple[str, int, dict[str, Any], dict[str, Any]]:
        """(request name, API version, header, body) of a whole request frame; offsets count from
        the start of the frame."""
        buf = self._unframe(frame)
        with _frame_offsets():
            need(buf, 0, 4, "request header")
            api_key, api_version = INT16.unpack_from(buf, 0)[0], INT16.unpack_from(buf, 2)[0]
            try:
                message = self.request_for(api_key)
            except KeyError as exc:
                raise DecodeError(str(exc.args[0]), 0) from None
            version = self.request_header_version(api_key, api_version)
            header, pos = self.plan("RequestHeader", version).decode(buf, 0)
            return message.name, api_version, header, self._decode_at(message.name, api_version, buf, pos)

    def encode_response(self, api_key: int, api_version: int, header: dict[str, Any], body: dict[str, Any]) -> bytes:
        message = self.response_for(api_key)
        payload = self.encode("ResponseHeader", self.response_header_version(api_key, api_version), header)
        payload += self.encode(message.name, api_version, body)
        return INT32.pack(len(payload)) + payload

    def decode_response(self, api_key: int, api_version: int, frame: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """(header, body) of a response frame; the API key and version come from its request."""
        buf = self._unframe(frame)
        message = self.response_for(api_key)
        with _frame_offsets():
            version = self.response_header_version(api_key, api_version)
            header, pos = self.plan("ResponseHeader", version).decode(buf, 0)
            return header, self._decode_at(message.name, api_version, buf, pos)

    def _decode_at(self, name: str, version: int, buf: bytes, pos: int) -> dict[str, Any]:
        try:
            plan = self.plan(name, version)
        except ValueError as exc:
            raise DecodeError(str(exc), pos) from None
        return self._whole(plan, buf, pos)

    @staticmethod
    def _whole(plan: StructPlan, buf: bytes, pos: int) -> dict[str, Any]:
        """Decode with the reference plan; the message must use every remaining byte."""
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
def _frame_offsets():
    """Decode errors inside a frame report offsets from the frame's first byte (the size's first byte)."""
    try:
        yield
    except DecodeError as exc:
        exc.offset += 4
        raise


__all__ = ["Codec", "DecodeError", "EncodeError", "SpecError"]
