"""Property: a change the compatibility checker calls compatible never makes cross-decoding diverge.

For a random valid spec (``spec_strategies.message_specs``) and one random mutation of it
(safe or not: the property only constrains verdicts), ``compare_messages(old, new)`` gives a
primary category. When that category is ``SAFE`` or ``SOURCE_ONLY``, every version valid in both
revisions must cross-decode, in both directions, for random values of the writer:

1. the reader decodes the writer's bytes without an error;
2. the reader's re-encoding of what it decoded is the writer's bytes (unknown tags included);
3. what the reader decoded *means the same* as what the writer wrote (see ``Meaning``).

The oracle never consults the checker (nor ``linter/compat``): it walks the raw spec dicts and
uses only the mutation's own ground truth (``Truth``): which fields it renamed and which
non-nullable structs are mere namespaces (the wrapper a "wrap" mutation added or an "unwrap"
removed). Field names are unique in a whole generated spec, so a name is a field's identity.
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st
from support.spec_strategies import (
    ENTITY_TYPES,
    INT_RANGES,
    NULLABLE_SCALARS,
    FieldGenerator,
    Range,
    all_fields,
    field_versions,
    flexible_low,
    fresh_names,
    lint_files,
    max_version,
    message_specs,
    parse_range,
    scopes,
    struct_members,
)

from linter.codec.codec import Codec
from linter.codec.errors import CodecError
from linter.codec.values import identical, random_value
from linter.compat.diff import MessageDiff, compare_messages, primary
from linter.compat.witness import CrossCodec
from linter.engine.config import Config
from linter.engine.runner import lint_texts
from linter.model.spec import build_message

COMPATIBLE = {"SAFE", "SOURCE_ONLY"}
VALUES_PER_VERSION = 3  # values per direction per shared version
NEW_TOP = 5  # add-version may go one past the generator's highest version
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
# Deterministic for CI (derandomize, no example database); the property runs once per mutation.
PROPERTY = settings(max_examples=11, deadline=None, derandomize=True, database=None, suppress_health_check=_HEALTH)
SMOKE = settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=_HEALTH)


# --- ground truth of a mutation ---------------------------------------------------------------------


@dataclass
class Truth:
    """What a mutation did, as far as meaning goes."""

    label: str
    renames: dict[str, str] = field(default_factory=dict)  # old field name -> new field name
    old_namespaces: set[str] = field(default_factory=set)  # struct fields of the old spec that are only a namespace
    new_namespaces: set[str] = field(default_factory=set)  # ... of the new spec


Mutation = Callable[[dict[str, Any], Callable], "tuple[dict[str, Any], Truth] | None"]
MUTATIONS: list[Mutation] = []


def mutation(fn: Mutation) -> Mutation:
    MUTATIONS.append(fn)
    return fn


def _pick(draw, items: list) -> Any:
    return draw(st.sampled_from(items))


def _is_struct(spec: dict[str, Any]) -> bool:
    return spec["type"].removeprefix("[]")[:1].isupper()


def _is_array(spec: dict[str, Any]) -> bool:
    return spec["type"].startswith("[]")


def _tagged(spec: dict[str, Any]) -> bool:
    return "tag" in spec


def _generator(message: dict[str, Any], draw, top: int | None = None) -> FieldGenerator:
    """A field generator for the spec as it is now, continuing its numbering (fresh names only)."""
    next_field, next_struct = fresh_names(message)
    gen = FieldGenerator(draw, max_version(message) if top is None else top, flexible_low(message))
    gen.fields_made, gen.structs_made = next_field - 1, next_struct - 1
    return gen


def _add_commons(message: dict[str, Any], gen: FieldGenerator) -> None:
    if gen.common:
        message.setdefault("commonStructs", []).extend(gen.common)


# --- mutations: versions ----------------------------------------------------------------------------


@mutation
def add_version(message, draw):
    """One more version on top, sometimes with new fields in it and sometimes becoming the first
    flexible version."""
    top = max_version(message)
    if top >= NEW_TOP:
        return None
    new_top = top + 1
    message["validVersions"] = f"0-{new_top}"
    label = "add-version"
    if flexible_low(message) is None and draw(st.booleans()):
        message["flexibleVersions"] = f"{new_top}+"
        label += "+flexible"
    gen = _generator(message, draw, top=new_top)
    open_scopes = [s for s in scopes(message) if s.versions.open]
    added = False
    for _ in range(draw(st.integers(0, 2))):
        scope = _pick(draw, open_scopes)
        new = gen.field(Range(new_top, new_top, True), max(scope.depth, 1), scope.in_array, [scope.next_tag()])
        scope.fields.insert(draw(st.integers(0, len(scope.fields))), new)
        added = True
    _add_commons(message, gen)
    return message, Truth(label.replace("add-version", "add-version-with-fields") if added else label)


@mutation
def drop_lowest_version(message, draw):
    top = max_version(message)
    if top < 1:
        return None
    message["validVersions"] = f"1-{top}"
    return message, Truth("drop-lowest-version")


@mutation
def lower_max_version(message, draw):
    top = max_version(message)
    if top < 1:
        return None
    message["validVersions"] = f"0-{top - 1}"
    return message, Truth("lower-max-version")


@mutation
def change_flexible_versions(message, draw):
    """``flexibleVersions`` widened, narrowed or switched on/off for existing versions."""
    top, low = max_version(message), flexible_low(message)
    tag_lows = [field_versions(f, top).low for f, _ in all_fields(message) if _tagged(f)]
    choices = [f"{v}+" for v in range(top + 1) if v != low and all(t >= v for t in tag_lows)]
    if low is not None and not tag_lows:
        choices.append("none")
    if not choices:
        return None
    message["flexibleVersions"] = _pick(draw, choices)
    return message, Truth("change-flexible-versions")


@mutation
def deprecate_versions(message, draw):
    top = max_version(message)
    message["deprecatedVersions"] = f"0-{draw(st.integers(0, top))}"
    return message, Truth("deprecate-versions")


@mutation
def request_attributes(message, draw):
    """A request's apiKey changed, or its latest version marked unstable (or stable again)."""
    if message["type"] != "request":
        return None
    if draw(st.booleans()):
        message["apiKey"] += 1
        return message, Truth("change-api-key")
    if message.pop("latestVersionUnstable", False) is False:
        message["latestVersionUnstable"] = True
    return message, Truth("toggle-latest-version-unstable")


