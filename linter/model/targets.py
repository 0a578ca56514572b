"""Kafka releases as lint targets: which spec format each release's generator accepts.

The JSON Schema (``spec.schema.json``) accepts the union of every supported release's format,
which is the default target ``any``. A named target (``--kafka-version 3.9``) adds, as
structural issues of the rules the generator's error belongs to, what that release's generator
rejects (an unknown key, an unknown enum value), and switches the version-dependent checks
(``headerVersions`` required on trunk, ``"validVersions": "none"`` an error before 4.0).
Sources for every row: ``docs/kafka-versions.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from linter.model.spec import Issue

_ALL_TYPES = ("request", "response", "header", "data", "metadata", "coordinator-key", "coordinator-value")
_CLASSIC_TYPES = _ALL_TYPES[:5]
_ALL_LISTENERS = ("zkBroker", "broker", "controller")
_KRAFT_LISTENERS = ("broker", "controller")


@dataclass(frozen=True, slots=True)
class KafkaTarget:
    """What one release's generator accepts.

    ``header_versions``: ``"unknown"`` (the key is rejected), ``"optional"`` or ``"required"``
    (on every request and response with valid versions).
    """

    name: str
    message_types: tuple[str, ...]
    listeners: tuple[str, ...]
    header_versions: str
    removed_apis: bool  # "validVersions": "none" makes an empty message that keeps its apiKey reserved
    # Values a fork's generator adds to Kafka's enums (config ``entity-types``/``listeners``, or the generator's
    # own EntityType.java, RequestListenerType.java and MessageSpecType.java): the schema's enum errors on them
    # are dropped. Empty for every release of ``TARGETS``.
    extra_entity_types: frozenset[str] = frozenset()
    extra_listeners: frozenset[str] = frozenset()
    extra_types: frozenset[str] = frozenset()

    def extended(self, entity_types: Iterable[str] = (), listeners: Iterable[str] = (),
                 types: Iterable[str] = ()) -> KafkaTarget:
        """This release, also accepting these entityType, listeners and type values.

        >>> fork = TARGETS["any"].extended(entity_types=["streamId"])
        >>> fork.accepts(Issue("enum-value", ("fields", 0, "entityType"), "..."),
        ...              {"fields": [{"entityType": "streamId"}]})
        True
        """
        return replace(self, extra_entity_types=self.extra_entity_types | frozenset(entity_types),
                       extra_listeners=self.extra_listeners | frozenset(listeners),
                       extra_types=self.extra_types | frozenset(types))

    @property
    def is_extended(self) -> bool:
        return bool(self.extra_entity_types or self.extra_listeners or self.extra_types)

    def accepts(self, issue: Issue, document: Any) -> bool:
        """Whether a schema issue is about a value this target adds to Kafka's enums (so it is no issue here)."""
        path = issue.path
        if not path or issue.check not in ("enum-value", "value-kind"):
            return False
        if path[-1] == "entityType":
            allowed = self.extra_entity_types
        elif path[0] == "listeners" and len(path) <= 2:
            allowed = self.extra_listeners
        elif path == ("type",):
            allowed = self.extra_types
        else:
            return False
        value = _at(document, path)
        return isinstance(value, str) and value in allowed

    def signature(self) -> str:
        """What distinguishes this target in a cache key: its name and any added values."""
        if not self.is_extended:
            return self.name
        return "|".join([self.name, *(",".join(sorted(values)) for values in
                                      (self.extra_entity_types, self.extra_listeners, self.extra_types))])

    def structure_issues(self, document: Any) -> list[Issue]:
        """What this release rejects that the union schema accepts, as the schema would word it."""
        if not isinstance(document, dict):
            return []
        issues = []
        if self.header_versions == "unknown" and "headerVersions" in document:
            issues.append(Issue("unknown-key", ("headerVersions",),
                                f'unknown key "headerVersions" (Kafka {self.name} has no headerVersions; '
                                "it came with KIP-1313)", at_key=True))
        kind = document.get("type")
        if isinstance(kind, str) and kind in _ALL_TYPES and kind not in self.message_types:
            issues.append(Issue("enum-value", ("type",), f'type "{kind}" is not one of: '
                                f'{", ".join(self.message_types)} (Kafka {self.name})'))
        listeners = document.get("listeners")
        items = listeners if isinstance(listeners, list) else [listeners]
        for index, item in enumerate(items):
            if isinstance(item, str) and item in _ALL_LISTENERS and item not in self.listeners:
                path = ("listeners", index) if isinstance(listeners, list) else ("listeners",)
                issues.append(Issue("enum-value", path, f'listeners "{item}" is not one of: '
                                    f'{", ".join(self.listeners)} (Kafka {self.name} has no ZooKeeper mode)'))
        return issues


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    """The value at a JSON path of a parsed document (None when the path does not lead anywhere)."""
    for part in path:
        if isinstance(document, dict) and isinstance(part, str):
            document = document.get(part)
        elif isinstance(document, list) and isinstance(part, int) and 0 <= part < len(document):
            document = document[part]
        else:
            return None
    return document


def _release(name: str, *, types: tuple[str, ...] = _ALL_TYPES, listeners: tuple[str, ...] = _KRAFT_LISTENERS,
             header_versions: str = "unknown", removed_apis: bool = True) -> KafkaTarget:
    return KafkaTarget(name, types, listeners, header_versions, removed_apis)


TARGETS: dict[str, KafkaTarget] = {
    "any": _release("any", listeners=_ALL_LISTENERS, header_versions="optional"),
    **{name: _release(name, types=_CLASSIC_TYPES, listeners=_ALL_LISTENERS, removed_apis=False) for name in
       ("2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9")},
    "4.0": _release("4.0", types=_CLASSIC_TYPES),
    "4.1": _release("4.1"),
    "4.2": _release("4.2"),
    "4.3": _release("4.3"),
    "trunk": _release("trunk", header_versions="required"),
}
DEFAULT_TARGET = "any"


def release_order(name: str) -> int:
    """Where a release of ``TARGETS`` stands among them, oldest first (``any`` before all): what ``kafka.since`` and
    ``kafka.until`` compare.

    >>> release_order("3.9") < release_order("4.0") < release_order("trunk")
    True
    """
    return _ORDER[name]


_ORDER = {name: index for index, name in enumerate(TARGETS)}


def target(name: str | None) -> KafkaTarget:
    """The target of a ``kafka-version`` value (``None``: the default); ``KeyError`` for an unknown one."""
    return TARGETS[name or DEFAULT_TARGET]
