"""Random valid values for any message at any version, derived from its compiled plan.

Two front ends share one description of the value's shape:

- ``strategy(codec, name, version)``: a Hypothesis strategy (Hypothesis is a test dependency,
  so it is imported only when this is called);
- ``random_value(codec, name, version, rng)``: the same without Hypothesis, deterministic for a
  given ``random.Random`` seed (for compatibility witnesses and synthetic frames).

Values follow the codec's conventions (``linter.codec.compiler``): a struct is a dict holding
exactly the fields present at the version (tagged ones included), integers stay within their
type's range, nulls appear only where the field is nullable at the version, and array elements
are never null. Unknown tagged fields are never generated. Sizes are kept small, with an
occasional string, bytes value or array of primitives of 128 bytes or elements or more, so that
two-byte length varints are exercised too.

>>> from linter.codec import Codec
>>> codec = Codec.load("fixtures/valid")
>>> value = random_value(codec, "WidgetFetchRequest", 0, random.Random(1))
>>> codec.decode("WidgetFetchRequest", 0, codec.encode("WidgetFetchRequest", 0, value)) == value
True
"""

from __future__ import annotations

import math
import random
import sys
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from linter.codec.leaves import DOUBLE
from linter.codec.plans import FieldPlan, StructPlan
from linter.model.wire import INTEGERS

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from linter.codec.codec import Codec

ARRAY_MAX = 5  # elements of an array of primitives
STRUCT_ARRAY_MAX = 3  # elements of an array of structs (they nest)
LONG = 128  # the first length that needs a two-byte uvarint
NULL_CHANCE = 0.2  # random_value: how often a nullable field is null
DEFAULT_CHANCE = 0.4  # random_value: how often a tagged field keeps its default
EDGE_CHANCE = 0.4  # random_value: how often a number is one of its type's edge values

_FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 2.2250738585072014e-308, sys.float_info.max,
                -sys.float_info.max, 1e21, 0.1)
_ZERO_UUID = uuid.UUID(int=0)
_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)  # lone surrogates have no UTF-8 form


# --- the shape of a value ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Leaf:
    """A primitive: ``kind`` is the type name; integers carry their range."""

    kind: str
    low: int = 0
    high: int = 0


@dataclass(frozen=True, slots=True)
class Array:
    element: Shape


@dataclass(frozen=True, slots=True)
class Slot:
    """One present field of a struct: nullable at the version, and (when tagged) its default."""

    key: str
    shape: Shape
    nullable: bool
    default: Callable[[], Any] | None  # set for tagged fields only


@dataclass(frozen=True, slots=True)
class Struct:
    slots: tuple[Slot, ...]


Shape = Leaf | Array | Struct


def nullable(field: FieldPlan, version: int) -> bool:
    """Whether the field may hold null at the version (its ``nullableVersions``)."""
    versions = field.spec.nullable_versions
    return versions is not None and versions.contains(version)


def _struct(plan: StructPlan) -> Struct:
    """The shape of a StructPlan, and of the plans of its nested structs."""
    return Struct(tuple(_slot(plan, field) for field in plan.fields if field.present))


def _slot(plan: StructPlan, field: FieldPlan) -> Slot:
    field_type = field.type
    if field.nested is not None:  # a struct, or an array of structs
        element: Shape = _struct(field.nested)
    elif field_type.name in INTEGERS:
        element = Leaf(field_type.name, *INTEGERS[field_type.name])
    else:
        element = Leaf(field_type.name)
    shape = Array(element) if field_type.is_array else element
    return Slot(field.key, shape, nullable(field, plan.version), field.default if field.tag is not None else None)


_SHAPES: weakref.WeakKeyDictionary[Any, dict[tuple[str, int], Struct]] = weakref.WeakKeyDictionary()


def shape(codec: Codec, name: str, version: int) -> Struct:
    """The shape of a message at a version (cached per codec)."""
    cache = _SHAPES.setdefault(codec, {})
    key = (name, version)
    found = cache.get(key)
    if found is None:
        found = cache[key] = _struct(codec.plan(name, version))
    return found


# --- Hypothesis -------------------------------------------------------------------------------------


def strategy(codec: Codec, name: str, version: int, *, empty_records: bool = False) -> SearchStrategy[dict[str, Any]]:
    """A Hypothesis strategy for valid values of the message at the version.

    ``empty_records`` limits records fields to null or an empty record set: Kafka's JSON form
    writes every record set as ``""``, so only those survive a JSON round trip.
    """
    return _Strategies(empty_records).struct(shape(codec, name, version))


