"""``krpc-lint replay``: captured frames decoded under two spec revisions (``linter.replay``, docs/pipeline.md):
a small corpus in this process, a larger one (or any, with ``--master``) on Spark. PySpark is imported only
when Spark runs; exit 2 with how to install it when it is missing then."""

from __future__ import annotations

import click

from linter.cli.common import ALLOW_INVALID_HELP, NonEmptyPath, non_empty, skipped_line
from linter.escape import printable

MASTER_HELP = ("Spark master: local[*] (Spark inside this process) or spark://HOST:PORT. Without it, a corpus of at "
               "most 1,000,000 frames is replayed in this process, a larger one on local Spark.")  # replay.IN_PROCESS_FRAMES


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
    from linter.replay.run import IN_PROCESS, replay, where_to_replay
    from linter.spark.progress import RunProgress
    from linter.spark.session import require_pyspark

    where = where_to_replay(frames, master is not None)
    if where[1]:
        require_pyspark()  # before any work or progress line: a missing extra or Java is the first thing to say
    with RunProgress() as progress:
        progress.step(f"replaying {frames}")
        summary = replay(frames, old_specs, new_specs, out, master=master, overwrite=overwrite,
                         allow_invalid=allow_invalid, where=where)
    if summary.skipped:
        click.echo(skipped_line(summary.skipped), err=True)
    if summary.captured is not None:
        click.echo(printable(f"krpc-lint: {summary.captured}"), err=True)
    outcomes = ", ".join(f"{count} {outcome}" for outcome, count in summary.outcomes.items() if count)
    click.echo(f"{summary.frames} frames: {outcomes or 'none'}; {summary.frames_per_second:,.0f} frames/s "
               f"({summary.seconds} s) " + ("in this process (a small corpus: no Spark)" if summary.master == IN_PROCESS
                                            else f"on {summary.master}"))
    click.echo(printable(f"wrote {out}/mismatches ({summary.mismatches} frames that fail or differ), {out}/counts "
                         "(Parquet)"))
