"""``krpc-lint readiness --format markdown``: the readiness report (schema ``krpc-lint/readiness/1``) for a ticket.

A heading with the target, one summary line, a table of every client, then the calls of each client that is not
ready. Client ids, software names and addresses come from the wire and API names from specs: every one goes through
``markdown_text`` or ``markdown_code`` (``linter.escape``), so none can break a table, open a tag or end a line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from linter.escape import guard_lines, markdown_code, markdown_text
from linter.readiness.wording import about_lines, summary_line

# A mark before each verdict, so a ticket shows the colours the text and HTML reports use.
MARKS = {"breaks": "🔴", "removed": "🔴", "absent": "🔴", "at_risk": "🟠", "deprecated": "🟠", "newer": "🔵",
         "supported": "🟢", "ready": "🟢"}
REASONS_SHOWN = 3  # reasons per client in the summary table; the rest are counted, and listed under the client
UNKNOWN = "*unknown*"


def markdown_report(report: Mapping[str, Any]) -> str:
    """The report as GitHub-flavoured Markdown: headings, a summary line and pipe tables."""
    clients = report.get("clients") or []
    target = report.get("target") or {}
    lines = [f"# Readiness for {markdown_code(str(target.get('name')))}", "",
             "  \n".join(map(markdown_text, about_lines(report))), "", f"**{markdown_text(summary_line(report.get('summary') or {}))}**", ""]
    if clients:
        lines += [_clients_table(clients), ""]
    for client in clients:
        if client.get("verdict") != "ready":
            lines += _client_section(client)
    return guard_lines("\n".join(lines).rstrip("\n") + "\n")


def _clients_table(clients: Sequence[Mapping[str, Any]]) -> str:
    header = ["verdict", "client id", "software", "addresses", "requests", "what breaks"]
    rows = [[_client_verdict(client), _client_id(client), _software(client),
             markdown_text(", ".join(map(str, client.get("addresses") or []))),
             f"{int(client.get('requests') or 0):,}", _reasons(client.get("reasons") or [])] for client in clients]
    return _table(header, rows, numeric={4})


def _client_section(client: Mapping[str, Any]) -> list[str]:
    """A client that is not ready: who it is, whether it negotiates, and every call it made."""
    said = client.get("negotiates")
    negotiates = "unknown" if said is None else "yes" if said else "no"
    lines = [f"## {_client_id(client, in_table=False)}: {_client_verdict(client)}", "",
             f"Software: {_software(client)}; sends ApiVersions: {negotiates}.", ""]
    reasons = client.get("reasons") or []
    if len(reasons) > REASONS_SHOWN:
        lines += [f"- {markdown_text(str(reason))}" for reason in reasons] + [""]
    header = ["API", "key", "version", "requests", "verdict", "target has", "note"]
    rows = [[markdown_text(str(call.get("api") or f"API {call['api_key']}")), str(int(call["api_key"])), str(int(call["version"])),
             f"{int(call.get('requests') or 0):,}", _verdict(call.get("verdict")),
             markdown_text(str(call.get("target_versions") or "no such API")),
             markdown_text(str(call.get("note") or ""))] for call in client.get("calls") or []]
    return [*lines, _table(header, rows, numeric={1, 2, 3}), ""]


def _client_verdict(client: Mapping[str, Any]) -> str:
    return _verdict(client.get("verdict")) + (" (baselined)" if client.get("baselined") else "")


def _verdict(verdict: Any) -> str:
    """A verdict as its mark and its word (``at_risk`` as ``at risk``); an unknown one as escaped text."""
    word = markdown_text(str(verdict).replace("_", " "))
    return f"{MARKS[verdict]} {word}" if verdict in MARKS else word


def _client_id(client: Mapping[str, Any], in_table: bool = True) -> str:
    """The id as a code span in a table (which unescapes its ``\\|``), as escaped text elsewhere (a code span
    there would show the backslash)."""
    client_id = client.get("client_id")
    if client_id is None:
        return UNKNOWN
    return markdown_code(str(client_id)) if in_table else markdown_text(str(client_id))


def _software(client: Mapping[str, Any]) -> str:
    name, version = client.get("software_name"), client.get("software_version")
    if name is None and version is None:
        return UNKNOWN
    return markdown_text(" ".join(str(part) for part in (name, version) if part is not None))


def _reasons(reasons: Sequence[Any]) -> str:
    """The first few reasons in a cell, and how many more the client's section lists."""
    shown = "; ".join(markdown_text(str(reason)) for reason in reasons[:REASONS_SHOWN])
    more = len(reasons) - REASONS_SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> str:
    """A pipe table of cells already escaped (each one line, ``|`` inside escaped)."""
    rule = ["---:" if index in numeric else "---" for index in range(len(header))]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in [header, rule, *rows])


__all__ = ["markdown_report"]
