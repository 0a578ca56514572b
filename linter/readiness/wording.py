"""The words every rendering of a readiness report shares (text, Markdown, HTML): its summary line and what it
read. Plain text: each rendering escapes them for its format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from linter.vocabulary import plural


def summary_line(summary: Mapping[str, Any]) -> str:
    """``5 clients: 1 break, 1 at risk, 3 ready`` (and how many of them a baseline accepted), for every rendering.

    >>> summary_line({"clients": 5, "breaks": 1, "at_risk": 1, "ready": 3, "baselined": 0})
    '5 clients: 1 break, 1 at risk, 3 ready'
    """
    line = (f"{plural(int(summary.get('clients') or 0), 'client', grouped=True)}: {int(summary.get('breaks') or 0):,}"
            f" break, {int(summary.get('at_risk') or 0):,} at risk, {int(summary.get('ready') or 0):,} ready")
    baselined = int(summary.get("baselined") or 0)
    return line + (f" ({baselined:,} baselined)" if baselined else "")


def about_lines(report: Mapping[str, Any]) -> list[str]:
    """Where the target's versions come from, what was read and what was not, as plain text lines (each
    rendering escapes them)."""
    inputs = report.get("inputs") or {}
    read = ", ".join(plural(int(inputs.get(key) or 0), word, grouped=True) for key, word in
                     (("files", "file"), ("frames", "frame"), ("requests", "request"), ("log_lines", "log line")))
    lines = [f"Target versions from {(report.get('target') or {}).get('source') or 'an unknown source'}.",
             f"Read: {read}."]
    not_read = inputs.get("not_read") or {}
    if not_read:
        lines.append("Not read: " + "; ".join(f"{reason}: {int(count):,}" for reason, count in not_read.items()) + ".")
    return lines


__all__ = ["about_lines", "summary_line"]
