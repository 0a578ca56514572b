"""``krpc-lint size``: the wire-size advisor (KIP-636) — bytes per message version and per field path, and
what editing the specs would save (docs/size.md). The options become a ``linter.size.report.SizeOptions``;
the report (its JSON contract, the text and the HTML page) is built there, printed or written here. Like
``main``, this module imports only click at start-up."""

from __future__ import annotations

import click

from linter.cli.common import (
    ALLOW_INVALID_HELP,
    NonEmptyPath,
    emit,
    non_empty,
    refuse_overlap,
    skipped_line,
)
from linter.escape import printable

MAX_COUNT = 1_000_000


@click.command("size")
@click.argument("specs", type=NonEmptyPath(exists=True))
@click.argument("message", required=False)
@click.option("--version", "version", type=int, default=None, metavar="V",
              help="The message version (default: its highest; with --frames: every version met).")
@click.option("--values", "values_file", type=NonEmptyPath(dir_okay=False), default=None, metavar="FILE",
              help="JSON Lines of values in Kafka's JSON form (needs MESSAGE); default: generated values.")
@click.option("--frames", "frames_path", type=NonEmptyPath(exists=True), default=None, metavar="PATH",
              help="A captured frames corpus, as replay reads it (Parquet or JSON Lines): its messages sized.")
@click.option("--master", default=None, metavar="URL", callback=non_empty("names no Spark master"),
              help="With --frames: Spark master (local[*] or spark://HOST:PORT). Without it, a corpus of at most "
                   "250,000 frames is sized in this process, a larger one on local Spark.")
@click.option("--count", type=click.IntRange(1, MAX_COUNT), default=100, show_default=True,
              help="How many values to generate per message.")
@click.option("--seed", type=int, default=0, show_default=True, help="The generator's seed.")
@click.option("--kip636", is_flag=True,
              help="What-if: every ErrorCode and ErrorMessage of every response tagged (KIP-636).")
@click.option("--tag", "tags", multiple=True, metavar="PATH",
              help="What-if: this field tagged (a path like Topics[].ErrorCode; repeatable).")
@click.option("--flexible", is_flag=True,
              help="What-if: versions that are not flexible made flexible (compact encodings, tagged sections).")
@click.option("--format", "fmt", type=click.Choice(("text", "json", "html")), default="text", show_default=True)
@click.option("-o", "--output", default=None, type=NonEmptyPath(dir_okay=False), metavar="FILE",
              help="Write the output to FILE (never onto an input).")
@click.option("--allow-invalid", is_flag=True, help=ALLOW_INVALID_HELP)
def size_command(specs: str, message: str | None, version: int | None, values_file: str | None,
                 frames_path: str | None, master: str | None, count: int, seed: int, kip636: bool,
                 tags: tuple[str, ...], flexible: bool, fmt: str, output: str | None,
                 allow_invalid: bool = False) -> None:
    """Bytes per field path of MESSAGE (every request and response when omitted) in the specs SPECS.

    With --kip636, --tag or --flexible, also the bytes of the same values with the specs edited so, and the
    saving (negative: bytes added).
    """
    from linter.codec import Codec
    from linter.size.report import SizeOptions, check_usage, measure_report, render

    options = SizeOptions(version=version, values_file=values_file, frames=frames_path, master=master, count=count,
                          seed=seed, kip636=kip636, tags=tags, flexible=flexible, allow_invalid=allow_invalid)
    check_usage(message, options)
    if output is not None:
        refuse_overlap(output, [specs, values_file, frames_path])
    codec = Codec.load(specs, allow_invalid=allow_invalid)
    if codec.skipped:
        click.echo(skipped_line(codec.skipped), err=True)
    sized = measure_report(codec, specs, message, options)
    if sized.frames is not None:
        run, refused = sized.frames, sized.frames.tally.refused_frames
        if run.captured is not None:
            click.echo(printable(f"krpc-lint: {run.captured}"), err=True)
        line = f"{run.tally.frames - refused:,} frames sized in {run.seconds:.1f} s ({run.master})"
        click.echo(line + (f", {refused:,} not decodable" if refused else ""), err=True)
    emit(render(sized.report, fmt, specs), output)

