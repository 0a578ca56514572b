"""report.html of ``krpc-lint audit``: the three result tables summed up for people.

One self-contained HTML5 document: inline CSS, charts as inline SVG drawn here, no JavaScript and
no external resource, so it opens offline and from an archived CI artifact. Every value from the
data (paths, messages, tags, spec text) is untrusted and goes through ``_text``. The output
depends only on the input rows, never on their order or the clock, so runs can be compared.
"""

from __future__ import annotations

import html
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from linter.compat.diff import CATEGORIES, WIRE, version_ranges

Row = Mapping[str, Any]

ERROR = "ERROR"  # the category shown for a pair that could not be compared
UNRELEASED = "unreleased"
TOP = 15
MAX_TICKS = 48  # labels under a chart's x axis; more columns get every n-th label
TABLE_LIMIT = 500
SEVERITIES = ("error", "warning", "info")
# Okabe–Ito and Tol colours: told apart with the common colour-vision deficiencies.
CATEGORY_COLOURS = {
    "WIRE_BREAKING": "#D55E00", "VERSION_DROPPED": "#CC79A7", "MAX_VERSION_LOWERED": "#E69F00",
    "TAG_REMOVED": "#882255", "NULLABILITY_NARROWED": "#0072B2", "NULLABILITY_WIDENED": "#56B4E9",
    "DEFAULT_CHANGED": "#F0E442", "SOURCE_ONLY": "#999999", "SAFE": "#009E73", ERROR: "#332288",
}
SPARE_COLOURS = ("#44AA99", "#117733", "#DDCC77", "#AA4499", "#6699CC", "#661100")
LINT_COLOUR = "#0072B2"
# The two parts of an API's wire-breaking bar: (series, colour).
ON_RELEASED = ("on released versions", CATEGORY_COLOURS[WIRE])
ON_UNRELEASED_ONLY = ("on unreleased versions only", "#F3BB97")
# C0/C1 controls, lone surrogates and noncharacters: a strict HTML parser rejects them.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef"
                          + "".join(chr(plane + 0xFFFE) + chr(plane + 0xFFFF) for plane in range(0, 0x110000, 0x10000))
                          + "]")

CSS = """
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --band: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1240px; padding: 24px 32px 64px; color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 40px 0 12px;
  padding-bottom: 6px; border-bottom: 1px solid var(--line); } h3 { font-size: 16px; margin: 20px 0 8px; }
.lede, .note, figcaption { color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 12px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: var(--band); }
.card strong { display: block; font-size: 24px; font-variant-numeric: tabular-nums; }
.card.alert strong { color: #b33c00; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 24px; align-items: start; }
.pair > * { min-width: 0; }
figure { margin: 12px 0 20px; } figcaption { margin-bottom: 6px; font-weight: 600; }
svg { display: block; max-width: 100%; height: auto; font: 11px system-ui, "DejaVu Sans", sans-serif; }
svg .axis { fill: var(--muted); } svg .grid { stroke: var(--line); stroke-width: 1; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 0 0 6px; padding: 0; list-style: none;
  font-size: 12px; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px;
  vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid var(--line); }
thead th { background: var(--band); white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fbfcfd; }
code { font: 12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
td.hex, code.hex { word-break: break-all; } td.name, td.path { overflow-wrap: anywhere; }
td.nowrap { white-space: nowrap; }
td.message { min-width: 14em; } td.pre { white-space: pre-wrap; word-break: break-word; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; word-break: break-word; }
table.fixed { table-layout: fixed; } table.fixed td { overflow-wrap: anywhere; }
table.fixed thead th { white-space: normal; }
td.path { font-size: 12px; }
.clamp { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 3; line-clamp: 3; overflow: hidden; }
details > summary { cursor: pointer; }
details.witness[open] > summary { margin-bottom: 4px; }
details.witness p { margin: 0 0 6px; } details.witness .label { color: var(--muted); }
"""


