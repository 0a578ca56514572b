"""A fork's generator: the enum values its ``EntityType``, ``RequestListenerType`` and ``MessageSpecType`` accept.

Forks of Kafka (AutoMQ adds the entity types ``nodeId``, ``nodeEpoch``, ``streamId`` and ``streamEpoch``) extend
the generator's enums, so specs that are valid in their tree are KL103 against Kafka's. When a linted file lies
in a tree holding Kafka's generator (``generator/src/main/java/org/apache/kafka/message/`` in a directory at or
above it, up to the repository root), the names of those enums' constants are taken from the Java sources,
read as text for ``@JsonProperty("...")`` (regular files only, size-capped, one linear scan; never compiled or
run) and accepted besides Kafka's own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from linter.parse.files import InputError, read_regular

GENERATOR_PACKAGE = os.path.join("generator", "src", "main", "java", "org", "apache", "kafka", "message")
ENUM_FILES = ("EntityType.java", "RequestListenerType.java", "MessageSpecType.java")
GENERATOR_BYTES = 1024 * 1024  # each of these files is a few kilobytes
MAX_NAMES = 1000  # constants per enum taken at most

# Not nested, no alternation: each match attempt stops at the first quote or line end, so the scan is linear.
_JSON_PROPERTY = re.compile(r'@JsonProperty\("([^"\\\n]*)"\)')
_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class GeneratorEnums:
    """The enum values a generator's sources declare, and where they were read."""

    package: str  # the generator's message package directory
    files: tuple[str, ...]  # the enum sources read
    entity_types: tuple[str, ...] = ()
    listeners: tuple[str, ...] = ()
    types: tuple[str, ...] = ()


def json_property_names(text: str) -> list[str]:
    """The names of ``@JsonProperty("name")`` annotations in Java source, in order, sane names only.

    >>> json_property_names('@JsonProperty("brokerId")\\n    BROKER_ID(FieldType.Int32FieldType.INSTANCE),')
    ['brokerId']
    """
    names = []
    for found in _JSON_PROPERTY.finditer(text):
        name = found.group(1)
        if _NAME.fullmatch(name) and name not in names:
            names.append(name)
            if len(names) >= MAX_NAMES:
                break
    return names


def read_enums(package: str) -> GeneratorEnums | None:
    """The values of the enum sources in a generator package, or None when none of them is readable."""
    values: dict[str, list[str]] = {}
    read = []
    for name in ENUM_FILES:
        path = os.path.join(package, name)
        try:
            data = read_regular(path, GENERATOR_BYTES)
        except InputError:
            continue
        if len(data) > GENERATOR_BYTES:
            continue
        read.append(path)
        values[name] = json_property_names(data.decode("utf-8", errors="replace"))
    if not read:
        return None
    return GeneratorEnums(package, tuple(read), tuple(values.get("EntityType.java", ())),
                          tuple(values.get("RequestListenerType.java", ())),
                          tuple(values.get("MessageSpecType.java", ())))


class GeneratorFinder:
    """Finds the generator of the tree holding a directory, walking up to the repository root (a directory
    with ``.git``); each directory is looked at once per run, so a run costs linear time in its directories."""

    def __init__(self) -> None:
        self._by_dir: dict[str, str | None] = {}  # directory -> the generator package above it
        self._enums: dict[str, GeneratorEnums | None] = {}

    def package_for(self, directory: str) -> str | None:
        start = os.path.abspath(directory)
        walked = []
        current = start
        found: str | None = None
        while True:
            if current in self._by_dir:
                found = self._by_dir[current]
                break
            walked.append(current)
            package = os.path.join(current, GENERATOR_PACKAGE)
            if any(os.path.isfile(os.path.join(package, name)) for name in ENUM_FILES):
                found = package
                break
            parent = os.path.dirname(current)
            if parent == current or os.path.exists(os.path.join(current, ".git")):
                break
            current = parent
        for each in walked:
            self._by_dir[each] = found
        return found

    def enums_for(self, directory: str) -> GeneratorEnums | None:
        """The enum values of the generator above ``directory``, read once per generator."""
        package = self.package_for(directory)
        if package is None:
            return None
        if package not in self._enums:
            self._enums[package] = read_enums(package)
        return self._enums[package]
