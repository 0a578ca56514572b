"""The words every layer shares: severities, profiles, rule statuses, output formats, Kafka versions, the compat
categories, the tool's name and version, and ``plural``. It sits at the bottom beside ``linter.errors`` and
imports nothing of krpc-lint, so any module may use it; importing it costs next to nothing."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

TOOL_NAME = "krpc-lint"

SEVERITIES = ("error", "warning", "info")
PROFILES = ("kafka", "kafka-ci", "recommended", "strict")
# A profile that also takes every rule of others: kafka-ci is what passes Kafka's CI, its generator (kafka) and
# the unit tests that assert over every spec (rules that list kafka-ci).
PROFILE_INCLUDES = {"kafka-ci": ("kafka",)}


def in_profile(profile: str, profiles: tuple[str, ...]) -> bool:
    """Whether a rule listing ``profiles`` runs under ``profile``, included profiles counted.

    >>> in_profile("kafka-ci", ("kafka", "recommended")), in_profile("kafka", ("kafka-ci",))
    (True, False)
    """
    return profile in profiles or any(base in profiles for base in PROFILE_INCLUDES.get(profile, ()))
# A rule's lifecycle, as ruff and buf have it: preview rules run only when named, deprecated ones still run
# (naming one warns), removed ones never run (naming one is a usage error); the last two say what replaces them.
STATUSES = ("stable", "preview", "deprecated", "removed")
FORMATS = ("text", "json", "sarif", "github", "junit")
WIRE_FORMATS = ("text", "json", "sarif")  # krpc-lint frames check --format
# Kafka releases whose generator a lint can stand for (``--kafka-version``); "any" is the default.
# ``linter.model.targets.TARGETS`` defines each; a test keeps the two in step.
KAFKA_VERSIONS = ("any", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9",
                  "4.0", "4.1", "4.2", "4.3", "trunk")


def plural(count: int, word: str, *, grouped: bool = False) -> str:
    """``1 file``, ``2 files``: a count and its noun, as every summary line writes it (``grouped``: the count
    with thousands separators, as report.html writes it).

    >>> plural(1, "error"), plural(2, "other JSON file"), plural(12345, "frame", grouped=True)
    ('1 error', '2 other JSON files', '12,345 frames')
    """
    return (f"{count:,}" if grouped else str(count)) + " " + (word if count == 1 else word + "s")


def tool_version() -> str:
    """The installed distribution's version, or 0.0.0 when running from a bare checkout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(TOOL_NAME)
    except PackageNotFoundError:
        return "0.0.0"


class Category(StrEnum):
    """A compat verdict, or one of the two rows that are not verdicts (``input``, ``ERROR``)."""

    heading: str  # the section title in docs/rules.md
    label: str  # the few words of the changelog
    colour: str  # report.html's swatches and bars: Okabe–Ito and Tol, told apart with colour-vision deficiencies

    WIRE_BREAKING = "WIRE_BREAKING", "Compatibility: wire-breaking", "wire-breaking", "#D55E00"
    NULLABILITY_WIDENED = ("NULLABILITY_WIDENED", "Compatibility: nullability widened", "nullability widened",
                           "#56B4E9")
    NULLABILITY_NARROWED = ("NULLABILITY_NARROWED", "Compatibility: nullability narrowed", "nullability narrowed",
                            "#0072B2")
    DEFAULT_CHANGED = "DEFAULT_CHANGED", "Compatibility: default changed", "default changed", "#F0E442"
    VERSION_DROPPED = "VERSION_DROPPED", "Compatibility: versions dropped", "versions dropped", "#CC79A7"
    MAX_VERSION_LOWERED = ("MAX_VERSION_LOWERED", "Compatibility: maximum version lowered", "versions retracted",
                           "#E69F00")
    TAG_REMOVED = "TAG_REMOVED", "Compatibility: tag removed", "tag removed", "#882255"
    SOURCE_ONLY = "SOURCE_ONLY", "Compatibility: source-only changes", "source only", "#999999"
    SAFE = "SAFE", "Compatibility: safe changes", "safe", "#009E73"
    ERROR = "ERROR", "", "error", "#332288"  # a pair the audit or changelog could not compare
    INPUT = "input", "Compatibility: input", "input", "#DDCC77"  # a revision of a spec cannot be read (KL1091)

    def __new__(cls, value: str, heading: str, label: str, colour: str) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.heading, member.label, member.colour = heading, label, colour
        return member

    @classmethod
    def known(cls, name: str | None) -> Category | None:
        """The category named ``name`` (a finding's or a row's text), or ``None`` for any other text."""
        return _BY_NAME.get(name or "")


_BY_NAME = {category.value: category for category in Category}
#: The verdicts, gravest first: the first one a message's changes have is its verdict (``change.primary``).
VERDICTS = tuple(category for category in Category if category not in (Category.ERROR, Category.INPUT))
#: Rule-doc headings by category name, for ``linter.report.rules_doc``.
CATEGORY_HEADINGS = {category.value: category.heading for category in Category if category.heading}

