"""Tagged fields (KIP-482): tags, taggedVersions, what a tagged field may be, and the syntax of KIP-482's
earlier draft (rules KL401-KL412)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import label
from linter.engine.checks.registry import check
from linter.engine.context import FileContext, Hit
from linter.engine.fixes import key_edit, value_edit
from linter.model.spec import FieldSpec, Issue


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


# KIP-482's first draft (June 2019) called tagged fields "optional fields": a message-level "versionsWithOptional"
# range (the final "flexibleVersions"), an "optionalFields" list beside "fields", and tags in hexadecimal strings.
_DRAFT_KEYS = frozenset({"versionsWithOptional", "optionalFields"})
_HEX_TAG = re.compile(r"0[xX][0-9a-fA-F]{1,8}")  # anchored by fullmatch; no repetition can backtrack
_INT32_MAX = 2**31 - 1


def hex_tag(value: Any) -> int | None:
    """The tag a draft spec wrote as a hexadecimal string ("0x0001"), when it fits Kafka's int tag; else None."""
    if isinstance(value, str) and _HEX_TAG.fullmatch(value):
        tag = int(value, 16)
        return tag if tag <= _INT32_MAX else None
    return None


def draft_issues(ctx: FileContext) -> list[Issue]:
    """The structural issues that are KIP-482 draft syntax: kip482-draft-syntax reports them, so unknown-key and
    value-kind do not report them a second time."""
    if not ctx.structure:
        return []  # a clean file (most of them) pays nothing
    fields = {spec.path: spec for spec, _ in ctx.fields}
    out = []
    for issue in ctx.structure:
        name = issue.path[-1] if issue.path else None
        owner = fields.get(issue.path[:-1])
        if (issue.check == "unknown-key" and name in _DRAFT_KEYS) or (
                issue.check == "value-kind" and name == "tag" and owner is not None
                and hex_tag(owner.raw.get("tag")) is not None):
            out.append(issue)
    return out


@check("kip482-draft-syntax")
def kip482_draft_syntax(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """KIP-482's draft syntax (optionalFields, versionsWithOptional, hexadecimal tags) named by its final form,
    with the rename as a fix where the final form is one spelling away."""
    fields = {spec.path: spec for spec, _ in ctx.fields}
    for issue in draft_issues(ctx):
        owner = issue.path[:-1]
        if issue.path[-1] == "tag":
            yield _hex_tag_hit(ctx, fields[owner])
        elif issue.path[-1] == "optionalFields":
            yield Hit(issue.path, 'optionalFields is KIP-482 draft syntax: the final form lists each optional field '
                      'in "fields" with an integer "tag" and "taggedVersions" (and "nullableVersions" for '
                      '"nullable")', at_key=True)
        else:
            yield _versions_with_optional_hit(ctx, owner, fields.get(owner))


def _hex_tag_hit(ctx: FileContext, spec: FieldSpec) -> Hit:
    """A hexadecimal tag string, fixed to the JSON integer it means."""
    raw, tag = spec.raw["tag"], hex_tag(spec.raw["tag"])
    return Hit(spec.child("tag"), f'field {label(spec)} has the KIP-482 draft hexadecimal tag "{raw}": the final '
               f'form is the integer "tag": {tag}', fix=value_edit(ctx.document, spec.child("tag"), str(tag)))


def _versions_with_optional_hit(ctx: FileContext, owner: tuple[str | int, ...], spec: FieldSpec | None) -> Hit:
    """versionsWithOptional: flexibleVersions on the message, taggedVersions on a field; renamed when the final key
    is not there already (then which of the two values is meant is a human's call)."""
    path = (*owner, "versionsWithOptional")
    if spec is not None:
        final, raw, where = "taggedVersions", spec.raw, f" on field {label(spec)}"
    elif owner == () and ctx.message is not None:
        final, raw, where = "flexibleVersions", ctx.message.raw, ""
    else:
        return Hit(path, "versionsWithOptional is KIP-482 draft syntax: the final form is flexibleVersions on the "
                   "message, taggedVersions on a field", at_key=True)
    fix = () if final in raw else key_edit(ctx.document, path, final)
    return Hit(path, f"versionsWithOptional{where} is KIP-482 draft syntax: the final form is {final}", at_key=True,
               fix=fix)
