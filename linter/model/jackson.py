"""How Jackson binds JSON values to the Java properties of Kafka's spec classes.

Kafka's generator deserialises with Jackson's default scalar coercions plus
``ACCEPT_SINGLE_VALUE_AS_ARRAY``. Each function returns the bound value or raises
``BindError`` with a message and the name of the check that reports it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from linter.errors import KrpcLintError

_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")


class BindError(KrpcLintError, ValueError):
    """``check`` is value-kind, enum-value or number-range."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(message)
        self.check = check
        self.message = message


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def number_text(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)
    return repr(value) if isinstance(value, float) else str(value)


def as_string(value: Any, what: str) -> str | None:
    """Strings as they are; numbers and booleans as their JSON text; null as absent."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_text(value)
    raise BindError("value-kind", f"{what} must be a string, found {kind_of(value)}")


def as_bool(value: Any, what: str) -> bool:
    """A primitive boolean: true/false, "true"/"True"/"TRUE", integers (non-zero is true), null is false."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str):
        if value in _TRUE:
            return True
        if value in _FALSE or value == "":
            return False
        raise BindError("value-kind", f'{what} must be a boolean; the string "{value}" is not true/True/TRUE or false/False/FALSE')
    raise BindError("value-kind", f"{what} must be a boolean, found {kind_of(value)}")


def as_int(value: Any, what: str, bits: int) -> int | None:
    """A boxed Integer/Short: numbers (fractions truncated), numeric strings, null as absent."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise BindError("value-kind", f"{what} must be a number, found a boolean")
    number: int
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BindError("value-kind", f"{what} must be a finite number")
        number = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if text == "":
            return None
        if not _JAVA_INT.fullmatch(text):
            raise BindError("value-kind", f'{what} must be a number; "{value}" is not an integer')
        if len(text.lstrip("+-").lstrip("0")) > 20:  # beyond any Java int, and int() refuses thousands of digits
            raise BindError("number-range", f"{what} has {len(text)} digits: out of range of a Java int")
        number = int(text)
    elif isinstance(value, int):
        number = value
    else:
        raise BindError("value-kind", f"{what} must be a number, found {kind_of(value)}")
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if not low <= number <= high:
        java = "short" if bits == 16 else "int"
        raise BindError("number-range", f"{what} {number} is out of range of a Java {java} ({low} to {high})")
    return number


def as_enum(value: Any, what: str, allowed: tuple[str, ...]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BindError("value-kind", f"{what} must be a string, found {kind_of(value)}")
    if value not in allowed:
        shown = '""' if value == "" else f'"{value}"'
        raise BindError("enum-value", f"{what} {shown} is not one of: {', '.join(allowed)}")
    return value


def as_list(value: Any) -> list[Any]:
    """Lists as they are; a single value is a one-element list; null is empty."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]
