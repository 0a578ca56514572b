"""Each call and each client judged against the target release, and the report document (JSON contract
``krpc-lint/readiness/1``, docs/readiness.md).

A call (API, version) is ``supported`` (the target has the version), ``removed`` (the target has the API, not
this version: below its lowest), ``absent`` (the target has no such API), ``deprecated`` (in the target's
``deprecatedVersions``) or ``newer`` (above the target's highest: a negotiating client goes down). A client
``breaks`` when it made a call the target refuses and nothing shows it can negotiate a version the target has;
it is ``at_risk`` when a call is deprecated, or removed but the broker offered it nothing higher (the client may
support more than it used), or newer without negotiation; else ``ready``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from linter.readiness.target import ApiRange, Target
from linter.readiness.usage import ClientKey, ClientUsage, Usage
from linter.vocabulary import TOOL_NAME, tool_version

SCHEMA = "krpc-lint/readiness/1"
SUPPORTED, REMOVED, ABSENT, DEPRECATED, NEWER = "supported", "removed", "absent", "deprecated", "newer"
BREAKS, AT_RISK, READY = "breaks", "at_risk", "ready"
CLIENT_ORDER = {BREAKS: 0, AT_RISK: 1, READY: 2}
CALL_ORDER = {REMOVED: 0, ABSENT: 1, DEPRECATED: 2, NEWER: 3, SUPPORTED: 4}
# APIs a client calls only when the broker's ApiVersions response lists them, so a target without them is no
# break for a negotiating client. KIP-714: "the client will only send GetTelemetrySubscriptions (and then
# PushTelemetry) if the broker's ApiVersions response includes it".
OPTIONAL_APIS = {71: "GetTelemetrySubscriptions", 72: "PushTelemetry"}


def call_verdict(target: Target, api_key: int, version: int) -> str:
    """The verdict of one call against the target."""
    api = target.apis.get(api_key)
    if api is None:
        return ABSENT
    if version < api.lowest:
        return REMOVED
    if version > api.highest:
        return NEWER
    return DEPRECATED if api.is_deprecated(version) else SUPPORTED


def judged_call(target: Target, usage: ClientUsage, api_key: int, version: int, requests: int) -> dict[str, Any]:
    """A call of the report, with why it is a break or a risk for this client."""
    verdict = call_verdict(target, api_key, version)
    if verdict == SUPPORTED and (api_key, version) in usage.flagged:
        verdict = DEPRECATED  # the broker's request log said so (requestApiVersionDeprecated)
    api = target.apis.get(api_key)
    return {"api_key": api_key, "api": api.name if api else OPTIONAL_APIS.get(api_key),
            "version": version, "requests": requests, "verdict": verdict,
            "target_versions": api.shown() if api else None,
            "note": _note(verdict, api, usage, api_key, version),
            "blocking": _blocking(verdict, usage, api_key, version)}


def _note(verdict: str, api: ApiRange | None, usage: ClientUsage, api_key: int, version: int) -> str | None:
    offered = usage.offered.get(api_key)
    if verdict == ABSENT and api_key in OPTIONAL_APIS and usage.negotiates:
        return "called only when the broker offers it (KIP-714): skipped on the target"
    if verdict == REMOVED and offered is not None and offered > version:
        return f"the broker offered up to v{offered} and the client chose v{version}: it has nothing higher"
    if verdict == REMOVED and offered == version:
        return f"v{version} was the broker's highest: the client may support a version the target has"
    if verdict == REMOVED and not usage.negotiates:
        return "the client never sent ApiVersions: it does not negotiate"
    if verdict == NEWER and not usage.negotiates:
        return "no ApiVersions seen from this client: whether it negotiates down is not shown"
    if verdict == NEWER and api is not None:
        return f"negotiates down to v{api.highest}"
    return None


def _blocking(verdict: str, usage: ClientUsage, api_key: int, version: int) -> str | None:
    """What the call makes of its client: BREAKS, AT_RISK or None."""
    if verdict == ABSENT:
        return None if api_key in OPTIONAL_APIS and usage.negotiates else BREAKS
    if verdict == REMOVED:
        return AT_RISK if usage.offered.get(api_key) == version else BREAKS
    if verdict == DEPRECATED or (verdict == NEWER and not usage.negotiates):
        return AT_RISK
    return None


def judged_client(target: Target, key: ClientKey, usage: ClientUsage) -> dict[str, Any]:
    """A client of the report: its calls judged, its verdict the worst of them."""
    calls = [judged_call(target, usage, api_key, version, requests)
             for (api_key, version), requests in sorted(usage.calls.items())]
    blocking = {call["blocking"] for call in calls}
    verdict = BREAKS if BREAKS in blocking else AT_RISK if AT_RISK in blocking else READY
    worst = sorted((call for call in calls if call["blocking"]), key=lambda c: (c["blocking"] != BREAKS,
                                                                                  CALL_ORDER[c["verdict"]]))
    client_id, software_name, software_version = key
    return {"client_id": client_id, "software_name": software_name, "software_version": software_version,
            "addresses": sorted(usage.addresses), "verdict": verdict, "baselined": False,
            "requests": sum(usage.calls.values()), "negotiates": usage.negotiates,
            "reasons": [f"{call['api'] or 'API ' + str(call['api_key'])} v{call['version']}: {call['verdict']}"
                        + (f" (target has {call['target_versions']})" if call["target_versions"] else
                           " (the target has no such API)") for call in worst],
            "calls": [{name: value for name, value in call.items() if name != "blocking"} for call in calls]}


def report(target: Target, usage: Usage, accepted: Iterable[ClientKey] = ()) -> dict[str, Any]:
    """The report document: every client judged, worst first; ``accepted`` clients (``--baseline``) marked."""
    known = set(accepted)
    clients = [judged_client(target, key, client) for key, client in usage.clients.items()]
    for client in clients:
        client["baselined"] = (client["client_id"], client["software_name"], client["software_version"]) in known
    clients.sort(key=lambda c: (CLIENT_ORDER[c["verdict"]], -c["requests"], repr(c["client_id"]),
                                repr(c["software_name"]), repr(c["software_version"])))
    counts = {verdict: sum(c["verdict"] == verdict for c in clients) for verdict in CLIENT_ORDER}
    return {"schema": SCHEMA, "tool": {"name": TOOL_NAME, "version": tool_version()},
            "target": {"name": target.name, "source": target.source},
            "inputs": {"files": usage.files, "frames": usage.frames, "requests": usage.requests,
                       "log_lines": usage.log_lines, "not_read": dict(usage.tally)},
            "summary": {"clients": len(clients), **counts, "baselined": sum(c["baselined"] for c in clients)},
            "clients": clients}


def failing(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The clients that break and are not accepted by the baseline: exit 1 when any."""
    return [client for client in document["clients"] if client["verdict"] == BREAKS and not client["baselined"]]


__all__ = ["ABSENT", "AT_RISK", "BREAKS", "DEPRECATED", "NEWER", "OPTIONAL_APIS", "READY", "REMOVED", "SCHEMA",
           "SUPPORTED", "call_verdict", "failing", "report"]
