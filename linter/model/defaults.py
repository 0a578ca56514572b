"""Field defaults: which strings Kafka's generator accepts, and the values they mean.

The rules are Java's: ``Byte/Short/Integer/Long.valueOf(s, radix)`` after an optional
``0x`` prefix, ``Double.parseDouble``, ``equalsIgnoreCase`` for booleans and
``Base64.getUrlDecoder()`` for uuids. ``"null"`` means null; an empty string means the
type's implicit default.
"""

from __future__ import annotations

import base64
import re

from linter.errors import KrpcLintError
from linter.model.types import FieldType
from linter.model.versions import java_trim, shown
from linter.model.wire import INTEGERS

# Every pattern here runs with fullmatch and is deterministic: at each choice (an optional part, a repeat, an
# alternative) the next character decides, so Python's ``re`` never backtracks more than one step
# (tests/project/test_linear_patterns.py proves it on the parse tree).
_JAVA_DIGITS = {10: re.compile(r"[+-]?[0-9]+"), 16: re.compile(r"[+-]?[0-9a-fA-F]+")}
_EXPONENT = r"(?:[eE][+-]?[0-9]+)?"
_AFTER_DIGIT = rf"[0-9]*(?:\.[0-9]*)?{_EXPONENT}"  # the rest of a decimal after its first digit
_HEX_BODY = r"(?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
# Double.parseDouble's grammar: [0-9]+ .? [0-9]* | . [0-9]+, an exponent; 0x hex . hex p exponent; then f/F/d/D.
_JAVA_DOUBLE = re.compile(
    rf"[+-]?(?:NaN|Infinity|(?:0(?:[xX]{_HEX_BODY}|{_AFTER_DIGIT})|[1-9]{_AFTER_DIGIT}|\.[0-9]+{_EXPONENT})[fFdD]?)")
_URL_BASE64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")


class DefaultError(KrpcLintError, ValueError):
    """A default Kafka's generator rejects; ``check`` is default-value or default-empty."""

    def __init__(self, message: str, check: str = "default-value") -> None:
        super().__init__(message)
        self.check = check


def parse_int_default(text: str, type_name: str) -> int:
    """The integer a default string stands for, or ``DefaultError``."""
    digits, radix = (text[2:], 16) if text.startswith("0x") else (text, 10)
    if digits == "":
        return 0
    if not _JAVA_DIGITS[radix].fullmatch(digits):
        raise DefaultError(f'"{text}" is not a {"hexadecimal" if radix == 16 else "decimal"} integer')
    if len(digits.lstrip("+-").lstrip("0")) > 20:  # beyond int64, and int() refuses thousands of digits
        raise DefaultError(f'"{shown(text)}" is out of the {type_name} range')
    value = int(digits, radix)
    low, high = INTEGERS[type_name]
    if not low <= value <= high:
        raise DefaultError(f'"{text}" is out of the {type_name} range ({low} to {high})')
    return value


def parse_float_default(text: str) -> float:
    trimmed = java_trim(text)
    if not _JAVA_DOUBLE.fullmatch(trimmed):
        raise DefaultError(f'"{text}" is not a number Java can parse')
    core = trimmed.rstrip("fFdD") if not trimmed.endswith("Infinity") else trimmed
    if "x" in core.lower():
        sign = -1.0 if core.startswith("-") else 1.0
        return sign * float.fromhex(core.lstrip("+-"))
    return float(core.replace("Infinity", "inf").replace("NaN", "nan"))


def parse_uuid_default(text: str) -> bytes:
    """Kafka reads the first 16 bytes of the URL-safe base64 text (so longer input is accepted)."""
    if not _URL_BASE64.fullmatch(text) or len(text.rstrip("=")) % 4 == 1:
        raise DefaultError(f'"{text}" is not URL-safe base64')
    body = text.rstrip("=")
    decoded = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    if len(decoded) < 16:
        raise DefaultError(f'"{text}" decodes to {len(decoded)} bytes; a uuid needs 16')
    return decoded[:16]


def parse_default(field_type: FieldType, text: str) -> object:
    """The value a default string means for a field type. ``None`` stands for null."""
    name = field_type.name
    if field_type.is_array:
        if text == "null":
            return None
        if text:
            raise DefaultError("the only valid default for an array is empty or null", "default-empty")
        return []
    if name == "bool":
        if text == "" or text.lower() == "false":
            return False
        if text.lower() == "true":
            return True
        raise DefaultError(f'"{text}" is not true or false')
    if name in INTEGERS:
        return parse_int_default(text, name)
    if name == "float64":
        return 0.0 if text == "" else parse_float_default(text)
    if name == "uuid":
        return bytes(16) if text == "" else parse_uuid_default(text)
    if name == "string":
        return None if text == "null" else text
    if name == "records":
        return None
    if name == "bytes":
        if text == "null":
            return None
        if text:
            raise DefaultError("the only valid default for bytes is empty or null", "default-empty")
        return b""
    if text == "null":  # struct
        return None
    if text:
        raise DefaultError("the only valid default for a struct is the empty struct or null", "default-empty")
    return {}
