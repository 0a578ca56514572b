"""A witness stays small whatever the message (a spec of thousands of fields has thousands of findings,
each with a witness): up to ``WHOLE_BYTES`` the hex is the whole message; beyond, ``excerpt`` shows
``WINDOW`` bytes either side of the first byte at which the two revisions' encodings of the value
part (``parting``; and of the byte where reading failed), with ``… N bytes …`` for the rest, and the decoded
values are ``trimmed`` to ``SHOWN_NODES`` members around the first field read differently.
"""

from __future__ import annotations

from typing import Any

from linter.codec.compiler import json_key
from linter.compat.layout import MAX_DEPTH
from linter.vocabulary import plural

WHOLE_BYTES = 512  # a message up to this size is shown whole (hex); larger ones as an excerpt
WINDOW = 64  # bytes shown either side of the offset where the revisions part
WHOLE_JSON = 4096  # a decoded value whose JSON is up to this long is shown whole
SHOWN_NODES = 32  # members (fields, elements) shown of a larger decoded value
SHOWN_CHARS = 64  # a longer string (or key) of a larger decoded value is cut


def excerpt(data: bytes, offset: int, also: int | None = None) -> str:
    """``data`` as hex: whole up to ``WHOLE_BYTES``, else ``WINDOW`` bytes either side of ``offset`` (and of
    ``also``, where reading failed) with ``… N bytes …`` for each run left out.

    >>> excerpt(bytes(range(4)), 2)
    '00010203'
    >>> shown = excerpt(bytes(1000), 500)
    >>> shown.startswith("… 436 bytes …") and shown.endswith("… 435 bytes …"), len(shown.replace("0", ""))
    (True, 26)
    """
    if len(data) <= WHOLE_BYTES:
        return data.hex()
    spans: list[tuple[int, int]] = []
    for centre in sorted({min(max(point, 0), len(data)) for point in (offset, also) if point is not None}):
        start, end = max(centre - WINDOW, 0), min(centre + WINDOW + 1, len(data))
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    out, at = [], 0
    for start, end in spans:
        if start > at:
            out.append(f"… {start - at} bytes …")
        out.append(data[start:end].hex())
        at = end
    if at < len(data):
        out.append(f"… {len(data) - at} bytes …")
    return "".join(out)


def excerpt_length(shown: str) -> int:
    """The size in bytes of the message an ``excerpt`` shows: its hex digits and the runs it left out.

    >>> excerpt_length(excerpt(bytes(1000), 500)), excerpt_length("0a0b")
    (1000, 2)
    """
    total = 0
    for index, part in enumerate(shown.split("…")):
        if index % 2:  # " N bytes " between two ellipses
            count = part.strip().partition(" ")[0]
            total += int(count) if count.isdigit() and len(count) < 20 else 0
        else:
            total += len(part) // 2
    return total


def parting(ours: bytes, theirs: bytes | None) -> int | None:
    """The first byte at which two encodings differ (``None`` when they do not, or there is no second).

    >>> parting(b"abcd", b"abXd"), parting(b"ab", b"abc"), parting(b"ab", b"ab")
    (2, 2, None)
    """
    if theirs is None or ours == theirs:
        return None
    low, high = 0, min(len(ours), len(theirs))  # the common prefix is [0, low): halved, in C-speed compares
    while low < high:
        middle = (low + high + 1) // 2
        if ours[low:middle] == theirs[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def trimmed(value: Any, at: str | None = None) -> Any:
    """A decoded value as a witness shows it: whole when its JSON is short (``WHOLE_JSON``), else at most
    ``SHOWN_NODES`` members, the fields on the way to ``at`` (a field path) first, strings and keys cut to
    ``SHOWN_CHARS``, and what is left out counted (``"…": "1968 more fields"``, ``"… 998 more elements"``)."""
    if value is None or _json_length(value, WHOLE_JSON) <= WHOLE_JSON:
        return value
    parts = (at or "").replace("[", ".").replace("]", ".").split(".")  # ``Topics[2].Name``: Topics, Name
    path = [json_key(part) for part in parts if part and not part.isdigit()]
    return _trim(value, path, [SHOWN_NODES], 0)


def _json_length(value: Any, limit: int) -> int:
    """About how long ``value``'s JSON is, counted no further than just past ``limit`` (no recursion)."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, dict):
            total += 2 + sum(len(str(key)) + 4 for key in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += len(str(item)) + 2
    return total


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text)} characters)"


def _trim(value: Any, path: list[str], budget: list[int], depth: int) -> Any:
    """``trimmed``'s walk; ``depth`` is bounded by the codec's nesting (``MAX_DEPTH``), cut there anyway."""
    if isinstance(value, str):
        return _cut(value)
    if depth > MAX_DEPTH and isinstance(value, dict | list):
        return "…"
    if isinstance(value, dict):
        wanted = path[0] if path else None
        out: dict[str, Any] = {}
        if wanted is not None and wanted in value:  # the way to the first field read differently, whatever the budget
            budget[0] -= 1
            out[_cut(wanted)] = _trim(value[wanted], path[1:], budget, depth + 1)
        left = 0
        for key, item in value.items():
            if key == wanted:
                continue
            if budget[0] <= 0:
                left += 1
                continue
            budget[0] -= 1
            out[_cut(str(key))] = _trim(item, [], budget, depth + 1)
        if left:
            out["…"] = plural(left, "more field")
        return out
    if isinstance(value, list):
        items: list[Any] = []
        for index, item in enumerate(value):
            if budget[0] <= 0 and index:
                items.append(f"… {plural(len(value) - index, 'more element')}")
                break
            budget[0] -= 1
            items.append(_trim(item, path, budget, depth + 1))
        return items
    return value