def render_report(revisions: Sequence[Row], findings: Sequence[Row], changes: Sequence[Row], *,
                  title: str = "krpc-lint audit", meta: Mapping[str, Any] | None = None) -> str:
    """The whole report.html for the rows of the three datasets (``Table.to_pylist()``)."""
    body = [f"<h1>{_text(title)}</h1>",
            _summary(revisions, findings, changes, meta or {}),
            _timeline_section(revisions, changes),
            _apis_section(changes),
            _rules_section(findings, changes),
            _wire_table_section(changes),
            _errors_section(findings, changes)]
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{_text(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(part for part in body if part) + "\n</body>\n</html>\n")


# --- values -----------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    """Data as inert HTML text or attribute value: escaped, with unparseable characters replaced."""
    return html.escape(_UNPRINTABLE.sub("\ufffd", "" if value is None else str(value)), quote=True)


def _utc(value: datetime | None) -> datetime | None:
    """A commit time in UTC; a naive one is taken as UTC already (Arrow drops the zone sometimes)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _when(value: datetime | None) -> str:
    moment = _utc(value)
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


def compact_versions(versions: Iterable[int] | None) -> str:
    """``[0, 1, 2, 3, 5]`` as ``0-3,5``: a change's versions fit in a table cell."""
    return version_ranges(sorted(set(versions or ())), separator=",")


def _category(change: Row) -> str:
    return ERROR if change.get("error") else change.get("category") or ERROR


def _categories(present: Iterable[str]) -> list[str]:
    """Known categories in the compat checker's order (wire-breaking first), then any others."""
    seen = set(present)
    known = [name for name in (*CATEGORIES, ERROR) if name in seen]
    return known + sorted(seen - set(known))


def _colour(category: str) -> str:
    if category in CATEGORY_COLOURS:
        return CATEGORY_COLOURS[category]
    return SPARE_COLOURS[sum(map(ord, category)) % len(SPARE_COLOURS)]


def _is_wire(change: Row) -> bool:
    return not change.get("error") and change.get("category") == WIRE


def _format_fact(value: Any) -> str:
    """A run fact from ``meta`` as text: lists joined, mappings as ``key: value``, seconds rounded."""
    if isinstance(value, Mapping):
        return ", ".join(f"{key}: {_format_fact(item)}" for key, item in value.items())
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    if isinstance(value, (list, tuple)):
        return ", ".join(_format_fact(item) for item in value) or "none"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, datetime):
        return _when(value)
    return "none" if value is None else str(value)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


# --- HTML pieces ------------------------------------------------------------------------------------


def _section(anchor: str, heading: str, *parts: str) -> str:
    return f'<section id="{anchor}">\n<h2>{heading}</h2>\n' + "\n".join(parts) + "\n</section>"


def _code(value: Any) -> str:
    return f"<code>{_text(value)}</code>"


def _note(text: str) -> str:
    return f'<p class="note">{text}</p>'


def _table(caption: str, headers: Sequence[str], rows: Iterable[Sequence[str]],
           classes: Sequence[str] = (), widths: Sequence[str] = ()) -> str:
    """A table of cells that are HTML already; ``classes`` per column (``num`` right-aligns).

    ``widths`` (CSS lengths, "" for a column that takes what is left) fix the layout: column widths then
    do not follow the longest cell, so one long path or hex string cannot push the table past the page."""
    kinds = list(classes) + [""] * (len(headers) - len(classes))
    head = "".join(f'<th scope="col"{_class(kind)}>{name}</th>' for name, kind in zip(headers, kinds))
    body = "".join("<tr>" + "".join(f"<td{_class(kind)}>{cell}</td>" for cell, kind in zip(row, kinds))
                   + "</tr>\n" for row in rows)
    layout = ""
    if widths:
        cols = "".join(f'<col style="width:{width}">' if width else "<col>" for width in widths)
        layout = f"<colgroup>{cols}</colgroup>\n"
    return (f"<table{_class('fixed' if widths else '')}>\n<caption>{caption}</caption>\n{layout}"
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>")


def _class(kind: str) -> str:
    return f' class="{kind}"' if kind else ""


def _legend(entries: Iterable[tuple[str, str]]) -> str:
    items = "".join(f"<li>{_swatch(name, colour)}</li>" for name, colour in entries)
    return f'<ul class="legend">{items}</ul>'


def _swatch(name: str, colour: str) -> str:
    return f'<span class="swatch" style="background:{colour}"></span>{_text(name)}'


def _figure(anchor: str, caption: str, svg: str, legend: str = "") -> str:
    return (f'<figure id="{anchor}">\n<figcaption id="{anchor}-caption">{caption}</figcaption>\n'
            f"{legend}\n{svg}\n</figure>")


def _svg(anchor: str, width: int, height: int, shapes: Iterable[str]) -> str:
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-labelledby="{anchor}-caption">\n'
            + "\n".join(shapes) + "\n</svg>")