@mutation
def rename_message(message, draw):
    message["name"] = "OtherRequest" if message["type"] == "request" else "OtherRecord"
    return message, Truth("rename-message")


# --- mutations: adding and removing fields ----------------------------------------------------------


@mutation
def add_tagged_field(message, draw):
    """A tagged field with a fresh tag, in versions that exist already."""
    gen = _generator(message, draw)
    candidates = [s for s in scopes(message) if gen.can_tag(s.versions)]
    if not candidates:
        return None
    scope = _pick(draw, candidates)
    new = gen.field(scope.versions, max(scope.depth, 1), scope.in_array, [scope.next_tag()], tagged=True)
    scope.fields.insert(draw(st.integers(0, len(scope.fields))), new)
    _add_commons(message, gen)
    return message, Truth("add-tagged-field")


@mutation
def add_regular_field(message, draw):
    """A regular field in versions that exist already (a wire break)."""
    gen = _generator(message, draw)
    scope = _pick(draw, scopes(message))
    new = gen.field(scope.versions, max(scope.depth, 1), scope.in_array, [scope.next_tag()], tagged=False)
    scope.fields.insert(draw(st.integers(0, len(scope.fields))), new)
    _add_commons(message, gen)
    return message, Truth("add-regular-field")


@mutation
def remove_field(message, draw):
    candidates = [(f, s) for f, s in all_fields(message) if len(s.fields) > 1]
    if not candidates:
        return None
    spec, scope = _pick(draw, candidates)
    scope.fields.remove(spec)
    return message, Truth("remove-tagged-field" if _tagged(spec) else "remove-field")


@mutation
def change_field_versions(message, draw):
    """A field's versions start one earlier or later, or end one earlier."""
    top = max_version(message)
    flexible = flexible_low(message)
    options = []
    for spec, scope in all_fields(message):
        versions = field_versions(spec, top)
        if _tagged(spec):
            if versions.low - 1 >= max(scope.versions.low, flexible):
                options.append((spec, Range(versions.low - 1, top, True), "widen-tagged-versions"))
            if versions.low + 1 <= top:
                options.append((spec, Range(versions.low + 1, top, True), "narrow-tagged-versions"))
            continue
        if versions.low > scope.versions.low:
            options.append((spec, Range(versions.low - 1, versions.high, versions.open), "widen-field-versions"))
        if versions.open and versions.low + 1 <= top:
            options.append((spec, Range(versions.low + 1, top, True), "narrow-field-versions"))
        if not versions.open and versions.high > versions.low:
            options.append((spec, Range(versions.low, versions.high - 1, False), "narrow-field-versions"))
    if not options:
        return None
    spec, versions, label = _pick(draw, options)
    spec["versions"] = versions.text()
    if _tagged(spec):
        spec["taggedVersions"] = versions.text()
        if "nullableVersions" in spec:
            spec["nullableVersions"] = versions.text()  # stays uniform over the tagged versions
    return message, Truth(label)


# --- mutations: source-level changes ---------------------------------------------------------------


@mutation
def rename_field(message, draw):
    spec, _ = _pick(draw, all_fields(message))
    old_name, (number, _) = spec["name"], fresh_names(message)
    spec["name"] = f"F{number}"
    return message, Truth("rename-tagged-field" if _tagged(spec) else "rename-field", renames={old_name: spec["name"]})


@mutation
def rename_struct(message, draw):
    candidates = [f for f, _ in all_fields(message) if _is_struct(f)]
    if not candidates:
        return None
    spec = _pick(draw, candidates)
    old = spec["type"].removeprefix("[]")
    new = f"S{fresh_names(message)[1]}"
    for common in message.get("commonStructs", []):
        if common["name"] == old:
            common["name"] = new
    spec["type"] = spec["type"].replace(old, new)
    return message, Truth("rename-struct")


