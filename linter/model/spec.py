"""The immutable spec model: ``FieldSpec``, ``StructSpec``, ``MessageSpec``.

Unlike Kafka's constructors, building never stops at the first problem: a value that
cannot be bound or parsed is kept as ``None`` and the problem is recorded as an
``Issue`` for the rule that owns it. Structural problems (unknown keys, wrong JSON kinds,
bad enum values) are the JSON Schema's job (``linter.model.schema``); the builder only
binds what it can.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from linter.model.jackson import BindError, as_bool, as_enum, as_int, as_list, as_string
from linter.model.types import FieldType, TypeSyntaxError
from linter.model.versions import (
    NONE,
    Versions,
    VersionsError,
    java_trim,
    parse_short,
    shown,
)
from linter.parse.jsonc import JsonPath

_parse_versions = lru_cache(maxsize=4096)(Versions.parse)  # specs repeat "0+" thousands of times
_parse_type = lru_cache(maxsize=4096)(FieldType.parse)


@lru_cache(maxsize=4096)
def _versions_prop(text: str | None, default: Versions | None) -> VersionsProp:
    """The immutable property of a version text, shared by every field that writes it the same way."""
    return VersionsProp(text, _parse_versions(text, default))

MESSAGE_TYPES = ("request", "response", "header", "data", "metadata", "coordinator-key", "coordinator-value")
RPC_TYPES = ("request", "response")
COORDINATOR_TYPES = ("coordinator-key", "coordinator-value")
ENTITY_TYPES = ("unknown", "transactionalId", "producerId", "groupId", "topicName", "brokerId")
LISTENERS = ("zkBroker", "broker", "controller")


@dataclass(frozen=True, slots=True)
class Issue:
    """A problem found while building the model, for the check named ``check``."""

    check: str
    path: JsonPath
    message: str
    at_key: bool = False


@dataclass(frozen=True, slots=True)
class VersionsProp:
    """A version-range property as written and as parsed (``None`` when absent or invalid)."""

    text: str | None
    value: Versions | None

    @property
    def given(self) -> bool:
        return self.text is not None and self.text.strip() != ""


@dataclass(frozen=True, slots=True)
class HeaderRange:
    """One entry of ``headerVersions``: API versions (``None`` when unparseable) -> header version."""

    key: str
    versions: Versions | None
    header: int | None


@dataclass(frozen=True, slots=True)
class HeaderVersions:
    """The ``headerVersions`` map (KIP-1313) in file order; ``lookup`` is the header of a version."""

    ranges: tuple[HeaderRange, ...]
    _starts: tuple[int, ...] = field(default=(), compare=False, repr=False)
    _sorted: tuple[HeaderRange, ...] = field(default=(), compare=False, repr=False)
    _spans: tuple[tuple[Versions, int | None], ...] = field(default=(), compare=False, repr=False)  # of _sorted

    def __post_init__(self) -> None:
        parsed = sorted(((r.versions, r) for r in self.ranges if r.versions is not None), key=lambda pair: pair[0].lowest)
        object.__setattr__(self, "_sorted", tuple(r for _, r in parsed))
        object.__setattr__(self, "_spans", tuple((versions, r.header) for versions, r in parsed))
        object.__setattr__(self, "_starts", tuple(versions.lowest for versions, _ in parsed))

    @property
    def ordered(self) -> tuple[HeaderRange, ...]:
        """The entries whose key parses, by their first version."""
        return self._sorted

    def lookup(self, version: int) -> int | None:
        """The header version of ``version``: a binary search over a valid map (a frame pays log n however
        long it is); a map with gaps or overlaps (an error, KL213) is scanned in version order."""
        index = bisect_right(self._starts, version) - 1
        if index >= 0:
            versions, header = self._spans[index]
            if versions.contains(version):
                return header
        return next((header for versions, header in self._spans if versions.contains(version)), None)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    path: JsonPath
    name: str | None
    type_text: str | None
    type: FieldType | None
    versions: Versions | None  # effective: ``versions``, else ``taggedVersions``
    versions_prop: VersionsProp
    tagged_versions: Versions | None
    nullable_versions: Versions | None
    flexible_versions: VersionsProp  # field-level override (string/bytes only)
    fields: tuple[FieldSpec, ...]
    has_fields: bool  # a non-empty ``fields`` list was given
    map_key: bool
    ignorable: bool
    zero_copy: bool
    default: str  # "" when absent, as Kafka
    default_given: bool
    entity_type: str | None
    about: str | None
    tag: int | None
    raw: dict[str, Any]

    @property
    def tagged(self) -> bool:
        return self.tag is not None and self.tagged_versions is not None and not self.tagged_versions.empty

    def child(self, *keys: str | int) -> JsonPath:
        return (*self.path, *keys)


@dataclass(frozen=True, slots=True)
class StructSpec:
    """A named list of fields: the message body, a common struct, or an inline struct."""

    path: JsonPath
    name: str | None
    versions: Versions | None
    fields: tuple[FieldSpec, ...]
    kind: str  # "message" | "common" | "inline"
    fields_path: JsonPath = ()


@dataclass(frozen=True, slots=True)
class MessageSpec:
    path: str  # file path, for findings and cross-file checks
    name: str | None
    type: str | None
    api_key: int | None
    valid_versions: VersionsProp
    flexible_versions: VersionsProp
    deprecated_versions: VersionsProp
    struct: StructSpec
    common_structs: tuple[StructSpec, ...]
    listeners: tuple[str, ...]
    latest_version_unstable: bool
    raw: dict[str, Any]
    issues: tuple[Issue, ...] = field(default=())
    header_versions: HeaderVersions | None = None  # None when absent (or not a JSON object)

    @property
    def removed(self) -> bool:
        """A removed API or record (``"validVersions": "none"``): no versions, its apiKey kept reserved."""
        return self.valid_versions.value is not None and self.valid_versions.value.empty

    @property
    def fields(self) -> tuple[FieldSpec, ...]:
        return self.struct.fields

    @property
    def versions(self) -> Versions | None:
        return self.valid_versions.value

    @property
    def flexible(self) -> Versions:
        """Flexible versions as Kafka uses them: ``none`` when missing or invalid."""
        return self.flexible_versions.value or NONE

    def all_structs(self) -> Iterator[StructSpec]:
        """The message body, the common structs and every inline struct, depth first."""
        yield self.struct
        yield from _inline_structs(self.struct)
        for common in self.common_structs:
            yield common
            yield from _inline_structs(common)

    def all_fields(self) -> Iterator[tuple[FieldSpec, StructSpec]]:
        """Every field with the struct that contains it."""
        for struct in self.all_structs():
            for spec in struct.fields:
                yield spec, struct


def _inline_structs(struct: StructSpec) -> Iterator[StructSpec]:
    for spec in struct.fields:
        if spec.type is not None and spec.type.struct_name is not None:
            inline = StructSpec(spec.path, spec.type.name, spec.versions, spec.fields, "inline", spec.child("fields"))
            yield inline
            yield from _inline_structs(inline)
        elif spec.fields:
            yield from _inline_structs(StructSpec(spec.path, None, spec.versions, spec.fields, "inline"))


_ABSENT = {default: VersionsProp(None, default) for default in (None, NONE)}
_NO_FLAGS_GIVEN, _NO_FLAGS = (None, None, None), (False, False, False)


class _Builder:
    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def issue(self, check: str, path: JsonPath, message: str, at_key: bool = False) -> None:
        self.issues.append(Issue(check, path, message, at_key))

    def bound(self, fn: Callable[..., Any], raw: dict[str, Any], key: str, *args: Any) -> Any:
        """Bind one property; a bind problem is the schema's to report, so it just reads as absent."""
        value = raw.get(key)
        if value is None:
            return False if fn is as_bool else None
        if fn is as_string and type(value) is str:
            return value
        try:
            return fn(value, key, *args)
        except BindError:
            return None if fn is not as_bool else False

    def versions(self, raw: dict[str, Any], key: str, path: JsonPath, default: Versions | None) -> VersionsProp:
        if key not in raw:
            return _ABSENT[default]
        text = self.text(raw, key)
        try:
            return _versions_prop(text, default)
        except VersionsError as exc:
            self.issue("version-syntax", (*path, key), f'invalid {key} "{shown(text or "")}": {exc}')
            return VersionsProp(text, None)

    def field(self, raw: Any, path: JsonPath) -> FieldSpec | None:
        if not isinstance(raw, dict):
            return None  # the schema reports a field that is not an object
        text = self.text  # the common case of each property inline: a lint binds thousands of fields
        name = text(raw, "name")
        tagged = self.versions(raw, "taggedVersions", path, NONE)
        tagged_value = tagged.value if tagged.value is not None else (NONE if not tagged.given else None)
        versions_prop = self.versions(raw, "versions", path, None)
        versions = versions_prop.value
        if versions is None and not versions_prop.given and tagged_value is not None and not tagged_value.empty:
            versions = tagged_value
        type_text = text(raw, "type")
        field_type = None
        if type_text is not None:
            try:
                field_type = _parse_type(type_text)
            except TypeSyntaxError as exc:
                check = "array-of-arrays" if exc.array_of_arrays else "type-syntax"
                self.issue(check, (*path, "type"), f'invalid type "{shown(type_text)}": {exc}')
        nested = raw.get("fields")
        default = text(raw, "default")
        map_key, ignorable, zero_copy = self.flags(raw)
        return FieldSpec(
            path=path,
            name=name,
            type_text=type_text,
            type=field_type,
            versions=versions,
            versions_prop=versions_prop,
            tagged_versions=tagged_value,
            nullable_versions=self.versions(raw, "nullableVersions", path, NONE).value,
            flexible_versions=self.versions(raw, "flexibleVersions", path, None),
            fields=self.struct_fields(raw, path) if nested is not None else (),
            has_fields=isinstance(nested, (list, dict)) and bool(nested),
            map_key=map_key,
            ignorable=ignorable,
            zero_copy=zero_copy,
            default=default if default is not None else "",
            default_given=default is not None,
            entity_type=self.bound(as_enum, raw, "entityType", ENTITY_TYPES) if "entityType" in raw else None,
            about=text(raw, "about"),
            tag=self.bound(as_int, raw, "tag", 32) if "tag" in raw else None,
            raw=raw,
        )

    def text(self, raw: dict[str, Any], key: str) -> str | None:
        """``bound(as_string, raw, key)``, a string read without a call to bind it."""
        value = raw.get(key)
        return value if value is None or type(value) is str else self.bound(as_string, raw, key)

    def flags(self, raw: dict[str, Any]) -> tuple[bool, bool, bool]:
        """mapKey, ignorable and zeroCopy, each bound as a boolean (absent: false)."""
        given = (raw.get("mapKey"), raw.get("ignorable"), raw.get("zeroCopy"))
        if given == _NO_FLAGS_GIVEN:
            return _NO_FLAGS
        return tuple(flag if type(flag) is bool else self.bound(as_bool, raw, key)  # type: ignore[return-value]
                     for flag, key in zip(given, ("mapKey", "ignorable", "zeroCopy")))

    def fields(self, items: list[Any], path: JsonPath, bare: bool = False) -> tuple[FieldSpec, ...]:
        if bare:  # a single object given where a list was expected: Jackson wraps it
            built = self.field(items[0], path) if items else None
            return (built,) if built is not None else ()
        each = (self.field(item, (*path, index)) for index, item in enumerate(items))
        return tuple(spec for spec in each if spec is not None)

    def struct_fields(self, raw: dict[str, Any], path: JsonPath) -> tuple[FieldSpec, ...]:
        value = raw.get("fields")
        if isinstance(value, (str, int, float, bool)):
            return ()
        return self.fields(as_list(value), (*path, "fields"), bare=isinstance(value, dict))

    def common_struct(self, raw: Any, path: JsonPath) -> StructSpec | None:
        if not isinstance(raw, dict):
            return None
        return StructSpec(
            path=path,
            name=self.bound(as_string, raw, "name"),
            versions=self.versions(raw, "versions", path, None).value,
            fields=self.struct_fields(raw, path),
            kind="common",
            fields_path=(*path, "fields"),
        )

    def message(self, raw: dict[str, Any], file: str) -> MessageSpec:
        root: JsonPath = ()
        valid = self.versions(raw, "validVersions", root, None)
        commons_raw = raw.get("commonStructs")
        commons_list = [] if isinstance(commons_raw, (str, int, float, bool)) else as_list(commons_raw)
        commons_path: JsonPath = ("commonStructs",)
        commons: tuple[StructSpec | None, ...]
        if isinstance(commons_raw, dict):
            commons = (self.common_struct(commons_raw, commons_path),)
        else:
            commons = tuple(self.common_struct(item, (*commons_path, i)) for i, item in enumerate(commons_list))
        listeners_raw = raw.get("listeners")
        listeners = tuple(item for item in as_list(listeners_raw) if isinstance(item, str))
        name = self.bound(as_string, raw, "name")
        return MessageSpec(
            path=file,
            name=name,
            type=self.bound(as_enum, raw, "type", MESSAGE_TYPES),
            api_key=self.bound(as_int, raw, "apiKey", 16),
            valid_versions=valid,
            flexible_versions=self.versions(raw, "flexibleVersions", root, NONE),
            deprecated_versions=self.versions(raw, "deprecatedVersions", root, NONE),
            struct=StructSpec(root, name, valid.value, self.struct_fields(raw, root), "message", ("fields",)),
            common_structs=tuple(c for c in commons if c is not None),
            listeners=listeners,
            latest_version_unstable=self.bound(as_bool, raw, "latestVersionUnstable"),
            raw=raw,
            header_versions=self.header_versions(raw.get("headerVersions")),
            issues=tuple(self.issues),
        )

    def header_versions(self, raw: Any) -> HeaderVersions | None:
        """Bind ``headerVersions``; a key or value that does not parse is ``None`` in its entry and an issue."""
        if not isinstance(raw, dict):
            return None
        ranges = []
        for key, value in raw.items():
            path = ("headerVersions", key)
            try:
                versions = _parse_versions(key, None)
                if versions is None or versions.empty:
                    raise VersionsError("it contains no version")
            except VersionsError as exc:
                self.issue("header-versions-syntax", path, f'headerVersions range "{key}" is invalid: {exc}', at_key=True)
                versions = None
            ranges.append(HeaderRange(key, versions, self.header_number(value, path)))
        return HeaderVersions(tuple(ranges))

    def header_number(self, value: Any, path: JsonPath) -> int | None:
        text = value if isinstance(value, str) else None
        if isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        try:
            if text is None:
                raise VersionsError("it is not a number")
            header = parse_short(java_trim(text))
            if header < 0:
                raise VersionsError("it is negative")
            return header
        except VersionsError as exc:
            self.issue("header-versions-syntax", path, f"header version {json.dumps(value)} is invalid: {exc}")
            return None


def build_message(raw: dict[str, Any], file: str) -> MessageSpec:
    """Bind a parsed spec object into the model, collecting problems instead of raising."""
    return _Builder().message(raw, file)