def _rect(x: float, y: float, width: float, height: float, colour: str, tip: str, **data: Any) -> str:
    """One bar (segment) with its tooltip and ``data-*`` attributes, so tests and people can read it."""
    attributes = "".join(f' data-{key}="{_text(value)}"' for key, value in data.items())
    return (f'<rect x="{x:.2f}" y="{y:.2f}" width="{width:.2f}" height="{height:.2f}" fill="{colour}"'
            f"{attributes}><title>{_text(tip)}</title></rect>")


# --- summary ----------------------------------------------------------------------------------------


def revision_pairs(revisions: Sequence[Row], meta: Mapping[str, Any]) -> int:
    """Pairs compared: the run's own count (``meta["pairs"]``) if given, since pairs are not a table;
    else estimated as the revisions that modified or renamed a still-present file."""
    if isinstance(meta.get("pairs"), int):
        return meta["pairs"]
    return sum(1 for row in revisions if row.get("status") in ("M", "R") and row.get("blob"))


def _summary(revisions: Sequence[Row], findings: Sequence[Row], changes: Sequence[Row],
             meta: Mapping[str, Any]) -> str:
    facts = "".join(f"<dt>{_text(str(key).replace('_', ' '))}</dt><dd>{_text(_format_fact(value))}</dd>"
                    for key, value in meta.items())
    run = f'<dl class="facts">{facts}</dl>' if facts else ""
    return _section("summary", "Summary", _period(revisions, changes), run,
                    _cards(revisions, findings, changes, revision_pairs(revisions, meta)),
                    '<div class="pair">', _severity_table(findings), _category_table(changes), "</div>")


def _period(revisions: Sequence[Row], changes: Sequence[Row]) -> str:
    times = sorted(filter(None, (_utc(row.get("time")) for row in (*revisions, *changes))))
    if not times:
        return _note("No commit touched a spec file.")
    return f'<p class="lede">History from {_when(times[0])} to {_when(times[-1])} (UTC).</p>'


def _cards(revisions: Sequence[Row], findings: Sequence[Row], changes: Sequence[Row], pairs: int) -> str:
    wire = [row for row in changes if _is_wire(row)]
    errors = sum(1 for row in (*findings, *changes) if row.get("error"))
    numbers = [
        ("commits", len({row.get("commit") for row in revisions}), "commits touching specs"),
        ("revisions", len(revisions), "spec revisions"),
        ("blobs", len({row.get("blob") for row in revisions if row.get("blob")}), "distinct blobs"),
        ("lineages", len({row.get("lineage") for row in revisions}), "lineages"),
        ("releases", len({row.get("release") for row in revisions if row.get("release")}), "releases"),
        ("pairs", pairs, "revision pairs compared"),
        ("findings", sum(1 for row in findings if not row.get("error")), "lint findings"),
        ("changes", sum(1 for row in changes if not row.get("error")), "compat changes"),
        ("wire", len(wire), "wire-breaking changes"),
        ("wire-released", sum(1 for row in wire if row.get("released")), "wire-breaking to released versions"),
        ("errors", errors, "rows with errors"),
    ]
    cards = "".join(f'<div class="card{" alert" if key in ("wire-released", "errors") and count else ""}" '
                    f'data-key="{key}"><strong>{count:,}</strong>{label}</div>' for key, count, label in numbers)
    return f'<div class="cards">{cards}</div>'


