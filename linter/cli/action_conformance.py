"""The GitHub Action's ``mode: conformance``: a vendor's copy of the specs against upstream, in CI.

``INPUT_PATHS`` names the copy (one path), ``INPUT_UPSTREAM`` upstream's specs (a directory of the checkout,
or ``REF:path``), ``INPUT_MANIFEST`` the optional manifest and ``INPUT_FAIL_ON`` the verdicts that fail the step
(as ``krpc-lint conformance --fail-on``). Each diverging version is an ``::error`` on its file, each
unclassified API one more; the job summary gets the Markdown report (a PR comment's worth); the step's outputs
are ``findings`` (what fails), ``errors`` and ``failed``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import click

from linter.cli.common import append_to
from linter.cli.conformance_cmd import DEFAULT_FAIL_ON, parse_fail_on, run_conformance
from linter.compat.conformance import Conformance
from linter.compat.conformance_render import to_markdown, to_text
from linter.errors import KrpcLintError
from linter.report.formats import (
    escape_data,
    escape_property,
    step_outputs,
    without_commands,
)

TITLE = "krpc-lint conformance"


class ConformanceInputError(KrpcLintError, ValueError):
    """An input of the conformance mode that cannot work (no upstream, several copies, a bad fail-on)."""


def inputs_of(env: Mapping[str, str]) -> tuple[str, str, str | None, frozenset[str]]:
    """(copy, upstream, manifest, fail-on) from the Action's environment."""
    paths = env.get("INPUT_PATHS", "").split()
    upstream = env.get("INPUT_UPSTREAM", "").strip()
    if len(paths) != 1:
        raise ConformanceInputError("mode conformance needs exactly one path in paths: the copy of the specs")
    if not upstream:
        raise ConformanceInputError("mode conformance needs upstream: upstream's specs (a directory or REF:path)")
    try:
        fail_on = parse_fail_on(env.get("INPUT_FAIL_ON", "").strip() or DEFAULT_FAIL_ON)
    except click.BadParameter as exc:
        raise ConformanceInputError(f"fail-on: {exc.message}") from None
    return paths[0], upstream, env.get("INPUT_MANIFEST", "").strip() or None, fail_on


def error_lines(result: Conformance) -> str:
    """One ``::error`` per diverging version (on its file) and per unclassified API."""
    lines = []
    for api in result.apis:
        for verdict in api.versions:
            if verdict.verdict != "diverges":
                continue
            what = "; ".join(change.message for change in verdict.details) or "diverges from upstream"
            where = f"file={escape_property(api.vendor_file)}," if api.vendor_file else ""
            lines.append(f"::error {where}title={escape_property(TITLE)}::"
                         f"{escape_data(f'{api.name} v{verdict.version} diverges from upstream: {what}')}\n")
    for item in result.unclassified:
        lines.append(f"::error title={escape_property(TITLE)}::"
                     f"{escape_data(f'{item.api} is unclassified: {item.reason}')}\n")
    return "".join(lines)


def run_conformance_mode(env: Mapping[str, str]) -> int:
    """The whole conformance mode; returns the exit code (0, 1 on a failure, 2 on bad inputs)."""
    try:
        copy, upstream, manifest, fail_on = inputs_of(env)
        config = env.get("INPUT_CONFIG", "").strip() or None
        result = run_conformance(copy, upstream, manifest=manifest, config_file=config)
    except KrpcLintError as exc:
        sys.stdout.write(f"::error title={escape_property(TITLE)}::{escape_data(str(exc))}\n")
        return 2
    failures = result.failures(fail_on)
    sys.stdout.write(error_lines(result))
    sys.stdout.write(f"::group::{TITLE}\n{without_commands(to_text(result))}::endgroup::\n")
    append_to(env.get("GITHUB_STEP_SUMMARY"), to_markdown(result))
    append_to(env.get("GITHUB_OUTPUT"), step_outputs({"findings": len(failures), "errors": len(result.errors),
                                                      "failed": str(bool(failures)).lower()}))
    return 1 if failures else 0

