"""One captured frame under two spec revisions: its outcome (``same``, ``differs``, ``old_fails``,
``new_fails``, ``both_fail``) and the path where the two decodings part. Plain Python, no Spark."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from linter.codec import UNKNOWN_TAGS, Codec, DecodeError
from linter.codec.values import identical
from linter.frames.corpus import BadFrame, split_frame
from linter.frames.decode import Api, Decoders, decoders

OUTCOMES = ("same", "differs", "old_fails", "new_fails", "both_fail")
SAME, DIFFERS, OLD_FAILS, NEW_FAILS, BOTH_FAIL = OUTCOMES


class Replayed(NamedTuple):
    """What one frame did under the two revisions (the per-frame part of a REPLAY_MISMATCHES row)."""

    outcome: str
    api_key: int | None
    api_name: str | None  # the request or response message (the old revision's name when it has one)
    api_version: int | None
    correlation_id: int | None
    path: str | None
    old_error: str | None
    new_error: str | None


def replay_frame(old: Codec | Decoders, new: Codec | Decoders, row: Mapping[str, Any]) -> Replayed:
    """Decode one frame (a row of FRAMES: ``bytes`` or ``hex``, ``direction``, ``api_key``,
    ``api_version``, ``correlation_id``) under both revisions and say how they compare."""
    return replay_columns(decoders(old), decoders(new), row.get("direction"), row.get("api_key"),
                          row.get("api_version"), row.get("correlation_id"), row.get("bytes"), row.get("hex"))


def replay_columns(old: Decoders, new: Decoders, direction: Any, api_key: Any, api_version: Any,
                   correlation_id: Any, data: Any, hex_text: Any) -> Replayed:
    """``replay_frame`` of a row given as its columns, as an Arrow batch holds them."""
    try:
        payload, api_key, api_version, correlation_id = split_frame(direction, api_key, api_version,
                                                                    correlation_id, data, hex_text)
    except BadFrame as exc:
        return Replayed(BOTH_FAIL, _int(api_key), None, _int(api_version), _int(correlation_id), None,
                        str(exc), str(exc))
    old_api, new_api = old.api(direction, api_key, api_version), new.api(direction, api_key, api_version)
    if type(old_api) is Api and type(new_api) is Api:
        try:  # the usual cases, kept short: the same plans and it decodes, or both decode
            if old_api.decode is new_api.decode:
                old_api.decode(payload)
                return Replayed(SAME, api_key, old_api.name, api_version, correlation_id, None, None, None)
            old_value, new_value = old_api.decode(payload), new_api.decode(payload)
        except Exception:  # noqa: BLE001, S110 - one fails: said below, with the error
            pass
        else:
            if old_api.types is new_api.types and old_value == new_value:  # same types: == is exact
                return Replayed(SAME, api_key, old_api.name, api_version, correlation_id, None, None, None)
            path = first_difference(old_value[0], new_value[0], "header") or \
                first_difference(old_value[1], new_value[1], "body")
            return Replayed(SAME if path is None else DIFFERS, api_key, old_api.name, api_version, correlation_id,
                            path, None, None)
    name = old_api.name if type(old_api) is Api else new_api.name if type(new_api) is Api else None
    old_error, old_path = _failure(old_api, payload)
    new_error, new_path = _failure(new_api, payload)
    if new_error is None:
        outcome, path = OLD_FAILS, old_path
    elif old_error is None:
        outcome, path = NEW_FAILS, new_path
    else:
        outcome, path = BOTH_FAIL, old_path or new_path
    return Replayed(outcome, api_key, name, api_version, correlation_id, path, old_error, new_error)


def _failure(api: Api | str, payload: bytes) -> tuple[str | None, str | None]:
    """Why a revision cannot decode the payload, and where: (error, path), or (None, None)."""
    if isinstance(api, str):
        return api, None
    try:
        api.decode(payload)
    except DecodeError as exc:
        return str(exc), exc.path or None
    except Exception as exc:  # noqa: BLE001 - a frame that breaks the codec is a row, not a failed job
        return f"{type(exc).__name__}: {exc}", None
    return None, None


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


# --- comparing decoded values ---------------------------------------------------------------------


def first_difference(old: Any, new: Any, path: str = "") -> str | None:
    """The path of the first place two decoded values differ, or ``None`` when they are identical.

    Paths use spec field names: ``Topics[0].Partitions[2].MaxBytes``. Lists of different lengths
    differ at the first index only one has. Dict fields are matched by name; those only one side
    has are left out (a field a version does not have on one side is not on the wire), unless both
    sides have such fields: those are paired in order, as a rename.

    >>> first_difference({"topics": [{"name": "t", "maxBytes": 1}]}, {"topics": [{"name": "t", "maxBytes": 2}]})
    'Topics[0].MaxBytes'
    >>> first_difference({"a": [1, 2]}, {"a": [1]}, "body"), first_difference({"x": True}, {"x": 1})
    ('body.A[1]', 'X')
    >>> first_difference({"rackId": "r", "epoch": -1.0}, {"clientRackId": "r", "epoch": -1.0, "tag": None}) is None
    True
    """
    if type(old) is dict and type(new) is dict:
        for key, value in old.items():
            if key in new:
                found = first_difference(value, new[key], _field(path, key))
                if found is not None:
                    return found
        renamed = zip((key for key in old if key not in new), (key for key in new if key not in old))
        for old_key, new_key in renamed:
            found = first_difference(old[old_key], new[new_key], _field(path, old_key))
            if found is not None:
                return found
        return None
    if type(old) is list and type(new) is list:
        for index, (left, right) in enumerate(zip(old, new)):
            found = first_difference(left, right, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(old) == len(new) else f"{path}[{min(len(old), len(new))}]"
    return None if identical(old, new) else path


def _field(path: str, key: str) -> str:
    name = key if key == UNKNOWN_TAGS else key[:1].upper() + key[1:]
    return f"{path}.{name}" if path else name


__all__ = ["BOTH_FAIL", "DIFFERS", "NEW_FAILS", "OLD_FAILS", "OUTCOMES", "SAME", "Replayed", "first_difference",
           "replay_columns", "replay_frame"]