def _severity_table(findings: Sequence[Row]) -> str:
    counts = Counter(row.get("severity") or "none" for row in findings if not row.get("error"))
    order = [name for name in SEVERITIES if name in counts] + sorted(set(counts) - set(SEVERITIES))
    rows = [[_text(name), f"{counts[name]:,}"] for name in order] or [["none", "0"]]
    return _table("Lint findings by severity", ["Severity", "Findings"], rows, ["", "num"])


def _category_table(changes: Sequence[Row]) -> str:
    counts = Counter(_category(row) for row in changes)
    released = Counter(_category(row) for row in changes if row.get("released"))
    rows = [[_swatch(name, _colour(name)), f"{counts[name]:,}", f"{released[name]:,}"]
            for name in _categories(counts)] or [["none", "0", "0"]]
    return _table("Compat changes by category", ["Category", "Changes", "To released versions"], rows,
                  ["", "num", "num"])


# --- stacked columns: changes per release and per month ---------------------------------------------


@dataclass(frozen=True)
class Column:
    """One x position of a stacked chart: its key, the tick text shown (empty: thinned out), counts."""

    key: str
    tick: str
    counts: Counter[str]


def _timeline_section(revisions: Sequence[Row], changes: Sequence[Row]) -> str:
    if not changes:
        return _section("timeline", "Changes over time", _note("No compat changes in this history."))
    categories = _categories(_category(row) for row in changes)
    legend = _legend((name, _colour(name)) for name in categories)
    by_release = _stacked_columns("per-release", _release_columns(revisions, changes), categories)
    by_month = _stacked_columns("per-month", _month_columns(changes), categories)
    return _section("timeline", "Changes over time",
                    _figure("per-release", "Compat changes per release (the first release containing the "
                            "change), by category", by_release, legend),
                    _figure("per-month", "Compat changes per month (UTC), by category", by_month, legend))


def _release_columns(revisions: Sequence[Row], changes: Sequence[Row]) -> list[Column]:
    """Releases in the order they first appear in the history; unreleased changes last."""
    first_seen: dict[str, datetime] = {}
    for row in (*revisions, *changes):
        tag, moment = row.get("release"), _utc(row.get("time"))
        if tag and moment and (tag not in first_seen or moment < first_seen[tag]):
            first_seen[tag] = moment
    tags = {row.get("release") for row in changes if row.get("release")} | set(first_seen)
    never = datetime.max.replace(tzinfo=UTC)
    order = sorted(tags, key=lambda tag: (first_seen.get(tag, never), tag))
    if any(not row.get("release") for row in changes):
        order.append(UNRELEASED)
    counts = _count_by(changes, lambda row: row.get("release") or UNRELEASED)
    step = max(1, math.ceil(len(order) / MAX_TICKS))
    return [Column(tag, tag if index % step == 0 else "", counts.get(tag, Counter()))
            for index, tag in enumerate(order)]


def _month_columns(changes: Sequence[Row]) -> list[Column]:
    """Every month from the first change to the last, empty ones included, so the axis is time."""
    counts = _count_by(changes, lambda row: _month_index(row.get("time")))
    months = sorted(key for key in counts if key is not None)
    columns = []
    if months:
        step = _month_step(months[-1] - months[0] + 1)
        columns = [Column(_month_label(index), _month_label(index) if index % step == 0 else "",
                          counts.get(index, Counter())) for index in range(months[0], months[-1] + 1)]
    return columns + ([Column("unknown", "unknown", counts[None])] if None in counts else [])


