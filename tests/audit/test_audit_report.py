"""report.html of ``krpc-lint audit``: valid, self-contained, inert with hostile data, and exact.

The rows are built by hand over two releases and three months of changes (with an empty month
between), with a path and messages that try to inject markup. The report of Kafka's real history
(``../shared/kafka-history``, audited in this process) is rendered in headless Chromium at 1400 px
and its layout measured: nothing overflows, the API column is readable, no collapsed row is tall.
"""

from __future__ import annotations

import html
import json
import random
import re
import shutil
import subprocess
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import html5lib
import pytest
from conftest import REPO_ROOT, in_ci, require_shared

from linter.audit.report_html import (
    TABLE_LIMIT,
    WIRE_COLUMNS,
    compact_versions,
    render_report,
)

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'
EVIL_PATH = f"specs/{SCRIPT}.json"
FETCH, PRODUCE = "specs/FetchRequest.json", "specs/ProduceRequest.json"
OLD, NEW = "3.9.0", "10.0.0"  # released in this order: not the tags' sort order


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def revision(commit: str, day: str, path: str, status: str, blob: str | None, lineage: str,
             release: str | None, old_path: str | None = None) -> dict[str, Any]:
    return {"commit": commit, "parent": None, "time": at(day), "status": status, "path": path,
            "old_path": old_path, "blob": blob, "lineage": lineage, "release": release}


def change(commit: str, day: str, release: str | None, category: str | None, api: str | None, *,
           released: bool = False, path: str = FETCH, message: str = "type changed", error: str | None = None,
           rule: str = "KL1003", name: str = "field-type-changed") -> dict[str, Any]:
    wire = category == "WIRE_BREAKING"
    return {"lineage": path, "old_commit": "0" * 40, "new_commit": commit * 40, "time": at(day),
            "release": release, "old_path": path, "new_path": path, "old_blob": "a", "new_blob": "b",
            "released_in": OLD if released else None, "rule": None if error else rule,
            "name": None if error else name, "category": category, "severity": None if error else "error",
            "message_name": api, "versions": [0, 1, 2, 3, 5], "released": released, "line": 12, "col": 3,
            "message": message, "witness_version": 3 if wire else None, "witness_writer": "old" if wire else None,
            "witness_hex": "00ff" * 40 if wire else None,
            "witness_reading": f"the new revision fails: {message}" if wire else None, "error": error}


def finding(blob: str, rule: str, name: str, severity: str, error: str | None = None,
            path: str = FETCH) -> dict[str, Any]:
    return {"blob": blob, "path": path, "rule": rule, "name": name, "severity": severity, "category": "style",
            "line": 1, "col": 1, "message": "m", "error": error}


REVISIONS = [
    revision("1", "2024-01-05", FETCH, "A", "b1", FETCH, OLD),
    revision("1", "2024-01-05", PRODUCE, "A", "b2", PRODUCE, OLD),
    revision("2", "2024-01-20", FETCH, "M", "b3", FETCH, OLD),
    revision("3", "2024-02-10", PRODUCE, "M", "b4", PRODUCE, NEW),
    revision("4", "2024-02-11", EVIL_PATH, "R", "b4", PRODUCE, NEW, old_path=PRODUCE),
    revision("5", "2024-04-01", FETCH, "M", "b5", FETCH, None),
    revision("6", "2024-04-02", FETCH, "D", None, FETCH, None),
]
CHANGES = [
    change("2", "2024-01-20", OLD, "WIRE_BREAKING", "FetchRequest", released=True),
    change("2", "2024-01-20", OLD, "SAFE", "FetchRequest", rule="KL1050", name="field-added"),
    change("3", "2024-02-10", NEW, "WIRE_BREAKING", "ProduceRequest", path=PRODUCE),
    change("3", "2024-02-10", NEW, "SOURCE_ONLY", "ProduceRequest", path=PRODUCE, rule="KL1061", name="renamed"),
    change("4", "2024-02-11", NEW, "WIRE_BREAKING", "ProduceRequest", released=True, path=EVIL_PATH, message=IMG),
    change("5", "2024-04-01", None, "WIRE_BREAKING", "FetchRequest", released=True),
    change("5", "2024-04-01", None, "WIRE_BREAKING", "FetchRequest"),
    change("5", "2024-04-01", None, "VERSION_DROPPED", "FetchRequest", rule="KL1020", name="version-dropped"),
    change("5", "2024-04-01", None, None, None, error=f"cannot parse {SCRIPT}"),
]
FINDINGS = [
    finding("b1", "KL0001", "no-tabs", "warning"),
    finding("b1", "KL0001", "no-tabs", "warning"),
    finding("b3", "KL0001", "no-tabs", "warning"),
    finding("b3", "KL0100", "bad-type", "error"),
    finding("b4", "KL0100", "bad-type", "error", path=EVIL_PATH),
    finding("b5", "KL0200", "about-missing", "info"),
    finding("b2", "", "", "", error=f"crashed on {IMG}", path=EVIL_PATH),
]
META = {"repo": "/src/kafka", "refs": ["trunk"], "globs": ["clients/src/main/resources/common/message/*.json"],
        "duration_seconds": 12.345, "spark_master": "local[*]", "version": "0.1.0"}