@mutation
def change_annotation(message, draw):
    """about, ignorable, mapKey, entityType or zeroCopy set, changed or removed."""
    spec, scope = _pick(draw, all_fields(message))
    base = spec["type"].removeprefix("[]")
    options = ["about", "ignorable"]
    if scope.in_array and not _tagged(spec) and not _is_array(spec) and not _is_struct(spec):
        options.append("mapKey")
    if base in ENTITY_TYPES:
        options.append("entityType")
    if spec["type"] == "bytes":
        options.append("zeroCopy")
    key = _pick(draw, options)
    if key == "about":
        spec["about"] = spec.get("about", "") + " More words."
    elif key == "entityType":
        if spec.pop("entityType", None) is None:
            spec["entityType"] = _pick(draw, list(ENTITY_TYPES[base]))
    elif spec.pop(key, False) is False:
        spec[key] = True
    return message, Truth(f"toggle-{key}")


def _int_default(text: str) -> int:
    text = text.strip()
    if text.startswith("0x"):
        return int(text.removeprefix("0x"), 16)
    return int(text or "0")


def _respellings(type_name: str, text: str) -> list[str | None]:
    """Other ways to write the same default (``None``: no default at all)."""
    if type_name in INT_RANGES:
        value = _int_default(text)
        out: list[str | None] = [str(value), f"+{value}" if value >= 0 else f"-{-value:03d}"]
        if value >= 0:
            out.append(f"0x{value:x}")
        if value == 0:
            out.append(None)
        return out
    if type_name == "bool":
        value = text.lower() == "true"
        return ["TRUE", "True", "true"] if value else ["false", "FALSE", None]
    if type_name == "float64":
        value = float(text or "0")
        return [repr(value), f"{value:.3e}"] + ([None, "0"] if value == 0 else [])
    if type_name == "string" and text == "":
        return [None, ""]
    return []


@mutation
def change_default(message, draw):
    """A default changed to another value, or respelled (the same value)."""
    top = max_version(message)
    candidates = [(f, s) for f, s in all_fields(message)
                  if f["type"] in INT_RANGES or f["type"] in ("bool", "float64", "string")]
    if not candidates:
        return None
    spec, _ = _pick(draw, candidates)
    old = spec.get("default")
    spellings = [s for s in _respellings(spec["type"], old or "") if s != old]
    if spellings and draw(st.booleans()):
        new, label = _pick(draw, spellings), "respell-default"
    else:
        gen = _generator(message, draw)
        new = gen.default(spec["type"], spec.get("nullableVersions"), field_versions(spec, top))
        label = "change-default"
    if new == old or (new is None and old is None):
        return None  # drew the same default
    if new is None:
        spec.pop("default", None)
    else:
        spec["default"] = new
    return message, Truth(label)


# --- mutations: types and nullability -------------------------------------------------------------


RETYPES = {"int8": ["int16", "bool"], "int16": ["int32", "uint16", "int8"], "int32": ["int64", "int16", "float64"],
           "int64": ["int32", "float64"], "uint16": ["int16", "int32"], "bool": ["int8"], "float64": ["int64"],
           "string": ["bytes"], "bytes": ["string"], "uuid": ["int64"], "records": ["string"]}


@mutation
def retype_field(message, draw):
    candidates = [f for f, _ in all_fields(message) if f["type"].removeprefix("[]") in RETYPES]
    if not candidates:
        return None
    spec = _pick(draw, candidates)
    array, base = _is_array(spec), spec["type"].removeprefix("[]")
    new = _pick(draw, RETYPES[base])
    spec["type"] = ("[]" if array else "") + new
    for key in ("default", "entityType", "zeroCopy"):
        spec.pop(key, None)  # may not fit the new type
    if not array and new not in NULLABLE_SCALARS:
        spec.pop("nullableVersions", None)
    return message, Truth(f"retype-{base}-{new}")


@mutation
def bytes_records(message, draw):
    """bytes <-> records (records are never tagged)."""
    candidates = [f for f, _ in all_fields(message) if f["type"] in ("bytes", "records") and not _tagged(f)]
    if not candidates:
        return None
    spec = _pick(draw, candidates)
    spec["type"] = "records" if spec["type"] == "bytes" else "bytes"
    spec.pop("zeroCopy", None)
    return message, Truth("bytes-to-records" if spec["type"] == "records" else "records-to-bytes")


