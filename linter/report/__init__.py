"""Output formats of a lint run: ``render(report, fmt)`` -> text, json, sarif, github or junit."""

from linter.engine.levels import FORMATS
from linter.report.formats import render, tool_version

__all__ = ["FORMATS", "render", "tool_version"]
