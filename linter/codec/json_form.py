"""Kafka's JSON form of values (``JsonConverter``): base64 bytes, base64url uuids, floats' NaN and
infinities as text; records are written as ``""``."""

from __future__ import annotations

import base64
import math
import uuid
from collections.abc import Callable
from typing import Any

from linter.codec.errors import CodecError, EncodeError

Convert = Callable[[Any], Any]  # a value to its JSON form, or back


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise EncodeError(f"expected base64 text for {what}, got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise EncodeError(f"invalid base64 for {what}") from None


def uuid_to_text(value: uuid.UUID) -> str:
    """Kafka's JSON form of a uuid: base64url, unpadded (22 characters)."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def uuid_from_text(text: Any) -> uuid.UUID:
    if not isinstance(text, str) or len(text) != 22:
        raise EncodeError(f"expected a 22-character base64url uuid, got {text!r}")
    try:
        return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))
    except ValueError:
        raise EncodeError(f"invalid uuid {text!r}") from None


def _float_from_json(value: Any) -> float:
    """Kafka's converter reads float64 from a JSON number with a fraction or exponent only."""
    if type(value) is float:
        return value
    if value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if type(value) is int:
        raise EncodeError(f"float64 needs a JSON number with a fraction or exponent (write {value}.0), as in "
                          "Kafka's JSON form")
    raise EncodeError(f"expected a number, got {value!r}")


def _float_to_json(value: float) -> Any:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def leaf_json(type_name: str) -> tuple[Convert, Convert]:
    """(to_json, from_json) for a primitive type; null passes through both."""
    if type_name == "uuid":
        return uuid_to_text, uuid_from_text
    if type_name == "bytes":
        return _b64, lambda text: _unb64(text, "bytes")
    if type_name == "records":
        return (lambda value: ""), (lambda text: _unb64(text, "records"))
    if type_name == "float64":
        return _float_to_json, _float_from_json
    return (lambda value: value), (lambda value: value)


def map_json(convert: Convert, what: str = "array") -> Convert:
    """The conversion of an array: ``convert`` on each element, null elements kept."""

    def each(items: Any) -> list[Any]:
        if not isinstance(items, list):
            raise EncodeError(f"expected a list for {what}, got {type(items).__name__}")
        out: list[Any] = []
        for index, item in enumerate(items):
            try:
                out.append(None if item is None else convert(item))
            except CodecError as exc:
                raise exc.at(index) from None
        return out

    return each


__all__ = ["Convert", "leaf_json", "map_json", "uuid_from_text", "uuid_to_text"]
