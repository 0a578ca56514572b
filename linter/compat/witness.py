"""Byte-level proof from the codec: cross-decode values written by one revision with the other.

A wire break gets a *witness*: a value one revision encodes at a version, the hex, and what
the other revision decodes from it (or its ``DecodeError``). A version judged compatible is
cross-checked the same way with a few generated values in each direction; any divergence
is a finding, so a mistake of the layout comparison cannot pass silently. (A version whose
layouts are the same wire, names included, is not: ``layout.same_wire``.)

Divergence is judged by meaning, not by Python equality: the regular fields are compared in
wire order (names must agree, allowing for known renames; wrapper structs that a
non-flexible version inlines are flattened), and every tagged field the writer actually sent
must read back the same wherever the reader knows that field. A tag the reader does not know
is skipped, as Kafka skips it: that loss is what ``tag-removed`` reports.

The first field read differently is often not the one that changed (a retyped field upsets the
fields after it), so a finding's witness also names its cause: ``attribute`` words every witness
in one place, ``explain``.

A witness stays small whatever the message (a spec of thousands of fields has thousands of findings,
each with a witness): up to ``WHOLE_BYTES`` the hex is the whole message; beyond, ``excerpt`` shows
``WINDOW`` bytes either side of the first byte at which the two revisions' encodings of the value
part (and of the byte where reading failed), with ``… N bytes …`` for the rest, and the decoded values
are ``trimmed`` to ``SHOWN_NODES`` members around the first field read differently.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from typing import Any

from linter.codec.codec import Codec
from linter.codec.compiler import FieldPlan, StructPlan, json_key
from linter.codec.errors import CodecError, DecodeError
from linter.codec.values import identical, random_value
from linter.compat.change import Change, Witness
from linter.compat.kinds import ChangeKind
from linter.compat.layout import MAX_DEPTH
from linter.model.spec import FieldSpec, MessageSpec
from linter.model.traits import header_version
from linter.parse.jsonc import JsonPath

Flat = tuple[list[tuple[str, Any]], dict[str, tuple[bool, Any]]]

WHOLE_BYTES = 512  # a message up to this size is shown whole (hex); larger ones as an excerpt
WINDOW = 64  # bytes shown either side of the offset where the revisions part
WHOLE_JSON = 4096  # a decoded value whose JSON is up to this long is shown whole
SHOWN_NODES = 32  # members (fields, elements) shown of a larger decoded value
SHOWN_CHARS = 64  # a longer string (or key) of a larger decoded value is cut


HEADER_NAMES = ("RequestHeader", "ResponseHeader")
# changes that move no later bytes: a tag's value is self-delimited, an apiKey is not in the body
_NOT_SHIFTING = frozenset({ChangeKind.TAG_REUSED, ChangeKind.TAG_RENUMBERED, ChangeKind.TAGGED_FIELD_RETYPED,
                           ChangeKind.API_KEY_CHANGED, ChangeKind.API_KEY_REUSED})


@dataclass(frozen=True)
class Cause:
    """The change a witness proves, so that its text names it and not only the first field it upsets."""

    field: str  # the field path as witnesses write it (``Topics[].Name``), or the spec key (``flexibleVersions``)
    change: str  # the change in a few words, naming ``field``: ``MaxWaitMs int64 -> int32``
    shifts: bool = True  # a body layout change: the bytes after it are read at other offsets


@dataclass(frozen=True)
class Divergence:
    """Where a value read back first means something else: a field path ("" for the message as a whole),
    what the reader made of it, and the whole account as one phrase (the text of a witness without a cause)."""

    where: str
    detail: str
    text: str


@dataclass(frozen=True)
class Proof(Witness):
    """A witness that knows where the bytes first read differently and, once ``attribute``d, which change
    causes it; ``reason``/``error`` hold the text ``explain`` words from these."""

    diverges_at: str | None = None  # the first field read differently; None when no one field is (trailing bytes)
    detail: str = ""  # what the reader made of ``diverges_at``
    observed: str = ""  # the codec's account alone: the text without a cause
    cause: Cause | None = None
    length: int | None = None  # the message's size in bytes (``hex`` may be an excerpt of it)
    offset: int | None = None  # set when ``hex`` is an excerpt: the byte it is centred on

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["length"] = len(self.hex) // 2 if self.length is None else self.length
        if self.offset is not None:
            out["offset"] = self.offset
        out["diverges_at"] = self.diverges_at
        out["cause"] = self.cause.field if self.cause else None
        out["cause_change"] = self.cause.change if self.cause else None
        return out


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


def attribute(witness: Witness | None, cause: Cause | None) -> Witness | None:
    """The witness of one finding: a search's witness is shared by the changes at its version, so the
    cause is attached per finding, and the text is worded again from the codec's account."""
    if witness is None:
        return None
    proof = witness if isinstance(witness, Proof) else as_proof(witness)
    text = explain(proof.observed, proof.diverges_at, proof.detail, cause)
    if proof.error is not None:
        return replace(proof, cause=cause, error=text)
    return replace(proof, cause=cause, reason=text)


