"""report.html of ``krpc-lint audit``: the three result tables summed up for people.

One self-contained HTML5 document: inline CSS, charts as inline SVG (``html_charts``), no JavaScript and
no external resource, so it opens offline and from an archived CI artifact. Every value from the
data (paths, messages, tags, spec text) is untrusted and goes through ``html_parts.escape``. The output
depends only on the input rows, never on their order or the clock, so runs can be compared. The sections
are here; their pieces are in ``html_parts``, the charts in ``html_charts``, the wire-breaking table's
columns in ``html_wire``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from linter.audit.html_wire import (
    WIRE_COLUMNS,
    breakable,
    camel_breakable,
    location,
    short_id,
)
from linter.report.html_charts import Bar, Column, horizontal_bars, stacked_columns
from linter.report.html_parts import (
    Row,
    category_colour,
    category_of,
    code,
    compact_versions,
    escape,
    figure,
    format_fact,
    is_wire,
    legend,
    note,
    ordered_categories,
    section,
    shortened,
    swatch,
    table,
    utc,
    when,
)
from linter.vocabulary import Category, plural

# Names the tests and callers import from here.
__all__ = ["TABLE_LIMIT", "WIRE_COLUMNS", "compact_versions", "render_report", "revision_pairs"]

UNRELEASED = "unreleased"
TOP = 15
MAX_TICKS = 48  # labels under a chart's x axis; more columns get every n-th label
TABLE_LIMIT = 500
SEVERITIES = ("error", "warning", "info")
LINT_COLOUR = "#0072B2"
# The two parts of an API's wire-breaking bar: (series, colour).
ON_RELEASED = ("on released versions", Category.WIRE_BREAKING.colour)
ON_UNRELEASED_ONLY = ("on unreleased versions only", "#F3BB97")

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
    body = [f"<h1>{escape(title)}</h1>",
            _summary(revisions, findings, changes, meta or {}),
            _timeline_section(revisions, changes),
            _apis_section(changes),
            _rules_section(findings, changes),
            _wire_table_section(changes),
            _errors_section(findings, changes)]
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(part for part in body if part) + "\n</body>\n</html>\n")



# --- summary ----------------------------------------------------------------------------------------


def revision_pairs(revisions: Sequence[Row], meta: Mapping[str, Any]) -> int:
    """Pairs compared: the run's own count (``meta["pairs"]``) if given, since pairs are not a table;
    else estimated as the revisions that modified or renamed a still-present file."""
    pairs = meta.get("pairs")
    if isinstance(pairs, int):
        return pairs
    return sum(1 for row in revisions if row.get("status") in ("M", "R") and row.get("blob"))


def _summary(revisions: Sequence[Row], findings: Sequence[Row], changes: Sequence[Row],
             meta: Mapping[str, Any]) -> str:
    facts = "".join(f"<dt>{escape(str(key).replace('_', ' '))}</dt><dd>{escape(format_fact(value))}</dd>"
                    for key, value in meta.items())
    run = f'<dl class="facts">{facts}</dl>' if facts else ""
    return section("summary", "Summary", _period(revisions, changes), run,
                    _cards(revisions, findings, changes, revision_pairs(revisions, meta)),
                    '<div class="pair">', _severity_table(findings), _category_table(changes), "</div>")


def _period(revisions: Sequence[Row], changes: Sequence[Row]) -> str:
    times = sorted(filter(None, (utc(row.get("time")) for row in (*revisions, *changes))))
    if not times:
        return note("No commit touched a spec file.")
    return f'<p class="lede">History from {when(times[0])} to {when(times[-1])} (UTC).</p>'


def _cards(revisions: Sequence[Row], findings: Sequence[Row], changes: Sequence[Row], pairs: int) -> str:
    wire = [row for row in changes if is_wire(row)]
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
    rows = [[escape(name), f"{counts[name]:,}"] for name in order] or [["none", "0"]]
    return table("Lint findings by severity", ["Severity", "Findings"], rows, ["", "num"])


def _category_table(changes: Sequence[Row]) -> str:
    counts = Counter(category_of(row) for row in changes)
    released = Counter(category_of(row) for row in changes if row.get("released"))
    rows = [[swatch(name, category_colour(name)), f"{counts[name]:,}", f"{released[name]:,}"]
            for name in ordered_categories(counts)] or [["none", "0", "0"]]
    return table("Compat changes by category", ["Category", "Changes", "To released versions"], rows,
                  ["", "num", "num"])


# --- changes over time: per release and per month -------------------------------------------------


def _timeline_section(revisions: Sequence[Row], changes: Sequence[Row]) -> str:
    if not changes:
        return section("timeline", "Changes over time", note("No compat changes in this history."))
    categories = ordered_categories(category_of(row) for row in changes)
    key = legend((name, category_colour(name)) for name in categories)
    by_release = stacked_columns("per-release", _release_columns(revisions, changes), categories)
    by_month = stacked_columns("per-month", _month_columns(changes), categories)
    return section("timeline", "Changes over time",
                    figure("per-release", "Compat changes per release (the first release containing the "
                           "change), by category", by_release, key),
                   figure("per-month", "Compat changes per month (UTC), by category", by_month, key))


def _release_columns(revisions: Sequence[Row], changes: Sequence[Row]) -> list[Column]:
    """Releases in the order they first appear in the history; unreleased changes last."""
    first_seen: dict[str, datetime] = {}
    for row in (*revisions, *changes):
        tag, moment = row.get("release"), utc(row.get("time"))
        if tag and moment and (tag not in first_seen or moment < first_seen[tag]):
            first_seen[tag] = moment
    tags: set[str] = {str(row["release"]) for row in changes if row.get("release")} | set(first_seen)
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
    moment = utc(value)
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
        counts.setdefault(key(row), Counter())[category_of(row)] += 1
    return counts


def _top(counts: Counter[Any], limit: int = TOP) -> list[tuple[Any, int]]:
    """The ``limit`` largest counts, ties broken by key so the order never depends on the input's."""
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[:limit]


