"""What a witness proves, named: the first field read differently is often not the one that changed (a
retyped field upsets the fields after it), so a finding's witness also names its cause (``cause_of``, from
where the finding points and its message), and every witness is worded in one place, ``explain``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from linter.compat.change import Change
from linter.compat.kinds import ChangeKind
from linter.compat.layout import MAX_DEPTH
from linter.model.spec import FieldSpec, MessageSpec
from linter.parse.jsonc import JsonPath

# changes that move no later bytes: a tag's value is self-delimited, an apiKey is not in the body
_NOT_SHIFTING = frozenset({ChangeKind.TAG_REUSED, ChangeKind.TAG_RENUMBERED, ChangeKind.TAGGED_FIELD_RETYPED,
                           ChangeKind.API_KEY_CHANGED, ChangeKind.API_KEY_REUSED})


@dataclass(frozen=True)
class Cause:
    """The change a witness proves, so that its text names it and not only the first field it upsets."""

    field: str  # the field path as witnesses write it (``Topics[].Name``), or the spec key (``flexibleVersions``)
    change: str  # the change in a few words, naming ``field``: ``MaxWaitMs int64 -> int32``
    shifts: bool = True  # a body layout change: the bytes after it are read at other offsets


def explain(observed: str, at: str | None, detail: str, cause: Cause | None) -> str:
    """The one place a witness is worded: the change that causes it, then where the bytes first read
    differently (the codec's account alone when the cause is unknown, as for a cross-check)."""
    if cause is None:
        return observed
    if not at:
        return f"{cause.change}{' shifts the bytes' if cause.shifts else ''}: {observed}"
    plain = re.sub(r"\[\d+\]", "[]", at)
    if plain == cause.field:
        return f"{cause.change}; the first field read differently is {at} itself: {detail}"
    inside = plain.startswith((cause.field + ".", cause.field + "[]"))
    shift = " shifts the bytes" if cause.shifts and not inside else ""
    return f"{cause.change}{shift}; the first field read differently is {at}: {detail}"


def cause_of(change: Change, old: MessageSpec | None, new: MessageSpec | None) -> Cause | None:
    """What a finding is about, from where it points (``json_path``) and its message; ``None`` when it
    points nowhere (a cross-check divergence: its cause is what is unknown)."""
    spec = old if change.side == "old" else new
    if not change.json_path or spec is None:
        return None
    candidates = list(field_paths(spec, change.json_path)) or [str(change.json_path[0])]
    named = [c for c in candidates if _mentions(change.message, c)]
    field = (named or candidates)[0]
    words = summary(change.message, field)
    if field not in words:
        words = f"{words} ({field})"
    return Cause(field, words, change.rule not in _NOT_SHIFTING)


def _mentions(message: str, name: str) -> bool:
    """Whether ``message`` names ``name`` as a whole field path (not inside a longer name or path): string
    searches, no pattern compiled per name (a change of 20,000 fields has 20,000 names)."""
    start = message.find(name)
    while start >= 0:
        before = message[start - 1:start]
        after = message[start + len(name):start + len(name) + 1]
        if not (before and (before.isalnum() or before in "_.[]")) and not (after and (after.isalnum() or after in "_[")):
            return True
        start = message.find(name, start + 1)
    return False


def summary(message: str, field: str) -> str:
    """A finding's message in a few words: ``F: a -> b`` as ``F a -> b``; the explanation after ``; `` or
    ``: `` and a closing parenthesis are left to the finding (``fields reordered: A, B -> B, A`` stays)."""
    if message.startswith(field + ": "):
        message = f"{field} {message[len(field) + 2:]}"
    head, _, tail = message.split("; ")[0].partition(": ")
    if " -> " not in head and " -> " in tail.split(": ")[0]:
        head = f"{head}: {tail.split(': ')[0]}"
    return re.sub(r" \([^()]*\)$", "", head)


def field_paths(spec: MessageSpec, json_path: JsonPath, budget: int = 10_000) -> Iterator[str]:
    """The field ``json_path`` points into, named as witnesses name fields (``Topics[].Name``): one name
    per use of the common struct it may lie in. The path is followed by index (one field per level), and
    where a common struct is used is worked out once per spec (``common_uses``), so a change of many
    fields costs what its fields cost, not their square."""
    if json_path[:1] != ("commonStructs",):
        yield from _names_on_path(spec.struct.fields, json_path)
        return
    index = json_path[1] if len(json_path) > 1 else None
    if type(index) is not int or not 0 <= index < len(spec.common_structs):
        return
    struct = spec.common_structs[index]
    inner = list(_names_on_path(struct.fields, json_path))
    prefixes = common_uses(spec, budget).get(struct.name or "", [])
    yield from (prefix + name for prefix in prefixes for name in inner) if prefixes else inner


def _names_on_path(specs: tuple[FieldSpec, ...], json_path: JsonPath) -> Iterator[str]:
    """The deepest field of ``specs`` (and of the inline structs below) that ``json_path`` goes through."""
    prefix, found = "", None
    for _ in range(MAX_DEPTH):
        if not specs:
            break
        base = specs[0].path[:-1]
        index = json_path[len(base)] if len(json_path) > len(base) and tuple(json_path[:len(base)]) == base else None
        if type(index) is not int or not 0 <= index < len(specs) or specs[index].path != (*base, index):
            break
        field = specs[index]
        found = prefix + (field.name or "?")
        prefix = found + ("[]." if field.type is not None and field.type.is_array else ".")
        specs = field.fields
    if found is not None:
        yield found


_USES: dict[int, tuple[MessageSpec, dict[str, list[str]]]] = {}  # id(spec) -> (the spec, its common_uses)


def common_uses(spec: MessageSpec, budget: int = 10_000) -> dict[str, list[str]]:
    """Where each common struct is used, as name prefixes (``Topics[].``), worked out once per spec (a
    compare asks for every finding): common structs entered once per branch (no cycles); ``MAX_DEPTH`` and
    ``budget`` (fields visited) bound what a hostile spec costs."""
    cached = _USES.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1]
    commons = {struct.name: struct for struct in spec.common_structs}
    uses: dict[str, list[str]] = {}
    stack: list[tuple[tuple[FieldSpec, ...], str, frozenset[str]]] = [(spec.struct.fields, "", frozenset())]
    while stack and budget > 0:
        specs, prefix, entered = stack.pop()
        for field in specs:
            budget -= 1
            if budget < 0 or prefix.count(".") > MAX_DEPTH:
                break
            kind = field.type
            below = prefix + (field.name or "?") + ("[]." if kind is not None and kind.is_array else ".")
            if not field.fields and kind is not None and kind.name in commons and kind.name not in entered:
                uses.setdefault(kind.name, []).append(below)
                stack.append((commons[kind.name].fields, below, entered | {kind.name}))
            elif field.fields:
                stack.append((field.fields, below, entered))
    if len(_USES) >= 32:
        _USES.clear()
    _USES[id(spec)] = (spec, uses)
    return uses