@mutation
def change_nullable_versions(message, draw):
    """nullableVersions extended or narrowed (on a struct: KIP-893 nullability added or removed)."""
    top = max_version(message)
    options = []
    for spec, _ in all_fields(message):
        base = spec["type"].removeprefix("[]")
        if not (_is_array(spec) or _is_struct(spec) or base in NULLABLE_SCALARS):
            continue
        versions = field_versions(spec, top)
        current = parse_range(spec.get("nullableVersions"), top)
        if _tagged(spec):  # nullable in all tagged versions or none
            options.append((spec, None if current else f"{versions.low}+"))
            continue
        if current is None:
            options += [(spec, f"{low}+") for low in range(versions.low, versions.high + 1)]
        else:
            options += [(spec, f"{low}+") for low in range(versions.low, versions.high + 1) if low != current.low]
            if spec.get("default") != "null":
                options.append((spec, None))
    if not options:
        return None
    spec, new = _pick(draw, options)
    old = parse_range(spec.get("nullableVersions"), top)
    if new is None:
        del spec["nullableVersions"]
    else:
        spec["nullableVersions"] = new
    kind = "struct-nullability" if _is_struct(spec) and not _is_array(spec) else "nullability"
    wider = old is None or (new is not None and parse_range(new, top).low < old.low)
    return message, Truth(f"{kind}-{'widened' if wider else 'narrowed'}")


@mutation
def flexible_override(message, draw):
    """A field-level flexibleVersions on a string or bytes field: the message's own, or another."""
    low = flexible_low(message)
    candidates = [f for f, _ in all_fields(message) if f["type"] in ("string", "bytes")]
    if not candidates:
        return None
    spec = _pick(draw, candidates)
    if "flexibleVersions" in spec:
        del spec["flexibleVersions"]
        return message, Truth("drop-flexible-override")
    top = max_version(message)
    same = message["flexibleVersions"]
    others = ["none"] + ([f"{v}+" for v in range(low, top + 1)] if low is not None else [])
    spec["flexibleVersions"] = _pick(draw, [same, *others])
    return message, Truth("add-flexible-override")


# --- mutations: layout --------------------------------------------------------------------------------


@mutation
def reorder_fields(message, draw):
    """Two fields of one struct swapped (same-typed ones preferred half of the time)."""
    candidates = [s for s in scopes(message) if len(s.fields) >= 2]
    if not candidates:
        return None
    scope = _pick(draw, candidates)
    pairs = [(i, j) for i in range(len(scope.fields)) for j in range(i + 1, len(scope.fields))]
    same = [(i, j) for i, j in pairs if scope.fields[i]["type"] == scope.fields[j]["type"]]
    i, j = _pick(draw, same if same and draw(st.booleans()) else pairs)
    scope.fields[i], scope.fields[j] = scope.fields[j], scope.fields[i]
    same_type = scope.fields[i]["type"] == scope.fields[j]["type"]
    return message, Truth("swap-same-type" if same_type else "reorder-fields")


@mutation
def regular_tagged(message, draw):
    """A field moved from the body to a (fresh) tag, or from its tag into the body."""
    top, flexible = max_version(message), flexible_low(message)
    options = []
    for spec, scope in all_fields(message):
        versions = field_versions(spec, top)
        taggable = (flexible is not None and versions.open and scope.versions.open and versions.low >= flexible
                    and spec["type"] != "records" and not spec.get("mapKey")
                    and spec.get("nullableVersions", f"{versions.low}+") == f"{versions.low}+")
        if _tagged(spec) or taggable:
            options.append((spec, scope))
    if not options:
        return None
    spec, scope = _pick(draw, options)
    if _tagged(spec):
        del spec["tag"], spec["taggedVersions"]
        return message, Truth("tagged-to-regular")
    spec["tag"] = scope.next_tag()
    spec["taggedVersions"] = spec["versions"]
    return message, Truth("regular-to-tagged")


@mutation
def renumber_tag(message, draw):
    """A tagged field given a fresh tag number, or two tags of one struct swapped."""
    candidates = [s for s in scopes(message) if any(_tagged(f) for f in s.fields)]
    if not candidates:
        return None
    scope = _pick(draw, candidates)
    tagged = [f for f in scope.fields if _tagged(f)]
    if len(tagged) >= 2 and draw(st.booleans()):
        a, b = draw(st.permutations(tagged))[:2]
        a["tag"], b["tag"] = b["tag"], a["tag"]
        return message, Truth("swap-tags")
    _pick(draw, tagged)["tag"] = scope.next_tag()
    return message, Truth("renumber-tag")


@mutation
def reuse_tag(message, draw):
    """A tagged field removed and its tag given to a new field of another type."""
    candidates = [(f, s) for f, s in all_fields(message) if _tagged(f)]
    if not candidates:
        return None
    spec, scope = _pick(draw, candidates)
    gen = _generator(message, draw)
    new = gen.field(field_versions(spec, max_version(message)), max(scope.depth, 1), scope.in_array, [spec["tag"]],
                    tagged=True)
    if new["type"] == spec["type"]:
        return None  # the same type under a new name: that is a rename, not a reuse
    new["versions"] = new["taggedVersions"] = spec["taggedVersions"]
    if "nullableVersions" in new:
        new["nullableVersions"] = spec["taggedVersions"]
    scope.fields[scope.fields.index(spec)] = new
    _add_commons(message, gen)
    return message, Truth("reuse-tag")