def _month_index(value: datetime | None) -> int | None:
    """Months since year 0: consecutive months are consecutive numbers."""
    moment = _utc(value)
    return moment.year * 12 + moment.month - 1 if moment else None


def _month_label(index: int) -> str:
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _month_step(months: int) -> int:
    """Label every n-th month, n dividing or a multiple of a year, so labels fall on the same months."""
    steps = (1, 2, 3, 6, 12, 24, 60, 120)
    return next((step for step in steps if months / step <= MAX_TICKS), 12 * math.ceil(months / MAX_TICKS / 12))


def _count_by(changes: Sequence[Row], key: Callable[[Row], Hashable]) -> dict[Any, Counter[str]]:
    counts: dict[Any, Counter[str]] = {}
    for row in changes:
        counts.setdefault(key(row), Counter())[_category(row)] += 1
    return counts


def _nice_ceiling(value: int) -> tuple[int, int]:
    """An axis maximum at or above ``value`` and its tick step (1, 2 or 5 times a power of ten)."""
    step = 1
    while math.ceil(value / step) > 5:
        step = _next_nice(step + 1)
    return max(step, math.ceil(value / step) * step), step


def _next_nice(step: int) -> int:
    """The next of 1, 2, 5, 10, 20, 50, ... at or above ``step``."""
    power = 10 ** (len(str(step)) - 1)
    return next(power * factor for factor in (1, 2, 5, 10) if power * factor >= step)


def _stacked_columns(anchor: str, columns: Sequence[Column], categories: Sequence[str]) -> str:
    """Vertical stacked bars, one per column, thinner as there are more; ticks as the columns say."""
    width, left, right, top, plot_height = 1160, 46, 12, 12, 240
    slot = (width - left - right) / max(1, len(columns))
    longest = max((len(column.tick) for column in columns), default=0) * 6.5
    rotated = longest + 8 > slot
    bottom = 12 + (longest * 0.72 if rotated else 14)
    top_value, step = _nice_ceiling(max((sum(column.counts.values()) for column in columns), default=1) or 1)
    shapes = _y_axis(top_value, step, left, width - right, top, plot_height)
    for index, column in enumerate(columns):
        shapes += _stack(column, categories, left + index * slot, slot, top + plot_height, plot_height / top_value)
        if column.tick:
            shapes.append(_tick(column.tick, left + (index + 0.5) * slot, top + plot_height + 14, rotated))
    return _svg(anchor, width, round(top + plot_height + bottom), shapes)


def _stack(column: Column, categories: Sequence[str], x: float, slot: float, base: float,
           scale: float) -> list[str]:
    """One column's segments bottom up in category order; a bar is at most 48 units wide."""
    total, bar_width = sum(column.counts.values()), min(slot * 0.8, 48)
    segments = []
    for category in categories:
        count = column.counts.get(category, 0)
        if count:
            base -= count * scale
            segments.append(_rect(x + (slot - bar_width) / 2, base, bar_width, count * scale, _colour(category),
                                  f"{column.key}: {count} {category} ({total} in all)",
                                  group=column.key, category=category, count=count))
    return segments


def _tick(label: str, x: float, y: float, rotated: bool) -> str:
    turn = f' text-anchor="end" transform="rotate(-45 {x:.2f} {y - 4})"' if rotated else ' text-anchor="middle"'
    return f'<text class="axis tick" x="{x:.2f}" y="{y}"{turn}>{_text(label)}</text>'


def _y_axis(top_value: int, step: int, x0: float, x1: float, top: float, plot_height: float) -> list[str]:
    lines = []
    for value in range(0, top_value + 1, step):
        y = top + plot_height - value / top_value * plot_height
        lines.append(f'<line class="grid" x1="{x0}" y1="{y:.2f}" x2="{x1}" y2="{y:.2f}"/>'
                     f'<text class="axis" x="{x0 - 6}" y="{y + 4:.2f}" text-anchor="end">{value:,}</text>')
    return lines


