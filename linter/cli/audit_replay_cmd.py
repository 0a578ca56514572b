"""``krpc-lint audit``, ``replay`` and ``frames generate``: the Spark pipeline (docs/pipeline.md).

PySpark is the optional extra ``krpc-lint[spark]``; these commands import it only when run, and
say how to install it when it is missing. Exit codes: 0 done, 2 usage errors (a missing extra,
an unknown ref, an output that exists without ``--overwrite``).
"""

from __future__ import annotations

import click

from linter.cli.common import ALLOW_INVALID_HELP, NonEmptyPath, non_empty, skipped_line
from linter.escape import printable

MASTER_HELP = "Spark master: local[*] (default, Spark inside this process) or spark://HOST:PORT."
AUDIT_MASTER_HELP = ("Spark master: local[*] (default, Spark inside this process) or spark://HOST:PORT. Without "
                     "it, a history of at most 200 blobs and revision pairs is audited without Spark.")


@click.command("audit")
@click.argument("repo", type=click.Path(exists=True, file_okay=False))
@click.option("--out", required=True, type=NonEmptyPath(), help="Output directory (Parquet datasets, report.html).")
@click.option("--refs", multiple=True, metavar="REF", help="Refs whose history to audit (default: the current "
              "branch); repeatable.")
@click.option("--paths", multiple=True, metavar="GLOB", callback=non_empty("matches no spec file"),
              help="Spec files, as git globs (default: Kafka's spec locations, else every *.json); repeatable.")
@click.option("--all-branches", is_flag=True, help="Also audit every branch: local and remote-tracking (a clone's "
              "release branches).")
@click.option("--first-parent", is_flag=True, help="Follow only the first parent of merges (each merged change once, "
              "at its merge).")
@click.option("--since", default=None, metavar="DATE", callback=non_empty("is no date"),
              help="Only commits after DATE (as git log --since).")
@click.option("--master", default=None, metavar="URL", callback=non_empty("names no Spark master"),
              help=AUDIT_MASTER_HELP)
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
def audit_command(repo: str, out: str, refs: tuple[str, ...], paths: tuple[str, ...], all_branches: bool,
                  first_parent: bool, since: str | None, master: str | None, overwrite: bool) -> None:
    """Lint every spec blob of a repository's history and compare every revision pair, on Spark."""
    from linter.audit.run import IN_PROCESS, audit
    from linter.spark.progress import RunProgress

    with RunProgress() as progress:
        summary = audit(repo, out, refs=refs, paths=paths, since=since, master=master, overwrite=overwrite,
                        progress=progress, all_branches=all_branches, first_parent=first_parent)
    click.echo(f"{summary.commits} commits, {summary.revisions} spec revisions, {summary.blobs} distinct blobs "
               f"linted ({summary.findings} findings), {summary.pairs} revision pairs compared "
               f"({summary.changes} changes), {summary.errors} errors in {summary.seconds} s "
               + ("in this process (a small history: no Spark)" if summary.master == IN_PROCESS
                  else f"on {summary.master}"))
    click.echo(printable(f"wrote {out}/revisions, findings, changes (Parquet) and {out}/report.html"))


@click.command("replay")
@click.argument("frames", type=click.Path(exists=True))
@click.option("--specs", "old_specs", required=True, type=click.Path(exists=True), help="The specs frames were "
              "written with (the old revision).")
@click.option("--against", "new_specs", required=True, type=click.Path(exists=True), help="The changed specs "
              "(the new revision).")
@click.option("--out", required=True, type=NonEmptyPath(), help="Output directory (mismatches/, counts/).")
@click.option("--master", default=None, metavar="URL", callback=non_empty("names no Spark master"), help=MASTER_HELP)
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
@click.option("--allow-invalid", is_flag=True, help=ALLOW_INVALID_HELP)
def replay_command(frames: str, old_specs: str, new_specs: str, out: str, master: str | None,
                   overwrite: bool, allow_invalid: bool) -> None:
    """Decode captured frames under two revisions of the specs; report the frames that differ."""
    from linter.replay.run import replay
    from linter.spark.progress import RunProgress
    from linter.spark.session import require_pyspark

    require_pyspark()
    with RunProgress() as progress:
        progress.step(f"replaying {frames}")
        summary = replay(frames, old_specs, new_specs, out, master=master, overwrite=overwrite,
                         allow_invalid=allow_invalid)
    if summary.skipped:
        click.echo(skipped_line(summary.skipped), err=True)
    outcomes = ", ".join(f"{count} {outcome}" for outcome, count in summary.outcomes.items() if count)
    click.echo(f"{summary.frames} frames: {outcomes or 'none'}; {summary.frames_per_second:,.0f} frames/s "
               f"({summary.seconds} s) on {summary.master}")
    click.echo(printable(f"wrote {out}/mismatches ({summary.mismatches} frames that fail or differ), {out}/counts "
                         "(Parquet)"))


@click.group("frames")
def frames_group() -> None:
    """Captured-frame corpora for `krpc-lint replay`."""


@frames_group.command("generate")
@click.option("--specs", required=True, type=click.Path(exists=True), help="Spec directory (with the headers).")
@click.option("--count", required=True, type=click.IntRange(1, 100_000_000), help="Number of frames.")
@click.option("--out", required=True, type=NonEmptyPath(), help="Output file: .parquet (default) or .jsonl.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the generated values.")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
@click.option("--allow-invalid", is_flag=True, help=ALLOW_INVALID_HELP)
def generate_command(specs: str, count: int, out: str, seed: int, overwrite: bool, allow_invalid: bool) -> None:
    """A synthetic corpus of request and response frames from the codec's value generator."""
    from linter.frames.generate import generate

    def skipped(files: tuple[str, ...]) -> None:
        click.echo(skipped_line(files), err=True)

    written = generate(specs, count, out, seed=seed, overwrite=overwrite, allow_invalid=allow_invalid,
                       on_skipped=skipped)
    click.echo(printable(f"wrote {written} frames to {out}"))
