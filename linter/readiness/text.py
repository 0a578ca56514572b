"""The text report of readiness: a line per client at the top (worst first), then a table of each client's calls.
Everything from the wire or a log (client ids, software names) goes through ``printable``."""

from __future__ import annotations

from typing import Any

from linter.escape import printable
from linter.readiness.wording import about_lines, summary_line
from linter.vocabulary import plural

VERDICT_WORDS = {"breaks": "BREAKS", "at_risk": "AT RISK", "ready": "ready"}
COLUMNS = ("API", "version", "requests", "verdict", "target", "note")


def client_name(client: dict[str, Any]) -> str:
    """``rdkafka (librdkafka 2.3.0)``, with what is unknown said so."""
    software = " ".join(part for part in (client["software_name"], client["software_version"]) if part)
    name = client["client_id"] if client["client_id"] is not None else "(no client id)"
    return printable(f"{name} ({software or 'software not named'})")


def text_report(report: dict[str, Any]) -> str:
    """The whole text report."""
    lines = [printable(f"target {report['target']['name']}: {summary_line(report['summary'])}"), ""]
    for client in report["clients"]:
        lines.append(_headline(client))
    for client in report["clients"]:
        lines += ["", _headline(client), *_table(client["calls"])]
    lines += ["", *map(printable, about_lines(report))]
    return "\n".join(lines) + "\n"


def _headline(client: dict[str, Any]) -> str:
    verdict = VERDICT_WORDS[client["verdict"]] + (" (baselined)" if client["baselined"] else "")
    hosts = ", ".join(client["addresses"][:3]) + (" ..." if len(client["addresses"]) > 3 else "")
    why = f": {'; '.join(client['reasons'])}" if client["reasons"] else ""
    return printable(f"{verdict:<9} {client_name(client)}{' from ' + hosts if hosts else ''}, "
                     f"{plural(client['requests'], 'request', grouped=True)}{why}")


def _table(calls: list[dict[str, Any]]) -> list[str]:
    rows = [COLUMNS] + [(call["api"] or f"API {call['api_key']}", str(call["version"]), f"{call['requests']:,}",
                         call["verdict"], call["target_versions"] or "-", call["note"] or "") for call in calls]
    widths = [max(len(row[column]) for row in rows) for column in range(len(COLUMNS) - 1)]
    return [printable("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1]).rstrip()
            for row in rows]


__all__ = ["client_name", "text_report"]
