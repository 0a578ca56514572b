"""The one base of krpc-lint's own errors.

Every error the library raises about its input (a spec, a config, a rule pack, bytes, a git revision, a
path) derives from :class:`KrpcLintError`, so a caller (the CLI, the Action, a user's script) can tell
"the input is wrong" (exit 2, one line) from a bug (a traceback) with one ``except``. Each subclass
keeps its historical built-in base too (``ValueError``, ``OSError``...) so existing ``except`` clauses
still catch it.
"""
from __future__ import annotations

import errno


class KrpcLintError(Exception):
    """An input krpc-lint refuses; ``str(error)`` is the one line shown to the user."""


class OutputError(KrpcLintError):
    """An output krpc-lint cannot write (standard output on a full disk or closed by its reader, a file it
    may not create); ``str(error)`` names the output and the system's reason."""


# The errors only a write can have: a raw OSError carrying one is an output's, whatever raised it.
WRITE_ERRNOS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def cannot_write(where: str, exc: OSError) -> OutputError:
    """The one wording of a failed write: ``WHERE: cannot write: REASON``."""
    reason = "its reader stopped reading (broken pipe)" if exc.errno == errno.EPIPE else exc.strerror or str(exc)
    return OutputError(f"{where}: cannot write: {reason}")
