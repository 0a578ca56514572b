"""``krpc-lint readiness``: which clients break on a target Kafka release, from captures, frames corpora or broker
request logs (``linter.readiness``, docs/readiness.md). Exit 1 when a client breaks (and no baseline accepts
it), 0 otherwise, 2 for usage errors."""

from __future__ import annotations

from typing import Any

import click

from linter.cli.common import NonEmptyPath, emit, non_empty, refuse_overlap
from linter.escape import printable
from linter.readiness.formats import FORMATS, render


@click.command("readiness")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--target", default=None, metavar="SPECS", help="The specs of the release to move to: a directory, "
              "or REF:path in a Kafka checkout (e.g. 3.8.0:clients/src/main/resources/common/message).")
@click.option("--kafka-version", default=None, metavar="RELEASE", help="The release to move to by name (e.g. "
              "4.0.0): ranges krpc-lint ships (docs/readiness.md says where each comes from).")
@click.option("--specs", default=None, type=click.Path(exists=True), help="Specs to cut captures and corpora with "
              "(default: the target's; needed with --kafka-version unless the inputs are request logs only).")
@click.option("--port", "ports", multiple=True, type=click.IntRange(1, 65535), help="A Kafka port of the captures "
              "(repeatable; default 9092, and streams that start with a request header on any port).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", type=NonEmptyPath(dir_okay=False), default=None, help="Write the report here.")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Clients accepted as they are (a file --write-baseline wrote): they never fail the run.")
@click.option("--write-baseline", type=NonEmptyPath(dir_okay=False), default=None,
              help="Write the clients that break or are at risk as a baseline, then exit 0.")
@click.option("--master", default=None, metavar="URL", callback=non_empty("names no Spark master"),
              help="Read on Spark (local[*], spark://HOST:PORT); without it, inputs up to 1 GB are read here.")
def readiness_command(inputs: tuple[str, ...], target: str | None, kafka_version: str | None, specs: str | None,
                      ports: tuple[int, ...], fmt: str, output: str | None, baseline: str | None,
                      write_baseline: str | None, master: str | None) -> None:
    """Say which clients break when the cluster they talk to moves to TARGET, from what they really sent."""
    from linter.frames.traffic import KAFKA_PORTS
    from linter.readiness.baseline import baseline_clients, baseline_text, read_baseline
    from linter.readiness.run import gather, sorted_inputs
    from linter.readiness.verdict import failing, report

    if (target is None) == (kafka_version is None):
        raise click.UsageError("give the release to move to: --target SPECS or --kafka-version RELEASE (one)")
    for written in (output, write_baseline):
        if written is not None:
            refuse_overlap(written, [*inputs, target, specs, baseline], "an input")
    chosen, revision = _target(target, kafka_version)
    if specs is not None:
        from linter.compat.sources import read_revision

        revision = read_revision(specs)
    accepted = read_baseline(baseline) if baseline else set()
    usage = gather(sorted_inputs(inputs), revision, master=master, ports=frozenset(ports) or KAFKA_PORTS)
    document = report(chosen, usage, accepted=accepted)
    if write_baseline is not None:
        emit(baseline_text(document), write_baseline)
        click.echo(printable(f"wrote {write_baseline}: {len(baseline_clients(document))} clients"), err=True)
        return
    emit(render(document, fmt), output)
    raise SystemExit(1 if failing(document) else 0)


def _target(target: str | None, kafka_version: str | None) -> tuple[Any, Any]:
    if target is not None:
        from linter.readiness.target import spec_target

        return spec_target(target)
    from linter.readiness.releases import release_target

    return release_target(kafka_version or ""), None


__all__ = ["readiness_command"]
