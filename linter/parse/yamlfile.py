"""YAML from files a pull request may change (configs, rule packs): safe types only, and a bounded size
once aliases are expanded, so that an anchor referenced again and again ("billion laughs": a few hundred
bytes standing for a billion nodes) cannot blow up whatever walks or serialises the value."""

from __future__ import annotations

import re
from typing import Any

from linter.errors import KrpcLintError
from linter.parse.bounded_json import MAX_DEPTH, conversion_refusal, within_depth

MAX_NODES = 100_000  # expanded nodes; a real config or rule has a few hundred


class YamlRefused(KrpcLintError, ValueError):
    """A YAML document that parses but is refused as a value: its callers report it as invalid YAML."""


class YamlTooLarge(YamlRefused):
    """The document stands for more than MAX_NODES nodes once its aliases are expanded, or nests deeper
    than the parser can follow."""


def load_yaml(text: str) -> Any:
    """The document's value (``YAMLError`` for bad YAML, ``YamlTooLarge`` for an alias bomb or a document
    nested too deeply, ``YamlRefused`` for a key Python cannot hold)."""
    from ruamel.yaml import YAML

    if flow_depth(text) > MAX_DEPTH:  # ruamel's scanner is quadratic in flow depth before it recurses too deep
        raise YamlTooLarge(f"it nests deeper than {MAX_DEPTH} levels")
    try:
        if "*" in text:  # no alias without an asterisk: most files skip the counting pass
            root = YAML(typ="safe", pure=True).compose(text)
            if root is not None and expanded_size(root) > MAX_NODES:
                raise YamlTooLarge(f"its aliases expand to more than {MAX_NODES} nodes")
        value = YAML(typ="safe", pure=True).load(text)
    except RecursionError:  # ruamel recurses once per nesting level
        raise YamlTooLarge("it is nested too deeply") from None
    except TypeError as exc:  # a mapping key that is itself a mapping ("? - a: 1"): Python cannot hash it
        raise YamlRefused(f"a mapping key is a collection ({exc})") from None
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        raise YamlRefused(conversion_refusal(exc)) from None
    if not within_depth(value):  # the one nesting limit, as for JSON: what walks the value may recurse
        raise YamlTooLarge(f"it nests deeper than {MAX_DEPTH} levels")
    return value


_FLOW_SIGNIFICANT = re.compile(r"[\[\]{}\"'#,:?\n-]")  # one character class: one step per character
_SCALAR_STARTS = frozenset("[{,:?-\n")  # a quoted scalar begins after one of these (blanks between) or at the start


def flow_depth(text: str) -> int:
    """The deepest nesting of flow collections (``[``, ``{``) in ``text``, quoted scalars and comments skipped, in
    one pass. A bracket inside a plain scalar counts too, so this never underestimates what ruamel will nest."""
    depth = deepest = 0
    previous, pos = "\n", 0
    while True:
        found = _FLOW_SIGNIFICANT.search(text, pos)
        if found is None:
            return deepest
        start = found.start()
        ch = text[start]
        starts_scalar = previous in _SCALAR_STARTS and not text[pos:start].strip(" \t")
        if ch in "\"'" and starts_scalar:
            pos = _quoted_end(text, start)
            previous = ch
            continue
        if ch == "#" and (start == 0 or text[start - 1] in " \t\n"):
            line_end = text.find("\n", start)
            pos = len(text) if line_end < 0 else line_end
            continue
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
        previous, pos = ch, start + 1


def _quoted_end(text: str, start: int) -> int:
    """Where the quoted scalar opening at ``start`` ends (past its closing quote; the text's end if none):
    ``''`` inside single quotes and a backslash-escaped ``"`` inside double quotes do not close it."""
    quote, pos = text[start], start + 1
    while True:
        close = text.find(quote, pos)
        if close < 0:
            return len(text)
        if quote == "'" and text.startswith("''", close):
            pos = close + 2
            continue
        backslashes = close - len(text[pos:close].rstrip("\\")) - pos if quote == '"' else 0
        if backslashes % 2:
            pos = close + 1
            continue
        return close + 1


def expanded_size(root: Any) -> int:
    """Nodes the value has once every alias is replaced by a copy of its anchor, worked out once per distinct
    node (a shared node counts as often as it is referred to), without recursion."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done or not children:
            sizes[id(node)] = min(MAX_NODES + 1, 1 + sum(sizes.get(id(child), 1) for child in children))
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []  # a scalar
    return [part for item in value for part in (item if isinstance(item, tuple) else (item,))]