def _most_common(counts: Counter[str]) -> str:
    ranked = _top(counts, 1)
    return ranked[0][0] if ranked else ""


def _apis_section(changes: Sequence[Row]) -> str:
    wire, heading = [row for row in changes if is_wire(row)], "APIs with the most wire-breaking changes"
    if not wire:
        return section("apis", heading, note("No wire-breaking change in this history."))
    total = Counter(row.get("message_name") or "(unnamed)" for row in wire)
    released = Counter(row.get("message_name") or "(unnamed)" for row in wire if row.get("released"))
    ranked = _top(total)
    bars = [Bar(name, ((*ON_RELEASED, released[name]), (*ON_UNRELEASED_ONLY, count - released[name])))
            for name, count in ranked]
    rows = [[camel_breakable(name), f"{count:,}", f"{released[name]:,}"] for name, count in ranked]
    caption = f"The {len(ranked)} of {plural(len(total), 'API', grouped=True)} with the most wire-breaking changes"
    return section("apis", heading, '<div class="pair">',
                    figure("top-apis", caption, horizontal_bars("top-apis", bars),
                            legend([ON_RELEASED, ON_UNRELEASED_ONLY])),
                    table("Wire-breaking changes per API", ["API", "Wire-breaking", "To released versions"],
                           rows, ["name", "num", "num"]), "</div>")


def _rules_section(findings: Sequence[Row], changes: Sequence[Row]) -> str:
    lint = [row for row in findings if not row.get("error")]
    compat = [row for row in changes if not row.get("error")]
    return section("rules", "Top rules",
                    _rule_ranking("lint-rules", "Lint findings", lint, "severity", lambda kind: LINT_COLOUR),
                    _rule_ranking("compat-rules", "Compat changes", compat, "category", category_colour))