def render(revisions=REVISIONS, findings=FINDINGS, changes=CHANGES) -> str:
    return render_report(revisions, findings, changes, title=f"audit of {SCRIPT}", meta=META)


def parse(document: str) -> Element:
    """Parse strictly: any HTML parse error (stray tag, bad character, ...) raises."""
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(document)


def local(element: Element) -> str:
    return element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""


def by_id(root: Element, anchor: str) -> Element:
    found = [element for element in root.iter() if element.get("id") == anchor]
    assert len(found) == 1, anchor
    return found[0]


def text(element: Element) -> str:
    return "".join(element.itertext())


def body_rows(table: Element) -> list[list[str]]:
    return [[text(cell) for cell in row] for body in table if local(body) == "tbody" for row in body]


def bar_counts(figure: Element) -> dict[str, Counter[str]]:
    """The counts the chart's rects say, per bar group and category."""
    counts: dict[str, Counter[str]] = {}
    for rect in figure.iter():
        if local(rect) == "rect":
            group = counts.setdefault(rect.get("data-group"), Counter())
            group[rect.get("data-category")] += int(rect.get("data-count"))
    return counts


def ticks(figure: Element) -> list[str]:
    """The x-axis labels, left to right."""
    return [text(label) for label in figure.iter() if "tick" in (label.get("class") or "").split()]


def first_table(section: Element) -> list[list[str]]:
    return body_rows(next(element for element in section.iter() if local(element) == "table"))


def test_the_report_parses_strictly_as_html5() -> None:
    document = render()
    assert document.startswith("<!doctype html>")
    root = parse(document)
    assert text(next(element for element in root.iter() if local(element) == "title")) == f"audit of {SCRIPT}"
    assert all(cell.get("scope") == "col" for cell in root.iter() if local(cell) == "th")


def test_the_report_has_no_script_and_loads_nothing() -> None:
    document = render()
    assert "<script" not in document.lower()
    assert "http://" not in document and "https://" not in document
    assert "url(" not in document and "@import" not in document
    for element in parse(document).iter():
        assert local(element) not in {"script", "img", "iframe", "link", "object", "embed", "base"}
        for attribute in element.attrib:
            name = attribute.rsplit("}", 1)[-1].lower()
            assert not name.startswith("on") and name not in {"src", "href", "srcset", "action"}, name


def test_hostile_text_comes_out_as_text() -> None:
    root = parse(render())
    cells = [text(cell) for cell in root.iter() if local(cell) == "td"]
    assert f"KL1003 {IMG}" in cells  # the wire-breaking table's change: rule and message
    assert f"{EVIL_PATH}:12" in cells
    assert f"crashed on {IMG}" in cells
    assert f"cannot parse {SCRIPT}" in cells


def test_unparseable_characters_are_replaced() -> None:
    message = "lone \ud800, \x7f, \U0001fffe and \ufdd0; kept: tab\t form feed\x0c crlf\r\n"
    broken = change("7", "2024-04-03", None, "WIRE_BREAKING", "Bad\x00Api\x1b", message=message)
    document = render(changes=[*CHANGES, broken])
    parse(document)
    document.encode("utf-8")
    assert "lone \ufffd, \ufffd, \ufffd and \ufffd; kept: tab\t form feed\x0c crlf\r\n" in document
    assert "Bad\ufffdApi\ufffd" in document


def test_naive_times_are_taken_as_utc() -> None:
    naive = [dict(row, time=row["time"].replace(tzinfo=None)) for row in CHANGES]
    other_zone = [dict(row, time=row["time"].astimezone(timezone(timedelta(hours=-5)))) for row in CHANGES]
    assert render(changes=naive) == render(changes=other_zone) == render()


