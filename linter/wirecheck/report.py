"""The one report document of a ``frames check`` run (``krpc-lint/frames-check/1``) and its formats: text for
people, JSON for programs, SARIF for code scanning. Every string from the wire or an input's name is escaped for its
format (JSON as every krpc-lint JSON output: ``escape.json_text``; text through ``escape.printable``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from linter.escape import guard_lines, json_text, printable
from linter.report.formats import SARIF_LEVEL, artifact_uri, sarif_log, sarif_rule
from linter.vocabulary import SEVERITIES, WIRE_FORMATS, plural
from linter.wirecheck.findings import Collector, Seen, WireFinding

if TYPE_CHECKING:
    from linter.engine.rules import Rule

SCHEMA = "krpc-lint/frames-check/1"
FORMATS = WIRE_FORMATS


def document(collector: Collector, specs: str, inputs: list[str], captures: str | None) -> dict[str, Any]:
    """The report as data: what every format renders (docs/wire-check.md describes its keys)."""
    names = collector.names
    clean = sum(group.clean for group in collector.groups.values())
    return {
        "schema": SCHEMA,
        "specs": specs,
        "inputs": inputs,
        "captures": captures,
        "frames": collector.frames,
        "clean": clean,
        "counts": {severity: collector.severities[severity] for severity in SEVERITIES},
        "baselined": collector.baselined,
        "not_shown": collector.reported - len(collector.findings),
        "findings": [_finding(finding, names) for finding in collector.findings],
        "summary": [{"sender": sender, "direction": direction, "api_key": key if key >= 0 else None,
                     "api": names.get(key) if key >= 0 else None, "api_version": version if version >= 0 else None,
                     "frames": group.frames, "clean": group.clean, "findings": dict(sorted(group.rules.items()))}
                    for (sender, direction, key, version), group in sorted(collector.groups.items())],
        "unexplained": collector.unexplained,
        "unlisted": collector.unlisted,
        "not_frames": {"count": collector.unreadable_count,
                       "first": [{"input": name, "frame": row, "reason": reason}
                                 for name, row, reason in collector.unreadable]},
    }


def _finding(finding: WireFinding, names: dict[int, str]) -> dict[str, Any]:
    seen, rule = finding.seen, finding.rule
    return {
        "rule": rule.id, "name": rule.name, "severity": rule.severity, "category": rule.category,
        "input": seen.input, "frame": seen.frame, "input_byte": seen.offset, "connection": seen.connection,
        "ts": seen.ts, "direction": seen.direction, "api_key": seen.api_key,
        "api": names.get(seen.api_key) if seen.api_key is not None else None, "api_version": seen.api_version,
        "correlation_id": seen.correlation_id, "client_id": seen.client_id, "software_name": seen.software_name,
        "software_version": seen.software_version, "sender": seen.sender, "offset": finding.offset,
        "field": finding.field, "message": finding.message, "found": finding.found.hex(),
        "expected": None if finding.expected is None else finding.expected.hex(),
        "display_filter": display_filter(seen),
    }


def display_filter(seen: Seen) -> str | None:
    """A Wireshark display filter that shows the frame: its client port and correlation id.

    >>> display_filter(Seen("c.pcap", 3, "request", 3, 12, 7, "127.0.0.1:50412 > 127.0.0.1:9092"))
    'tcp.port == 50412 && kafka.correlation_id == 7'
    """
    if not seen.connection or seen.correlation_id is None:
        return None
    port = seen.connection.partition(" > ")[0].rpartition(":")[2]
    return f"tcp.port == {port} && kafka.correlation_id == {seen.correlation_id}" if port.isdigit() else None


def render(report: dict[str, Any], fmt: str, rules: dict[str, Rule] | None = None) -> str:
    """The report in ``fmt`` (one of ``FORMATS``); ``rules`` (id -> Rule) describes the rules in SARIF."""
    if fmt == "json":
        return json_text(report)
    if fmt == "sarif":
        return sarif(report, rules or {})
    return text(report)


# --- text ----------------------------------------------------------------------------------------------


def text(report: dict[str, Any]) -> str:
    """Findings (where, what, the bytes sent and what Kafka writes), the summary per sender and API, one line."""
    lines: list[str] = []
    for finding in report["findings"]:
        lines += _finding_lines(finding)
    if report["not_shown"]:
        lines.append(f"... and {plural(report['not_shown'], 'more finding', grouped=True)} (counted below; the "
                     "first ones are shown)")
    if report["summary"]:
        lines += ["", *summary_table(report["summary"])]
    for row in report["not_frames"]["first"]:
        lines.append(printable(f"{row['input']}: frame {row['frame']}: not checked: {row['reason']}"))
    lines += ["", summary_line(report)]
    return guard_lines("\n".join(lines).lstrip("\n") + "\n")


def _finding_lines(finding: dict[str, Any]) -> list[str]:
    at = f"byte {finding['offset']}" + (f" at {finding['field']}" if finding["field"] else "")
    head = (f"{finding['input']}: frame {finding['frame']}: {at}: {finding['rule']} [{finding['name']}] "
            f"{finding['severity']}: {finding['message']}")
    api = (f"{finding['api'] or 'API ' + str(finding['api_key'])} v{finding['api_version']}"
           if finding["api_key"] is not None else "(API unknown)")
    frame = [f"{finding['direction']} {api} from {finding['sender']}"]
    if finding["correlation_id"] is not None:
        frame.append(f"correlation id {finding['correlation_id']}")
    if finding["connection"]:
        frame.append(finding["connection"])
    if finding["ts"] is not None:
        frame.append(_when(finding["ts"]))
    lines = [printable(head), printable(f"    frame:        {', '.join(frame)}"),
             f"    sent:         {_hex(finding['found'])}"]
    if finding["expected"] is not None:
        lines.append(f"    Kafka writes: {_hex(finding['expected']) if finding['expected'] else '(nothing)'}")
    if finding["display_filter"]:
        lines.append(f"    wireshark:    {finding['display_filter']}")
    return lines


def _when(ts: float) -> str:
    """A capture's timestamp in UTC, or as given when no calendar holds it (a corpus may say anything)."""
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    except (OverflowError, OSError, ValueError):
        return f"ts {ts!r}"


