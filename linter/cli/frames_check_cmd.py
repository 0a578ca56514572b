"""``krpc-lint frames check``: every frame of captures or corpora decoded as Kafka reads it, each deviation from what
Kafka's reader takes or its writer writes a finding (``linter.wirecheck``, docs/wire-check.md). Exit 1 when a
finding reaches ``--fail-on`` (default error), 0 otherwise, 2 for usage errors."""

from __future__ import annotations

import click

from linter.cli.common import (
    NonEmptyPath,
    config_option,
    configured,
    emit,
    non_empty,
    refuse_overlap,
    rule_options,
)
from linter.cli.frames_cmd import frames_group
from linter.escape import printable
from linter.vocabulary import WIRE_FORMATS, plural


@frames_group.command("check")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--specs", required=True, metavar="SPECS", help="The message specs the frames are checked against, "
              "with the request and response headers: a directory, or REF:path in a git checkout.")
@click.option("--format", "fmt", type=click.Choice(WIRE_FORMATS), default="text", show_default=True,
              help="Output format.")
@click.option("-o", "--output", type=NonEmptyPath(dir_okay=False), default=None,
              help="Write the report to this file instead of standard output (the summary line goes to stderr).")
@rule_options
@config_option
@click.option("--baseline", type=NonEmptyPath(dir_okay=False), default=None,
              help="Leave out the kinds of finding recorded in this file (--write-baseline writes it).")
@click.option("--write-baseline", type=NonEmptyPath(dir_okay=False), default=None,
              help="Record every kind of finding of this run in this file and exit 0.")
@click.option("--port", "ports", multiple=True, type=click.IntRange(1, 65535), metavar="PORT",
              help="A broker port of the captures (repeatable; default 9092, and flows that start with a request "
                   "header on any port).")
@click.option("--master", default=None, metavar="URL", callback=non_empty("names no Spark master"),
              help="Check on Spark (local[*], spark://HOST:PORT); without it, inputs up to 1 GB are checked here.")
@click.option("--allow-invalid", is_flag=True,
              help="Leave out the spec files Kafka's generator would refuse instead of refusing them all.")
def check_command(inputs: tuple[str, ...], specs: str, fmt: str, output: str | None, profile: str | None,
                  select: tuple[str, ...],
                  ignore: tuple[str, ...], fail_on: str | None, config_file: str | None, baseline: str | None,
                  write_baseline: str | None, ports: tuple[int, ...], master: str | None,
                  allow_invalid: bool) -> None:
    """Check the bytes of every Kafka frame in INPUTS (captures, or corpora of frames) against SPECS: what Kafka
    would refuse or misread (errors), what its writer would never write (warnings), what SPECS lack (info)."""
    from linter.compat.sources import read_revision
    from linter.engine.runner import select_rules
    from linter.frames.inputs import sorted_inputs
    from linter.frames.traffic import KAFKA_PORTS
    from linter.wirecheck.baseline import baseline_text, read_baseline
    from linter.wirecheck.findings import wire_rules
    from linter.wirecheck.report import document, render, summary_line
    from linter.wirecheck.run import check

    for written in (output, write_baseline):
        if written is not None:
            refuse_overlap(written, [*inputs, specs, baseline, config_file], "an input")
    config = configured(config_file, select=select, ignore=ignore, fail_on=fail_on, profile=profile)
    ruleset = select_rules(config)
    rules = wire_rules(ruleset)
    revision = read_revision(specs)
    accepted = read_baseline(baseline) if baseline else frozenset()
    found = sorted_inputs(inputs)
    if found.skipped:
        click.echo(printable(f"krpc-lint: skipped {plural(len(found.skipped), 'file')} that are neither captures "
                             f"nor frames corpora: {', '.join(found.skipped[:5])}"
                             f"{' ...' if len(found.skipped) > 5 else ''}"), err=True)
    collector, captures = check(found, revision, rules, baseline=accepted, master=master,
                                ports=frozenset(ports) or KAFKA_PORTS, allow_invalid=allow_invalid)
    if captures:
        click.echo(printable(f"krpc-lint: {captures}"), err=True)
    if write_baseline is not None:
        emit(baseline_text(collector), write_baseline)
        click.echo(printable(f"wrote {write_baseline}: {len(collector.kinds)} kinds of finding"), err=True)
        return
    report = document(collector, revision.label, list(inputs), captures)
    emit(render(report, fmt, ruleset.effective("wire")), output)
    if output:
        click.echo(printable(f"{summary_line(report)}; wrote {output}"), err=True)
    raise SystemExit(1 if collector.failed(config.fail_on) else 0)


__all__ = ["check_command"]