@mutation
def struct_commons(message, draw):
    """An inline struct moved into commonStructs, or a common struct moved inline."""
    options = []
    for spec, scope in all_fields(message):
        members = struct_members(spec, message)
        if members is None:
            continue
        fields, common = members
        if common is not None or (scope.common is None and not any("fields" in m for m in fields)):
            options.append((spec, fields, common))
    if not options:
        return None
    spec, fields, common = _pick(draw, options)
    if common is None:
        del spec["fields"]
        message.setdefault("commonStructs", []).append(
            {"name": spec["type"].removeprefix("[]"), "versions": "0+", "fields": fields})
        return message, Truth("struct-to-common")
    message["commonStructs"].remove(common)
    if not message["commonStructs"]:
        del message["commonStructs"]
    spec["fields"] = fields
    return message, Truth("common-to-inline")


@mutation
def wrap_fields(message, draw):
    """One or two adjacent regular fields with the same versions wrapped into a new non-array struct."""
    options = []
    for scope in scopes(message):
        if scope.common is not None:
            continue
        for i, spec in enumerate(scope.fields):
            if _tagged(spec) or spec.get("mapKey"):
                continue
            options.append((scope, i, 1))
            if i + 1 < len(scope.fields):
                other = scope.fields[i + 1]
                if not _tagged(other) and not other.get("mapKey") and other["versions"] == spec["versions"]:
                    options.append((scope, i, 2))
    if not options:
        return None
    scope, i, count = _pick(draw, options)
    number, struct = fresh_names(message)
    wrapped = scope.fields[i:i + count]
    versions = wrapped[0]["versions"]
    label = f"wrap-{count}-fields"
    if draw(st.booleans()) and scope.versions.text() != versions:
        versions, label = scope.versions.text(), label + "-wider"  # the struct exists where its members do not
    wrapper = {"name": f"F{number}", "type": f"S{struct}", "versions": versions, "fields": wrapped}
    scope.fields[i:i + count] = [wrapper]
    return message, Truth(label, new_namespaces={wrapper["name"]})


@mutation
def unwrap_struct(message, draw):
    """A non-nullable, non-array, untagged struct replaced by its (untagged) members."""
    options = []
    for spec, scope in all_fields(message):
        members = struct_members(spec, message)
        if (members is None or _is_array(spec) or _tagged(spec) or "nullableVersions" in spec
                or any(_tagged(m) for m in members[0])):
            continue
        options.append((spec, scope, members))
    if not options:
        return None
    spec, scope, (fields, common) = _pick(draw, options)
    index = scope.fields.index(spec)
    scope.fields[index:index + 1] = fields
    if common is not None:
        message["commonStructs"].remove(common)
        if not message["commonStructs"]:
            del message["commonStructs"]
    return message, Truth("unwrap-struct", old_namespaces={spec["name"]})


# --- the oracle ----------------------------------------------------------------------------------------


def _key(name: str) -> str:
    return name[:1].lower() + name[1:]


def _default_of(type_name: str, text: str) -> Any:
    """What an absent field means (README: implicit defaults; "null" is null)."""
    if text == "null":
        return None
    if type_name in INT_RANGES:
        return _int_default(text)
    if type_name == "bool":
        return text.strip().lower() == "true"
    if type_name == "float64":
        return float(text) if text else 0.0
    if type_name == "string":
        return text
    if type_name in ("bytes", "records"):
        return b""
    if type_name == "uuid":
        return uuid.UUID(int=0)
    raise AssertionError(f"no default for {type_name}")


@dataclass(frozen=True)
class Seen:
    """One field as a reader of one revision sees it at a version: sent (present) or not, and its
    meaning (for a struct: a dict of ``Seen`` by field identity; for an array of structs: a list of
    such dicts)."""

    present: bool
    value: Any
    default: Any  # the meaning of the field when absent (as ``value`` when it is absent)


class Meaning:
    """What a decoded value means, in the new revision's vocabulary.

    The meaning of a struct is a dict with one ``Seen`` per field *the spec declares* (whatever
    the version), keyed by the field's identity (its name in the new revision): the decoded value
    where the field is present at the version, else the field's default, which is what a reader of
    that revision substitutes. A null struct means ``None``; a namespace struct's members are
    entries of its parent. Unknown tags carry no meaning here (the re-encoding check keeps them).
    """

    def __init__(self, message: dict[str, Any], renames: dict[str, str], namespaces: set[str]) -> None:
        self.message = message
        self.top = max_version(message)
        self.renames = renames
        self.namespaces = namespaces

    def struct(self, fields: list[dict[str, Any]], value: dict[str, Any] | None, version: int) -> dict[str, Seen]:
        out: dict[str, Seen] = {}
        for spec in fields:
            versions = field_versions(spec, self.top)
            present = value is not None and versions is not None and versions.contains(version)
            default = self.default(spec, version)
            meaning = self.value(spec, value[_key(spec["name"])], version) if present else default
            if spec["name"] in self.namespaces:
                out.update(meaning)  # a namespace is never null; its members keep their own presence
            else:
                out[self.renames.get(spec["name"], spec["name"])] = Seen(present, meaning, default)
        return out

    def value(self, spec: dict[str, Any], item: Any, version: int) -> Any:
        members = struct_members(spec, self.message)
        if item is None or members is None:
            return item
        if _is_array(spec):
            return [self.struct(members[0], element, version) for element in item]
        return self.struct(members[0], item, version)

    def default(self, spec: dict[str, Any], version: int) -> Any:
        text = spec.get("default", "")
        if _is_array(spec):
            return None if text == "null" else []
        members = struct_members(spec, self.message)
        if members is not None:
            return None if text == "null" else self.struct(members[0], None, version)
        return _default_of(spec["type"], text)


