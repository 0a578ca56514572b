"""Field types, parsed as Kafka's generator parses them (``FieldType.java``)."""

from __future__ import annotations

from dataclasses import dataclass

from linter.errors import KrpcLintError
from linter.model.versions import java_trim, shown
from linter.model.wire import PRIMITIVES, WIRE, Primitive


class TypeSyntaxError(KrpcLintError, ValueError):
    """A type string Kafka's generator rejects; ``array_of_arrays`` tells the two rules apart."""

    def __init__(self, message: str, array_of_arrays: bool = False) -> None:
        super().__init__(message)
        self.array_of_arrays = array_of_arrays


@dataclass(frozen=True, slots=True)
class FieldType:
    """``name`` is a primitive or a struct name; ``is_array`` wraps it in ``[]``."""

    name: str
    is_array: bool = False

    @staticmethod
    def parse(text: str) -> FieldType:
        """Kafka's ``FieldType.parse``, whose recursion over ``[]`` prefixes is a loop here (a hostile
        ``[][][]...`` costs no stack): the innermost element decides first, then an array of arrays."""
        text = java_trim(text)
        arrays = 0
        while text.startswith("[]"):
            element_text = java_trim(text[2:])
            if not element_text:
                raise TypeSyntaxError(f"can't parse array type {shown(text)}: no element type found")
            text, arrays = element_text, arrays + 1
        if text not in PRIMITIVES and not text[:1].isupper():
            raise TypeSyntaxError(f"can't parse type {shown(text)}")
        if arrays > 1:
            raise TypeSyntaxError("can't have an array of arrays; use an array of structs containing an array instead",
                                  array_of_arrays=True)
        return FieldType(text, arrays == 1)

    @property
    def element(self) -> FieldType:
        return FieldType(self.name)

    @property
    def is_struct(self) -> bool:
        """A struct (not an array of structs)."""
        return not self.is_array and self.name not in PRIMITIVES

    @property
    def is_struct_array(self) -> bool:
        return self.is_array and self.name not in PRIMITIVES

    @property
    def struct_name(self) -> str | None:
        """The struct this field's type refers to, directly or as array element."""
        return None if self.name in PRIMITIVES else self.name

    @property
    def is_string(self) -> bool:
        return not self.is_array and self.name == "string"

    @property
    def is_bytes(self) -> bool:
        return not self.is_array and self.name == "bytes"

    @property
    def is_records(self) -> bool:
        return not self.is_array and self.name == "records"

    @property
    def primitive(self) -> Primitive | None:
        """The wire traits of the type, or of an array's element (``linter.model.wire``); ``None`` for a struct."""
        return WIRE.get(self.name)

    @property
    def can_be_nullable(self) -> bool:
        """Strings, bytes, records (the length-prefixed types), arrays and (KIP-893) structs may be null."""
        primitive = WIRE.get(self.name)
        return self.is_array or primitive is None or primitive.length_prefixed

    def __str__(self) -> str:
        return ("[]" if self.is_array else "") + self.name


__all__ = ["PRIMITIVES", "FieldType", "TypeSyntaxError"]
