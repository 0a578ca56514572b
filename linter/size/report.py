"""The report of ``krpc-lint size``, without click: what was measured (generated values, given values or a
frames corpus) as the JSON contract's dict, and that dict as text, JSON or the HTML page.

The dict (``--format json``, a stable contract, docs/size.md)::

    {"messages": [{"name": ..., "version": V, "count": N, "bytes": B,
                   "fields": [{"path": "Topics[].ErrorCode", "bytes": b}, ...],
                   "what_if": {"bytes": B2, "saved": B - B2}}],
     "total": {"count": N, "bytes": B, "what_if": {"bytes": B2, "saved": B - B2}}}

``what_if`` only with a what-if (``kip636``, ``tags``, ``flexible``); the path ``""`` holds the message's own
bytes (its top-level tagged-field count). A frames corpus adds ``"refused"``: per kind of frame that could not
be sized (``refused_entries``), ``[]`` when every frame was.

>>> options = SizeOptions(version=0, count=3, flexible=True)  # v0 made flexible: compact encodings
>>> report = size_report("fixtures/valid", "WidgetFetchRequest", options)
>>> [(m["name"], m["version"], m["count"]) for m in report["messages"]], report["total"]["what_if"]["saved"]
([('WidgetFetchRequest', 0, 3)], 24)
>>> print(render(report, "text", "fixtures/valid").splitlines()[-1])
Total: 145 bytes in 3 messages; what-if: 121 bytes (saves 24 bytes)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from linter.codec import Codec
from linter.codec.errors import CodecError, unknown_message
from linter.codec.values import random_value
from linter.escape import guard_lines, json_text, printable
from linter.parse.bounded_json import NestingError, NumberTooLong, load_json
from linter.parse.files import MAX_INPUT_BYTES, bounded_lines, open_regular
from linter.size.measure import (
    SizeError,
    Sizes,
    measure,
    tag_fields,
    what_if_bytes,
    wire_order,
)
from linter.size.whatif import WhatIf
from linter.vocabulary import plural

if TYPE_CHECKING:
    from linter.size.frames import Tally
    from linter.size.run import FramesRun

Report = dict[str, Any]


@dataclass(frozen=True)
class SizeOptions:
    """What to measure: the message version, where the values come from (``values_file``, ``frames``, else
    ``count`` generated from ``seed``) and the what-if; the command line's options, as a library takes them."""

    version: int | None = None  # default: the highest (with frames: every version met)
    values_file: str | None = None  # JSON Lines in Kafka's JSON form
    frames: str | None = None  # a captured frames corpus
    master: str | None = None  # with frames: the Spark master
    count: int = 100
    seed: int = 0
    kip636: bool = False
    tags: tuple[str, ...] = ()
    flexible: bool = False
    allow_invalid: bool = False


@dataclass
class Sized:
    """A finished report, and where its corpus ran (``--frames`` only: the CLI says it on stderr)."""

    report: Report
    frames: FramesRun | None = None


def check_usage(message: str | None, options: SizeOptions) -> None:
    """Options that make no sense together, refused before any spec is read."""
    if options.values_file is not None and options.frames is not None:
        raise SizeError("--values and --frames are two sources of values: give one")
    if options.values_file is not None and message is None:
        raise SizeError("--values needs a MESSAGE")
    if options.version is not None and message is None:
        raise SizeError("--version needs a MESSAGE")
    if options.tags and message is None:
        raise SizeError("--tag needs a MESSAGE (its paths are a message's fields)")
    if options.master is not None and options.frames is None:
        raise SizeError("--master needs --frames (only a corpus runs on Spark)")


def size_report(specs: str, message: str | None = None, options: SizeOptions | None = None) -> Report:
    """The report of MESSAGE (every request and response when ``None``) in the specs ``specs``: the library's
    ``krpc-lint size --format json``."""
    options = options or SizeOptions()
    check_usage(message, options)
    codec = Codec.load(specs, allow_invalid=options.allow_invalid)
    return measure_report(codec, specs, message, options).report


