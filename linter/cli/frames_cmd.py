"""``krpc-lint frames``: captured-frame corpora (``linter.frames``): ``extract`` cuts them out of packet captures,
``generate`` writes a synthetic one."""

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


@frames_group.command("extract")
@click.argument("captures", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--specs", required=True, type=click.Path(exists=True),
              help="The message specs the traffic speaks (with the request and response headers).")
@click.option("-o", "--out", required=True, type=NonEmptyPath(dir_okay=False),
              help="Output: .parquet, .jsonl, or - for JSON Lines on standard output.")
@click.option("--port", "ports", multiple=True, type=click.IntRange(1, 65535), metavar="PORT",
              help="A broker port (repeatable; default 9092). A flow on another port is Kafka too when its "
                   "first bytes are a request header the specs know.")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
@click.option("--allow-invalid", is_flag=True, help=ALLOW_INVALID_HELP)
def extract_command(captures: tuple[str, ...], specs: str, out: str, ports: tuple[int, ...], overwrite: bool,
                    allow_invalid: bool) -> None:
    """The Kafka frames of packet captures (pcap, pcapng, gzipped; files or directories of rotated files)."""
    import sys

    from linter.codec import Codec
    from linter.frames.errors import FramesInputError
    from linter.frames.extract import (
        Extraction,
        capture_files,
        write_jsonl,
        write_parquet,
    )
    from linter.frames.traffic import KAFKA_PORTS
    from linter.spark.output import atomic_file

    codec = Codec.load(specs, allow_invalid=allow_invalid)
    if codec.skipped:
        click.echo(skipped_line(codec.skipped), err=True)
    files = capture_files(captures)
    if not files:
        raise FramesInputError(f"{', '.join(captures)}: no packet capture here (pcap or pcapng, gzipped or not)")
    extraction = Extraction(files, codec, frozenset(ports) or KAFKA_PORTS)
    if out == "-":
        write_jsonl(extraction.rows(), sys.stdout)
    else:
        with atomic_file(out, overwrite=overwrite, inputs=[*captures, specs]) as partial:
            if out.endswith(".parquet"):
                write_parquet(extraction.rows(), partial)
            else:
                with open(partial, "w", encoding="ascii") as stream:
                    write_jsonl(extraction.rows(), stream)
    click.echo(printable(f"krpc-lint: {extraction.summary()}"), err=True)
