"""krpc-lint: lint, compare and encode Apache Kafka message specs.

The library API is small, typed (``py.typed``) and the names below are stable; docs/api.md is
the guide.

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

>>> from linter import compare
>>> [f.rule for f in compare("fixtures/compat/demo/old", "fixtures/compat/demo/new").findings]
['KL1003', 'KL1061']

``Codec.load(paths)`` encodes and decodes any message at any version, byte-exact with Kafka;
it raises ``EncodeError`` and ``DecodeError`` (see docs/codec.md).

>>> from linter import Codec
>>> Codec.load("fixtures/valid").encode("WidgetFetchRequest", 0, {
...     "replicaId": -1, "groupId": "g", "maxWaitMs": 500, "topics": []}).hex()
'ffffffff000167000001f400000000'
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linter.codec.codec import Codec
    from linter.codec.errors import DecodeError, EncodeError, SpecError
    from linter.compat.api import changelog, compare, compare_texts, matrix, suggest
    from linter.compat.sources import SourceError
    from linter.compat.suggest import Suggestion
    from linter.engine.config import Config, ConfigError, load_config
    from linter.engine.findings import Finding, Report
    from linter.engine.runner import UsageError, all_rules, lint, lint_texts

# Exported names load their module on first use, so ``krpc-lint --version`` or ``schema``
# do not pay for the engine's imports.
_EXPORTS = {
    "Config": "linter.engine.config", "ConfigError": "linter.engine.config", "load_config": "linter.engine.config",
    "Finding": "linter.engine.findings", "Report": "linter.engine.findings",
    "UsageError": "linter.engine.runner", "all_rules": "linter.engine.runner", "lint": "linter.engine.runner",
    "lint_texts": "linter.engine.runner",
    "compare": "linter.compat.api", "compare_texts": "linter.compat.api", "changelog": "linter.compat.api",
    "matrix": "linter.compat.api", "suggest": "linter.compat.api", "Suggestion": "linter.compat.suggest",
    "SourceError": "linter.compat.sources",
    "Codec": "linter.codec.codec", "DecodeError": "linter.codec.errors", "EncodeError": "linter.codec.errors",
    "SpecError": "linter.codec.errors",
}
__all__ = ["Codec", "Config", "ConfigError", "DecodeError", "EncodeError", "Finding", "Report", "SourceError",
           "SpecError", "Suggestion", "UsageError", "all_rules", "changelog", "compare", "compare_texts", "lint",
           "lint_texts", "load_config", "matrix", "suggest"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'linter' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return __all__
