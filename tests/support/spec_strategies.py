"""Hypothesis strategies for random, valid Apache Kafka message specs (as JSON dicts).

Specs are lint-clean under ``krpc-lint --profile kafka`` *by construction* (no filtering):

* ``validVersions`` is ``0-N`` (N <= 4); ``flexibleVersions`` is ``none`` or ``K+`` with K <= N;
* field versions are ``a+`` or ``a-b`` inside their parent's versions (message or struct);
* ``nullableVersions`` only on string, bytes, records, arrays and structs, always ``c+`` with c
  inside the field's versions;
* tagged fields only where the message is flexible, with ``versions`` = ``taggedVersions`` = ``t+``
  (open-ended), inside an open-ended parent, tags 0, 1, 2... per struct, never records, never a
  map key, nullable in all tagged versions or none;
* a field-level ``flexibleVersions`` override on some string and bytes fields, within the
  message's;
* defaults only on scalars (ints in range, bools, floats, strings; ``"null"`` only on strings
  nullable in every version);
* every field and struct name is unique in the whole spec (``F<n>``, ``S<n>``): a field's name
  is its identity, which the compatibility property test relies on;
* an inline struct sometimes lives in ``commonStructs`` instead (``versions: "0+"``) when it has
  no inline struct of its own (KL604).

A request (with ``apiKey``) needs its response to lint cleanly (KL703): ``lint_files`` adds a
minimal one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

MAX_VERSION = 4
INT_RANGES = {"int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
              "int64": (-(2**63), 2**63 - 1), "uint16": (0, 2**16 - 1)}
SCALARS = ("bool", "int8", "int16", "int32", "int64", "uint16", "float64", "string", "bytes", "uuid")
ARRAY_ELEMENTS = ("int8", "int16", "int32", "int64", "uint16", "float64", "string", "uuid", "bool")
NULLABLE_SCALARS = ("string", "bytes", "records")
ENTITY_TYPES = {"string": ("topicName", "groupId", "transactionalId"), "int64": ("producerId",),
                "int32": ("brokerId",)}
REQUEST_NAME, RESPONSE_NAME, DATA_NAME = "ExampleRequest", "ExampleResponse", "ExampleRecord"


# --- version ranges ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    """Versions ``low..high`` as the spec writes them (``open``: ``low+``)."""

    low: int
    high: int  # the highest valid version when open
    open: bool

    def text(self) -> str:
        return f"{self.low}+" if self.open else f"{self.low}-{self.high}"

    def contains(self, version: int) -> bool:
        return self.low <= version and (self.open or version <= self.high)


def parse_range(text: str | None, top: int) -> Range | None:
    """``"a+"``, ``"a-b"``, ``"a"``; ``None`` for missing or ``none``; ``top`` closes open ranges."""
    if text is None or text.strip() in ("", "none"):
        return None
    text = text.strip()
    if text.endswith("+"):
        return Range(int(text[:-1]), top, True)
    low, _, high = text.partition("-")
    return Range(int(low), int(high or low), False)


def field_versions(spec: dict[str, Any], top: int) -> Range | None:
    """A field's versions: ``versions``, else its ``taggedVersions`` (as Kafka)."""
    return parse_range(spec.get("versions") or spec.get("taggedVersions"), top)


def max_version(message: dict[str, Any]) -> int:
    return parse_range(message["validVersions"], MAX_VERSION + 8).high


def flexible_low(message: dict[str, Any]) -> int | None:
    found = parse_range(message.get("flexibleVersions"), MAX_VERSION + 8)
    return None if found is None else found.low


# --- the generator ----------------------------------------------------------------------------------


