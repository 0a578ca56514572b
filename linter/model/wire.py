"""The wire traits of Kafka's primitive types, in one table (``WIRE``).

Kafka's generator keeps these on ``FieldType`` (``fixedLength``, ``isVariableLength``...). Here the
codec's struct formats and size checks, the integer ranges that encoding, random values and defaults
check, which types carry a length prefix (and so follow a field-level ``flexibleVersions`` and may be
null), how records travel, and the Spark SQL type of a column of the type all read this table, so
the layout, the codec and the pipeline cannot disagree about a type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Primitive:
    """One primitive type as it travels."""

    name: str
    size: int | None  # bytes on the wire when fixed; None: a length (or null) then that many bytes
    spark: str  # the Spark SQL type of a column holding its values
    code: str = ""  # the ``struct`` format letter of a fixed-width number ("" when struct is not used)
    bounds: tuple[int, int] | None = None  # an integer's lowest and highest value
    travels_as: str = ""  # a length-prefixed type's wire form: records travel as bytes

    @property
    def length_prefixed(self) -> bool:
        """String, bytes and records: a length first, classic or compact, and null allowed."""
        return self.size is None

    @property
    def format(self) -> str:
        """The big-endian ``struct`` format of one value (``>i``)."""
        return ">" + self.code

    def wire(self, compact: bool) -> str:
        """How a value travels: ``int32``, ``uuid``, or a length-prefixed kind with its length encoding
        (``string/compact``, ``bytes/classic``). Records travel exactly as bytes."""
        if self.size is not None:
            return self.name
        return f"{self.travels_as}/{'compact' if compact else 'classic'}"


def _integer(name: str, size: int, code: str, spark: str) -> Primitive:
    bits = size * 8
    signed = code.islower()
    bounds = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return Primitive(name, size, spark, code, bounds)


WIRE: Mapping[str, Primitive] = MappingProxyType({p.name: p for p in (
    Primitive("bool", 1, "BOOLEAN"),
    _integer("int8", 1, "b", "TINYINT"),
    _integer("int16", 2, "h", "SMALLINT"),
    _integer("uint16", 2, "H", "INT"),
    _integer("int32", 4, "i", "INT"),
    _integer("uint32", 4, "I", "BIGINT"),
    _integer("int64", 8, "q", "BIGINT"),
    Primitive("float64", 8, "DOUBLE", "d"),
    Primitive("string", None, "STRING", travels_as="string"),
    Primitive("bytes", None, "BINARY", travels_as="bytes"),
    Primitive("records", None, "BINARY", travels_as="bytes"),
    Primitive("uuid", 16, "BINARY"),
)})

# Views of the table, for the questions asked most.
PRIMITIVES: tuple[str, ...] = tuple(WIRE)
INTEGERS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {name: p.bounds for name, p in WIRE.items() if p.bounds is not None})

__all__ = ["INTEGERS", "PRIMITIVES", "WIRE", "Primitive"]
