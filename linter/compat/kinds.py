"""The kinds of change ``krpc-lint compat`` reports, each with its category, and the one table of categories.

A kind is the ``check: {compat: KIND}`` of one built-in rule (``rules/KL10xx-*.yaml``), whose ``category``
is the kind's (``tests/compat/test_compat_kinds.py`` holds both to it); the comparison records kinds only through
these members, so a new kind cannot reach a report without its rule. The categories come in the order every
output lists them (the gravest first) and carry what each output shows of them: the rule docs' heading, the
changelog's label, report.html's colour. Text, JSON and SARIF show the name itself.

Both are ``StrEnum``\\ s: a member is the string it stands for, so findings, JSON and rule lookups see the
same values as before.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from linter.vocabulary import Category

_WIRE, _SOURCE, _SAFE = Category.WIRE_BREAKING, Category.SOURCE_ONLY, Category.SAFE


class ChangeKind(StrEnum):
    """One kind of change between two revisions of a message; its value is the rule's ``check: {compat: ...}``."""

    category: Category

    FIELD_INSERTED = "field-inserted", _WIRE
    FIELD_REMOVED = "field-removed", _WIRE
    FIELD_RETYPED = "field-retyped", _WIRE
    FIELDS_REORDERED = "fields-reordered", _WIRE
    STRUCT_NULLABILITY_CHANGED = "struct-nullability-changed", _WIRE
    FLEXIBLE_VERSIONS_CHANGED = "flexible-versions-changed", _WIRE
    FIELD_MADE_TAGGED = "field-made-tagged", _WIRE
    FIELD_MADE_REGULAR = "field-made-regular", _WIRE
    TAG_REUSED = "tag-reused", _WIRE
    TAG_RENUMBERED = "tag-renumbered", _WIRE
    TAGGED_FIELD_RETYPED = "tagged-field-retyped", _WIRE
    API_KEY_CHANGED = "api-key-changed", _WIRE
    CROSS_CHECK_DIVERGENCE = "cross-check-divergence", _WIRE
    API_KEY_REUSED = "api-key-reused", _WIRE
    HEADER_VERSION_CHANGED = "header-version-changed", _WIRE
    NULLABILITY_WIDENED = "nullability-widened", Category.NULLABILITY_WIDENED
    NULLABILITY_NARROWED = "nullability-narrowed", Category.NULLABILITY_NARROWED
    DEFAULT_CHANGED = "default-changed", Category.DEFAULT_CHANGED
    VERSION_DROPPED = "version-dropped", Category.VERSION_DROPPED
    MESSAGE_REMOVED = "message-removed", Category.VERSION_DROPPED
    MAX_VERSION_LOWERED = "max-version-lowered", Category.MAX_VERSION_LOWERED
    API_REMOVED = "api-removed", Category.VERSION_DROPPED
    TAG_REMOVED = "tag-removed", Category.TAG_REMOVED
    FIELD_RENAMED = "field-renamed", _SOURCE
    MESSAGE_RENAMED = "message-renamed", _SOURCE
    FILE_RENAMED = "file-renamed", _SOURCE
    STRUCT_WRAPPING_CHANGED = "struct-wrapping-changed", _SOURCE
    STRUCT_MOVED = "struct-moved", _SOURCE
    TYPE_SPELLING_CHANGED = "type-spelling-changed", _SOURCE
    DEFAULT_SPELLING_CHANGED = "default-spelling-changed", _SOURCE
    FLEXIBLE_OVERRIDE_CHANGED = "flexible-override-changed", _SOURCE
    FIELD_ANNOTATION_CHANGED = "field-annotation-changed", _SOURCE
    DEPRECATED_VERSIONS_CHANGED = "deprecated-versions-changed", _SOURCE
    LISTENERS_CHANGED = "listeners-changed", _SOURCE
    COORDINATOR_RECORD_CONVERTED = "coordinator-record-converted", _SOURCE
    VERSION_ADDED = "version-added", _SAFE
    MESSAGE_ADDED = "message-added", _SAFE
    TAGGED_FIELD_ADDED = "tagged-field-added", _SAFE
    VERSION_STABILITY_CHANGED = "version-stability-changed", _SAFE
    HEADER_VERSIONS_CHANGED = "header-versions-changed", _SAFE
    HEADER_VERSIONS_DECLARED = "header-versions-declared", _SAFE
    COMPAT_INPUT_INVALID = "compat-input-invalid", Category.INPUT  # a file that cannot be compared, not a change

    def __new__(cls, value: str, category: Category) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.category = category
        return member
