"""The Markdown and HTML renderings of a readiness report: every client and call shown, each coloured by its verdict,
and client ids from the wire (pipes, backticks, newlines, tags, bidi overrides) unable to break a table or add a
tag."""

from __future__ import annotations

import copy
import html
import re
from html.parser import HTMLParser
from typing import Any

import html5lib
import pytest
from markdown_it import MarkdownIt

from linter.escape import printable
from linter.readiness.html import API_COLUMNS, html_report
from linter.readiness.markdown import markdown_report

EVIL_ID = "evil|id`x`\n::error::pwned\r<script>alert(1)</script>\u202egnp.exe a\\|b"
EVIL_SOFTWARE = "<img src=http://evil.example/x.png>"


def _call(api_key: int, api: str | None, version: int, requests: int, verdict: str, target: str | None,
          note: str | None = None) -> dict[str, Any]:
    return {"api_key": api_key, "api": api, "version": version, "requests": requests, "verdict": verdict,
            "target_versions": target, "note": note}


def _client(client_id: str | None, software: tuple[str | None, str | None], verdict: str, reasons: list[str],
            calls: list[dict[str, Any]], *, baselined: bool = False, negotiates: bool | None = True) -> dict[str, Any]:
    return {"client_id": client_id, "software_name": software[0], "software_version": software[1],
            "addresses": ["127.0.0.1", "10.0.0.7|x"], "verdict": verdict, "baselined": baselined,
            "requests": sum(call["requests"] for call in calls), "reasons": reasons, "negotiates": negotiates,
            "calls": calls}


def sample_report() -> dict[str, Any]:
    """Four clients, worst first: one breaks (hostile id), one breaks but is baselined, one at risk, one ready."""
    clients = [
        _client(EVIL_ID, ("kafka-python", "1.4.7"), "breaks",
                ["Produce v2: removed (target has 3-13)", "ControlledShutdown v1: absent (the target has no such API)"],
                [_call(0, "Produce", 2, 100, "removed", "3-13", "the broker offered up to v9 and the client chose v2"),
                 _call(3, "Metadata", 1, 19, "removed", "4-13"),
                 _call(7, "ControlledShutdown", 1, 1, "absent", None),
                 _call(18, "ApiVersions", 3, 2, "supported", "0-4")]),
        _client("legacy|`tool`", (EVIL_SOFTWARE, None), "breaks", ["Fetch v3: removed (target has 4-17)"],
                [_call(1, "Fetch", 3, 40, "removed", "4-17")], baselined=True, negotiates=False),
        _client("sarama-1", ("sarama", "1.38.1"), "at_risk", ["Produce v3: deprecated (target has 3-13)"],
                [_call(0, "Produce", 3, 30, "deprecated", "3-13"),
                 _call(1, "Fetch", 18, 25, "newer", "4-17", "negotiates down to v17")]),
        _client(None, (None, None), "ready", [],
                [_call(3, "Metadata", 12, 8, "supported", "4-13"), _call(1, "Fetch", 12, 4, "supported", "4-17")],
                negotiates=None),
    ]
    return {"schema": "krpc-lint/readiness/1", "tool": {"name": "krpc-lint", "version": "0.9.0"},
            "target": {"name": "4.0.0:clients/src/main/resources/common/message",
                       "source": "specs at 4.0.0 <b>(git ref)</b>"},
            "inputs": {"files": 3, "frames": 1206, "requests": 229, "log_lines": 0,
                       "not_read": {"bytes lost (gaps)": 120}},
            "summary": {"clients": 4, "breaks": 2, "at_risk": 1, "ready": 1, "baselined": 1},
            "clients": clients}


# --- Markdown ----------------------------------------------------------------------------------------------------


def _gfm_cells(line: str) -> list[str]:
    """A table row split as cmark-gfm does: a pipe right after a backslash is text (``\\\\|`` too: re2c's longest
    match takes the pipe into ``escaped_char``), any other pipe a delimiter."""
    return re.split(r"(?<!\\)\|", line.strip())[1:-1]