def test_run_facts_are_shown_in_order() -> None:
    meta = {"repo": "/r", "refs": {"b", "a"}, "counts": {"commits": 3, "blobs": [1, 2]}, "nothing": None}
    facts = by_id(parse(render_report([], [], [], title="t", meta=meta)), "summary")
    terms = [text(item) for item in facts.iter() if local(item) in ("dt", "dd")]
    assert terms == ["repo", "/r", "refs", "a, b", "counts", "commits: 3, blobs: 1, 2", "nothing", "none"]


def test_summary_numbers() -> None:
    root = parse(render())
    cards = {card.get("data-key"): text(card[0]) for card in root.iter() if card.get("data-key")}
    assert cards == {"commits": "6", "revisions": "7", "blobs": "5", "lineages": "2", "releases": "2",
                     "pairs": "4", "findings": "6", "changes": "8", "wire": "5", "wire-released": "3", "errors": "2"}
    summary = by_id(root, "summary")
    tables = [body_rows(table) for table in summary.iter() if local(table) == "table"]
    assert tables[0] == [["error", "2"], ["warning", "3"], ["info", "1"]]
    assert tables[1] == [["WIRE_BREAKING", "5", "3"], ["VERSION_DROPPED", "1", "0"], ["SOURCE_ONLY", "1", "0"],
                         ["SAFE", "1", "0"], ["ERROR", "1", "0"]]
    assert "2024-01-05 00:00 to 2024-04-02 00:00 (UTC)" in text(summary)
    assert "/src/kafka" in text(summary) and "12.3" in text(summary)


def test_the_runs_pair_count_wins_over_the_estimate() -> None:
    root = parse(render_report(REVISIONS, FINDINGS, CHANGES, title="t", meta={"pairs": 9}))
    assert [text(card[0]) for card in root.iter() if card.get("data-key") == "pairs"] == ["9"]


def test_changes_per_release_in_release_order() -> None:
    figure = by_id(parse(render()), "per-release")
    assert ticks(figure) == [OLD, NEW, "unreleased"]
    assert bar_counts(figure) == {
        OLD: Counter(WIRE_BREAKING=1, SAFE=1),
        NEW: Counter(WIRE_BREAKING=2, SOURCE_ONLY=1),
        "unreleased": Counter(WIRE_BREAKING=2, VERSION_DROPPED=1, ERROR=1),
    }


def test_changes_per_month_include_empty_months() -> None:
    figure = by_id(parse(render()), "per-month")
    assert ticks(figure) == ["2024-01", "2024-02", "2024-03", "2024-04"]
    assert bar_counts(figure) == {
        "2024-01": Counter(WIRE_BREAKING=1, SAFE=1),
        "2024-02": Counter(WIRE_BREAKING=2, SOURCE_ONLY=1),
        "2024-04": Counter(WIRE_BREAKING=2, VERSION_DROPPED=1, ERROR=1),
    }
    legend = [text(item) for item in figure.iter() if local(item) == "li"]
    assert legend == ["WIRE_BREAKING", "VERSION_DROPPED", "SOURCE_ONLY", "SAFE", "ERROR"]


def test_top_apis_by_wire_breaking_changes() -> None:
    section = by_id(parse(render()), "apis")
    assert first_table(section) == [["FetchRequest", "3", "2"], ["ProduceRequest", "2", "1"]]
    released, unreleased = "on released versions", "on unreleased versions only"
    assert bar_counts(section) == {"FetchRequest": Counter({released: 2, unreleased: 1}),
                                   "ProduceRequest": Counter({released: 1, unreleased: 1})}


def test_top_rules() -> None:
    section = by_id(parse(render()), "rules")
    lint, compat = [body_rows(table) for table in section.iter() if local(table) == "table"]
    assert lint == [["KL0001", "no-tabs", "warning", "3"], ["KL0100", "bad-type", "error", "2"],
                    ["KL0200", "about-missing", "info", "1"]]
    assert compat[0] == ["KL1003", "field-type-changed", "WIRE_BREAKING", "5"]
    assert len(compat) == 4


def test_wire_breaking_table_released_first_newest_first() -> None:
    section = by_id(parse(render()), "wire-breaking")
    rows = first_table(section)
    assert [(row[0][:10], row[1], row[5]) for row in rows] == [
        ("2024-04-01", "5" * 10, OLD), ("2024-02-11", "4" * 10, OLD), ("2024-01-20", "2" * 10, OLD),
        ("2024-04-01", "5" * 10, "no"), ("2024-02-10", "3" * 10, "no")]
    assert rows[0][4] == "0-3,5"
    assert rows[0][6] == "KL1003 type changed"


