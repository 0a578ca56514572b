"""What a check sees: one file (``FileContext``) or one directory of files (``DirectoryContext``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path as FsPath
from typing import Any, TypeVar

from linter.engine.findings import Edit
from linter.engine.suppress import Suppression
from linter.model.registry import StructRegistry
from linter.model.schema import structure_issues
from linter.model.spec import FieldSpec, Issue, MessageSpec, StructSpec, build_message
from linter.model.targets import DEFAULT_TARGET, TARGETS, KafkaTarget
from linter.parse.document import SpecDocument
from linter.parse.jsonc import JsonPath

T = TypeVar("T")
Facts = tuple[JsonPath, dict[str, Any]]  # a node of a spec, and the facts a declarative rule's schema sees


@dataclass(frozen=True, slots=True)
class Hit:
    """One problem a check found: where (JSON path, or key), and what."""

    path: JsonPath
    message: str
    at_key: bool = False
    file: str | None = None  # for directory checks: the file the hit belongs to
    offset: int | None = None  # a character offset instead of a JSON path (syntax errors)
    position: tuple[int, int] | None = None  # a known line and column (comments)
    fix: tuple[Edit, ...] = ()  # the edits that fix it; kept only when the rule's YAML says ``fixable: true``


class FileContext:
    """A spec file with its model, built lazily so checks pay only for what they use."""

    def __init__(self, document: SpecDocument, target: KafkaTarget = TARGETS[DEFAULT_TARGET],
                 sibling: bool = False, file_naming: str = "infer") -> None:
        self.document = document
        self.target = target  # the Kafka release whose generator the checks stand for
        self.sibling = sibling  # read only as context for a file named alone (see ``linter.engine.runner``)
        self.file_naming = file_naming  # KL752's convention: kafka, snake_case, any, or infer (per directory)
        # Set when the report is finished (``linter.engine.finalize``), read by the meta rules afterwards:
        self.suppressions: list[Suppression] = []  # the file's inline suppressions, marked when used
        self.compat_rules: frozenset[str] = frozenset()  # ids and names of the compat rules

    @property
    def path(self) -> str:
        return self.document.path

    @cached_property
    def structure(self) -> list[Issue]:
        value = self.document.value
        if value is None:
            return []
        issues = structure_issues(value)
        if issues and self.target.is_extended:  # a fork's generator accepts more entityType/listeners values
            issues = [issue for issue in issues if not self.target.accepts(issue, value)]
        return issues + self.target.structure_issues(value)

    @cached_property
    def message(self) -> MessageSpec | None:
        value = self.document.value
        if not isinstance(value, dict):
            return None
        return build_message(value, self.document.path)

    @cached_property
    def fields(self) -> list[tuple[FieldSpec, StructSpec]]:
        """Every field with its struct, computed once for all checks."""
        return [] if self.message is None else list(self.message.all_fields())

    @cached_property
    def structs(self) -> list[StructSpec]:
        return [] if self.message is None else list(self.message.all_structs())

    def facts(self, selection: Hashable, build: Callable[[FileContext, Any], Iterable[Facts]]) -> list[Facts]:
        """Facts of every node of a kind (``build(self, selection)``), built once and shared by all declarative
        rules."""
        cache: dict[Hashable, list[Facts]] = self.__dict__.setdefault("_facts", {})
        if selection not in cache:
            cache[selection] = list(build(self, selection))
        return cache[selection]

    def derived(self, build: Callable[[FileContext], T]) -> T:
        """``build(self)``, worked out once for every check of a family that reads it (``build`` is the key)."""
        cache: dict[Callable[[FileContext], Any], Any] = self.__dict__.setdefault("_derived", {})
        if build not in cache:
            cache[build] = build(self)
        value: T = cache[build]
        return value

    @cached_property
    def registry(self) -> StructRegistry | None:
        return StructRegistry(self.message) if self.message is not None else None

    def model_issues(self, check: str) -> list[Issue]:
        message = self.message
        return [] if message is None else [i for i in message.issues if i.check == check]


@dataclass
class DirectoryContext:
    """Spec files of one directory. ``complete`` when the directory itself was linted,
    so checks that need every file (a request's response) can trust absence."""

    directory: FsPath
    files: list[FileContext] = field(default_factory=list)
    complete: bool = False
    _messages: list[tuple[FileContext, MessageSpec]] | None = field(default=None, repr=False)

    def messages(self) -> list[tuple[FileContext, MessageSpec]]:
        """Parsed messages in sorted file-name order, as Kafka's generator visits them."""
        if self._messages is None:
            pairs = [(ctx, ctx.message) for ctx in self.files if ctx.message is not None]
            self._messages = sorted(pairs, key=lambda pair: os.path.basename(pair[0].path))
        return self._messages
