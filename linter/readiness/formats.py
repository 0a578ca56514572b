"""The formats of a readiness report (``--format``): each a rendering of the one report document, every string
from the wire or a log escaped for its format (JSON as every krpc-lint JSON output: ``escape.json_text``)."""

from __future__ import annotations

from typing import Any

from linter.escape import json_text

FORMATS = ("text", "json", "markdown", "html")


def render(document: dict[str, Any], fmt: str) -> str:
    """The report in ``fmt`` (one of ``FORMATS``)."""
    if fmt == "json":
        return json_text(document)
    if fmt == "markdown":
        from linter.readiness.markdown import markdown_report

        return markdown_report(document)
    if fmt == "html":
        from linter.readiness.html import html_report

        return html_report(document)
    from linter.readiness.text import text_report

    return text_report(document)


__all__ = ["FORMATS", "render"]