def test_wire_breaking_table_has_fixed_widths_and_a_collapsed_witness() -> None:
    section = by_id(parse(render()), "wire-breaking")
    table = next(element for element in section.iter() if local(element) == "table")
    assert table.get("class") == "fixed"
    widths = [col.get("style") or "" for col in table.iter() if local(col) == "col"]
    assert len(widths) == len(WIRE_COLUMNS) and "width:24ch" in widths[3]  # the API column: 22ch and padding
    details = [element for element in section.iter() if local(element) == "details"]
    assert len(details) == 5 and all(element.get("open") is None for element in details)
    summary, *parts = [text(child) for child in details[0]]
    assert summary == "v3, written by old: 80 bytes"
    assert parts == [f"v3 bytes written by the old revision (80 bytes, hex):{'00ff' * 40}",
                     "the new revision fails: type changed",
                     "The change: KL1003 field-type-changed, versions 0-3,5: type changed"]


def test_errors_table() -> None:
    section = by_id(parse(render()), "errors")
    rows = first_table(section)
    assert [row[0] for row in rows] == ["changes", "findings"]


def test_empty_inputs_render() -> None:
    document = render_report([], [], [], title="empty", meta={})
    root = parse(document)
    assert "No compat changes in this history." in text(root)
    assert "No wire-breaking change in this history." in text(root)
    assert not [element for element in root.iter() if local(element) == "rect"]


def test_long_histories_are_capped_and_thinned() -> None:
    start = datetime(1980, 1, 15, tzinfo=UTC)
    many = [change("9", "2024-01-01", None, "WIRE_BREAKING", f"Api{index % 40}") for index in range(600)]
    for index, row in enumerate(many):
        row["time"] = start + timedelta(days=31 * index)  # one a month, 50 years
    root = parse(render(changes=many))
    section = by_id(root, "wire-breaking")
    rows = first_table(section)
    assert len(rows) == TABLE_LIMIT
    assert f"first {TABLE_LIMIT} of 600" in text(section)
    months = by_id(root, "per-month")
    assert sum(count["WIRE_BREAKING"] for count in bar_counts(months).values()) == 600
    labels = ticks(months)
    assert 10 <= len(labels) <= 48 and all(label.endswith("-01") for label in labels)
    apis = by_id(root, "apis")
    assert len(first_table(apis)) == 15


def test_output_does_not_depend_on_row_order() -> None:
    shuffled = random.Random(7)
    rows = [list(REVISIONS), list(FINDINGS), list(CHANGES)]
    for table in rows:
        shuffled.shuffle(table)
    assert render(*rows) == render()


@pytest.mark.parametrize(("versions", "expected"), [
    ([0, 1, 2, 3, 5], "0-3,5"), ([], ""), (None, ""), ([7], "7"), ([3, 1, 2, 2, 9, 10], "1-3,9-10")])
def test_compact_versions(versions, expected) -> None:
    assert compact_versions(versions) == expected


# --- Kafka's history, rendered in a real browser ----------------------------------------------------------

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync")
WIDTH = 1400
# Added to a test copy of the page only (the shipped page has no script): measures the layout into the DOM,
# which ``--dump-dom`` then prints. Lines of a row: its height without the cells' padding, in line heights.
MEASURE = """
(() => {
  const table = document.querySelector("#wire-breaking table");
  const heads = [...table.tHead.rows[0].cells].map((cell) => cell.textContent);
  const api = table.tBodies[0].rows[0].cells[heads.indexOf("API")];
  const style = getComputedStyle(api);
  const zero = document.createElement("span");
  zero.textContent = "0";
  api.appendChild(zero);
  const zeroWidth = zero.getBoundingClientRect().width;
  zero.remove();
  const apiWidth = api.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom) + parseFloat(style.borderBottomWidth);
  const lines = [...table.tBodies[0].rows].map(
    (row) => (row.getBoundingClientRect().height - padding) / parseFloat(style.lineHeight));
  const out = document.createElement("pre");
  out.id = "measurements";
  out.textContent = JSON.stringify({
    scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth,
    innerWidth: window.innerWidth, apiChars: apiWidth / zeroWidth, maxRowLines: Math.max(...lines),
    rows: lines.length, open: document.querySelectorAll("#wire-breaking details[open]").length});
  document.body.appendChild(out);
})();
"""


