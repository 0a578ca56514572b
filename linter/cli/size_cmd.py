"""``krpc-lint size``: the wire-size advisor (KIP-636) — bytes per message version and per field path, and
what editing the specs would save, counted exactly by encoding both ways (``linter.size.measure``, docs/size.md).

Values come from ``--values FILE`` (JSON Lines in Kafka's JSON form, one message per line), from a captured
frames corpus (``--frames``, ``linter.size.frames``: in this process, or on Spark when large) or from
the seeded generator (``--count N --seed S``). JSON output (``--format json``), a stable contract::

    {"messages": [{"name": ..., "version": V, "count": N, "bytes": B,
                   "fields": [{"path": "Topics[].ErrorCode", "bytes": b}, ...],
                   "what_if": {"bytes": B2, "saved": B - B2}}],
     "total": {"count": N, "bytes": B, "what_if": {"bytes": B2, "saved": B - B2}}}

``what_if`` only with ``--tag`` / ``--kip636`` / ``--flexible``; the path ``""`` holds the message's own
bytes (its top-level tagged-field count). ``--format html``: the same as a page with charts
(``linter.size.html``). Like ``main``, this module imports only click at start-up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from linter.cli.common import (
    ALLOW_INVALID_HELP,
    NonEmptyPath,
    emit,
    non_empty,
    refuse_overlap,
    skipped_line,
)
from linter.parse.bounded_json import NestingError, NumberTooLong, load_json
from linter.vocabulary import plural

if TYPE_CHECKING:
    from linter.codec import Codec
    from linter.size.measure import Sizes
    from linter.size.whatif import WhatIf

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
    from linter.size.measure import SizeError
    from linter.size.whatif import WhatIf

    _check_usage(message, version, values_file, frames_path, master, tags)
    if output is not None:
        refuse_overlap(output, [specs, values_file, frames_path])
    codec = Codec.load(specs, allow_invalid=allow_invalid)
    if codec.skipped:
        click.echo(skipped_line(codec.skipped), err=True)
    what_if = WhatIf(kip636, tags, flexible)
    if message is not None and message not in codec.names:
        raise SizeError(_unknown(codec, message))
    if frames_path is not None:
        results = _frames(codec, specs, frames_path, what_if, message, version, master, allow_invalid)
    else:
        names = [message] if message is not None else [
            name for name in codec.names
            if codec.spec(name).type in ("request", "response") and not codec.spec(name).removed]
        results = [_one(codec, name, version, values_file, count, seed, what_if) for name in names]
    report = {"messages": results, "total": _total(results, what_if.active)}
    emit(_json(report) if fmt == "json" else _html(report, specs) if fmt == "html" else _text(report), output)


def _check_usage(message: str | None, version: int | None, values_file: str | None, frames_path: str | None,
                 master: str | None, tags: tuple[str, ...]) -> None:
    from linter.size.measure import SizeError

    if values_file is not None and frames_path is not None:
        raise SizeError("--values and --frames are two sources of values: give one")
    if values_file is not None and message is None:
        raise SizeError("--values needs a MESSAGE")
    if version is not None and message is None:
        raise SizeError("--version needs a MESSAGE")
    if tags and message is None:
        raise SizeError("--tag needs a MESSAGE (its paths are a message's fields)")
    if master is not None and frames_path is None:
        raise SizeError("--master needs --frames (only a corpus runs on Spark)")


def _one(codec: Codec, name: str, version: int | None, values_file: str | None, count: int, seed: int,
         what_if: WhatIf) -> dict[str, Any]:
    import random

    from linter.codec.values import random_value
    from linter.size.measure import measure, what_if_bytes

    version = _version(codec, name, version)
    edited = what_if.codec_for(codec, name, version)
    if values_file is not None:
        return _streamed(codec, edited, name, version, values_file)
    rng = random.Random(seed)
    values = [random_value(codec, name, version, rng) for _ in range(count)]
    sizes = measure(codec, name, version, values)
    return _result(codec, sizes, None if edited is None else what_if_bytes(edited, name, version, values))


def _streamed(codec: Codec, edited: Codec | None, name: str, version: int, values_file: str) -> dict[str, Any]:
    """``--values``: each line measured (and encoded by the what-if codec) as it is read, so memory does not
    follow the number of lines (a million lines held 547 MB); the figures are those of the whole list."""
    from linter.size.measure import SizeError, Sizes, measure, what_if_bytes

    after = [0]

    def also_what_if(values: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for value in values:
            if edited is not None:
                after[0] += what_if_bytes(edited, name, version, (value,))
            yield value

    sizes = measure(codec, name, version, also_what_if(_read_values(codec, name, version, values_file)),
                    Sizes(name, version))
    if not sizes.count:
        raise SizeError(f"{values_file}: no values")
    return _result(codec, sizes, None if edited is None else after[0])


def _frames(codec: Codec, specs: str, frames_path: str, what_if: WhatIf, message: str | None,
            version: int | None, master: str | None, allow_invalid: bool) -> list[dict[str, Any]]:
    """The corpus's messages, by name and version; where it ran on stderr."""
    from linter.size.run import size_frames

    if message is not None:  # a version or path the message lacks: refused before any frame is read
        from linter.size.measure import tag_fields

        if version is not None:
            _version(codec, message, version)
        tag_fields(codec.spec(message), what_if.tags)
    run = size_frames(frames_path, codec, specs, what_if, message=message, version=version, master=master,
                      allow_invalid=allow_invalid)
    tally = run.tally
    click.echo(f"{tally.frames:,} frames sized in {run.seconds:.1f} s ({run.master})", err=True)
    return [_result(codec, tally.sizes[key], tally.what_if.get(key) if what_if.active else None)
            for key in sorted(tally.sizes)]