def _rule_ranking(anchor: str, what: str, rows: Sequence[Row], kind: str,
                  colour: Callable[[str], str]) -> str:
    """The rules that fire most, as bars and a table; ``kind`` is the column that classifies a rule."""
    heading = f"<h3>{what} by rule</h3>"
    if not rows:
        return heading + note(f"No {what.lower()}.")
    kinds_by_rule: dict[tuple[str, str], Counter[str]] = {}
    for row in rows:
        kinds_by_rule.setdefault((row.get("rule") or "", row.get("name") or ""), Counter())[row.get(kind) or ""] += 1
    totals = Counter({rule: sum(kinds.values()) for rule, kinds in kinds_by_rule.items()})
    ranked = [(rule, name, _most_common(kinds_by_rule[(rule, name)]), count) for (rule, name), count in _top(totals)]
    bars = [Bar(f"{rule} {name}".strip(), ((label or what.lower(), colour(label), count),))
            for rule, name, label, count in ranked]
    ranking = table(f"{what} per rule", ["Rule", "Name", kind.capitalize(), what.split()[-1].capitalize()],
                    ([code(rule), escape(name), escape(label), f"{count:,}"]
                     for rule, name, label, count in ranked), ["nowrap", "name", "", "num"])
    caption = f"The {len(ranked)} of {plural(len(totals), 'rule', grouped=True)} with the most {what.lower()}"
    return f'{heading}<div class="pair">{figure(anchor, caption, horizontal_bars(anchor, bars))}{ranking}</div>'


# --- tables of rows ---------------------------------------------------------------------------------


def _capped(rows: Sequence[Any], what: str, datasets: str) -> tuple[Sequence[Any], str]:
    """At most ``TABLE_LIMIT`` rows, and a note saying where the rest are."""
    if len(rows) <= TABLE_LIMIT:
        return rows, ""
    return rows[:TABLE_LIMIT], note(f"Showing the first {TABLE_LIMIT:,} of {len(rows):,} {what}; "
                                     f"all of them are in {datasets}.")


def _newest_first(row: Row) -> float:
    moment = utc(row.get("time"))
    return -moment.timestamp() if moment else math.inf


def _wire_table_section(changes: Sequence[Row]) -> str:
    wire = sorted((row for row in changes if is_wire(row)), key=lambda row: (
        not row.get("released"), _newest_first(row), *(str(row.get(key) or "") for key in (
            "new_commit", "new_path", "line", "message_name", "rule", "message", "witness_hex"))))
    if not wire:
        return ""
    shown, cut = _capped(wire, "wire-breaking changes", "the <code>changes/</code> dataset")
    caption = f"{plural(len(wire), 'wire-breaking change', grouped=True)}, those to released versions first, newest first"
    rows_table = table(caption, [column.header for column in WIRE_COLUMNS],
                   ([column.cell(row) for column in WIRE_COLUMNS] for row in shown),
                   [column.kind for column in WIRE_COLUMNS], [column.width for column in WIRE_COLUMNS])
    return section("wire-breaking", "Wire-breaking changes", cut, rows_table)


def _errors_section(findings: Sequence[Row], changes: Sequence[Row]) -> str:
    failed = [("findings", short_id(row.get("blob")), row) for row in findings if row.get("error")]
    failed += [("changes", f"{short_id(row.get('old_commit'))} → {short_id(row.get('new_commit'))}", row)
               for row in changes if row.get("error")]
    if not failed:
        return ""
    failed.sort(key=lambda item: (item[0], location(item[2]), item[1], str(item[2].get("error"))))
    shown, cut = _capped(failed, "errors", "the <code>findings/</code> and <code>changes/</code> datasets")
    rows = ([dataset, code(where), breakable(location(row)), escape(shortened(str(row["error"]), 2000))]
            for dataset, where, row in shown)
    rows_table = table(f"{plural(len(failed), 'row', grouped=True)} that could not be processed",
                   ["Dataset", "Blob or commits", "Path", "Error"], rows, ["", "nowrap", "", "pre"])
    return section("errors", "Errors", cut, rows_table)