def _chromium() -> str | None:
    return next((found for name in ("/usr/bin/chromium", "chromium", "chromium-browser")
                 if (found := shutil.which(name))), None)


def _browse(page: Path, profile: Path, *action: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on ``page`` at 1400 px, offline, in a throwaway profile."""
    browser = _chromium()
    if browser is None:  # the mark skips locally; in CI a missing browser is a failure, never a skip
        pytest.fail("Chromium is not installed, and CI=true must run the browser test (apt install chromium)")
    return subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},2000",
                           *action, page.as_uri()], check=True, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def kafka_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of an in-process audit of Kafka's trunk (about 900 revision pairs, 3 s, no Spark), written
    as ``krpc-lint audit`` writes it."""
    from linter.audit.run import (
        IN_PROCESS,
        _write_report,
        extract,
        run_in_process,
        units,
    )

    bundle = require_shared("kafka-history", "kafka-json.bundle")
    top = tmp_path_factory.mktemp("kafka-audit")
    clone = top / "kafka"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True, capture_output=True)
    history = extract(clone)
    work = units(history)
    tables = {"revisions": [revision.to_row() for revision in work.revisions], **run_in_process(work)}
    meta = {"repository": str(clone), "refs": ", ".join(history.refs), "releases": len(history.releases),
            "pairs": len(work.pairs), "master": IN_PROCESS}
    _write_report(top, tables, meta)
    return top / "report.html"


def test_every_category_of_kafkas_report_is_documented(kafka_report: Path) -> None:
    """The categories table of docs/compat.md lists every category the report shows (``ERROR`` is said there)."""
    documented = set(re.findall(r"^\| `([A-Za-z_]+)` \|", (REPO_ROOT / "docs" / "compat.md").read_text(), re.MULTILINE))
    summary = by_id(parse(kafka_report.read_text(encoding="utf-8")), "summary")
    categories = {row[0] for row in body_rows([t for t in summary.iter() if local(t) == "table"][1])}
    assert "input" in categories and "WIRE_BREAKING" in categories
    assert categories - {"ERROR"} <= documented
    assert "`ERROR`" in (REPO_ROOT / "docs" / "compat.md").read_text()


def test_kafkas_witnesses_say_what_the_other_revision_does(kafka_report: Path) -> None:
    section = by_id(parse(kafka_report.read_text(encoding="utf-8")), "wire-breaking")
    witnesses = [[text(child) for child in element] for element in section.iter() if local(element) == "details"]
    assert len(witnesses) > 100
    assert all(re.fullmatch(r"v\d+, written by (old|new): \d+ bytes?", summary) for summary, *_ in witnesses)
    assert all(re.match(r"the (old|new) revision (fails|reads it differently): .", parts[1])
               for _, *parts in witnesses)


@pytest.mark.skipif(_chromium() is None and not in_ci(), reason="Chromium is not installed")
def test_kafkas_report_fits_a_1400px_window_in_chromium(kafka_report: Path, tmp_path: Path) -> None:
    """The wire-breaking table of a real history fits the page: no horizontal scrolling, an API column of
    at least 20 characters (it was 3), rows of at most four lines while the witnesses are collapsed."""
    document = kafka_report.read_text(encoding="utf-8")
    assert "<script" not in document
    png = tmp_path / "report-1400.png"
    _browse(kafka_report, tmp_path / "profile", f"--screenshot={png}")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 50_000
    measured_page = tmp_path / "measured.html"
    measured_page.write_text(document.replace("</body>", f"<script>{MEASURE}</script>\n</body>"), encoding="utf-8")
    dumped = _browse(measured_page, tmp_path / "profile", "--dump-dom").stdout
    found = re.search(r'<pre id="measurements">([^<]*)</pre>', dumped)
    assert found, dumped[-2000:]
    measured = json.loads(html.unescape(found.group(1)))
    print(f"layout at {WIDTH}px: {measured}")
    assert measured["innerWidth"] == WIDTH and measured["rows"] > 100 and measured["open"] == 0
    assert measured["scrollWidth"] <= measured["clientWidth"], measured
    assert measured["apiChars"] >= 20, measured
    assert measured["maxRowLines"] <= 4.05, measured  # 4 lines of the 12 px path font are 3.7 body lines
