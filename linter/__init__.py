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

``compare(old, new, config=None) -> Report`` compares two revisions (files, directories or
``REF:path``) with the compat rules; ``changelog(old, new)`` and ``matrix([a, b, ...])`` build
the protocol changelog and the version matrix (see docs/compat.md).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linter.engine.config import Config, ConfigError, load_config
    from linter.engine.findings import Finding, Report
    from linter.compat.api import changelog, compare, matrix
    from linter.engine.runner import UsageError, all_rules, lint, lint_texts

# Exported names load their module on first use, so ``krpc-lint --version`` or ``schema``
# do not pay for the engine's imports.
_EXPORTS = {
    "Config": "linter.engine.config", "ConfigError": "linter.engine.config", "load_config": "linter.engine.config",
    "Finding": "linter.engine.findings", "Report": "linter.engine.findings",
    "UsageError": "linter.engine.runner", "all_rules": "linter.engine.runner", "lint": "linter.engine.runner",
    "lint_texts": "linter.engine.runner",
    "compare": "linter.compat.api", "changelog": "linter.compat.api", "matrix": "linter.compat.api",
}
__all__ = ["Config", "ConfigError", "Finding", "Report", "UsageError", "all_rules", "changelog", "compare", "lint",
           "lint_texts", "load_config", "matrix"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'linter' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return __all__