def measure_report(codec: Codec, specs: str, message: str | None, options: SizeOptions) -> Sized:
    """The report of a known MESSAGE (or every request and response) of ``codec``, loaded from ``specs``;
    an unknown MESSAGE is a ``SizeError`` naming the closest names."""
    if message is not None and message not in codec.names:
        raise SizeError(unknown_message(codec.names, message))
    what_if = WhatIf(options.kip636, options.tags, options.flexible)
    if options.frames is not None:
        run = _frames(codec, specs, what_if, message, options)
        results = [result(codec, run.tally.sizes[key], run.tally.what_if.get(key) if what_if.active else None)
                   for key in sorted(run.tally.sizes)]
        return Sized({**_with_total(results, what_if.active), "refused": refused_entries(run.tally)}, run)
    names = [message] if message is not None else [
        name for name in codec.names if codec.spec(name).type in ("request", "response") and not codec.spec(name).removed]
    return Sized(_with_total([_one(codec, name, what_if, options) for name in names], what_if.active))


def _one(codec: Codec, name: str, what_if: WhatIf, options: SizeOptions) -> Report:
    """One message version's result, of given values or of generated ones."""
    version = message_version(codec, name, options.version)
    edited = what_if.codec_for(codec, name, version)
    if options.values_file is not None:
        return _given(codec, edited, name, version, options.values_file)
    rng = random.Random(options.seed)
    values = [random_value(codec, name, version, rng) for _ in range(options.count)]
    sizes = measure(codec, name, version, values)
    return result(codec, sizes, None if edited is None else what_if_bytes(edited, name, version, values))


