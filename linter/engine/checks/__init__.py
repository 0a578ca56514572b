"""The named checks that rules in ``rules/`` call by name (``check: {function: NAME, options: {...}}``),
one module per family.

A check is a small generator: it gets a ``FileContext`` (a ``DirectoryContext`` for cross-file checks)
and the rule's ``options``, and yields ``Hit``s. Checks never raise on odd input: a value the model
could not bind is ``None`` and the check skips it (another rule reports why it is missing). A check used
by one rule only is named after that rule. Importing this package registers every family in ``CHECKS``.
"""

from __future__ import annotations

from linter.engine.checks import (
    crossfile,
    defaults,
    fields,
    headers,
    kafka_tests,
    messages,
    meta,
    reading,
    records,
    structs,
    structure,
    tagged,
    versions,
)
from linter.engine.checks.registry import (
    ALIASES,
    CHECKS,
    CheckDef,
    check,
    lookup,
    options_problem,
)

FAMILIES = (reading, structure, versions, headers, fields, tagged, defaults, structs, messages, records, crossfile,
            kafka_tests, meta)

__all__ = ["ALIASES", "CHECKS", "FAMILIES", "CheckDef", "check", "lookup", "options_problem"]
