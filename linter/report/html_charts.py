"""The charts of report.html, drawn as inline SVG: stacked columns (changes per release and per month) and
horizontal bars (the top APIs and rules). No script and no library: the report opens offline."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from linter.report.html_parts import category_colour, escape, rect, shortened, svg

# --- stacked columns --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One x position of a stacked chart: its key, the tick text shown (empty: thinned out), counts."""

    key: str
    tick: str
    counts: Counter[str]


def _nice_ceiling(value: int) -> tuple[int, int]:
    """An axis maximum at or above ``value`` and its tick step (1, 2 or 5 times a power of ten)."""
    step = 1
    while math.ceil(value / step) > 5:
        step = _next_nice(step + 1)
    return max(step, math.ceil(value / step) * step), step


def _next_nice(step: int) -> int:
    """The next of 1, 2, 5, 10, 20, 50, ... at or above ``step``."""
    power: int = 10 ** (len(str(step)) - 1)  # typeshed: int ** int is Any (a negative power is a float)
    return next(power * factor for factor in (1, 2, 5, 10) if power * factor >= step)


def stacked_columns(anchor: str, columns: Sequence[Column], categories: Sequence[str]) -> str:
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
    return svg(anchor, width, round(top + plot_height + bottom), shapes)


def _stack(column: Column, categories: Sequence[str], x: float, slot: float, base: float,
           scale: float) -> list[str]:
    """One column's segments bottom up in category order; a bar is at most 48 units wide."""
    total, bar_width = sum(column.counts.values()), min(slot * 0.8, 48)
    segments = []
    for category in categories:
        count = column.counts.get(category, 0)
        if count:
            base -= count * scale
            segments.append(rect(x + (slot - bar_width) / 2, base, bar_width, count * scale,
                                 category_colour(category), f"{column.key}: {count} {category} ({total} in all)",
                                 group=column.key, category=category, count=count))
    return segments


def _tick(label: str, x: float, y: float, rotated: bool) -> str:
    turn = f' text-anchor="end" transform="rotate(-45 {x:.2f} {y - 4})"' if rotated else ' text-anchor="middle"'
    return f'<text class="axis tick" x="{x:.2f}" y="{y}"{turn}>{escape(label)}</text>'


def _y_axis(top_value: int, step: int, x0: float, x1: float, top: float, plot_height: float) -> list[str]:
    lines = []
    for value in range(0, top_value + 1, step):
        y = top + plot_height - value / top_value * plot_height
        lines.append(f'<line class="grid" x1="{x0}" y1="{y:.2f}" x2="{x1}" y2="{y:.2f}"/>'
                     f'<text class="axis" x="{x0 - 6}" y="{y + 4:.2f}" text-anchor="end">{value:,}</text>')
    return lines


# --- horizontal bars ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bar:
    """One row of a horizontal bar chart: a label and its (series, colour, count) segments."""

    label: str
    segments: tuple[tuple[str, str, int], ...]


def horizontal_bars(anchor: str, bars: Sequence[Bar]) -> str:
    """Bars left to right from a shared zero, the label before and the total after each."""
    width, label_width, total_width, row_height = 600, 250, 44, 22
    plot_width = width - label_width - total_width
    top_value = max((sum(count for _, _, count in bar.segments) for bar in bars), default=1) or 1
    shapes = []
    for index, bar in enumerate(bars):
        y, x = 4 + index * row_height, float(label_width)
        total = sum(count for _, _, count in bar.segments)
        shapes.append(f'<text x="{label_width - 8}" y="{y + 13}" text-anchor="end">'
                      f"<title>{escape(bar.label)}</title>{escape(shortened(bar.label, 34))}</text>")
        for series, colour, count in bar.segments:
            if count:
                size = count / top_value * plot_width
                shapes.append(rect(x, y, size, row_height - 6, colour, f"{bar.label}: {count} {series}",
                                   group=bar.label, category=series, count=count))
                x += size
        shapes.append(f'<text class="axis" x="{x + 6:.2f}" y="{y + 13}">{total:,}</text>')
    return svg(anchor, width, 8 + len(bars) * row_height, shapes)