# --- horizontal bars: top APIs and rules ------------------------------------------------------------


@dataclass(frozen=True)
class Bar:
    """One row of a horizontal bar chart: a label and its (series, colour, count) segments."""

    label: str
    segments: tuple[tuple[str, str, int], ...]


def _horizontal_bars(anchor: str, bars: Sequence[Bar]) -> str:
    """Bars left to right from a shared zero, the label before and the total after each."""
    width, label_width, total_width, row_height = 600, 250, 44, 22
    plot_width = width - label_width - total_width
    top_value = max((sum(count for _, _, count in bar.segments) for bar in bars), default=1) or 1
    shapes = []
    for index, bar in enumerate(bars):
        y, x = 4 + index * row_height, float(label_width)
        total = sum(count for _, _, count in bar.segments)
        shapes.append(f'<text x="{label_width - 8}" y="{y + 13}" text-anchor="end">'
                      f"<title>{_text(bar.label)}</title>{_text(_shortened(bar.label, 34))}</text>")
        for series, colour, count in bar.segments:
            if count:
                size = count / top_value * plot_width
                shapes.append(_rect(x, y, size, row_height - 6, colour, f"{bar.label}: {count} {series}",
                                    group=bar.label, category=series, count=count))
                x += size
        shapes.append(f'<text class="axis" x="{x + 6:.2f}" y="{y + 13}">{total:,}</text>')
    return _svg(anchor, width, 8 + len(bars) * row_height, shapes)


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _top(counts: Counter[Any], limit: int = TOP) -> list[tuple[Any, int]]:
    """The ``limit`` largest counts, ties broken by key so the order never depends on the input's."""
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[:limit]


def _most_common(counts: Counter[str]) -> str:
    ranked = _top(counts, 1)
    return ranked[0][0] if ranked else ""


def _apis_section(changes: Sequence[Row]) -> str:
    wire, heading = [row for row in changes if _is_wire(row)], "APIs with the most wire-breaking changes"
    if not wire:
        return _section("apis", heading, _note("No wire-breaking change in this history."))
    total = Counter(row.get("message_name") or "(unnamed)" for row in wire)
    released = Counter(row.get("message_name") or "(unnamed)" for row in wire if row.get("released"))
    ranked = _top(total)
    bars = [Bar(name, ((*ON_RELEASED, released[name]), (*ON_UNRELEASED_ONLY, count - released[name])))
            for name, count in ranked]
    rows = [[_camel_breakable(name), f"{count:,}", f"{released[name]:,}"] for name, count in ranked]
    caption = f"The {len(ranked)} of {_plural(len(total), 'API')} with the most wire-breaking changes"
    return _section("apis", heading, '<div class="pair">',
                    _figure("top-apis", caption, _horizontal_bars("top-apis", bars),
                            _legend([ON_RELEASED, ON_UNRELEASED_ONLY])),
                    _table("Wire-breaking changes per API", ["API", "Wire-breaking", "To released versions"],
                           rows, ["name", "num", "num"]), "</div>")


def _rules_section(findings: Sequence[Row], changes: Sequence[Row]) -> str:
    lint = [row for row in findings if not row.get("error")]
    compat = [row for row in changes if not row.get("error")]
    return _section("rules", "Top rules",
                    _rule_ranking("lint-rules", "Lint findings", lint, "severity", lambda kind: LINT_COLOUR),
                    _rule_ranking("compat-rules", "Compat changes", compat, "category", _colour))


