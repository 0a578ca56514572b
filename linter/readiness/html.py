"""``krpc-lint readiness --format html``: the readiness report (schema ``krpc-lint/readiness/1``) as one page that
opens offline (inline CSS, no script, no font, no link out).

A client per row and an API per column: each cell holds the versions the client sent with their request counts,
each coloured by its verdict on the target, the client's own verdict first in the row; below, what breaks for
each client that is not ready. Client ids and software names come from the wire, API names from specs: every
piece of text is made one visible line (``linter.escape.printable``: controls and bidi characters shown as
escapes) and then inert HTML (``linter.report.html_parts.escape``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from linter.escape import printable
from linter.readiness.wording import about_lines, summary_line
from linter.report.html_parts import escape, legend, note, section, table

Row = Mapping[str, Any]

# Verdicts, worst first, with their colours (breaks red, at risk amber, newer blue-grey, ready green).
CLIENT_COLOURS = {"breaks": "#C0392B", "at_risk": "#E69F00", "ready": "#2E7D32"}
CALL_COLOURS = {"removed": "#C0392B", "absent": "#C0392B", "deprecated": "#E69F00", "newer": "#607D8B",
                "supported": "#2E7D32"}
UNKNOWN = "unknown"  # the class of a verdict this page does not know (grey)
DARK_TEXT = {"at_risk", "deprecated"}  # amber needs dark text to be read
API_COLUMNS = 128  # APIs shown as columns (Kafka has under 100); any more share one "other APIs" column
OTHER = -1  # the column key of those
CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:24px 32px;color:#1f2328}
h1{font-size:24px;margin:0 0 6px}h2{font-size:19px;margin:32px 0 10px;border-bottom:1px solid #d1d9e0}
h3{font-size:15px;margin:18px 0 6px}.note{color:#59636e}.summary{font-size:16px;font-weight:600}
table{border-collapse:collapse;margin:8px 0;font-size:13px}caption{text-align:left;font-weight:600}
th,td{text-align:left;vertical-align:top;padding:3px 6px;border:1px solid #d1d9e0}thead th{background:#f6f8fa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.client{overflow-wrap:anywhere;min-width:12em}
th small{display:block;font-weight:normal;color:#59636e}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;padding:0;list-style:none;font-size:12px}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.chip{display:block}.verdict{display:inline-block}
.chip,.verdict{white-space:nowrap;border-radius:3px;padding:0 4px;margin:1px 0;color:#fff}
.unknown{background:#888}code{font:12px ui-monospace,monospace;overflow-wrap:anywhere}
""" + "".join(f".{name}{{background:{colour}{';color:#000' if name in DARK_TEXT else ''}}}"
              for name, colour in {**CLIENT_COLOURS, **CALL_COLOURS}.items())


def html_report(report: Row) -> str:
    """The whole page of a readiness report."""
    clients: Sequence[Row] = report.get("clients") or []
    target = report.get("target") or {}
    columns = _columns(clients)
    body = [f"<h1>Readiness for <code>{_text(target.get('name'))}</code></h1>",
            note("<br>".join(map(_text, about_lines(report)))), f'<p class="summary">{_text(summary_line(report.get("summary") or {}))}</p>',
            legend([(name.replace("_", " "), colour) for name, colour in CLIENT_COLOURS.items()]),
            legend([(name, colour) for name, colour in CALL_COLOURS.items() if name != "absent"]
                   + [("absent (the target has no such API)", CALL_COLOURS["absent"])]),
            section("clients", "Clients and the API versions they sent", _matrix(clients, columns))]
    not_ready = [client for client in clients if client.get("verdict") != "ready"]
    if not_ready:
        section_body = [_what_breaks(index, client) for index, client in enumerate(not_ready)]
        body.append(section("breaks", "What breaks", *section_body))
    tool = report.get("tool") or {}
    body.append(note(f"{_text(tool.get('name') or 'krpc-lint')} {_text(tool.get('version') or '')}, "
                     f"{_text(report.get('schema') or '')}"))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>krpc-lint readiness: {_text(target.get('name'))}</title>\n<style>{CSS}</style>\n</head>\n"
            "<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


def _text(value: Any) -> str:
    """Any value as one visible line of inert HTML (None as nothing)."""
    return escape(printable("" if value is None else str(value)))


def _api(call: Row) -> str:
    """The API's name, or its key when neither the target nor the capture named it."""
    return str(call.get("api") or f"API {call['api_key']}")


