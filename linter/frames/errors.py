"""The pipeline's refusal of its input: frames, specs or a frame count that ``audit``, ``replay`` or
``frames generate`` cannot work with. A ``KrpcLintError``, so the CLI shows it in one line (exit 2)."""

from __future__ import annotations

from linter.errors import KrpcLintError


class PipelineInputError(KrpcLintError, ValueError):
    """Input the pipeline cannot use; the message names the file and what is wrong with it."""
