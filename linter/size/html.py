"""``krpc-lint size --format html``: one self-contained page (no script, no network) of the JSON report:
the totals, bytes by version per message and bytes by field per message version, as inline SVG bars drawn
by the audit report's chart helpers (``linter.report.html_charts``), with the what-if beside them; with a
frames corpus, a table of the frames that could not be sized (per kind, the first's number and reason).

Every name comes from the specs or the corpus, so every one is escaped (``html_parts.escape``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from linter.report.html_charts import Bar, horizontal_bars
from linter.report.html_parts import (
    code,
    escape,
    figure,
    legend,
    note,
    section,
    table,
)

TOP_FIELDS = 30  # bars per message version: its largest field paths
BYTES, WHAT_IF = "#4477AA", "#EE6677"  # the colours of the measured bytes and of the what-if's
STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left}
td.num,th.num{text-align:right}caption{text-align:left;font-weight:bold}figure{margin:1em 0}
.legend{list-style:none;padding:0;display:flex;gap:1em}.swatch{display:inline-block;width:10px;height:10px;
margin-right:4px}svg text{font-size:11px}.axis{fill:#555}.note{color:#555}"""


def size_page(report: Mapping[str, Any], specs: str) -> str:
    """The page of a ``krpc-lint size`` JSON report (``messages``, ``total``, a corpus's ``refused``) of the
    specs ``specs``."""
    messages = report["messages"]
    what_if = "what_if" in report["total"]
    parts = [section("total", "Total", _totals(report["total"], len(messages)), _table(messages, what_if))]
    if report.get("refused"):
        parts.append(section("refused", "Frames not sized", _refused(report["refused"])))
    parts += [section("versions", "Bytes by version", *_by_version(messages, what_if)),
              section("fields", "Bytes by field", *[_by_field(index, message)
                                                     for index, message in enumerate(messages)])]
    key = legend([("bytes", BYTES)] + ([("what-if", WHAT_IF)] if what_if else []))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>krpc-lint size: {escape(specs)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>Wire sizes of {code(specs)}</h1>\n{key}\n" + "\n".join(parts) + "\n</body>\n</html>\n")


def _totals(total: Mapping[str, Any], messages: int) -> str:
    text = f"{total['count']:,} messages in {messages:,} message versions: {total['bytes']:,} bytes."
    if "what_if" in total:
        text += f" With the what-if: {total['what_if']['bytes']:,} bytes ({_change(total['what_if']['saved'])})."
    return note(escape(text))


def _change(saved: int) -> str:
    return f"{saved:,} bytes saved" if saved >= 0 else f"{-saved:,} bytes added"


def _table(messages: list[Mapping[str, Any]], what_if: bool) -> str:
    headers = ["message", "version", "count", "bytes"] + (["what-if bytes", "saved"] if what_if else [])
    rows = [[escape(m["name"]), str(m["version"]), f"{m['count']:,}", f"{m['bytes']:,}"]
            + ([f"{m['what_if']['bytes']:,}", f"{m['what_if']['saved']:,}"] if what_if else []) for m in messages]
    return table("Per message version", headers, rows, ["", "num", "num", "num", "num", "num"])


def _refused(refused: list[Mapping[str, Any]]) -> str:
    """The kinds of frames not sized: what they are (blank for rows that are not frames), how many, the first."""
    headers = ["direction", "API key", "version", "frames", "first frame", "first error"]
    rows = [[escape(entry["direction"] or "not a frame"), escape(entry["api_key"]), escape(entry["api_version"]),
             f"{entry['frames']:,}", f"{entry['first_frame']:,}", escape(entry["first_error"])] for entry in refused]
    return table("Per kind, the most frames first", headers, rows, ["", "num", "num", "num", "num", ""])


def _by_version(messages: list[Mapping[str, Any]], what_if: bool) -> list[str]:
    """One chart per message: a bar per version (and its what-if's beside it)."""
    names: dict[str, list[Mapping[str, Any]]] = {}
    for message in messages:
        names.setdefault(message["name"], []).append(message)
    charts = []
    for index, (name, versions) in enumerate(names.items()):
        bars = []
        for message in sorted(versions, key=lambda m: m["version"]):
            bars.append(Bar(f"v{message['version']}", (("bytes", BYTES, message["bytes"]),)))
            if what_if:
                bars.append(Bar(f"v{message['version']} what-if", (("what-if bytes", WHAT_IF,
                                                                     message["what_if"]["bytes"]),)))
        anchor = f"version-{index}"
        charts.append(figure(anchor, f"{escape(name)}: bytes by version", horizontal_bars(anchor, bars)))
    return charts


def _by_field(index: int, message: Mapping[str, Any]) -> str:
    """A message version's largest field paths as bars, and its what-if in words."""
    fields = sorted(message["fields"], key=lambda f: -f["bytes"])
    bars = [Bar(f["path"] or "(message)", (("bytes", BYTES, f["bytes"]),)) for f in fields[:TOP_FIELDS]]
    anchor = f"field-{index}"
    caption = (f"{escape(message['name'])} v{message['version']}: {message['bytes']:,} bytes in "
               f"{message['count']:,} messages")
    parts = [horizontal_bars(anchor, bars)]
    if len(fields) > TOP_FIELDS:
        parts.append(note(f"The {TOP_FIELDS} largest of {len(fields)} field paths."))
    if "what_if" in message:
        parts.append(note(escape(f"What-if: {message['what_if']['bytes']:,} bytes "
                                 f"({_change(message['what_if']['saved'])}).")))
    return figure(anchor, caption, "\n".join(parts))


__all__ = ["size_page"]