def _count(value: Any) -> str:
    return f"{int(value or 0):,}"


def _columns(clients: Sequence[Row]) -> dict[int, str]:
    """The column of every API a client called, by key: its header (name, key, the target's versions), in key
    order; past ``API_COLUMNS`` the least requested share the column ``OTHER``."""
    headers: dict[int, str] = {}
    requests: Counter[int] = Counter()
    for client in clients:
        for call in client.get("calls") or []:
            key = int(call["api_key"])
            requests[key] += int(call.get("requests") or 0)
            if key not in headers:
                versions = call.get("target_versions")
                target = f"target {_text(versions)}" if versions is not None else "not in target"
                headers[key] = f"{_text(_api(call))}<small>key {key} · {target}</small>"
    kept = sorted(key for key, _ in requests.most_common(API_COLUMNS)) if len(headers) > API_COLUMNS else sorted(headers)
    columns = {key: headers[key] for key in kept}
    if len(headers) > len(kept):
        columns[OTHER] = f"other APIs<small>{len(headers) - len(kept):,} more</small>"
    return columns


def _matrix(clients: Sequence[Row], columns: Mapping[int, str]) -> str:
    """One row per client: its verdict, who it is, its requests, then a cell per API column."""
    headers = ["verdict", "client", "requests", *columns.values()]
    rows = [[_client_verdict(client), _who(client), _count(client.get("requests")), *_cells(client, columns)]
            for client in clients]
    return table(f"{len(clients):,} clients, worst first; {len(columns):,} APIs", headers, rows,
                 ["", "client", "num"])


def _cells(client: Row, columns: Mapping[int, str]) -> list[str]:
    """The client's calls as chips in their API's column (``OTHER`` for an API without one), by version."""
    cells: dict[int, list[str]] = {key: [] for key in columns}
    for call in sorted(client.get("calls") or [], key=lambda c: (int(c["api_key"]), int(c["version"]))):
        key = int(call["api_key"])
        cells[key if key in cells else OTHER].append(_chip(call, named=key not in columns))
    return ["".join(chips) for chips in cells.values()]


def _chip(call: Row, named: bool) -> str:
    """``v2 ×100``, coloured by the call's verdict, the verdict in words when it is not supported; the target's
    versions and the note as its tooltip."""
    verdict = call.get("verdict")
    kind = verdict if verdict in CALL_COLOURS else UNKNOWN
    name = f"{_text(_api(call))} " if named else ""
    words = "" if verdict == "supported" else f" {_text(verdict)}"
    tip = f"{_api(call)} v{call.get('version')}: {verdict}; target: {call.get('target_versions') or 'no such API'}"
    if call.get("note"):
        tip += f"; {call['note']}"
    return (f'<span class="chip {kind}" title="{_text(tip)}">{name}v{int(call["version"])} '
            f"×{_count(call.get('requests'))}{words}</span>")


def _client_verdict(client: Row) -> str:
    verdict = client.get("verdict")
    kind = verdict if verdict in CLIENT_COLOURS else UNKNOWN
    baselined = " (baselined)" if client.get("baselined") else ""
    return f'<span class="verdict {kind}">{_text(str(verdict).replace("_", " "))}{baselined}</span>'


def _who(client: Row) -> str:
    """The client id (or that it is unknown), its software and the hosts it came from."""
    client_id = client.get("client_id")
    who = "<em>unknown client id</em>" if client_id is None else f"<code>{_text(client_id)}</code>"
    software = " ".join(str(part) for part in (client.get("software_name"), client.get("software_version")) if part)
    lines = [who, _text(software or "software unknown"), _text(", ".join(map(str, client.get("addresses") or [])))]
    return "<br>".join(line for line in lines if line)


def _what_breaks(index: int, client: Row) -> str:
    """A client that is not ready: its reasons, then the notes on its calls."""
    client_id = client.get("client_id")
    name = "unknown client id" if client_id is None else f"<code>{_text(client_id)}</code>"
    items = [f"<li>{_text(reason)}</li>" for reason in client.get("reasons") or []]
    items += [f"<li>{_text(_api(call))} v{int(call['version'])}: {_text(call['note'])}</li>"
              for call in client.get("calls") or [] if call.get("note")]
    heading = f'<h3 id="client-{index}">{name}: {_client_verdict(client)}</h3>'
    return heading + (f"\n<ul>{''.join(items)}</ul>" if items else "")


__all__ = ["html_report"]