def differences(written: Any, read: Any, path: str = "") -> list[str]:
    """Where the reader's meaning differs from the writer's.

    A field the writer sent that the reader does not have (at this version, or at all) is not
    compared: a reader skips a tag it does not know, which loses the value but is how tagged fields
    stay compatible (a regular field there would break the bytes, which the other checks see).
    A field only the reader's revision declares was never written, so the reader must see its
    default (else it read another field's bytes, e.g. a reused tag). Everything else must agree,
    defaults included: a field neither side sends means each side's default, and a tag the writer
    does not have at this version means the reader's default.
    """
    if isinstance(written, dict) and isinstance(read, dict):
        out = []
        for key in read:
            right = read[key]
            if key not in written:
                if right.present:
                    out += differences(right.default, right.value, f"{path}.{key}(reader only)")
                continue
            left = written[key]
            if left.present and not right.present:
                continue
            out += differences(left.value, right.value, f"{path}.{key}")
        return out
    if isinstance(written, list) and isinstance(read, list) and len(written) == len(read):
        return [d for i, (a, b) in enumerate(zip(written, read)) for d in differences(a, b, f"{path}[{i}]")]
    if identical(written, read):
        return []
    return [f"{path or '.'}: written {_short(written)}, read {_short(read)}"]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."


@dataclass
class Revision:
    message: dict[str, Any]
    meaning: Meaning

    def __post_init__(self) -> None:
        self.name = self.message["name"]
        self.codec = Codec([build_message(self.message, f"{self.name}.json")])

    def meaning_of(self, value: dict[str, Any], version: int) -> dict[str, Any]:
        return self.meaning.struct(self.message["fields"], value, version)


def cross_decode(writer: Revision, reader: Revision, version: int, seed: int) -> str | None:
    """Why a value of ``writer`` reads differently with ``reader`` at ``version``; None when it does not."""
    value = random_value(writer.codec, writer.name, version, random.Random(seed))
    data = writer.codec.encode(writer.name, version, value)
    try:
        written = writer.codec.decode(writer.name, version, data)  # the writer's own reading of its bytes
    except CodecError:
        # Not a compatibility question: the writer's own spec refuses these bytes. (An array of N
        # structs that have no field at the version is N * 0 bytes, and Kafka's generated readers,
        # like the codec, refuse a count larger than the bytes left.)
        return None
    try:
        read = reader.codec.decode(reader.name, version, data)
    except CodecError as exc:
        return f"the reader cannot decode {data.hex()}: {exc}"
    again = reader.codec.encode(reader.name, version, read)
    if again != data:
        return f"the reader re-encodes {data.hex()} as {again.hex()} (read {read!r})"
    diff = differences(writer.meaning_of(written, version), reader.meaning_of(read, version))
    if diff:
        return f"bytes {data.hex()} mean something else: {'; '.join(diff[:5])} (written {written!r}, read {read!r})"
    return None


def divergences(old: dict[str, Any], new: dict[str, Any], truth: Truth, seed: int) -> list[str]:
    """Every cross-decoding divergence found for the versions valid in both revisions."""
    old_rev = Revision(old, Meaning(old, truth.renames, truth.old_namespaces))
    new_rev = Revision(new, Meaning(new, {}, truth.new_namespaces))
    old_top, new_top = max_version(old), max_version(new)
    old_low, new_low = parse_range(old["validVersions"], 0).low, parse_range(new["validVersions"], 0).low
    found = []
    for version in range(max(old_low, new_low), min(old_top, new_top) + 1):
        for direction, (writer, reader) in (("old->new", (old_rev, new_rev)), ("new->old", (new_rev, old_rev))):
            for i in range(VALUES_PER_VERSION):
                problem = cross_decode(writer, reader, version, seed * 1000 + version * 10 + i)
                if problem is not None:
                    found.append(f"v{version} {direction}: {problem}")
                    break
    return found


def _describe(changes) -> str:
    return "\n".join(f"  {c.category} {c.rule} v{list(c.versions)}: {c.message}" for c in changes) or "  (none)"


def _verdict(old: dict[str, Any], new: dict[str, Any]):
    changes = compare_messages(build_message(old, f"{old['name']}.json"), build_message(new, f"{new['name']}.json"))
    return changes, primary(changes)[0]


# --- the tests ----------------------------------------------------------------------------------------