def _rule_ranking(anchor: str, what: str, rows: Sequence[Row], kind: str,
                  colour: Callable[[str], str]) -> str:
    """The rules that fire most, as bars and a table; ``kind`` is the column that classifies a rule."""
    heading = f"<h3>{what} by rule</h3>"
    if not rows:
        return heading + _note(f"No {what.lower()}.")
    kinds_by_rule: dict[tuple[str, str], Counter[str]] = {}
    for row in rows:
        kinds_by_rule.setdefault((row.get("rule") or "", row.get("name") or ""), Counter())[row.get(kind) or ""] += 1
    totals = Counter({rule: sum(kinds.values()) for rule, kinds in kinds_by_rule.items()})
    ranked = [(rule, name, _most_common(kinds_by_rule[(rule, name)]), count) for (rule, name), count in _top(totals)]
    bars = [Bar(f"{rule} {name}".strip(), ((label or what.lower(), colour(label), count),))
            for rule, name, label, count in ranked]
    table = _table(f"{what} per rule", ["Rule", "Name", kind.capitalize(), what.split()[-1].capitalize()],
                   ([_code(rule), _text(name), _text(label), f"{count:,}"]
                    for rule, name, label, count in ranked), ["nowrap", "name", "", "num"])
    caption = f"The {len(ranked)} of {_plural(len(totals), 'rule')} with the most {what.lower()}"
    return f'{heading}<div class="pair">{_figure(anchor, caption, _horizontal_bars(anchor, bars))}{table}</div>'


# --- tables of rows ---------------------------------------------------------------------------------


def _capped(rows: Sequence[Any], what: str, datasets: str) -> tuple[Sequence[Any], str]:
    """At most ``TABLE_LIMIT`` rows, and a note saying where the rest are."""
    if len(rows) <= TABLE_LIMIT:
        return rows, ""
    return rows[:TABLE_LIMIT], _note(f"Showing the first {TABLE_LIMIT:,} of {len(rows):,} {what}; "
                                     f"all of them are in {datasets}.")


def _newest_first(row: Row) -> float:
    moment = _utc(row.get("time"))
    return -moment.timestamp() if moment else math.inf


def _wire_table_section(changes: Sequence[Row]) -> str:
    wire = sorted((row for row in changes if _is_wire(row)), key=lambda row: (
        not row.get("released"), _newest_first(row), *(str(row.get(key) or "") for key in (
            "new_commit", "new_path", "line", "message_name", "rule", "message", "witness_hex"))))
    if not wire:
        return ""
    shown, note = _capped(wire, "wire-breaking changes", "the <code>changes/</code> dataset")
    caption = f"{_plural(len(wire), 'wire-breaking change')}, those to released versions first, newest first"
    table = _table(caption, [column.header for column in WIRE_COLUMNS],
                   ([column.cell(row) for column in WIRE_COLUMNS] for row in shown),
                   [column.kind for column in WIRE_COLUMNS], [column.width for column in WIRE_COLUMNS])
    return _section("wire-breaking", "Wire-breaking changes", note, table)


def _location(row: Row) -> str:
    path = row.get("new_path") or row.get("old_path") or row.get("path") or ""
    return f"{path}:{row['line']}" if row.get("line") is not None else path


def _short(object_id: str | None) -> str:
    """A git id cut to 10 hex digits: unique enough in a table, short enough for a column."""
    return (object_id or "")[:10]


def _breakable(path: str) -> str:
    """A path as HTML that may wrap after each slash (and, in a ``path`` cell, anywhere in a long name:
    breaking only between words would cost a path of Kafka's a fifth line)."""
    return "/<wbr>".join(_text(part) for part in path.split("/"))


_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _camel_breakable(name: Any) -> str:
    """``ConsumerGroupMemberMetadataValue`` as HTML that may wrap before each word (``...Member<wbr>Metadata...``):
    a long API name wraps at a word in a narrow column, not at whatever letter reaches the edge."""
    return "<wbr>".join(_text(word) for word in _WORD_START.split("" if name is None else str(name)))


def _versions(row: Row) -> str:
    """A change's versions compacted, breakable after each comma: a long list wraps in its column."""
    return ",<wbr>".join(_text(part) for part in compact_versions(row.get("versions")).split(","))


