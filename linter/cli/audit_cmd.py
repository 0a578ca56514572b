"""``krpc-lint audit``: a repository's whole spec history linted and compared (``linter.audit``, docs/pipeline.md).

PySpark is the optional extra ``krpc-lint[spark]``: a small history runs without it, a larger one imports it when
run and says how to install it when it is missing. Exit codes: 0 done, 2 usage errors (a missing extra, an unknown
ref, an output that exists without ``--overwrite``).
"""

from __future__ import annotations

import click

from linter.cli.common import NonEmptyPath, non_empty
from linter.escape import printable

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