def _hex(text: str) -> str:
    """Hex in groups of 4 bytes, as a dump reads."""
    return " ".join(text[i:i + 8] for i in range(0, len(text), 8)) or "(no bytes)"


def summary_table(rows: list[dict[str, Any]]) -> list[str]:
    """Frames checked, clean, and findings by rule, per sender and (direction, API, version)."""
    table = [("sender", "frames", "checked", "clean", "findings")]
    for row in rows:
        api = (f"{row['direction']} {row['api'] or row['api_key']} v{row['api_version']}"
               if row["api_key"] is not None else f"{row['direction']} (API unknown)")
        findings = ", ".join(f"{rule} x{count}" for rule, count in row["findings"].items()) or "-"
        table.append((printable(row["sender"]), printable(api), str(row["frames"]), str(row["clean"]), findings))
    widths = [max(len(line[column]) for line in table) for column in range(4)]
    return [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:>{widths[2]}}  {d:>{widths[3]}}  {e}".rstrip()
            for a, b, c, d, e in table]


def summary_line(report: dict[str, Any]) -> str:
    """``534 frames checked: 498 clean; 24 errors, 0 warnings, 12 infos (3 baselined)``."""
    counts = report["counts"]
    found = ", ".join(plural(counts[severity], severity, grouped=True) for severity in SEVERITIES)
    line = (f"{plural(report['frames'], 'frame', grouped=True)} checked: {report['clean']:,} clean; {found}")
    extras = []
    if report["baselined"]:
        extras.append(f"{report['baselined']:,} baselined")
    if report["not_frames"]["count"]:
        extras.append(f"{plural(report['not_frames']['count'], 'row', grouped=True)} not checked")
    if report["unlisted"]:
        extras.append(f"{report['unlisted']:,} more deviations past the first 100 of a frame, not listed")
    if report["unexplained"]:
        extras.append(f"{plural(report['unexplained'], 'frame', grouped=True)} not canonical, nothing found: "
                      "please report it")
    return line + (f" ({'; '.join(extras)})" if extras else "")


# --- SARIF ---------------------------------------------------------------------------------------------


def sarif(report: dict[str, Any], rules: dict[str, Rule]) -> str:
    """SARIF 2.1.0: each finding's location is its input file (a JSON Lines corpus: the row's byte), the frame and
    field as a logical location, the frame's facts in its properties."""
    descriptors = [sarif_rule(rules[rule_id]) for rule_id in sorted(rules)]
    index = {descriptor["id"]: number for number, descriptor in enumerate(descriptors)}
    results = []
    for finding in report["findings"]:
        region = {"byteOffset": finding["input_byte"]} if finding["input_byte"] is not None else None
        physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(finding["input"])}}
        if region:
            physical["region"] = region
        logical = f"frame {finding['frame']}" + (f"/{finding['field']}" if finding["field"] else "")
        results.append({
            "ruleId": finding["rule"],
            **({"ruleIndex": index[finding["rule"]]} if finding["rule"] in index else {}),
            "level": SARIF_LEVEL[finding["severity"]],
            "message": {"text": f"frame {finding['frame']}, byte {finding['offset']}"
                                f"{' at ' + finding['field'] if finding['field'] else ''}: {finding['message']}"},
            "locations": [{"physicalLocation": physical,
                           "logicalLocations": [{"fullyQualifiedName": logical, "kind": "element"}]}],
            "properties": {key: finding[key] for key in ("frame", "connection", "ts", "direction", "api_key",
                                                         "api_version", "correlation_id", "sender", "offset",
                                                         "field", "found", "expected")},
        })
    return sarif_log(descriptors, results)


__all__ = ["FORMATS", "SCHEMA", "display_filter", "document", "render", "summary_line", "summary_table", "text"]