def _bare_message(row: Row) -> str:
    """The message without its ``API (vN):`` prefix: the API and Versions columns say it."""
    message, name = str(row.get("message") or ""), row.get("message_name")
    return re.sub(rf"^{re.escape(str(name))}(?: \(v[^)]*\))?: ", "", message) if name else message


def _change(row: Row) -> str:
    """The rule and the bare message in at most three lines; the whole message is the tooltip and is in the
    witness's details, so clamping a long one (a reordering lists every field twice) hides nothing."""
    return (f'<div class="clamp" title="{_text(row.get("message"))}">'
            f"{_code(row.get('rule'))} {_text(_bare_message(row))}</div>")


def _byte_count(data: str) -> str:
    return _plural(len(data) // 2, "byte")


def _witness(row: Row) -> str:
    """The proof, collapsed to one line (version, writer, size); open: the bytes, what the other revision
    does with them, and the change they prove, so a reader need not run ``krpc-lint compat``."""
    data = row.get("witness_hex")
    if not data:
        return '<span class="note">none</span>'
    version, writer = row.get("witness_version"), row.get("witness_writer") or "?"
    parts = [f'<p><span class="label">v{_text(version)} bytes written by the {_text(writer)} revision '
             f'({_byte_count(data)}, hex):</span><br><code class="hex">{_text(data)}</code></p>']
    if row.get("witness_reading"):
        parts.append(f"<p>{_text(row['witness_reading'])}</p>")
    versions = compact_versions(row.get("versions"))
    parts.append(f'<p><span class="label">The change:</span> {_code(row.get("rule"))} {_text(row.get("name"))}'
                 f"{f', versions {_text(versions)}' if versions else ''}: {_text(_bare_message(row))}</p>")
    summary = f"v{_text(version)}, written by {_text(writer)}: {_byte_count(data)}"
    return f'<details class="witness"><summary>{summary}</summary>{"".join(parts)}</details>'


@dataclass(frozen=True)
class WireColumn:
    """A column of the wire-breaking table: its header, cell class, width (CSS; "" takes the rest) and cell."""

    header: str
    kind: str
    width: str
    cell: Callable[[Row], str]


# Widths in ``ch`` of the table's font, padding included; the change takes what is left (about 25ch on a
# 1240 px page): every collapsed row stays within four lines and no cell can widen the table.
WIRE_COLUMNS: tuple[WireColumn, ...] = (
    WireColumn("Time (UTC)", "", "12ch", lambda row: _text(_when(row.get("time")))),
    WireColumn("Commit", "nowrap", "11ch", lambda row: _code(_short(row.get("new_commit")))),
    WireColumn("Path:line", "path", "26ch", lambda row: _breakable(_location(row))),
    WireColumn("API", "name", "24ch", lambda row: _camel_breakable(row.get("message_name"))),
    WireColumn("Versions", "", "8ch", _versions),
    WireColumn("Released in", "", "9ch",
               lambda row: _text(row.get("released_in") if row.get("released") else "no")),
    WireColumn("Change", "", "", _change),
    WireColumn("Witness", "", "27ch", _witness),
)


def _errors_section(findings: Sequence[Row], changes: Sequence[Row]) -> str:
    failed = [("findings", _short(row.get("blob")), row) for row in findings if row.get("error")]
    failed += [("changes", f"{_short(row.get('old_commit'))} → {_short(row.get('new_commit'))}", row)
               for row in changes if row.get("error")]
    if not failed:
        return ""
    failed.sort(key=lambda item: (item[0], _location(item[2]), item[1], str(item[2].get("error"))))
    shown, note = _capped(failed, "errors", "the <code>findings/</code> and <code>changes/</code> datasets")
    rows = ([dataset, _code(where), _breakable(_location(row)), _text(_shortened(str(row["error"]), 2000))]
            for dataset, where, row in shown)
    table = _table(f"{_plural(len(failed), 'row')} that could not be processed",
                   ["Dataset", "Blob or commits", "Path", "Error"], rows, ["", "nowrap", "", "pre"])
    return _section("errors", "Errors", note, table)
