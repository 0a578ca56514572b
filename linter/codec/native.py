"""The description of a ``StructPlan`` that the optional C accelerator (``_speedups.c``) compiles.

A plan becomes nested tuples of field kinds; whatever the C code does not handle itself (a kind
``_K_PY`` field, tagged sections with more tags than it tracks) points back at the Python closures,
so the two always agree.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from linter.codec.arrays import weight

if TYPE_CHECKING:
    from linter.codec.plans import FieldPlan, StructPlan

MAX_NATIVE_TAGS = 64  # _speedups.c marks the tags it has seen in one 64-bit word
# The integer types as _speedups.c numbers them (its put_int / get_int switches), not a wire trait:
# widths and ranges are in linter.model.wire.
_NATIVE_INT = {"int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint16": 5, "uint32": 6}
(_K_PY, _K_INT, _K_BOOL, _K_FLOAT, _K_UUID, _K_STRING, _K_BYTES, _K_INT_ARRAY, _K_STRUCT_ARRAY,
 _K_STRUCT) = range(10)
_LEAF_KINDS = {"bool": _K_BOOL, "float64": _K_FLOAT, "uuid": _K_UUID, "string": _K_STRING, "bytes": _K_BYTES,
               "records": _K_BYTES}
_IMMUTABLE = (int, bool, float, str, bytes, type(None), uuid.UUID)

NativeField = tuple[str, int, bool, bool, Any]  # key, kind, compact, nullable, extra


def native_tuple(plan: StructPlan) -> tuple[Any, ...]:
    """(fields, flexible, tagged decoder, tagged encoder, known keys, regular count, tagged
    fields): the C accelerator reads the tagged fields itself, ``(tag, field, default,
    factory)`` each, unless there are more than it tracks (then the Python decoder does)."""
    fields = tuple(_native_field(f) for f in plan.regular_fields)
    section = plan.tagged_section
    tagged = bool(section.pairs)
    native_tags = tuple((tag, _native_field(f), *_shared_default(f)) for tag, f in section.pairs) \
        if len(section.pairs) <= MAX_NATIVE_TAGS else None
    return (fields, plan.flexible, section.decode if tagged else None, section.to_bytes if tagged else None,
            plan.keys, len(fields), native_tags)


def _shared_default(plan: FieldPlan) -> tuple[Any, Callable[[], Any] | None]:
    """(default, None) when every absent value can share one immutable default, else (None, factory)."""
    value = plan.default()
    return (value, None) if type(value) in _IMMUTABLE else (None, plan.default)


def _native_field(plan: FieldPlan) -> NativeField:
    """(key, kind, compact, nullable, extra) of one regular field for the C accelerator."""
    field_type, name = plan.type, plan.type.name
    python = (_K_PY, (plan.decode, plan.encode))
    kind: int
    extra: Any
    if field_type.is_array:
        if plan.nested is not None:  # elements the input does not pay for: the Python closure counts them
            counted = weight(plan.nested.takes_no_bytes, plan.nested.entries)
            kind, extra = python if counted else (_K_STRUCT_ARRAY, native_tuple(plan.nested))
        elif name in _NATIVE_INT:
            kind, extra = _K_INT_ARRAY, _NATIVE_INT[name]
        else:
            kind, extra = python
    elif plan.nested is not None:  # a tagged nullable struct's marker is 0/1, not -1/1: Python reads it
        kind, extra = python if plan.nullable and plan.tag is not None else (_K_STRUCT, native_tuple(plan.nested))
    elif name in _NATIVE_INT:
        kind, extra = _K_INT, _NATIVE_INT[name]
    elif name in _LEAF_KINDS:
        kind, extra = _LEAF_KINDS[name], None
    else:
        kind, extra = python
    return plan.key, kind, plan.compact, plan.nullable, extra


__all__ = ["MAX_NATIVE_TAGS", "native_tuple"]