@SMOKE
@given(message_specs())
def test_generated_specs_are_lint_clean(spec):
    report = lint_texts(lint_files(spec), Config(profile="kafka"))
    errors = [f"{f.rule} {f.message}" for f in report.findings if f.severity == "error"]
    assert not errors, json.dumps(spec)


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__)
@PROPERTY
@given(old=message_specs(), data=st.data(), seed=st.integers(0, 2**20))
def test_compatible_verdict_never_diverges(mutate, old, data, seed):
    result = mutate(copy.deepcopy(old), data.draw)
    assume(result is not None)  # the mutation does not apply to this spec
    new, truth = result
    changes, category = _verdict(old, new)
    event(f"mutation {truth.label}")
    event(f"verdict {category}")
    note(f"mutation: {truth}")
    note(f"old: {json.dumps(old)}")
    note(f"new: {json.dumps(new)}")
    note(f"changes ({category}):\n{_describe(changes)}")
    if category not in COMPATIBLE:
        return
    found = divergences(old, new, truth, seed)
    assert not found, f"{category} verdict, but cross-decoding diverges:\n" + "\n".join(found)


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__)
@PROPERTY
@given(old=message_specs(), data=st.data(), seed=st.integers(0, 2**20))
def test_same_wire_versions_need_no_cross_check(mutate, old, data, seed):
    """compare() leaves out of the cross-check the versions whose layouts are the same wire, names
    included (``layout.same_wire``): whatever the change, the cross-check finds nothing there."""
    result = mutate(copy.deepcopy(old), data.draw)
    assume(result is not None)
    new, truth = result
    old_spec, new_spec = build_message(old, f"{old['name']}.json"), build_message(new, f"{new['name']}.json")
    diff = MessageDiff(old_spec, new_spec)
    diff.run()
    event(f"same-wire versions: {'some' if diff.same_wire else 'none'}")
    note(f"mutation: {truth}\nold: {json.dumps(old)}\nnew: {json.dumps(new)}")
    cross = CrossCodec(old_spec, new_spec, diff.renames, diff.old_version)
    for version in sorted(diff.same_wire):
        for index in range(2 * VALUES_PER_VERSION):
            for writer in ("old", "new"):
                try:
                    found = cross.attempt(version, writer, seed + index, size=index % 4)
                except CodecError:
                    continue  # a value the writer cannot encode says nothing
                if found is not None and found.error and _unreadable_by_writer(cross, writer, version, found):
                    continue  # not a compatibility question (see cross_decode)
                assert found is None, f"v{version}: {found}"


def _unreadable_by_writer(cross: CrossCodec, writer: str, version: int, witness) -> bool:
    codec = cross.codec(writer)
    try:
        codec.decode(cross.names[writer], version, bytes.fromhex(witness.hex))
    except CodecError:
        return True
    return False


# --- unsafe changes are not called compatible ------------------------------------------------------


