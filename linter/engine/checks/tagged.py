"""Tagged fields (KIP-482): tags, taggedVersions, and what a tagged field may be (rules KL401-KL411)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import label
from linter.engine.checks.registry import check
from linter.engine.context import FileContext, Hit
from linter.model.spec import FieldSpec


def _tagged_fields(ctx: FileContext) -> Iterator[tuple[FieldSpec, int]]:
    """Each field with a tag, and the tag."""
    for spec, _ in ctx.fields:
        if spec.tag is not None:
            yield spec, spec.tag


@check("tag-non-negative")
def tag_non_negative(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Tags are unsigned varints on the wire."""
    for spec, tag in _tagged_fields(ctx):
        if tag < 0:
            yield Hit(spec.child("tag"), f"field {label(spec)} has tag {tag}; tags cannot be negative")


@check("tag-needs-tagged-versions")
def tag_needs_tagged_versions(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A tag without taggedVersions would never be sent."""
    for spec, tag in _tagged_fields(ctx):
        if spec.tagged_versions is not None and spec.tagged_versions.empty:
            yield Hit(spec.child("tag"), f"field {label(spec)} has tag {tag} but no taggedVersions")


@check("tagged-versions-need-tag")
def tagged_versions_need_tag(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """taggedVersions without a tag number cannot be encoded."""
    for spec, _ in ctx.fields:
        raw_tag = spec.raw.get("tag")
        no_tag = raw_tag is None or (isinstance(raw_tag, str) and raw_tag.strip() == "")
        if no_tag and spec.tagged_versions is not None and not spec.tagged_versions.empty:
            yield Hit(spec.child("taggedVersions"), f"field {label(spec)} has taggedVersions "
                      f"{spec.tagged_versions} but no tag")


@check("tagged-versions-open-ended")
def tagged_versions_open_ended(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Once tagged, a field stays tagged in every later version."""
    for spec, _ in _tagged_fields(ctx):
        tagged = spec.tagged_versions
        if tagged is not None and not tagged.empty and not tagged.open_ended:
            yield Hit(spec.child("taggedVersions"), f"field {label(spec)} has taggedVersions {tagged}, "
                      "which is not open-ended")


@check("tagged-versions-within-versions")
def tagged_versions_within_versions(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A field can only be tagged in versions where it exists."""
    for spec, _ in _tagged_fields(ctx):
        tagged, versions = spec.tagged_versions, spec.versions
        if tagged is None or versions is None or tagged.empty:
            continue
        if tagged.intersect(versions) != tagged:
            yield Hit(spec.child("taggedVersions"), f"field {label(spec)} has taggedVersions {tagged} "
                      f"outside its versions {versions}")


@check("tagged-versions-flexible")
def tagged_versions_flexible(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Tagged fields live in the tagged-field section, which only flexible versions have."""
    message = ctx.message
    if message is None:
        return
    for spec, _ in ctx.fields:
        tagged = spec.tagged_versions
        if tagged is None or tagged.empty:
            continue
        override = spec.flexible_versions.value
        flexible = override if override is not None and spec.flexible_versions.given else message.flexible
        if tagged.intersect(flexible) != tagged:
            yield Hit(spec.child("taggedVersions"), f"field {label(spec)} has taggedVersions {tagged}, "
                      f"not within the flexible versions {flexible}")


@check("tagged-nullability-uniform")
def tagged_nullability_uniform(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A tagged field is nullable in all of its tagged versions or in none."""
    for spec, _ in _tagged_fields(ctx):
        tagged, nullable = spec.tagged_versions, spec.nullable_versions
        if tagged is None or nullable is None or tagged.empty:
            continue
        both = nullable.intersect(tagged)
        if not both.empty and both != tagged:
            yield Hit(spec.child("nullableVersions"), f"field {label(spec)} is nullable in {nullable} but "
                      f"tagged in {tagged}: all tagged versions must be nullable, or none")


@check("no-tagged-map-key")
def no_tagged_map_key(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A key field must always be present, so it cannot be tagged."""
    for spec, _ in _tagged_fields(ctx):
        if spec.map_key:
            yield Hit(spec.child("mapKey"), f"tagged field {label(spec)} cannot be a mapKey")


@check("no-tagged-records")
def no_tagged_records(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Record batches cannot be tagged fields."""
    for spec, _ in ctx.fields:
        if spec.type is not None and spec.type.is_records and spec.tagged_versions and not spec.tagged_versions.empty:
            yield Hit(spec.child("taggedVersions"), f"records field {label(spec)} cannot be a tagged field")


@check("unique-tags")
def unique_tags(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Two fields with one tag would be indistinguishable on the wire."""
    if ctx.message is None:
        return
    for struct in ctx.structs:
        seen: dict[int, str] = {}
        for spec in struct.fields:
            if spec.tag is None:
                continue
            if spec.tag in seen:
                yield Hit(spec.child("tag"), f"in {struct.name}, field {label(spec)} reuses tag {spec.tag} "
                          f"of field {seen[spec.tag]}")
            else:
                seen[spec.tag] = label(spec)


@check("contiguous-tags")
def contiguous_tags(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Tags start at 0 without gaps: small tags take one byte on the wire."""
    if ctx.message is None:
        return
    for struct in ctx.structs:
        tags = {spec.tag for spec in struct.fields if spec.tag is not None}
        if any(tag < 0 for tag in tags):
            continue  # a negative tag is tag-non-negative's finding; a gap below it says nothing more
        for expected in range(len(tags)):
            if expected not in tags:
                where = struct.fields_path or struct.path
                yield Hit(where, f"in {struct.name}, tags are not contiguous: tag {expected} is unused but "
                          f"higher tags are ({', '.join(map(str, sorted(tags)))})")
                break