def as_proof(witness: Witness) -> Proof:
    """A plain witness (an apiKey's, a frame's) as a ``Proof`` whose account is its text; a long one is cut
    as ``bounded`` cuts it, around its first byte (a frame's header, where it is read differently)."""
    kept = {f.name: getattr(witness, f.name) for f in fields(Witness)}
    length = len(witness.hex) // 2
    if length > WHOLE_BYTES:
        kept.update(hex=excerpt(bytes.fromhex(witness.hex), 0), decoded_old=trimmed(witness.decoded_old),
                    decoded_new=trimmed(witness.decoded_new))
        return Proof(**kept, observed=witness.error or witness.reason, length=length, offset=0)
    return Proof(**kept, observed=witness.error or witness.reason, length=length)


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
            out["…"] = f"{left} more field{'s' if left != 1 else ''}"
        return out
    if isinstance(value, list):
        items: list[Any] = []
        for index, item in enumerate(value):
            if budget[0] <= 0 and index:
                items.append(f"… {len(value) - index} more element{'s' if len(value) - index != 1 else ''}")
                break
            budget[0] -= 1
            items.append(_trim(item, path, budget, depth + 1))
        return items
    return value


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


@dataclass(frozen=True)
class Headers:
    """Each revision's RequestHeader and ResponseHeader specs (none when a revision lacks them)."""

    old: tuple[MessageSpec, ...] = ()
    new: tuple[MessageSpec, ...] = ()


