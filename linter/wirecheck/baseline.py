"""``--baseline``: kinds of deviation accepted as they are, so CI on a library's traffic fails only on new ones.

The file is JSON (``krpc-lint/frames-check-baseline/1``), written by ``--write-baseline`` from a run: one entry per
kind of finding (rule, direction, API key and version, field path without array indices, the client software
that sent it; a broker's response: none), never per frame, since traffic does not repeat itself byte for byte.
"""

from __future__ import annotations

import os
from typing import Any

from linter.errors import KrpcLintError
from linter.escape import json_text
from linter.parse.bounded_json import read_listing
from linter.wirecheck.findings import Collector

SCHEMA = "krpc-lint/frames-check-baseline/1"
MAX_BASELINE = 64 << 20
KEYS = ("rule", "direction", "api_key", "api_version", "field", "software_name")
TYPES = (str, str, int, int, str, str)


class BaselineError(KrpcLintError, ValueError):
    """A baseline file that cannot be used; the message names it."""


def read_baseline(path: str | os.PathLike[str]) -> frozenset[tuple[Any, ...]]:
    """The kinds of finding a baseline accepts (``WireFinding.baseline_key``)."""
    name = os.fspath(path)
    try:
        entries = read_listing(path, SCHEMA, "findings", "frames check baseline", MAX_BASELINE)
    except ValueError as exc:
        raise BaselineError(str(exc)) from None
    accepted = set()
    for number, entry in enumerate(entries):
        values = tuple(entry.get(key) for key in KEYS) if isinstance(entry, dict) else None
        if values is None or not all(value is None or (isinstance(value, kind) and not isinstance(value, bool))
                                     for value, kind in zip(values, TYPES, strict=True)):
            raise BaselineError(f"{name}: findings[{number}]: an object of {', '.join(KEYS)} (each of its type, "
                                "or null)")
        accepted.add(values)
    return frozenset(accepted)


def baseline_text(collector: Collector) -> str:
    """The baseline of a run: every kind of finding it reported."""
    kinds = sorted(collector.kinds, key=repr)
    return json_text({"schema": SCHEMA, "findings": [dict(zip(KEYS, kind, strict=True)) for kind in kinds]})


__all__ = ["BaselineError", "baseline_text", "read_baseline"]