@dataclass
class FieldGenerator:
    draw: Any
    top: int  # the highest valid version
    flexible: int | None  # K of "K+", or None
    fields_made: int = 0
    structs_made: int = 0
    common: list[dict[str, Any]] = field(default_factory=list)

    def name(self) -> str:
        self.fields_made += 1
        return f"F{self.fields_made}"

    def struct_name(self) -> str:
        self.structs_made += 1
        return f"S{self.structs_made}"

    def fields(self, parent: Range, depth: int, in_array: bool, low: int, high: int) -> list[dict[str, Any]]:
        draw = self.draw
        count = draw(st.integers(low, high))
        tags = [0]
        out = [self.field(parent, depth, in_array, tags) for _ in range(count)]
        if in_array and draw(st.integers(0, 4)) == 0:  # a map key on one scalar member
            keys = [f for f in out if f["type"] in ("int32", "string", "int16") and "tag" not in f]
            if keys:
                keys[0]["mapKey"] = True
        return out

    def versions(self, parent: Range) -> Range:
        draw = self.draw
        low = draw(st.integers(parent.low, parent.high))
        if parent.open and draw(st.integers(0, 9)) < 7:
            return Range(low, self.top, True)
        return Range(low, draw(st.integers(low, parent.high)), False)

    def can_tag(self, parent: Range) -> bool:
        return parent.open and self.flexible is not None and max(self.flexible, parent.low) <= self.top

    def field(self, parent: Range, depth: int, in_array: bool, tags: list[int],
              tagged: bool | None = None) -> dict[str, Any]:
        """A random field inside ``parent``; ``tags[0]`` is the struct's next tag; ``tagged`` forces
        a tagged (True) or regular (False) field."""
        draw = self.draw
        spec: dict[str, Any] = {"name": self.name()}
        kinds = ["scalar"] * 6 + ["array"] * 2 + ["records"] * (1 if depth == 0 and not tagged else 0)
        if depth < 2:
            kinds += ["struct", "struct_array"]
        kind = draw(st.sampled_from(kinds))
        tag_from = None if self.flexible is None else max(self.flexible, parent.low)
        if tagged is None:
            tagged = kind != "records" and self.can_tag(parent) and draw(st.integers(0, 3)) == 0
        if tagged:
            low = draw(st.integers(tag_from, self.top))
            versions = Range(low, self.top, True)
            spec["versions"] = versions.text()
            spec["taggedVersions"] = versions.text()
            spec["tag"] = tags[0]
            tags[0] += 1
        else:
            versions = self.versions(parent)
            spec["versions"] = versions.text()
        if kind == "scalar":
            spec["type"] = draw(st.sampled_from(SCALARS))
        elif kind == "records":
            spec["type"] = "records"
        elif kind == "array":
            spec["type"] = "[]" + draw(st.sampled_from(ARRAY_ELEMENTS))
        else:
            struct = self.struct_name()
            spec["type"] = ("[]" if kind == "struct_array" else "") + struct
            members = self.fields(versions, depth + 1, kind == "struct_array", 1, 3)
            if not any("fields" in m for m in members) and draw(st.integers(0, 4)) == 0:
                self.common.append({"name": struct, "versions": "0+", "fields": members})
            else:
                spec["fields"] = members
        base = spec["type"].removeprefix("[]")
        nullable_kind = spec["type"].startswith("[]") or base in NULLABLE_SCALARS or kind == "struct"
        if nullable_kind and draw(st.integers(0, 3)) == 0:
            start = versions.low if tagged else draw(st.integers(versions.low, versions.high))
            spec["nullableVersions"] = f"{start}+"
        self.annotate(spec, versions, tagged, in_array)
        return spec

    def annotate(self, spec: dict[str, Any], versions: Range, tagged: bool, in_array: bool) -> None:
        draw = self.draw
        type_name = spec["type"]
        base = type_name.removeprefix("[]")
        if not type_name.startswith("[]") and draw(st.integers(0, 2)) == 0:
            default = self.default(type_name, spec.get("nullableVersions"), versions)
            if default is not None:
                spec["default"] = default
        if base in ENTITY_TYPES and draw(st.integers(0, 5)) == 0:
            spec["entityType"] = draw(st.sampled_from(ENTITY_TYPES[base]))
        if draw(st.integers(0, 6)) == 0:
            spec["ignorable"] = True
        if type_name == "bytes" and draw(st.integers(0, 6)) == 0:
            spec["zeroCopy"] = True
        if type_name in ("string", "bytes") and not tagged and draw(st.integers(0, 7)) == 0:
            # a field-level override, within the message's flexible versions (KL207)
            lows = [] if self.flexible is None else list(range(self.flexible, self.top + 1))
            spec["flexibleVersions"] = draw(st.sampled_from(["none", *(f"{low}+" for low in lows)]))
        if draw(st.integers(0, 3)) == 0:
            spec["about"] = draw(st.sampled_from(["The id.", "The name of the thing.", "Whatever."]))

    def default(self, type_name: str, nullable: str | None, versions: Range) -> str | None:
        draw = self.draw
        if type_name in INT_RANGES:
            low, high = INT_RANGES[type_name]
            return str(draw(st.one_of(st.integers(max(low, -3), 3), st.integers(low, high))))
        if type_name == "bool":
            return draw(st.sampled_from(["true", "false"]))
        if type_name == "float64":
            return draw(st.sampled_from(["1.5", "-2.0", "0.25", "1e3"]))
        if type_name == "string":
            everywhere = nullable is not None and parse_range(nullable, self.top).low <= versions.low
            choices = ["abc", "x", "hello world"] + (["null"] if everywhere else [])
            return draw(st.sampled_from(choices))
        return None