class _Strategies:
    """Strategies per shape (Hypothesis is imported here, where it is used: it is a test dependency)."""

    def __init__(self, empty_records: bool) -> None:
        from hypothesis import strategies as st

        self.empty_records = empty_records
        chars = st.characters(exclude_categories=_SURROGATES)
        self.text = st.one_of(st.text(alphabet=chars, max_size=8),
                              st.text(alphabet=chars, min_size=1, max_size=4).map(lambda s: s * -(-LONG // len(s))))
        self.binary = st.one_of(st.binary(max_size=8), st.binary(min_size=LONG, max_size=LONG + 4))
        self.uuids = st.one_of(st.just(_ZERO_UUID),
                               st.binary(min_size=16, max_size=16).map(lambda data: uuid.UUID(bytes=data)))
        self.floats = st.one_of(st.sampled_from(_FLOAT_EDGES), st.floats(allow_nan=False, allow_infinity=False))

    def struct(self, node: Struct) -> SearchStrategy[dict[str, Any]]:
        from hypothesis import strategies as st

        return st.fixed_dictionaries({slot.key: self.slot(slot) for slot in node.slots})

    def slot(self, slot: Slot) -> SearchStrategy[Any]:
        from hypothesis import strategies as st

        value = self.shape(slot.shape)
        if slot.nullable:
            value = st.one_of(st.none(), value)
        if slot.default is not None:
            value = st.one_of(st.builds(slot.default), value)
        return value

    def shape(self, node: Shape) -> SearchStrategy[Any]:
        from hypothesis import strategies as st

        if isinstance(node, Struct):
            return self.struct(node)
        if isinstance(node, Array):
            element = self.shape(node.element)
            if isinstance(node.element, Struct):
                return st.lists(element, max_size=STRUCT_ARRAY_MAX)
            long = st.builds(lambda item, count: [item] * count, element, st.integers(LONG, LONG + 2))  # cheap
            return st.one_of(st.lists(element, max_size=ARRAY_MAX), long)
        kind = node.kind
        if kind in INTEGERS:
            return st.one_of(st.sampled_from(_int_edges(node)), st.integers(node.low, node.high))
        if kind == "bool":
            return st.booleans()
        if kind == "float64":
            return self.floats
        if kind == "string":
            return self.text
        if kind == "uuid":
            return self.uuids
        if kind == "records" and self.empty_records:
            return st.just(b"")
        if kind == "records":
            return st.binary(max_size=16)
        return self.binary  # bytes


# --- plain random -----------------------------------------------------------------------------------


def random_value(codec: Codec, name: str, version: int, rng: random.Random, size: int = 3, *,
                 empty_records: bool = False) -> dict[str, Any]:
    """A random valid value of the message at the version, decided by ``rng`` alone.

    ``size`` bounds array lengths (and scales string and bytes lengths); ``empty_records`` as
    for ``strategy``.
    """
    return _Random(rng, size, empty_records).struct(shape(codec, name, version))


class _Random:
    def __init__(self, rng: random.Random, size: int, empty_records: bool) -> None:
        self.rng = rng
        self.size = size
        self.empty_records = empty_records

    def struct(self, node: Struct) -> dict[str, Any]:
        return {slot.key: self.slot(slot) for slot in node.slots}

    def slot(self, slot: Slot) -> Any:
        rng = self.rng
        if slot.default is not None and rng.random() < DEFAULT_CHANCE:
            return slot.default()
        if slot.nullable and rng.random() < NULL_CHANCE:
            return None
        return self.shape(slot.shape)

    def shape(self, node: Shape) -> Any:
        rng = self.rng
        if isinstance(node, Struct):
            return self.struct(node)
        if isinstance(node, Array):
            count = rng.randint(0, self.size)
            if isinstance(node.element, Leaf) and rng.random() < 0.05:
                count = rng.randint(LONG, LONG + 2)
            return [self.shape(node.element) for _ in range(count)]
        kind = node.kind
        if kind in INTEGERS:
            if rng.random() < EDGE_CHANCE:
                return rng.choice(_int_edges(node))
            return rng.randint(node.low, node.high)
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "float64":
            return self.float()
        if kind == "string":
            return "".join(self.char() for _ in range(self.length()))
        if kind == "uuid":
            return _ZERO_UUID if rng.random() < 0.2 else uuid.UUID(bytes=rng.randbytes(16))
        if kind == "records" and self.empty_records:
            return b""
        return rng.randbytes(self.length())  # bytes and records

    def length(self) -> int:
        rng = self.rng
        return rng.randint(LONG, LONG + 8) if rng.random() < 0.1 else rng.randint(0, self.size * 3)

    def char(self) -> str:
        rng = self.rng
        if rng.random() < 0.7:
            return chr(rng.randint(0x20, 0x7E))
        while True:
            code = rng.randint(0, 0x10FFFF)
            if not 0xD800 <= code <= 0xDFFF:  # no lone surrogates: they have no UTF-8 form
                return chr(code)

    def float(self) -> float:
        rng = self.rng
        roll = rng.random()
        if roll < 0.1:
            return -0.0  # the one float that only a bitwise comparison tells from 0.0
        if roll < EDGE_CHANCE:
            return rng.choice(_FLOAT_EDGES)
        while True:
            value: float = DOUBLE.unpack(rng.randbytes(8))[0]
            if math.isfinite(value):
                return value


# --- comparison -------------------------------------------------------------------------------------


def identical(left: Any, right: Any) -> bool:
    """Equality of codec values as the bytes see it: exact types (``True`` is not ``1``) and floats
    compared bit for bit (``-0.0`` is not ``0.0``; a NaN equals the same NaN)."""
    if type(left) is not type(right):
        return False
    if type(left) is float:
        return DOUBLE.pack(left) == DOUBLE.pack(right)
    if type(left) is dict:
        return left.keys() == right.keys() and all(identical(left[key], right[key]) for key in left)
    if type(left) is list or type(left) is tuple:
        return len(left) == len(right) and all(identical(a, b) for a, b in zip(left, right))
    same: bool = left == right
    return same



def _int_edges(node: Leaf) -> list[int]:
    return [edge for edge in (node.low, node.high, 0, -1, 1) if node.low <= edge <= node.high]


__all__ = ["Array", "Leaf", "Shape", "Slot", "Struct", "identical", "nullable", "random_value", "shape", "strategy"]