def _tables(markdown: str) -> list[list[str]]:
    """The pipe tables of ``markdown``: runs of lines that start with ``|``."""
    tables: list[list[str]] = []
    previous = False
    for line in markdown.splitlines():
        is_row = line.startswith("|")
        if is_row and not previous:
            tables.append([])
        if is_row:
            tables[-1].append(line)
        previous = is_row
    return tables


def test_markdown_shows_every_client_and_every_call_of_the_clients_not_ready() -> None:
    report = sample_report()
    text = markdown_report(report)
    assert text.startswith("# Readiness for `4.0.0:clients/src/main/resources/common/message`\n")
    assert "**4 clients: 2 break, 1 at risk, 1 ready (1 baselined)**" in text
    summary = _tables(text)[0]
    assert len(summary) == 2 + 4
    assert [row.split("|")[1].strip() for row in summary[2:]] == ["🔴 breaks", "🔴 breaks (baselined)", "🟠 at risk",
                                                                  "🟢 ready"]
    assert "*unknown*" in summary[5]
    for client in report["clients"][:3]:
        for call in client["calls"]:
            assert re.search(rf"^\| {call['api']} \| {call['api_key']} \| {call['version']} \| {call['requests']} \|"
                             rf" \S+ {call['verdict']} \|", text, re.MULTILINE), call
    assert "| Fetch | 1 | 3 | 40 | 🔴 removed | 4-17 |" in text
    assert "| ControlledShutdown | 7 | 1 | 1 | 🔴 absent | no such API |" in text
    assert "| Fetch | 1 | 18 | 25 | 🔵 newer | 4-17 | negotiates down to v17 |" in text
    assert "Metadata | 3 | 12" not in text  # the ready client has no section
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## evil\\|id\\`x\\`\\\\n::error::pwned\\\\r\\<script>alert(1)\\</script>\\\\u202egnp.exe "
                        "a\\\\\\|b: 🔴 breaks", "## legacy\\|\\`tool\\`: 🔴 breaks (baselined)", "## sarama-1: 🟠 at risk"]
    assert "Software: \\<img src=http://evil.example/x.png>; sends ApiVersions: no." in text
    assert "Read: 3 files, 1,206 frames, 229 requests, 0 log lines.  \nNot read: bytes lost (gaps): 120." in text


def test_markdown_tables_hold_against_hostile_ids() -> None:
    text = markdown_report(sample_report())
    tables = _tables(text)
    assert len(tables) == 1 + 3  # the summary, then the three clients that are not ready
    for rows in tables:
        widths = {len(_gfm_cells(row)) for row in rows}
        assert widths == {len(_gfm_cells(rows[0]))}, rows
    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), line
        assert "\r" not in line and "\u202e" not in line
    assert "\\u202e" in text and "\\n::error::pwned" in text


def test_markdown_renders_no_tag_from_the_input() -> None:
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown_report(sample_report()))
    assert "<script" not in rendered and "<img" not in rendered and "<b>" not in rendered
    assert "&lt;script&gt;" in rendered and "&lt;img src=" in rendered
    assert rendered.count("<table>") == 4
    shown = html.escape(printable(EVIL_ID), quote=False)
    assert f"<code>{shown}</code>" in rendered  # the code span in the table shows the id exactly
    assert f"<h2>{shown}: 🔴 breaks</h2>" in rendered  # and so does the heading


def test_markdown_lists_every_reason_when_the_table_cuts_them() -> None:
    report = sample_report()
    report["clients"][0]["reasons"] = [f"Api{n} v0: absent (the target has no such API)" for n in range(5)]
    text = markdown_report(report)
    assert "Api2 v0: absent (the target has no such API); and 2 more |" in text
    assert "- Api4 v0: absent (the target has no such API)" in text


# --- HTML --------------------------------------------------------------------------------------------------------


