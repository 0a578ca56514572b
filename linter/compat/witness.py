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

The first field read differently is often not the one that changed, so a finding's witness also names its
cause (``attribute``, worded by ``witness_cause.explain``); a long message's witness shows an excerpt of its
bytes and values (``witness_excerpt``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from linter.codec.codec import Codec
from linter.codec.compiler import FieldPlan, StructPlan
from linter.codec.errors import CodecError, DecodeError
from linter.codec.values import identical, random_value
from linter.compat.change import Witness
from linter.compat.witness_cause import Cause, explain
from linter.compat.witness_excerpt import WHOLE_BYTES, excerpt, parting, trimmed
from linter.model.spec import MessageSpec
from linter.model.traits import header_version

Flat = tuple[list[tuple[str, Any]], dict[str, tuple[bool, Any]]]

HEADER_NAMES = ("RequestHeader", "ResponseHeader")


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