def _given(codec: Codec, edited: Codec | None, name: str, version: int, path: str) -> Report:
    """``--values``: each line measured (and encoded by the what-if codec) as it is read, so memory does not
    follow the number of lines (a million lines held 547 MB); the figures are those of the whole list."""
    after = [0]

    def also_what_if(values: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for value in values:
            if edited is not None:
                after[0] += what_if_bytes(edited, name, version, (value,))
            yield value

    sizes = measure(codec, name, version, also_what_if(read_values(codec, name, version, path, _bounded_lines(path))),
                    Sizes(name, version))
    if not sizes.count:
        raise SizeError(f"{path}: no values")
    return result(codec, sizes, None if edited is None else after[0])


def _frames(codec: Codec, specs: str, what_if: WhatIf, message: str | None, options: SizeOptions) -> FramesRun:
    """The corpus sized; a version or path the message lacks is refused before any frame is read."""
    from linter.size.run import size_frames

    assert options.frames is not None
    if message is not None:
        if options.version is not None:
            message_version(codec, message, options.version)
        tag_fields(codec.spec(message), what_if.tags)
    return size_frames(options.frames, codec, specs, what_if, message=message, version=options.version,
                       master=options.master, allow_invalid=options.allow_invalid)


def message_version(codec: Codec, name: str, version: int | None) -> int:
    """``version`` (default: the highest) checked against the message's versions."""
    versions = codec.spec(name).versions
    if versions is None or versions.empty:
        raise SizeError(f"{name} has no valid versions")
    if version is None:
        return versions.highest
    if not versions.contains(version):
        raise SizeError(f"{name} has no version {version} (valid versions: {versions})")
    return version


def _bounded_lines(path: str) -> Iterator[bytes | None]:
    """The lines of a ``--values`` file, opened when first read; one over MAX_INPUT_BYTES is ``None``, never
    held whole."""
    with open_regular(path) as stream:
        yield from bounded_lines(stream)


def read_values(codec: Codec, name: str, version: int, path: str,
                chunks: Iterable[bytes | None]) -> Iterator[dict[str, Any]]:
    """The JSON Lines of ``path`` (read as ``chunks``) as values, one at a time (blank lines skipped); a bad
    line names its number and field path, a ``None`` chunk is a line over MAX_INPUT_BYTES."""
    number = 0
    for chunk in chunks:
        if chunk is None:
            raise SizeError(f"{path}:{number + 1}: a line longer than {MAX_INPUT_BYTES} bytes")
        for line in chunk.splitlines():  # numbered as before, when the whole file was split (a lone CR ends one)
            number += 1
            if line.strip():
                yield _value(codec, name, version, f"{path}:{number}", line)


def _value(codec: Codec, name: str, version: int, where: str, line: bytes) -> dict[str, Any]:
    try:
        item = load_json(line.decode("utf-8", "surrogatepass"))
    except (NestingError, NumberTooLong) as exc:
        raise SizeError(f"{where}: {exc}") from None
    except ValueError as exc:
        raise SizeError(f"{where}: not JSON: {exc}") from None
    try:
        value: dict[str, Any] = codec.from_json(name, version, item)
        codec.encode(name, version, value)  # the types are checked only here
    except CodecError as exc:
        raise SizeError(f"{where}: {exc}") from None
    return value


def result(codec: Codec, sizes: Sizes, after: int | None) -> Report:
    """One message version in the JSON contract; ``after``: the what-if's bytes, when there is one."""
    fields = wire_order(codec, sizes.name, sizes.version, sizes.fields)
    entry: Report = {"name": sizes.name, "version": sizes.version, "count": sizes.count, "bytes": sizes.bytes,
                     "fields": [{"path": path, "bytes": size} for path, size in fields.items()]}
    if after is not None:
        entry["what_if"] = {"bytes": after, "saved": sizes.bytes - after}
    return entry


def refused_entries(tally: Tally) -> list[Report]:
    """The frames that could not be sized, one entry per kind (``direction``, ``api_key``, ``api_version``; all
    ``None`` for rows that are not frames), the kinds with the most frames first, then by first frame.

    >>> from linter.size.frames import Tally
    >>> tally = Tally()
    >>> tally.refuse(("response", 71, 0), 17, "response of API key 71 v0: no response spec with apiKey 71")
    >>> refused_entries(tally)[0]["first_frame"], text_refused(refused_entries(tally)[0])
    (17, 'not sized: 1 response frame of API key 71 v0 (first: frame 17: response of API key 71 v0: no \
response spec with apiKey 71)')
    """
    kinds = sorted(tally.refused.items(), key=lambda item: (-item[1].frames, item[1].first_frame))
    return [{"direction": direction, "api_key": api_key, "api_version": api_version, "frames": refused.frames,
             "first_frame": refused.first_frame, "first_error": refused.first_error}
            for (direction, api_key, api_version), refused in kinds]


def _with_total(results: list[Report], what_if: bool) -> Report:
    """The report: the messages and, over them all, their count and bytes and, with a what-if, its bytes
    and the saving."""
    total: Report = {"count": sum(r["count"] for r in results), "bytes": sum(r["bytes"] for r in results)}
    if what_if:
        after = sum(r["what_if"]["bytes"] for r in results)
        total["what_if"] = {"bytes": after, "saved": total["bytes"] - after}
    return {"messages": results, "total": total}


def render(report: Report, fmt: str, specs: str) -> str:
    """The report as ``fmt`` (text, json or html; the page is titled with ``specs``)."""
    if fmt == "json":
        return json_text(report)
    if fmt == "html":
        from linter.size.html import size_page

        return size_page(report, specs)
    return text(report)


def text(report: Report) -> str:
    """The text report: per message version its bytes per field path and share, then the total."""
    lines = []
    for entry in report["messages"]:
        lines += _text_message(entry)
    total = report["total"]
    line = f"Total: {total['bytes']} bytes in {plural(total['count'], 'message')}"
    if "what_if" in total:
        line += f"; what-if: {total['what_if']['bytes']} bytes ({_change(total['what_if']['saved'])} bytes)"
    refused = [text_refused(entry) for entry in report.get("refused", ())]
    return guard_lines("\n".join([*lines, line, *refused]) + "\n")  # a name never starts a line a CI runner acts on


def text_refused(entry: Report) -> str:
    """One kind of frames not sized, in a line: how many, of what, and the first (its number and reason)."""
    count = entry["frames"]
    if entry["direction"] is None:
        what = f"{plural(count, 'row')} that {'is not a frame' if count == 1 else 'are not frames'}"
    else:
        what = (f"{plural(count, printable(str(entry['direction'])) + ' frame')} of API key {entry['api_key']} "
                f"v{entry['api_version']}")
    return f"not sized: {what} (first: frame {entry['first_frame']}: {printable(entry['first_error'])})"


def _text_message(entry: Report) -> list[str]:
    total = entry["bytes"]
    lines = [f"{printable(entry['name'])} v{entry['version']}: {total} bytes in {plural(entry['count'], 'message')}"]
    width = max((len(item["path"] or "(message)") for item in entry["fields"]), default=0)
    for item in entry["fields"]:
        share = f"{100 * item['bytes'] / total:5.1f}%" if total else "    -"
        lines.append(f"  {printable(item['path'] or '(message)'):<{width}}  {item['bytes']:>10}  {share}")
    if "what_if" in entry:
        lines.append(f"  what-if: {entry['what_if']['bytes']} bytes ({_change(entry['what_if']['saved'])} bytes)")
    return lines


def _change(saved: int) -> str:
    return f"saves {saved}" if saved >= 0 else f"adds {-saved}"


__all__ = ["SizeOptions", "Sized", "check_usage", "measure_report", "message_version", "read_values",
           "refused_entries", "render", "result", "size_report", "text", "text_refused"]
