"""Output formats of a lint run: ``render(report, fmt)`` -> text, json, sarif, github or junit."""

from linter.report.formats import render
from linter.vocabulary import FORMATS, tool_version

__all__ = ["FORMATS", "render", "tool_version"]
