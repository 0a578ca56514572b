"""Output formats of a lint run: ``render(report, fmt)`` -> text, json, sarif, github or junit."""

from linter.report.formats import render, tool_version
from linter.vocabulary import FORMATS

__all__ = ["FORMATS", "render", "tool_version"]