def _version(codec: Codec, name: str, version: int | None) -> int:
    """``version`` (default: the highest) checked against the message's versions."""
    from linter.size.measure import SizeError

    versions = codec.spec(name).versions
    if versions is None or versions.empty:
        raise SizeError(f"{name} has no valid versions")
    if version is None:
        return versions.highest
    if not versions.contains(version):
        raise SizeError(f"{name} has no version {version} (valid versions: {versions})")
    return version


def _unknown(codec: Codec, name: str) -> str:
    from linter.cli.codec_io import unknown_message

    return unknown_message(codec, name)


def _read_values(codec: Codec, name: str, version: int, path: str) -> Iterator[dict[str, Any]]:
    """The JSON Lines of ``path`` as values, one at a time (blank lines skipped); a bad line names its number
    and field path, a line over MAX_INPUT_BYTES is refused without being held."""
    from linter.cli.codec_batch import bounded_lines
    from linter.codec.errors import CodecError
    from linter.parse.files import MAX_INPUT_BYTES, open_regular
    from linter.size.measure import SizeError

    stream = open_regular(path)
    try:
        number = 0
        for chunk in bounded_lines(stream):
            if chunk is None:
                raise SizeError(f"{path}:{number + 1}: a line longer than {MAX_INPUT_BYTES} bytes")
            for line in chunk.splitlines():  # numbered as before, when the whole file was split (a lone CR ends one)
                number += 1
                if not line.strip():
                    continue
                try:
                    item = load_json(line.decode("utf-8", "surrogatepass"))
                except (NestingError, NumberTooLong) as exc:
                    raise SizeError(f"{path}:{number}: {exc}") from None
                except ValueError as exc:
                    raise SizeError(f"{path}:{number}: not JSON: {exc}") from None
                try:
                    value = codec.from_json(name, version, item)
                    codec.encode(name, version, value)  # the types are checked only here
                except CodecError as exc:
                    raise SizeError(f"{path}:{number}: {exc}") from None
                yield value
    finally:
        stream.close()


def _result(codec: Codec, sizes: Sizes, after: int | None) -> dict[str, Any]:
    """One message version in the JSON contract; ``after``: the what-if's bytes, when there is one."""
    from linter.size.measure import wire_order

    fields = wire_order(codec, sizes.name, sizes.version, sizes.fields)
    result: dict[str, Any] = {"name": sizes.name, "version": sizes.version, "count": sizes.count,
                              "bytes": sizes.bytes,
                              "fields": [{"path": path, "bytes": size} for path, size in fields.items()]}
    if after is not None:
        result["what_if"] = {"bytes": after, "saved": sizes.bytes - after}
    return result


def _total(results: list[dict[str, Any]], what_if: bool) -> dict[str, Any]:
    """Over every message: their count and bytes and, with a what-if, its bytes and the saving."""
    total: dict[str, Any] = {"count": sum(r["count"] for r in results), "bytes": sum(r["bytes"] for r in results)}
    if what_if:
        after = sum(r["what_if"]["bytes"] for r in results)
        total["what_if"] = {"bytes": after, "saved": total["bytes"] - after}
    return total


def _json(report: dict[str, Any]) -> str:
    from linter.escape import json_text

    return json_text(report)


def _html(report: dict[str, Any], specs: str) -> str:
    from linter.size.html import size_page

    page: str = size_page(report, specs)
    return page


def _text(report: dict[str, Any]) -> str:
    from linter.escape import guard_lines, printable

    lines = []
    for result in report["messages"]:
        total = result["bytes"]
        lines.append(f"{printable(result['name'])} v{result['version']}: {total} bytes in {result['count']} message"
                     f"{'' if result['count'] == 1 else 's'}")
        width = max((len(item["path"] or "(message)") for item in result["fields"]), default=0)
        for item in result["fields"]:
            share = f"{100 * item['bytes'] / total:5.1f}%" if total else "    -"
            lines.append(f"  {printable(item['path'] or '(message)'):<{width}}  {item['bytes']:>10}  {share}")
        what_if = result.get("what_if")
        if what_if is not None:
            saved = what_if["saved"]
            lines.append(f"  what-if: {what_if['bytes']} bytes ({_change(saved)} bytes)")
    total = report["total"]
    line = f"Total: {total['bytes']} bytes in {plural(total['count'], 'message')}"
    if "what_if" in total:
        line += f"; what-if: {total['what_if']['bytes']} bytes ({_change(total['what_if']['saved'])} bytes)"
    return guard_lines("\n".join([*lines, line]) + "\n")  # a name never starts a line a CI runner acts on


def _change(saved: int) -> str:
    return f"saves {saved}" if saved >= 0 else f"adds {-saved}"
