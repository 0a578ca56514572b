"""The values and HTML pieces report.html is built of (``linter.audit.report_html``).

Every value from the data is untrusted: ``escape`` makes it inert text, the pieces take HTML already
escaped. Categories are coloured and ordered by the one category table, ``linter.compat.kinds.Category``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from linter.compat.change import version_ranges
from linter.vocabulary import Category

Row = Mapping[str, Any]

# For categories the table does not know: Tol colours, apart from the table's.
SPARE_COLOURS = ("#44AA99", "#117733", "#DDCC77", "#AA4499", "#6699CC", "#661100")
# C0/C1 controls, lone surrogates and noncharacters: a strict HTML parser rejects them.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef"
                          + "".join(chr(plane + 0xFFFE) + chr(plane + 0xFFFF) for plane in range(0, 0x110000, 0x10000))
                          + "]")


def escape(value: Any) -> str:
    """Data as inert HTML text or attribute value: escaped, with unparseable characters replaced."""
    return html.escape(_UNPRINTABLE.sub("\ufffd", "" if value is None else str(value)), quote=True)


def utc(value: datetime | None) -> datetime | None:
    """A commit time in UTC; a naive one is taken as UTC already (Arrow drops the zone sometimes)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def when(value: datetime | None) -> str:
    moment = utc(value)
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


def compact_versions(versions: Iterable[int] | None) -> str:
    """``[0, 1, 2, 3, 5]`` as ``0-3,5``: a change's versions fit in a table cell."""
    return version_ranges(sorted(set(versions or ())), separator=",")


def format_fact(value: Any) -> str:
    """A run fact from ``meta`` as text: lists joined, mappings as ``key: value``, seconds rounded."""
    if isinstance(value, Mapping):
        return ", ".join(f"{key}: {format_fact(item)}" for key, item in value.items())
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    if isinstance(value, (list, tuple)):
        return ", ".join(format_fact(item) for item in value) or "none"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, datetime):
        return when(value)
    return "none" if value is None else str(value)


def shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- categories -------------------------------------------------------------------------------------


def category_of(change: Row) -> str:
    """A change row's category; ``ERROR`` for a pair that could not be compared."""
    return Category.ERROR.value if change.get("error") else change.get("category") or Category.ERROR.value


def ordered_categories(present: Iterable[str]) -> list[str]:
    """Known categories in the table's order (wire-breaking first), then any others."""
    seen = set(present)
    known = [category.value for category in Category if category.value in seen]
    return known + sorted(seen - set(known))


def category_colour(category: str) -> str:
    """The category's colour in the table; one of ``SPARE_COLOURS`` for a category it does not know."""
    known = Category.known(category)
    if known is not None:
        return known.colour
    return SPARE_COLOURS[sum(map(ord, category)) % len(SPARE_COLOURS)]


def is_wire(change: Row) -> bool:
    return not change.get("error") and change.get("category") == Category.WIRE_BREAKING.value


# --- HTML pieces ------------------------------------------------------------------------------------


def section(anchor: str, heading: str, *parts: str) -> str:
    return f'<section id="{anchor}">\n<h2>{heading}</h2>\n' + "\n".join(parts) + "\n</section>"


def code(value: Any) -> str:
    return f"<code>{escape(value)}</code>"


def note(text: str) -> str:
    return f'<p class="note">{text}</p>'


def table(caption: str, headers: Sequence[str], rows: Iterable[Sequence[str]],
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


def legend(entries: Iterable[tuple[str, str]]) -> str:
    items = "".join(f"<li>{swatch(name, colour)}</li>" for name, colour in entries)
    return f'<ul class="legend">{items}</ul>'


def swatch(name: str, colour: str) -> str:
    return f'<span class="swatch" style="background:{colour}"></span>{escape(name)}'


def figure(anchor: str, caption: str, drawing: str, key: str = "") -> str:
    """A chart (``svg``) under its caption and its legend (``key``)."""
    return (f'<figure id="{anchor}">\n<figcaption id="{anchor}-caption">{caption}</figcaption>\n'
            f"{key}\n{drawing}\n</figure>")


def svg(anchor: str, width: int, height: int, shapes: Iterable[str]) -> str:
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-labelledby="{anchor}-caption">\n'
            + "\n".join(shapes) + "\n</svg>")


def rect(x: float, y: float, width: float, height: float, colour: str, tip: str, **data: Any) -> str:
    """One bar (segment) with its tooltip and ``data-*`` attributes, so tests and people can read it."""
    attributes = "".join(f' data-{key}="{escape(value)}"' for key, value in data.items())
    return (f'<rect x="{x:.2f}" y="{y:.2f}" width="{width:.2f}" height="{height:.2f}" fill="{colour}"'
            f"{attributes}><title>{escape(tip)}</title></rect>")