class _Page(HTMLParser):
    """What a page holds: its tags' attributes, the chips (class, text) per table row, the text of the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[list[tuple[str, str]]]] = []  # row -> cell -> chips
        self.text: list[str] = []
        self._chip: str | None = None
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        classes = dict(attrs).get("class") or ""
        if tag == "tr":
            self.rows.append([])
        elif tag == "td" and self.rows:
            self.rows[-1].append([])
            self._in_cell = True
        elif tag == "span" and self._in_cell and ("chip" in classes or "verdict" in classes):
            self._chip = classes
            self.rows[-1][-1].append((classes, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._chip = None
        elif tag == "td":
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._chip is not None and self.rows and self.rows[-1] and self.rows[-1][-1]:
            classes, text = self.rows[-1][-1][-1]
            self.rows[-1][-1][-1] = (classes, text + data)


def _parsed(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def test_html_has_a_row_per_client_and_a_coloured_chip_per_call() -> None:
    report = sample_report()
    page = _parsed(html_report(report))
    header = re.search(r"<thead><tr>(.*?)</tr></thead>", html_report(report))
    assert header is not None
    apis = re.findall(r"<th scope=\"col\">(\w+)<small>", header[1])
    assert apis == ["Produce", "Fetch", "Metadata", "ControlledShutdown", "ApiVersions"]  # by api key
    body = [row for row in page.rows if row][:4]
    for row, client in zip(body, report["clients"], strict=True):
        verdict_cell, api_cells = row[0], row[3:]
        assert verdict_cell[0][0] == f"verdict {client['verdict']}"
        for column, key in enumerate([0, 1, 3, 7, 18]):
            calls = [call for call in client["calls"] if call["api_key"] == key]
            assert [classes for classes, _ in api_cells[column]] == [f"chip {call['verdict']}" for call in calls]
            assert [text.split(" ")[:2] for _, text in api_cells[column]] == [
                [f"v{call['version']}", f"×{call['requests']}"] for call in calls]
    assert ".removed{background:#C0392B}" in html_report(report)


def test_html_shows_the_target_the_summary_and_what_breaks() -> None:
    page = html_report(sample_report())
    text = " ".join(_parsed(page).text)
    assert "4 clients: 2 break, 1 at risk, 1 ready (1 baselined)" in text
    assert "4.0.0:clients/src/main/resources/common/message" in text
    assert "Produce v2: removed (target has 3-13)" in text
    assert "Produce v0: the broker offered" not in text and "Produce v2: the broker offered up to v9" in text
    assert "breaks (baselined)" in text


def test_html_escapes_everything_and_links_nowhere() -> None:
    page = html_report(sample_report())
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)
    parsed = _parsed(page)
    assert {tag for tag, _ in parsed.tags} <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3",
                                                "p", "code", "ul", "li", "span", "section", "table", "caption",
                                                "thead", "tbody", "tr", "th", "td", "br", "small", "em"}
    for _, attributes in parsed.tags:
        for name, value in attributes.items():
            assert name not in {"src", "href"}, (name, value)
            assert "http" not in (value or "") and "//" not in (value or ""), (name, value)
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\u202e" not in page and "\r" not in page and "\\u202e" in page


def test_html_puts_apis_beyond_the_column_limit_in_one_column() -> None:
    report = copy.deepcopy(sample_report())
    report["clients"][3]["calls"] = [_call(1000 + n, None, 0, 1, "absent", None) for n in range(API_COLUMNS + 2)]
    page = html_report(report)
    assert page.count('<th scope="col"') == 3 + API_COLUMNS + 1
    assert "other APIs<small>" in page and '<span class="chip absent"' in page
    assert "API 1129 v0" in page


@pytest.mark.parametrize("verdict", ["breaks", "what?"])
def test_html_gives_an_unknown_verdict_the_unknown_class(verdict: str) -> None:
    report = sample_report()
    report["clients"][0]["verdict"] = verdict
    report["clients"][0]["calls"][0]["verdict"] = verdict.replace("breaks", "removed")
    page = html_report(report)
    expected = "unknown" if verdict == "what?" else "breaks"
    assert f'<span class="verdict {expected}">' in page
