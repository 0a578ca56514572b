"""``krpc-lint size``: the wire-size advisor (KIP-636) — bytes per message version and per field path, and
what tagging some fields would save, counted exactly by encoding both ways (``linter.codec.size``).

Values come from ``--values FILE`` (JSON Lines in Kafka's JSON form, one message per line) or from the
seeded generator (``--count N --seed S``). JSON output (``--format json``), a stable contract::

    {"messages": [{"name": ..., "version": V, "count": N, "bytes": B,
                   "fields": [{"path": "Topics[].ErrorCode", "bytes": b}, ...],
                   "what_if": {"bytes": B2, "saved": B - B2}}]}

``what_if`` only with ``--tag`` / ``--kip636``; the path ``""`` holds the message's own bytes (its
top-level tagged-field count). Like ``main``, this module imports only click at start-up.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from linter.cli.common import emit

if TYPE_CHECKING:
    from linter.codec import Codec
    from linter.codec.size import Sizes

MAX_COUNT = 1_000_000


@click.command("size")
@click.argument("specs", type=click.Path(exists=True))
@click.argument("message", required=False)
@click.option("--version", "version", type=int, default=None, metavar="V",
              help="The message version (default: its highest).")
@click.option("--values", "values_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="JSON Lines of values in Kafka's JSON form (needs MESSAGE); default: generated values.")
@click.option("--count", type=click.IntRange(1, MAX_COUNT), default=100, show_default=True,
              help="How many values to generate per message.")
@click.option("--seed", type=int, default=0, show_default=True, help="The generator's seed.")
@click.option("--kip636", is_flag=True,
              help="What-if: every ErrorCode and ErrorMessage of every response tagged (KIP-636).")
@click.option("--tag", "tags", multiple=True, metavar="PATH",
              help="What-if: this field tagged (a path like Topics[].ErrorCode; repeatable).")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def size_command(specs: str, message: str | None, version: int | None, values_file: str | None, count: int,
                 seed: int, kip636: bool, tags: tuple[str, ...], fmt: str) -> None:
    """Bytes per field path of MESSAGE (every request and response when omitted) in the specs SPECS.

    With --kip636 or --tag, also the bytes of the same values with those fields tagged, and the saving.
    """
    from linter.codec import Codec
    from linter.codec.size import SizeError

    if values_file is not None and message is None:
        raise SizeError("--values needs a MESSAGE")
    if version is not None and message is None:
        raise SizeError("--version needs a MESSAGE")
    if tags and message is None:
        raise SizeError("--tag needs a MESSAGE (its paths are a message's fields)")
    codec = Codec.load(specs)
    names = [message] if message is not None else [
        name for name in codec.names if codec.spec(name).type in ("request", "response") and not codec.spec(name).removed]
    results = [_one(codec, name, version, values_file, count, seed, kip636, tags) for name in names]
    emit(_json(results) if fmt == "json" else _text(results))


def _one(codec: Codec, name: str, version: int | None, values_file: str | None, count: int, seed: int,
         kip636: bool, tags: tuple[str, ...]) -> dict[str, Any]:
    import random

    from linter.codec.size import (
        SizeError,
        kip636_paths,
        measure,
        what_if_bytes,
        what_if_codec,
    )
    from linter.codec.values import random_value

    try:
        spec = codec.spec(name)
    except KeyError:
        raise SizeError(_unknown(codec, name)) from None
    versions = spec.versions
    if versions is None or versions.empty:
        raise SizeError(f"{name} has no valid versions")
    if version is None:
        version = versions.highest
    elif not versions.contains(version):
        raise SizeError(f"{name} has no version {version} (valid versions: {versions})")
    if values_file is not None:
        values = _read_values(codec, name, version, values_file)
    else:
        rng = random.Random(seed)
        values = [random_value(codec, name, version, rng) for _ in range(count)]
    sizes = measure(codec, name, version, values)
    result = _result(sizes)
    if kip636 or tags:
        paths = [*kip636_paths(spec)] if kip636 else []
        paths += [t for t in tags if t not in paths]
        edited = what_if_codec(spec, paths, null_error_messages=kip636)
        after = what_if_bytes(edited, name, version, values)
        result["what_if"] = {"bytes": after, "saved": sizes.bytes - after}
    return result


def _unknown(codec: Codec, name: str) -> str:
    from linter.cli.codec_io import unknown_message

    return unknown_message(codec, name)


def _read_values(codec: Codec, name: str, version: int, path: str) -> list[dict[str, Any]]:
    """The JSON Lines of ``path`` as values (blank lines skipped); a bad line names its number and field path."""
    from linter.codec.errors import CodecError
    from linter.codec.size import SizeError
    from linter.parse.files import MAX_INPUT_BYTES, read_regular

    data = read_regular(path)
    if len(data) > MAX_INPUT_BYTES:
        raise SizeError(f"{path}: larger than {MAX_INPUT_BYTES} bytes")
    values = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise SizeError(f"{path}:{number}: not JSON: {exc}") from None
        try:
            value = codec.from_json(name, version, item)
            codec.encode(name, version, value)  # the types are checked only here
        except CodecError as exc:
            raise SizeError(f"{path}:{number}: {exc}") from None
        values.append(value)
    if not values:
        raise SizeError(f"{path}: no values")
    return values


def _result(sizes: Sizes) -> dict[str, Any]:
    return {"name": sizes.name, "version": sizes.version, "count": sizes.count, "bytes": sizes.bytes,
            "fields": [{"path": path, "bytes": size} for path, size in sizes.fields.items()]}


def _json(results: list[dict[str, Any]]) -> str:
    from linter.report.escape import json_text

    return json_text({"messages": results})


def _text(results: list[dict[str, Any]]) -> str:
    from linter.report.escape import printable

    lines = []
    for result in results:
        total = result["bytes"]
        lines.append(f"{result['name']} v{result['version']}: {total} bytes in {result['count']} message"
                     f"{'' if result['count'] == 1 else 's'}")
        width = max((len(item["path"] or "(message)") for item in result["fields"]), default=0)
        for item in result["fields"]:
            share = f"{100 * item['bytes'] / total:5.1f}%" if total else "    -"
            lines.append(f"  {printable(item['path'] or '(message)'):<{width}}  {item['bytes']:>10}  {share}")
        what_if = result.get("what_if")
        if what_if is not None:
            saved = what_if["saved"]
            change = f"saves {saved}" if saved >= 0 else f"adds {-saved}"
            lines.append(f"  what-if: {what_if['bytes']} bytes ({change} bytes)")
    return "\n".join(lines) + "\n"