@st.composite
def message_specs(draw, max_version: int = MAX_VERSION) -> dict[str, Any]:
    """A random valid message spec: a request (with apiKey) or a data record."""
    top = draw(st.integers(0, max_version))
    flexible = draw(st.one_of(st.none(), st.integers(0, top)))
    gen = FieldGenerator(draw, top, flexible)
    request = draw(st.booleans())
    spec: dict[str, Any] = {}
    if request:
        spec["apiKey"] = draw(st.integers(0, 90))
    spec["type"] = "request" if request else "data"
    spec["name"] = REQUEST_NAME if request else DATA_NAME
    spec["validVersions"] = f"0-{top}"
    spec["flexibleVersions"] = "none" if flexible is None else f"{flexible}+"
    spec["fields"] = gen.fields(Range(0, top, True), 0, False, 1, 5)
    if gen.common:
        spec["commonStructs"] = gen.common
    return spec


# --- linting ------------------------------------------------------------------------------------------


def lint_files(spec: dict[str, Any]) -> dict[str, str]:
    """The spec as files to lint: a request comes with a minimal matching response (KL703)."""
    files = {f"{spec['name']}.json": json.dumps(spec, indent=2)}
    if spec.get("type") == "request":
        response = {"apiKey": spec["apiKey"], "type": "response", "name": RESPONSE_NAME,
                    "validVersions": spec["validVersions"], "flexibleVersions": spec["flexibleVersions"],
                    "fields": []}
        files[f"{RESPONSE_NAME}.json"] = json.dumps(response)
    return files


# --- walking a spec -------------------------------------------------------------------------------------


@dataclass
class Scope:
    """One list of fields (the message body or a struct's members) with where it lives."""

    fields: list[dict[str, Any]]
    versions: Range  # the versions of its owner (message or struct field)
    owner: dict[str, Any] | None  # the struct field, None for the message body
    in_array: bool  # the members of an array's element struct
    common: dict[str, Any] | None  # the commonStructs entry holding the members
    depth: int  # 0 for the message body

    def next_tag(self) -> int:
        return 1 + max((f["tag"] for f in self.fields if "tag" in f), default=-1)


def struct_members(spec: dict[str, Any], message: dict[str, Any]) -> tuple[list[dict[str, Any]], dict | None] | None:
    """The members of a struct-typed field (inline or in ``commonStructs``) or None for other types."""
    base = spec.get("type", "").removeprefix("[]")
    if not base[:1].isupper():
        return None
    if "fields" in spec:
        return spec["fields"], None
    for common in message.get("commonStructs", []):
        if common["name"] == base:
            return common["fields"], common
    return None


def scopes(message: dict[str, Any]) -> list[Scope]:
    """Every field list of the message, the body first, depth first."""
    top = max_version(message)
    out: list[Scope] = []

    def walk(fields: list[dict[str, Any]], versions: Range, owner, in_array: bool, common, depth: int) -> None:
        out.append(Scope(fields, versions, owner, in_array, common, depth))
        for spec in fields:
            members = struct_members(spec, message)
            if members is not None:
                walk(members[0], field_versions(spec, top), spec, spec["type"].startswith("[]"), members[1],
                     depth + 1)

    walk(message["fields"], Range(0, top, True), None, False, None, 0)
    return out


def all_fields(message: dict[str, Any]) -> list[tuple[dict[str, Any], Scope]]:
    return [(spec, scope) for scope in scopes(message) for spec in scope.fields]


_NUMBERED = re.compile(r'"(?:\[\])?([FS])(\d+)"')


def fresh_names(message: dict[str, Any]) -> tuple[int, int]:
    """The next unused field and struct numbers (``F<n>``, ``S<n>``)."""
    used = {"F": 0, "S": 0}
    for kind, number in _NUMBERED.findall(json.dumps(message)):
        used[kind] = max(used[kind], int(number))
    return used["F"] + 1, used["S"] + 1
