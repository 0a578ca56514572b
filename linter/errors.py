"""The one base of krpc-lint's own errors.

Every error the library raises about its input (a spec, a config, a rule pack, bytes, a git revision, a
path) derives from :class:`KrpcLintError`, so a caller (the CLI, the Action, a user's script) can tell
"the input is wrong" (exit 2, one line) from a bug (a traceback) with one ``except``. Each subclass
keeps its historical built-in base too (``ValueError``, ``OSError``...) so existing ``except`` clauses
still catch it.
"""
from __future__ import annotations


class KrpcLintError(Exception):
    """An input krpc-lint refuses; ``str(error)`` is the one line shown to the user."""
