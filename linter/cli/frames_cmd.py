"""``krpc-lint frames``: captured-frame corpora (``linter.frames``); ``generate`` writes a synthetic one."""

from __future__ import annotations

import click

from linter.cli.common import ALLOW_INVALID_HELP, NonEmptyPath, skipped_line
from linter.escape import printable


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
