"""The struct registry of one message, as a reference graph (networkx).

Kafka's generator registers common structs first, then every inline struct of the
message body (a struct-typed field, or an array of structs, with the field's own
``versions``). Fields inside common structs are not registered, so an inline struct
there cannot be found later. The graph has one node per struct name plus the message
root, and an edge for every field that refers to a struct; it answers which structs are
defined twice, missing, re-specified, reachable or unused.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from linter.model.spec import FieldSpec, MessageSpec, StructSpec
from linter.model.versions import Versions, java_trim
from linter.parse.jsonc import JsonPath

if TYPE_CHECKING:
    import networkx

ROOT = "<message>"
#: Struct levels below a message, far past any real spec (Kafka's deepest has 4): the one struct-depth limit
#: (compat's layouts take it as ``compat.layout.MAX_DEPTH``).
MAX_STRUCT_NESTING = 64


@dataclass(frozen=True, slots=True)
class StructDef:
    """A registered struct: where it was defined and the versions Kafka gives it."""

    name: str
    kind: str  # "common" | "inline"
    versions: Versions | None
    fields: tuple[FieldSpec, ...]
    path: JsonPath


class StructRegistry:
    """Registration exactly as Kafka does it, plus the reference graph."""

    def __init__(self, message: MessageSpec) -> None:
        self.message = message
        self.edges: list[tuple[str, str, JsonPath]] = []  # (from struct, to struct, field path)
        self.defs: dict[str, StructDef] = {}
        self.duplicate_commons: list[StructSpec] = []
        self.lowercase_commons: list[StructSpec] = []
        self.duplicate_inline: list[FieldSpec] = []
        self.respecified_commons: list[FieldSpec] = []
        self.missing: list[FieldSpec] = []
        #: The edges to defined structs by the struct (or ``ROOT``) whose field names one: (that struct, the
        #: field's path), in the spec's order. What ``levels`` and lint's KL654 walk.
        self.children: dict[str, list[tuple[str, JsonPath]]] = {}
        self._register()

    def _register(self) -> None:
        for common in self.message.common_structs:
            if common.name is None:
                continue
            if not common.name[:1].isupper():
                self.lowercase_commons.append(common)
            if common.name in self.defs:
                self.duplicate_commons.append(common)
                continue
            self.defs[common.name] = StructDef(common.name, "common", common.versions, common.fields, common.path)
        self._register_inline(self.message.fields, ROOT)
        for common in self.message.common_structs:
            if common.name is not None:
                self._link_common(common.fields, common.name)
        for source, target, path in self.edges:
            if target in self.defs:
                self.children.setdefault(source, []).append((target, path))

    def _register_inline(self, fields: tuple[FieldSpec, ...], parent: str) -> None:
        for spec in fields:
            name = spec.type.struct_name if spec.type is not None else None
            if name is None:
                continue
            self.edges.append((parent, name, spec.path))
            if name in self.defs and self.defs[name].kind == "common":
                if spec.has_fields:
                    self.respecified_commons.append(spec)
            elif name in self.defs:
                self.duplicate_inline.append(spec)
            else:
                self.defs[name] = StructDef(name, "inline", spec.versions, spec.fields, spec.path)
            self._register_inline(spec.fields, name)

    def _link_common(self, fields: tuple[FieldSpec, ...], parent: str) -> None:
        """Fields of common structs only look structs up; a name nobody registered is missing."""
        for spec in fields:
            name = spec.type.struct_name if spec.type is not None else None
            if name is None:
                continue
            self.edges.append((parent, name, spec.path))
            if name not in self.defs:
                self.missing.append(spec)
            self._link_common(spec.fields, parent if name not in self.defs else name)

    def lookup(self, name: str) -> StructDef | None:
        return self.defs.get(name)

    @cached_property
    def graph(self) -> networkx.DiGraph[str]:
        """The reference graph: the message root and one node per struct, an edge per referring field.

        Built on first use: most messages never need more than the registration above."""
        import networkx as nx

        graph: nx.DiGraph[str] = nx.DiGraph()
        graph.add_node(ROOT)
        for name, definition in self.defs.items():
            graph.add_node(name, kind=definition.kind)
        for source, target, path in self.edges:
            graph.add_edge(source, target, field=path)
        return graph

    @property
    def nesting(self) -> int:
        """The most struct levels a chain of fields goes down from the message, through inline and common
        structs alike (a common struct may name the next one, so the JSON's own nesting limit does not bound
        this). Every walk of a message's structs (the codec's compiler, compat's layouts and diffs) is refused
        past ``MAX_STRUCT_NESTING`` before it starts (``too_deep``); lint reports it as KL654."""
        return self.levels[ROOT]

    @property
    def too_deep(self) -> str | None:
        """Why no walk of the message's structs may start, or ``None``: the one wording of the refusal past
        ``MAX_STRUCT_NESTING`` levels, which the codec's compiler raises, compat reports (KL1091) and lint (KL654)."""
        if self.nesting <= MAX_STRUCT_NESTING:
            return None
        return (f"structs nest {self.nesting} levels below the message through their types, more than the "
                f"{MAX_STRUCT_NESTING} krpc-lint's codec and compat follow (Kafka's deepest has 4)")

    @cached_property
    def levels(self) -> dict[str, int]:
        """For the message (``ROOT``) and each struct it reaches: the struct levels from there down, itself
        included. A struct that contains itself (KL654) ends its chain. Iterative: a hostile chain of
        thousands of common structs costs no stack."""
        children = self.children
        levels: dict[str, int] = {}  # finished structs: the levels from each one down, itself included
        on_path = {ROOT}
        stack = [(ROOT, iter(children.get(ROOT, ())))]
        while stack:
            node, pending = stack[-1]
            child, _ = next(pending, (None, ()))
            if child is None:
                stack.pop()
                on_path.discard(node)
                below = max((levels[c] for c, _ in children.get(node, ()) if c in levels), default=0)
                levels[node] = below + (node != ROOT)
            elif child not in levels and child not in on_path:
                on_path.add(child)
                stack.append((child, iter(children.get(child, ()))))
        return levels

    def reachable(self) -> set[str]:
        """Struct names some field of the message reaches, directly or through other structs."""
        import networkx as nx

        return nx.descendants(self.graph, ROOT)

    def unused_commons(self) -> list[StructSpec]:
        """Common structs that no field of the message reaches, directly or through other structs."""
        commons = [c for c in self.message.common_structs if c.name is not None and c not in self.duplicate_commons]
        direct = {target for source, target, _ in self.edges if source == ROOT}
        if all(c.name in direct for c in commons):
            return []  # every common struct is used by a top-level field: no traversal needed
        used = self.reachable() | self._named_by_unparsed_types()
        return [c for c in commons if c.name not in used]

    def _named_by_unparsed_types(self) -> set[str]:
        """Struct names written in types that failed to parse (another rule reports those):
        the author meant to use the struct, so it is not unused."""
        def names(fields: tuple[FieldSpec, ...]) -> Iterator[str]:
            for spec in fields:
                if spec.type is None and spec.type_text is not None:
                    yield java_trim(spec.type_text).removeprefix("[]")
                yield from names(spec.fields)

        found = set(names(self.message.fields))
        for common in self.message.common_structs:
            found.update(names(common.fields))
        return found
