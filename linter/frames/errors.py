"""The frames side's refusal of its input: frames, specs or a frame count that ``replay``, ``size --frames`` or
``frames generate`` cannot work with. A ``KrpcLintError``, so the CLI shows it in one line (exit 2)."""

from __future__ import annotations

from linter.errors import KrpcLintError


class FramesInputError(KrpcLintError, ValueError):
    """Input the frames side cannot use; the message names the file and what is wrong with it."""
