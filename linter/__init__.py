"""krpc-lint: lint Apache Kafka message specs.

The library API is small and typed:

>>> from linter import lint, Config
>>> report = lint(["fixtures/valid"], Config(profile="recommended"))
>>> report.failed()
False

``lint(paths, config=None) -> Report`` lints files and directories; ``Report.findings``
are ``Finding``s (path, line, col, rule, name, severity, category, message, hint) and
``Report.summary`` counts them. ``load_config(path=None)`` reads ``[tool.krpc-lint]`` or
``.krpc-lint.yaml`` the way the CLI does.
"""

from __future__ import annotations

from linter.engine.config import Config, ConfigError, load_config
from linter.engine.findings import Finding, Report
from linter.engine.runner import UsageError, all_rules, lint, lint_texts

__all__ = ["Config", "ConfigError", "Finding", "Report", "UsageError", "all_rules", "lint", "lint_texts", "load_config"]
