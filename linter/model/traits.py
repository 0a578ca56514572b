"""One answer to "field F at version V": whether it travels, tagged or not, nullable, compact.

The compat layout (``linter.compat.layout``) and the codec compiler (``linter.codec.compiler``)
both ask this; keeping the answer in one place keeps their bytes and their verdicts in step
(they once differed on field-level ``flexibleVersions``). How each type then travels is the other
half, in ``linter.model.wire``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from linter.model.spec import FieldSpec, MessageSpec
from linter.model.types import FieldType
from linter.model.versions import Versions


@dataclass(frozen=True, slots=True)
class FieldAt:
    """A field at one version of its message."""

    present: bool
    tag: int | None  # the tag when the field is a tagged field at this version
    nullable: bool
    compact: bool  # compact (unsigned varint) lengths for strings, bytes, records and arrays


def field_at(spec: FieldSpec, version: int, flexible: bool) -> FieldAt:
    """The field at ``version`` of a message that is ``flexible`` at that version.

    A field-level ``flexibleVersions`` decides the length encoding of a string, bytes or records
    field (Kafka's header ``ClientId`` stays classic in flexible header versions); everything
    else follows the message.
    """
    versions, tagged, nullable = spec.versions, spec.tagged_versions, spec.nullable_versions
    compact = flexible
    if spec.flexible_versions.given and _overridable(spec.type):
        override = spec.flexible_versions.value
        compact = override is not None and override.contains(version)
    return FieldAt(
        present=versions is not None and versions.contains(version),
        tag=spec.tag if spec.tag is not None and tagged is not None and tagged.contains(version) else None,
        nullable=nullable is not None and nullable.contains(version),
        compact=compact,
    )


def _overridable(field_type: FieldType | None) -> bool:
    """Whether a field-level flexibleVersions switches the field's length prefix: Kafka allows the
    override on the length-prefixed types (string and bytes; records travel as bytes), not on arrays."""
    if field_type is None or field_type.is_array:
        return False
    primitive = field_type.primitive
    return primitive is not None and primitive.length_prefixed


# --- where the answers change -----------------------------------------------------------------------


def version_boundaries(message: MessageSpec) -> list[int]:
    """Sorted versions at which some range of the message starts or ends (validVersions, flexibleVersions and
    every field's versions, taggedVersions, nullableVersions and flexibleVersions): between two of them every
    answer of ``field_at`` is the same, so per-version work can be done once per segment. Their number grows
    with the spec's text, never with its version numbers (``"validVersions": "0-32766"`` is two)."""
    ranges = [message.versions, message.flexible]
    for spec, _ in message.all_fields():
        ranges += [spec.versions, spec.tagged_versions, spec.nullable_versions, spec.flexible_versions.value]
    points = {0}
    for versions in ranges:
        if versions is not None and not versions.empty:
            points.update((versions.lowest, versions.highest + 1))
    return sorted(points)


def segments(shared: Versions, *boundaries: Sequence[int]) -> list[range]:
    """``shared`` cut at every boundary of either message: consecutive versions that every answer treats alike."""
    if shared.empty:
        return []
    cuts = sorted({shared.lowest, *(b for points in boundaries for b in points if shared.lowest < b <= shared.highest)})
    return [range(start, end) for start, end in zip(cuts, [*cuts[1:], shared.highest + 1])]


def representative(boundaries: Sequence[int], version: int) -> int:
    """The first version of ``version``'s segment (``boundaries`` from ``version_boundaries``)."""
    index = bisect_right(boundaries, version)
    return boundaries[index - 1] if index else version


# --- header versions ---------------------------------------------------------------------------

API_VERSIONS_KEY = 18  # ApiVersionsResponse always uses response header v0 (KIP-511)
CONTROLLED_SHUTDOWN_KEY = 7  # ControlledShutdownRequest v0 used request header v0


def implied_header_version(message: MessageSpec, version: int) -> int | None:
    """The header version Kafka derives from ``flexibleVersions`` (KIP-482) where no ``headerVersions``
    says otherwise: requests 2 when flexible else 1, responses 1 when flexible else 0; ``None`` for
    messages that are no request or response."""
    flexible = message.flexible.contains(version)
    if message.type == "request":
        if message.api_key == CONTROLLED_SHUTDOWN_KEY and version == 0:
            return 0
        return 2 if flexible else 1
    if message.type == "response":
        if message.api_key == API_VERSIONS_KEY:
            return 0
        return 1 if flexible else 0
    return None


def header_version(message: MessageSpec, version: int) -> int | None:
    """The header version a request or response uses at ``version``: its ``headerVersions`` entry
    (KIP-1313) when it has one, else the version implied by ``flexibleVersions``."""
    mapped = message.header_versions.lookup(version) if message.header_versions is not None else None
    return mapped if mapped is not None else implied_header_version(message, version)
