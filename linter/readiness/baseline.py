"""``--baseline``: clients accepted as they are, so CI watching a capture feed fails only on new breakage.

The file is JSON (``krpc-lint/readiness-baseline/1``): the clients, each by client id, software name and
version, as ``--write-baseline`` writes them from a run (every client that breaks or is at risk).
"""

from __future__ import annotations

import os
from typing import Any

from linter.errors import KrpcLintError
from linter.escape import json_text
from linter.parse.bounded_json import read_listing
from linter.readiness.usage import ClientKey

SCHEMA = "krpc-lint/readiness-baseline/1"
MAX_BASELINE = 64 << 20
KEYS = ("client_id", "software_name", "software_version")


class BaselineError(KrpcLintError, ValueError):
    """A baseline file that cannot be used; the message names it."""


def read_baseline(path: str | os.PathLike[str]) -> set[ClientKey]:
    """The clients a baseline accepts."""
    name = os.fspath(path)
    try:
        clients = read_listing(path, SCHEMA, "clients", "readiness baseline", MAX_BASELINE)
    except ValueError as exc:
        raise BaselineError(str(exc)) from None
    accepted: set[ClientKey] = set()
    for number, client in enumerate(clients):
        values = [client.get(key) for key in KEYS] if isinstance(client, dict) else None
        if values is None or not all(value is None or isinstance(value, str) for value in values):
            raise BaselineError(f"{name}: clients[{number}]: an object of {', '.join(KEYS)} (strings or null)")
        accepted.add((values[0], values[1], values[2]))
    return accepted


def baseline_clients(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The clients a baseline of this run accepts: every client that is not ready, by its three keys."""
    return [{key: client[key] for key in KEYS} for client in report["clients"] if client["verdict"] != "ready"]


def baseline_text(report: dict[str, Any]) -> str:
    """The baseline of a run, as JSON (escaped as krpc-lint's JSON outputs are: client ids come from the wire)."""
    return json_text({"schema": SCHEMA, "target": report["target"]["name"], "clients": baseline_clients(report)})


__all__ = ["BaselineError", "baseline_clients", "baseline_text", "read_baseline"]
