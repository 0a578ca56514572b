"""``krpc-lint conformance VENDOR --upstream UPSTREAM``: a vendor's copy of the specs against upstream's.

Exit codes: 0, 1 when a version has a verdict ``--fail-on`` names (default: ``diverges``, ``unclassified`` and
``error``, a file that could not be compared), 2 for usage errors (a missing revision, a bad manifest).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from linter.cli.common import (
    NonEmptyPath,
    config_option,
    emit,
    load_config_file,
    non_empty,
    refuse_overlap,
)
from linter.escape import printable

if TYPE_CHECKING:
    from linter.compat.conformance import Conformance

FAIL_ON = ("identical", "compatible", "semantic", "diverges", "vendor-only", "unclassified", "error")
DEFAULT_FAIL_ON = "diverges,unclassified,error"


def parse_fail_on(value: str) -> frozenset[str]:
    """``--fail-on``'s comma-separated verdicts (or ``none``); a usage error names what is unknown."""
    words = {word.strip() for word in value.split(",") if word.strip()}
    if words == {"none"}:
        return frozenset()
    unknown = sorted(words - set(FAIL_ON))
    if unknown or not words:
        raise click.BadParameter(f"{', '.join(unknown) or value!r}: expected a comma-separated list of "
                                 f"{', '.join(FAIL_ON)}, or none", param_hint="--fail-on")
    return frozenset(words)


def run_conformance(vendor: str, upstream: str, *, manifest: str | None = None, since_upstream: str | None = None,
                    witnesses: bool = True, config_file: str | None = None) -> Conformance:
    """The whole conformance run on paths as a user gives them (the command and the Action's conformance mode):
    read both sides, compare, classify by the manifest (``manifest``, else the config's ``conformance`` table),
    add what changed upstream since ``since_upstream``."""
    from linter.compat.changelog import changelog
    from linter.compat.conformance import conformance
    from linter.compat.conformance_manifest import (
        Manifest,
        classify,
        parse_manifest,
        read_manifest,
    )
    from linter.compat.sources import read_revision

    intents: Manifest | None = None
    if manifest:
        intents = read_manifest(manifest)
    else:
        config = load_config_file(config_file)
        if config.conformance is not None:
            intents = parse_manifest(config.conformance, f"{config.source}: conformance")
    vendor_rev, upstream_rev = read_revision(vendor), read_revision(upstream)
    result = conformance(vendor_rev, upstream_rev, witnesses=witnesses)
    if intents is not None:
        classify(result, upstream_rev, vendor_rev, intents)
    if since_upstream:
        result.since_upstream = changelog(read_revision(since_upstream), upstream_rev)
    return result


@click.command("conformance")
@click.argument("vendor")
@click.option("--upstream", required=True, metavar="UPSTREAM",
              help="Upstream's specs (a file, directory or REF:path), typically a Kafka release's spec directories.")
@click.option("--manifest", type=NonEmptyPath(dir_okay=False), default=None,
              help="YAML or JSON: per API name, supported (a version range), passthrough or unsupported; any "
                   "upstream API or version outside it is unclassified.")
@click.option("--since-upstream", metavar="OLDREF", default=None, callback=non_empty("names no revision"),
              help="Upstream's specs the copy was taken from: add what changed upstream since, per API.")
@click.option("--format", "fmt", type=click.Choice(("text", "json", "markdown", "sarif")), default="text",
              show_default=True, help="sarif: each version that is not identical as a result at the vendor's file.")
@config_option
@click.option("--output", "-o", type=NonEmptyPath(dir_okay=False), default=None, help="Write it to this file.")
@click.option("--fail-on", "fail_on", default=DEFAULT_FAIL_ON, show_default=True, metavar="VERDICTS",
              help=f"Comma-separated: what makes the exit code 1 ({', '.join(FAIL_ON)}; or none).")
@click.option("--no-witness", is_flag=True, help="Do not search for byte-level witnesses of divergences.")
@click.pass_context
def conformance_command(ctx: click.Context, vendor: str, upstream: str, manifest: str | None,
                        since_upstream: str | None, fmt: str, config_file: str | None, output: str | None,
                        fail_on: str, no_witness: bool) -> None:
    """How VENDOR's copy of the specs matches UPSTREAM, per API and version.

    Each version VENDOR declares is identical, compatible, semantic, diverges or vendor-only; the upstream
    versions it does not declare are listed per API (coverage, not findings).
    """
    from linter.compat.conformance_render import to_markdown, to_report, to_text
    from linter.escape import json_text
    from linter.report.formats import render_sarif

    failing = parse_fail_on(fail_on)
    if output:
        inputs = (vendor, upstream, since_upstream, manifest, config_file)
        refuse_overlap(output, [p for p in inputs if p and os.path.exists(p)], "an input")
    result = run_conformance(vendor, upstream, manifest=manifest, since_upstream=since_upstream,
                             witnesses=not no_witness, config_file=config_file)
    renderers = {"json": lambda: json_text(result.to_dict()), "markdown": lambda: to_markdown(result),
                 "sarif": lambda: render_sarif(to_report(result, failing)), "text": lambda: to_text(result)}
    emit(renderers[fmt](), output)
    failures = result.failures(failing)
    if output or failures:
        click.echo(printable(f"krpc-lint: conformance: {'; '.join(failures) or 'no failure'}"
                             f"{f'; wrote {output}' if output else ''}"), err=True)
    ctx.exit(1 if failures else 0)