def _with_fields(spec: dict[str, Any], draw, *types: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The spec with regular fields of these types (versions 0+) inserted next to each other."""
    spec = copy.deepcopy(spec)
    number = fresh_names(spec)[0]
    added = [{"name": f"F{number + i}", "type": t, "versions": "0+"} for i, t in enumerate(types)]
    at = draw(st.integers(0, len(spec["fields"])))
    spec["fields"][at:at] = added
    return spec, added


@SMOKE
@given(spec=message_specs(), data=st.data())
def test_reorder_of_different_types_is_not_compatible(spec, data):
    first, second = data.draw(st.permutations(["int32", "string", "int64", "bool", "uuid"]))[:2]
    old, (a, _) = _with_fields(spec, data.draw, first, second)
    new = copy.deepcopy(old)
    i = [f["name"] for f in new["fields"]].index(a["name"])
    new["fields"][i], new["fields"][i + 1] = new["fields"][i + 1], new["fields"][i]
    changes, category = _verdict(old, new)
    note(f"old: {json.dumps(old)}\nnew: {json.dumps(new)}\nchanges:\n{_describe(changes)}")
    assert category not in COMPATIBLE
    assert divergences(old, new, Truth("reorder"), seed=1)  # and the oracle sees it


@SMOKE
@given(spec=message_specs(), data=st.data())
def test_retype_int32_to_int64_is_not_compatible(spec, data):
    old, (added,) = _with_fields(spec, data.draw, "int32")
    new = copy.deepcopy(old)
    next(f for f in new["fields"] if f["name"] == added["name"])["type"] = "int64"
    changes, category = _verdict(old, new)
    note(f"old: {json.dumps(old)}\nnew: {json.dumps(new)}\nchanges:\n{_describe(changes)}")
    assert category not in COMPATIBLE
    assert divergences(old, new, Truth("retype"), seed=1)


@SMOKE
@given(spec=message_specs().filter(lambda s: flexible_low(s) is not None), data=st.data())
def test_narrowed_flexible_versions_is_not_compatible(spec, data):
    low = flexible_low(spec)
    new = copy.deepcopy(spec)
    new["flexibleVersions"] = data.draw(st.sampled_from(["none", f"{low + 1}+"]))
    changes, category = _verdict(spec, new)
    note(f"old: {json.dumps(spec)}\nnew: {json.dumps(new)}\nchanges:\n{_describe(changes)}")
    assert category not in COMPATIBLE


# --- the oracle itself ----------------------------------------------------------------------------------


_ORACLE_SPEC = {
    "type": "data", "name": "ExampleRecord", "validVersions": "0-3", "flexibleVersions": "2+",
    "fields": [
        {"name": "F1", "type": "int32", "versions": "0+"},
        {"name": "F2", "type": "int32", "versions": "0+"},
        {"name": "F3", "type": "string", "versions": "1+", "nullableVersions": "2+"},
        {"name": "F4", "type": "[]S1", "versions": "0+", "fields": [
            {"name": "F5", "type": "int16", "versions": "0+", "mapKey": True},
            {"name": "F6", "type": "uuid", "versions": "2+", "taggedVersions": "2+", "tag": 0}]},
        {"name": "F7", "type": "int64", "versions": "2+", "taggedVersions": "2+", "tag": 0, "default": "-1"},
    ],
}


def _oracle_mutant(edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    new = copy.deepcopy(_ORACLE_SPEC)
    edit(new)
    return new


def _set(path: tuple, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(spec: dict[str, Any]) -> None:
        target: Any = spec
        for step in path:
            target = target[step]
        target[key] = value
    return edit


@pytest.mark.parametrize(("label", "edit", "truth"), [
    ("rename", _set(("fields", 1), "name", "F9"), Truth("rename", renames={"F2": "F9"})),
    ("new tag", lambda s: s["fields"].append({"name": "F9", "type": "string", "versions": "2+",
                                              "taggedVersions": "2+", "tag": 1, "default": "abc"}), Truth("tag")),
    ("new version", _set((), "validVersions", "0-4"), Truth("version")),
    ("wrap", lambda s: s["fields"].__setitem__(slice(0, 2), [{"name": "F9", "type": "S9", "versions": "0+",
                                                             "fields": s["fields"][0:2]}]),
     Truth("wrap", new_namespaces={"F9"})),
    ("respell", _set(("fields", 4), "default", "-0001"), Truth("respell")),
])
def test_oracle_accepts_meaning_preserving_changes(label, edit, truth):
    """Changes the README calls compatible pass the oracle (for the wrap: in the non-flexible versions)."""
    new = _oracle_mutant(edit)
    found = divergences(_ORACLE_SPEC, new, truth, seed=7)
    if label == "wrap":  # the wrapper adds a tagged-field section in the flexible versions 2-3
        assert found and all(line.startswith(("v2 ", "v3 ")) for line in found), found
    else:
        assert not found, found


@pytest.mark.parametrize(("label", "edit"), [
    ("swap same-typed fields", lambda s: s["fields"].__setitem__(slice(0, 2), s["fields"][1::-1][:2])),
    ("int16 -> uint16", _set(("fields", 3, "fields", 0), "type", "uint16")),
    ("tag default changed", _set(("fields", 4), "default", "7")),
    ("tag renumbered", _set(("fields", 4), "tag", 1)),
    ("nullability widened", _set(("fields", 2), "nullableVersions", "1+")),
])
def test_oracle_sees_divergences(label, edit):
    """The oracle is not blind: changes that alter meaning or bytes are caught by some value."""
    new = _oracle_mutant(edit)
    found = [line for seed in range(6) for line in divergences(_ORACLE_SPEC, new, Truth(label), seed)]
    assert found


# --- equal plan signatures decode alike (what krpc-lint replay relies on to decode a frame once) ----


def decoding(codec: Codec, name: str, version: int, data: bytes) -> tuple:
    """Everything a decoding shows: the value (with its key order) or the error, offset and path."""
    try:
        return ("value", repr(codec.decode(name, version, data)))
    except CodecError as exc:
        return ("error", str(exc), getattr(exc, "offset", None), getattr(exc, "path", None))


def inputs(writer: Revision, version: int, rng: random.Random) -> list[bytes]:
    """A writer's random value at ``version``, a truncation of it and a bit flip of it."""
    data = writer.codec.encode(writer.name, version, random_value(writer.codec, writer.name, version, rng))
    flipped = bytearray(data)
    if flipped:
        flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
    return [data, data[:rng.randrange(len(data) + 1)], bytes(flipped)]


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__)
@PROPERTY
@given(old=message_specs(), data=st.data(), seed=st.integers(0, 2**20))
def test_equal_plan_signatures_decode_alike(mutate, old, data, seed):
    result = mutate(copy.deepcopy(old), data.draw)
    assume(result is not None)
    new = result[0]
    old_rev, new_rev = Revision(old, Meaning(old, {}, set())), Revision(new, Meaning(new, {}, set()))
    low = max(parse_range(old["validVersions"], 0).low, parse_range(new["validVersions"], 0).low)
    rng = random.Random(seed)
    for version in range(low, min(max_version(old), max_version(new)) + 1):
        same = old_rev.codec.plan(old_rev.name, version).signature == new_rev.codec.plan(new_rev.name, version).signature
        event(f"signatures {'equal' if same else 'differ'}")
        if not same:
            continue
        for writer in (old_rev, new_rev):
            for item in inputs(writer, version, rng):
                assert decoding(old_rev.codec, old_rev.name, version, item) == \
                    decoding(new_rev.codec, new_rev.name, version, item), f"v{version} {item.hex()}"