class CrossCodec:
    """The codecs of both revisions of one message (with their header specs, for frame witnesses).

    ``old_version`` maps a version of the new revision to the old revision's version holding the same
    bytes: the same number, except for a coordinator key converted from a ``data`` record (its old
    version was its record type, KAFKA-18301)."""

    def __init__(self, old: MessageSpec, new: MessageSpec, renames: dict[tuple[str, str], str],
                 old_version: Callable[[int], int] = lambda version: version, headers: Headers = Headers()) -> None:
        self.old = Codec([old, *(h for h in headers.old if h.name != old.name)])
        self.new = Codec([new, *(h for h in headers.new if h.name != new.name)])
        self.names = {"old": old.name or "", "new": new.name or ""}  # a revision's messages all have names
        self.renames = renames  # (struct path in new names, old name) -> new name
        self.old_version = old_version

    def version_of(self, side: str, version: int) -> int:
        return self.old_version(version) if side == "old" else version

    def codec(self, side: str) -> Codec:
        return self.old if side == "old" else self.new

    def attempt(self, version: int, writer: str, seed: int, size: int = 3) -> Witness | None:
        """Write a random value with one revision, read it with the other; a witness if they disagree."""
        reader = "new" if writer == "old" else "old"
        w_codec, r_codec = self.codec(writer), self.codec(reader)
        w_name, r_name = self.names[writer], self.names[reader]
        w_version, r_version = self.version_of(writer, version), self.version_of(reader, version)
        value = random_value(w_codec, w_name, w_version, random.Random(seed), size)
        data = w_codec.encode(w_name, w_version, value)
        try:
            decoded = r_codec.decode(r_name, r_version, data)
        except DecodeError as exc:
            failed = Divergence(exc.path, str(exc), str(exc))
            return self._witness(version, writer, data, value, None, failed, failed_at=exc.offset)
        written = flatten(w_codec.plan(w_name, w_version), value)
        read = flatten(r_codec.plan(r_name, r_version), decoded)
        found = Comparison(self.renames, old_writes=writer == "old").divergence(written, read)
        if found is None:
            return None
        return self._witness(version, writer, data, value, decoded, found)

    def _witness(self, version: int, writer: str, data: bytes, written: Any, read: Any, found: Divergence,
                 failed_at: int | None = None) -> Proof:
        """The proof of one disagreement; a long message's bytes and values are shown around where the
        revisions part (``excerpt``, ``trimmed``), so that a witness's size does not follow the message's."""
        reader = "new" if writer == "old" else "old"
        shown = {writer: self._json(writer, version, written), reader: self._json(reader, version, read)}
        error = failed_at is not None
        hex_text, offset = data.hex(), None
        if len(data) > WHOLE_BYTES:
            offset = self._parting(version, reader, data, written)
            offset = (failed_at or 0) if offset is None else offset
            hex_text = excerpt(data, offset, failed_at)
            shown = {side: trimmed(value, found.where) for side, value in shown.items()}
        return Proof(version, writer, hex_text, shown["old"], shown["new"], error=found.text if error else None,
                     reason="" if error else found.text, diverges_at=found.where or None, detail=found.detail,
                     observed=found.text, length=len(data), offset=offset)

    def _parting(self, version: int, reader: str, data: bytes, written: Any) -> int | None:
        """Where the reader's revision would write the same value differently: the first byte it reads
        as something else (``None`` when it cannot write it, or writes the same bytes)."""
        try:
            theirs = self.codec(reader).encode(self.names[reader], self.version_of(reader, version), written)
        except (CodecError, KeyError, TypeError, ValueError):
            return None
        return parting(data, theirs)

    def _json(self, side: str, version: int, value: Any) -> Any:
        if value is None:
            return None
        return self.codec(side).to_json(self.names[side], self.version_of(side, version), value)

    def frame_witness(self, version: int) -> Witness | None:
        """A default request or response frame written by the old revision, read by the new one, whose
        header version at ``version`` differs; ``None`` when a revision has no header spec to frame it."""
        name = self.names["old"]
        old, new = self.old.spec(name), self.new.spec(self.names["new"])
        try:
            body = self.old.default(name, version)
            if old.type == "request":
                header = {"correlationId": 1, "clientId": "krpc-lint"}
                frame = self.old.encode_request(version, header, body, name=name)
            elif old.api_key is None:
                return None  # no apiKey to frame a response with
            else:
                frame = self.old.encode_response(old.api_key, version, {"correlationId": 1}, body)
        except (KeyError, ValueError):  # no header spec in a revision, or a header version it lacks
            return None
        old_header, new_header = header_version(old, version), header_version(new, version)
        shown = {"header version": old_header, "body": self.old.to_json(name, version, body)}
        try:
            got_header, _got_body = self._read_frame(old.type == "request", new.api_key, version, frame)
        except (DecodeError, KeyError, ValueError) as exc:
            return Witness(version, "old", frame.hex(), shown, None, error=f"read with {old.type} header v{new_header}: {exc}")
        return Witness(version, "old", frame.hex(), shown, {"header version": new_header, "header": got_header},
                       reason=f"the frame's {old.type} header v{old_header} is read as v{new_header}")

    def _read_frame(self, request: bool, api_key: int | None, version: int,
                    frame: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """The header and body the new revision reads from ``frame``; ``KeyError`` when it has no such API."""
        if request:
            _, _, header, body = self.new.decode_request(frame)
            return header, body
        if api_key is None:
            raise KeyError("no response spec with apiKey None")  # the codec's words for an apiKey it lacks
        return self.new.decode_response(api_key, version, frame)

    def search(self, version: int, attempts: int, seed: int = 0) -> Witness | None:
        """The first disagreement among ``attempts`` values per direction, old writer first; small
        values (empty arrays, then one element) come first so that a witness stays readable."""
        for index in range(attempts):
            size = min(index // 4, 3)
            for writer in ("old", "new"):
                try:
                    found = self.attempt(version, writer, seed * 7919 + index * 2 + (writer == "new"), size)
                except CodecError:
                    continue  # a value one side cannot even encode says nothing about the other
                if found is not None:
                    return found
        return None


def flatten(plan: StructPlan, value: dict[str, Any], prefix: str = "") -> Flat:
    """Regular fields in wire order as (name, value), and tagged fields by name as (sent, value).

    Names are qualified by the wrapper structs a non-flexible version inlines, as ``Slot.where``.
    """
    regular: list[tuple[str, Any]] = []
    tagged: dict[str, tuple[bool, Any]] = {}
    for field in plan.fields:
        if not field.present:
            continue
        item: Any = value.get(field.key)  # a decoded value: its shape is the plan's
        where = prefix + field.name
        if field.tag is not None:
            tagged[where] = (not field.is_default(item), _leaf(field, item))
        elif field.nested is not None and not field.type.is_array and not field.nullable and not plan.flexible:
            regular.extend(flatten(field.nested, item, where + ".")[0])  # inlined on the wire: no bytes of its own
        else:
            regular.append((where, _leaf(field, item)))
    return regular, tagged


def _leaf(field: FieldPlan, item: Any) -> Any:
    if field.nested is None or item is None:
        return item
    if field.type.is_array:
        return [flatten(field.nested, element) for element in item]
    return flatten(field.nested, item)


class Comparison:
    """Walks a written and a read value together; struct paths use the new revision's names, as
    the renames found by the layout comparison do."""

    def __init__(self, renames: dict[tuple[str, str], str], old_writes: bool) -> None:
        self.renames = renames if old_writes else {(path, new): old for (path, old), new in renames.items()}
        self.old_writes = old_writes

    def divergence(self, written: Flat, read: Flat, path: str = "") -> Divergence | None:
        """Where a value read back means something else than the value written, or ``None``."""
        w_regular, w_tagged = written
        r_regular, r_tagged = read
        if len(w_regular) != len(r_regular):
            detail = f"{len(w_regular)} fields written, {len(r_regular)} read"
            return Divergence(path.rstrip("."), detail, f"{path.rstrip('.') or 'the message'}: {detail}")
        for (w_name, w_value), (r_name, r_value) in zip(w_regular, r_regular):
            if self._renamed(path, w_name) != r_name:
                return Divergence(path + w_name, f"read as {r_name}", f"{path}{w_name} is read as {r_name}")
            found = self._values(w_value, r_value, self._nested_path(path, w_name, r_name))
            if found:
                return found
        readable = dict(r_regular) | {name: value for name, (_, value) in r_tagged.items()}
        for w_name, (sent, w_value) in w_tagged.items():
            r_name = self._renamed(path, w_name)
            if sent and r_name in readable:
                found = self._values(w_value, readable[r_name], self._nested_path(path, w_name, r_name))
                if found:
                    return found
        return None

    def _renamed(self, path: str, name: str) -> str:
        return self.renames.get((path, name), name)

    def _nested_path(self, path: str, w_name: str, r_name: str) -> str:
        return f"{path}{r_name if self.old_writes else w_name}"

    def _values(self, written: Any, read: Any, where: str) -> Divergence | None:
        if isinstance(written, tuple) and isinstance(read, tuple):
            return self.divergence(written, read, where + ".")
        if isinstance(written, list) and isinstance(read, list) and written and isinstance(written[0], tuple):
            if len(written) != len(read):
                detail = f"{len(written)} elements written, {len(read)} read"
                return Divergence(where, detail, f"{where}: {detail}")
            for w_item, r_item in zip(written, read):
                found = self._values(w_item, r_item, where + "[]")
                if found:
                    return found
            return None
        if identical(written, read):
            return None
        detail = f"wrote {_short(written)}, read {_short(read)}"
        return Divergence(where, detail, f"{where}: {detail}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
