"""``krpc-lint size --frames`` (a captured corpus, in this process and on Spark), ``--flexible``, corpus
totals and the HTML page. Expected figures are derived here independently: frames decoded with the
codec's own ``decode_request`` / ``decode_response`` and bodies re-encoded, header bytes subtracted from
the frame, specs edited by hand."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner

from linter.cli.main import cli
from linter.codec import Codec
from linter.codec.values import random_value
from linter.frames.decode import Decoders
from linter.frames.generate import generate
from linter.size.frames import NOT_A_FRAME, FrameSizer, Kind, Refused, size_in_process
from linter.size.html import size_page
from linter.size.measure import measure, what_if_bytes
from linter.size.report import text_refused
from linter.size.run import IN_PROCESS, IN_PROCESS_FRAMES, size_frames
from linter.size.whatif import WhatIf

TRUNK = "trunk-2024-10"


@pytest.fixture(scope="module")
def specs_dir(kafka_specs: Path) -> Path:
    return kafka_specs / TRUNK


@pytest.fixture(scope="module")
def codec(specs_dir: Path) -> Codec:
    return Codec.load(specs_dir)


@pytest.fixture(scope="module")
def corpus(specs_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """600 generated frames of every API of trunk, as JSON Lines (hex)."""
    path = tmp_path_factory.mktemp("size-frames") / "frames.jsonl"
    generate(specs_dir, 600, path, seed=11)
    return path


def expected(codec: Codec, corpus: Path) -> dict[tuple[str, int], tuple[int, int]]:
    """(frames, body bytes) per (message, version), from the codec's frame API: the body re-encoded, and
    checked against the frame's length less its size prefix and re-encoded header."""
    found: dict[tuple[str, int], tuple[int, int]] = {}
    for line in corpus.read_text().splitlines():
        row = json.loads(line)
        frame = bytes.fromhex(row["hex"])
        if row["direction"] == "request":
            name, version, header, body = codec.decode_request(frame)
            header_name, header_version = "RequestHeader", codec.request_header_version(row["api_key"], version)
        else:
            version = row["api_version"]
            header, body = codec.decode_response(row["api_key"], version, frame)
            name = codec.response_for(row["api_key"]).name or ""
            header_name, header_version = "ResponseHeader", codec.response_header_version(row["api_key"], version)
        size = len(codec.encode(name, version, body))
        assert size == len(frame) - 4 - len(codec.encode(header_name, header_version, header))
        count, total = found.get((name, version), (0, 0))
        found[(name, version)] = (count + 1, total + size)
    return found


def run_json(*args: str) -> dict[str, Any]:
    run = CliRunner().invoke(cli, ["size", *args, "--format", "json"])
    assert run.exit_code == 0, run.output
    report: dict[str, Any] = json.loads(run.stdout)
    return report


# --- a corpus, in this process -------------------------------------------------------------------


def test_frames_in_process_add_up_to_each_frame_body(codec: Codec, specs_dir: Path, corpus: Path) -> None:
    report = run_json(str(specs_dir), "--frames", str(corpus))
    want = expected(codec, corpus)
    assert {(m["name"], m["version"]): (m["count"], m["bytes"]) for m in report["messages"]} == want
    assert all(sum(f["bytes"] for f in m["fields"]) == m["bytes"] for m in report["messages"])
    assert report["total"] == {"count": 600, "bytes": sum(size for _, size in want.values())}
    assert all("what_if" not in m for m in report["messages"])


def test_repeated_frames_are_measured_as_the_first(codec: Codec, specs_dir: Path, corpus: Path, tmp_path: Path) -> None:
    """A frame seen before but for its correlation id adds that frame's measure again: the totals still equal
    the per-frame ones."""
    lines = corpus.read_text().splitlines()[:80]
    again = []
    for number, line in enumerate(lines):
        row = json.loads(line)
        frame = bytearray(bytes.fromhex(row["hex"]))
        at = 8 if row["direction"] == "request" else 4
        frame[at:at + 4] = (1000 + number).to_bytes(4, "big")
        again.append(json.dumps({**row, "correlation_id": 1000 + number, "hex": frame.hex()}))
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join(lines + again + lines) + "\n")
    report = run_json(str(specs_dir), "--frames", str(repeated))
    assert {(m["name"], m["version"]): (m["count"], m["bytes"]) for m in report["messages"]} == \
        expected(codec, repeated)
    assert report["total"]["count"] == 240


def test_frames_parquet_gives_what_json_lines_give(specs_dir: Path, corpus: Path, tmp_path: Path) -> None:
    parquet = tmp_path / "frames.parquet"
    generate(specs_dir, 600, parquet, seed=11)  # the same frames, as a bytes column
    assert run_json(str(specs_dir), "--frames", str(parquet), "--kip636") == \
        run_json(str(specs_dir), "--frames", str(corpus), "--kip636")


def test_frames_of_one_message_with_a_tag(codec: Codec, specs_dir: Path, corpus: Path) -> None:
    want = {key: value for key, value in expected(codec, corpus).items() if key[0] == "MetadataResponse"}
    assert want
    report = run_json(str(specs_dir), "MetadataResponse", "--frames", str(corpus), "--tag", "Topics[].IsInternal")
    assert {(m["name"], m["version"]): (m["count"], m["bytes"]) for m in report["messages"]} == want
    for message in report["messages"]:
        assert message["what_if"]["saved"] == message["bytes"] - message["what_if"]["bytes"]


def test_corpus_totals_with_a_what_if(specs_dir: Path, corpus: Path) -> None:
    report = run_json(str(specs_dir), "--frames", str(corpus), "--kip636")
    messages, total = report["messages"], report["total"]
    after = sum(m["what_if"]["bytes"] for m in messages)
    assert total["count"] == sum(m["count"] for m in messages) == 600
    assert total["what_if"] == {"bytes": after, "saved": sum(m["bytes"] for m in messages) - after}
    assert total["what_if"]["saved"] == sum(m["what_if"]["saved"] for m in messages)
    assert any(m["what_if"]["saved"] != 0 for m in messages)  # responses with error codes
    text = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(corpus), "--kip636"]).stdout
    assert text.splitlines()[-1] == (f"Total: {total['bytes']} bytes in 600 messages; what-if: "
                                     f"{after} bytes (saves {total['what_if']['saved']} bytes)")


# --- a corpus with frames that cannot be sized ----------------------------------------------------

UNKNOWN = {"direction": "response", "api_key": 999, "api_version": 0}  # an API the specs lack


class BadCorpus(NamedTuple):
    """A corpus of good and bad frames, its good frames alone, and the refusals expected per kind:
    (frames, first frame, start of the first error)."""

    path: Path
    good: Path
    kinds: dict[Kind, tuple[int, int, str]]


@pytest.fixture(scope="module")
def bad_corpus(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> BadCorpus:
    """The 600 good frames with, spread over them: an unknown API key (twice), a request cut short (its size
    consistent), a response whose bytes do not decode, and a line that is not JSON."""
    good = corpus.read_text().splitlines()
    rows = [json.loads(line) for line in good]
    cut = next(row for row in rows[250:] if row["direction"] == "request")
    short = cut["hex"][:-2]
    cut = {**cut, "hex": f"{len(bytes.fromhex(short)) - 4:08x}" + short[8:]}
    answer = next(row for row in rows[380:] if row["direction"] == "response")
    answer = {**answer, "hex": "00000005" + answer["hex"][8:16] + "ff"}
    bad = {100: json.dumps({**UNKNOWN, "hex": "0000000400000007"}), 250: json.dumps(cut),
           380: json.dumps(answer), 470: "{not json", 520: json.dumps({**UNKNOWN, "hex": "0000000400000008"})}
    lines = list(good)
    for at, line in sorted(bad.items()):
        lines.insert(at, line)
    folder = tmp_path_factory.mktemp("size-bad")
    path, only_good = folder / "bad.jsonl", folder / "good.jsonl"
    path.write_text("\n".join(lines) + "\n")
    only_good.write_text("\n".join(good) + "\n")
    kinds = {(UNKNOWN["direction"], 999, 0): (2, 100, "response of API key 999 v0: no response spec with apiKey 999"),
             ("request", cut["api_key"], cut["api_version"]): (1, 250, ""),
             ("response", answer["api_key"], answer["api_version"]): (1, 380, ""),
             NOT_A_FRAME: (1, 470, "not a frame record: ")}
    return BadCorpus(path, only_good, kinds)


def refusals(refused: dict[Kind, Refused]) -> dict[Kind, tuple[int, int, str]]:
    return {kind: (r.frames, r.first_frame, r.first_error) for kind, r in refused.items()}


def same_refusals(spark: dict[Kind, Refused], local: dict[Kind, Refused]) -> dict[Kind, tuple[int, int]]:
    """(frames, first frame) per kind, checked equal both ways, first errors included, but for the row that is
    not a frame record: each reader says why in its words (Spark keeps the line, this process its number)."""
    counted = {kind: (r.frames, r.first_frame) for kind, r in spark.items()}
    assert counted == {kind: (r.frames, r.first_frame) for kind, r in local.items()}
    for kind, refused in local.items():
        if kind != NOT_A_FRAME:
            assert spark[kind].first_error == refused.first_error
    assert spark[NOT_A_FRAME].first_error == "not a frame record: '{not json'"
    return counted


def test_bad_frames_are_counted_per_kind_and_the_rest_sized(codec: Codec, specs_dir: Path,
                                                           bad_corpus: BadCorpus) -> None:
    run = size_frames(bad_corpus.path, codec, specs_dir, WhatIf())
    got = refusals(run.tally.refused)
    assert {kind: value[:2] for kind, value in got.items()} == \
        {kind: value[:2] for kind, value in bad_corpus.kinds.items()}
    for kind, (_, _, error) in bad_corpus.kinds.items():
        assert got[kind][2].startswith(error)
    assert got[NOT_A_FRAME][2].startswith("not a frame record: 'line 471 at byte ")
    assert (run.tally.frames, run.tally.refused_frames) == (605, 5)
    assert {key: (s.count, s.bytes) for key, s in run.tally.sizes.items()} == expected(codec, bad_corpus.good)


def test_the_cli_reports_bad_frames_in_every_format(specs_dir: Path, bad_corpus: BadCorpus, tmp_path: Path) -> None:
    import html5lib

    report = run_json(str(specs_dir), "--frames", str(bad_corpus.path))
    assert report["messages"] == run_json(str(specs_dir), "--frames", str(bad_corpus.good))["messages"]
    kinds = sorted(bad_corpus.kinds.items(), key=lambda item: (-item[1][0], item[1][1]))  # most first, then first
    assert [((e["direction"], e["api_key"], e["api_version"]), e["frames"], e["first_frame"]) for e in report["refused"]] \
        == [(kind, frames, first) for kind, (frames, first, _) in kinds]
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(bad_corpus.path)])
    assert run.exit_code == 0 and run.stderr.startswith("600 frames sized in ") and run.stderr.endswith(
        ", 5 not decodable\n")
    tail = run.stdout.splitlines()[-5:]
    assert tail[0].startswith("Total: ") and tail[1:] == [text_refused(entry) for entry in report["refused"]]
    assert tail[1] == ("not sized: 2 response frames of API key 999 v0 (first: frame 100: response of API key 999 v0: "
                       "no response spec with apiKey 999)")
    assert tail[4].startswith("not sized: 1 row that is not a frame (first: frame 470: not a frame record: ")
    page = tmp_path / "size.html"
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(bad_corpus.path), "--format", "html",
                                   "-o", str(page)])
    assert run.exit_code == 0, run.output
    html5lib.HTMLParser(strict=True).parse(page.read_text())
    assert "Frames not sized" in page.read_text() and "no response spec with apiKey 999" in page.read_text()


def test_the_cli_on_spark_reports_the_in_process_figures(spark: Any, specs_dir: Path, bad_corpus: BadCorpus) -> None:
    local = run_json(str(specs_dir), "--frames", str(bad_corpus.path), "--kip636")
    with small_partitions(spark):
        on_spark = run_json(str(specs_dir), "--frames", str(bad_corpus.path), "--kip636", "--master", "local[1]")
    assert (on_spark["messages"], on_spark["total"]) == (local["messages"], local["total"])
    not_frames = [entry.pop("first_error") for report in (on_spark, local) for entry in report["refused"]
                  if entry["direction"] is None]
    assert on_spark["refused"] == local["refused"] and len(not_frames) == 2
    assert not_frames[0] == "not a frame record: '{not json'"  # Spark keeps the line, this process its number


def test_a_damaged_parquet_row_group_is_a_row_that_is_not_a_frame(spark: Any, codec: Codec, specs_dir: Path,
                                                                  tmp_path: Path) -> None:
    """It was the end of the run in this process (Spark already made it a row): now one refusal both ways."""
    import pyarrow.parquet as pq

    generate(specs_dir, 300, tmp_path / "generated.parquet", seed=4)
    frames = tmp_path / "frames.parquet"
    pq.write_table(pq.read_table(tmp_path / "generated.parquet"), frames, row_group_size=100)
    chunk = pq.read_metadata(frames).row_group(1).column(0)  # its first page's header made garbage
    data = bytearray(frames.read_bytes())
    data[chunk.data_page_offset:chunk.data_page_offset + 16] = b"\xff" * 16
    frames.write_bytes(bytes(data))
    runs = [size_frames(frames, codec, specs_dir, WhatIf()), size_frames(frames, codec, specs_dir, WhatIf(), spark=spark)]
    for run in runs:
        assert (run.tally.frames, run.tally.refused_frames, list(run.tally.refused)) == (201, 1, [NOT_A_FRAME])
        assert run.tally.refused[NOT_A_FRAME].first_frame == 100
        assert "row group 1 of 3 (rows 100-199) cannot be read" in run.tally.refused[NOT_A_FRAME].first_error
    assert refusals(runs[0].tally.refused) == refusals(runs[1].tally.refused)
    assert {key: (s.count, s.bytes) for key, s in runs[0].tally.sizes.items()} == \
        {key: (s.count, s.bytes) for key, s in runs[1].tally.sizes.items()}
    assert frames.read_bytes() == data


# --- on Spark: the same tally ----------------------------------------------------------------------


@contextmanager
def small_partitions(spark: Any) -> Iterator[None]:
    """A JSON Lines corpus read in partitions of 20,000 bytes (several for a test's corpus), then as before."""
    small = {"spark.sql.files.openCostInBytes": "1", "spark.sql.files.maxPartitionBytes": "20000"}
    saved = {key: spark.conf.get(key, None) for key in small}
    try:
        for key, value in small.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in saved.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def test_spark_gives_the_in_process_totals(spark: Any, codec: Codec, specs_dir: Path, corpus: Path) -> None:
    what_if = WhatIf(kip636=True, flexible=True)
    local = size_in_process(corpus, FrameSizer(Decoders(codec), what_if))
    with small_partitions(spark):
        assert spark.read.text(str(corpus)).rdd.getNumPartitions() > 1  # partitions are merged
        run = size_frames(corpus, codec, specs_dir, what_if, spark=spark)
    assert run.master != IN_PROCESS
    assert run.tally.frames == local.frames == 600 and run.tally.refused == local.refused == {}
    assert run.tally.what_if == local.what_if
    assert {key: (s.count, s.bytes, s.fields) for key, s in run.tally.sizes.items()} == \
        {key: (s.count, s.bytes, s.fields) for key, s in local.sizes.items()}


def test_spark_counts_the_frames_it_refuses_as_in_process(spark: Any, codec: Codec, specs_dir: Path,
                                                          bad_corpus: BadCorpus) -> None:
    """Refusals spread over partitions: each first frame is numbered in FRAMES, as in this process."""
    local = size_frames(bad_corpus.path, codec, specs_dir, WhatIf(kip636=True))
    with small_partitions(spark):
        assert spark.read.text(str(bad_corpus.path)).rdd.getNumPartitions() > 1
        run = size_frames(bad_corpus.path, codec, specs_dir, WhatIf(kip636=True), spark=spark)
    assert run.master != IN_PROCESS and local.master == IN_PROCESS
    assert (run.tally.frames, run.tally.what_if) == (local.tally.frames, local.tally.what_if)
    assert {key: (s.count, s.bytes, s.fields) for key, s in run.tally.sizes.items()} == \
        {key: (s.count, s.bytes, s.fields) for key, s in local.tally.sizes.items()}
    assert same_refusals(run.tally.refused, local.tally.refused) == \
        {kind: (frames, first) for kind, (frames, first, _) in bad_corpus.kinds.items()}


# --- --flexible -----------------------------------------------------------------------------------


def hand_flexible(codec: Codec, name: str, version: int, tmp: Path) -> Codec:
    """The message and its partner with ``flexibleVersions`` set to ``version+`` by hand."""
    specs = tmp / f"flexible-{name}"
    specs.mkdir()
    partner = name.removesuffix("Response") + "Request" if name.endswith("Response") else \
        name.removesuffix("Request") + "Response"
    for each in (name, partner):
        raw = copy.deepcopy(codec.spec(each).raw)
        raw["flexibleVersions"] = f"{version}+"
        (specs / f"{each}.json").write_text(json.dumps(raw))
    return Codec.load(specs)


@pytest.mark.parametrize(("name", "version"), [("ProduceRequest", 8), ("MetadataResponse", 8),
                                               ("HeartbeatResponse", 3)])
def test_flexible_saving_is_the_difference_with_a_hand_edited_spec(codec: Codec, specs_dir: Path, tmp_path: Path,
                                                                   name: str, version: int) -> None:
    assert not codec.spec(name).flexible.contains(version)
    edited = hand_flexible(codec, name, version, tmp_path)
    rng = random.Random(5)
    values = [random_value(codec, name, version, rng) for _ in range(20)]  # as the command draws them
    before = sum(len(codec.encode(name, version, v)) for v in values)
    after = sum(len(edited.encode(name, version, v)) for v in values)
    mine = WhatIf(flexible=True).codec_for(codec, name, version)
    assert mine is not None and what_if_bytes(mine, name, version, values) == after
    [message] = run_json(str(specs_dir), name, "--version", str(version), "--count", "20", "--seed", "5",
                         "--flexible")["messages"]
    assert (message["bytes"], message["what_if"]) == (before, {"bytes": after, "saved": before - after})


def test_flexible_can_add_bytes_and_leaves_flexible_versions_alone(codec: Codec, specs_dir: Path) -> None:
    """HeartbeatResponse v3 holds two integers: flexible, it only gains its tagged-field count (1 byte)."""
    [message] = run_json(str(specs_dir), "HeartbeatResponse", "--version", "3", "--count", "7", "--flexible")["messages"]
    assert message["what_if"]["saved"] == -7
    text = CliRunner().invoke(cli, ["size", str(specs_dir), "HeartbeatResponse", "--version", "3", "--count", "7",
                                    "--flexible"]).stdout
    assert "(adds 7 bytes)" in text
    values = [random_value(codec, "FetchResponse", 16, random.Random(2)) for _ in range(5)]
    same = WhatIf(flexible=True).codec_for(codec, "FetchResponse", 16)
    assert same is not None
    assert what_if_bytes(same, "FetchResponse", 16, values) == measure(codec, "FetchResponse", 16, values).bytes


# --- the HTML page --------------------------------------------------------------------------------


def test_html_page_is_one_well_formed_offline_page(specs_dir: Path, corpus: Path, tmp_path: Path) -> None:
    import html5lib

    page = tmp_path / "size.html"
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(corpus), "--kip636", "--format", "html",
                                   "-o", str(page)])
    assert run.exit_code == 0, run.output
    text = page.read_text()
    html5lib.HTMLParser(strict=True).parse(text)
    report = run_json(str(specs_dir), "--frames", str(corpus), "--kip636")
    for message in report["messages"]:
        assert f"{message['name']} v{message['version']}: {message['bytes']:,} bytes" in text
    assert f"{report['total']['what_if']['saved']:,} bytes saved" in text
    assert "<svg" in text and "<script" not in text and "http" not in text.replace(
        "http://www.w3.org", "")  # nothing fetched


def test_html_escapes_hostile_names() -> None:
    hostile = '<script>alert("x")</script>&'
    report = {"messages": [{"name": hostile, "version": 1, "count": 1, "bytes": 9,
                            "fields": [{"path": hostile + "[].F", "bytes": 9}], "what_if": {"bytes": 8, "saved": 1}}],
              "total": {"count": 1, "bytes": 9, "what_if": {"bytes": 8, "saved": 1}}}
    page = size_page(report, hostile)
    assert "<script" not in page and "&lt;script&gt;" in page


def test_html_output_is_never_an_input(specs_dir: Path, corpus: Path) -> None:
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(corpus), "--format", "html",
                                   "-o", str(corpus)])
    assert run.exit_code == 2 and "it is an input" in run.output
    assert corpus.read_text().startswith("{")


# --- bad input and usage --------------------------------------------------------------------------


def test_a_file_that_is_not_frames_is_one_line_naming_the_byte(specs_dir: Path, tmp_path: Path) -> None:
    text = tmp_path / "notes.parquet"
    text.write_text("not parquet at all\n")
    truncated = tmp_path / "cut.parquet"
    truncated.write_bytes(b"PAR1" + b"\0" * 20)
    spec = next(specs_dir.rglob("FetchRequest.json"))
    cases = [(text, f"{text}: byte 0: not a Parquet file"), (truncated, f"{truncated}: byte 20: not a Parquet file"),
             (spec, f"{spec}: byte 0 (line 1): not a frame record")]
    for path, error in cases:
        run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(path)])
        assert run.exit_code == 2, run.output
        assert run.output.startswith(f"krpc-lint: error: {error}") and len(run.output.splitlines()) == 1
        assert "Traceback" not in run.output


def test_a_frame_that_does_not_decode_is_counted_and_reported(specs_dir: Path, corpus: Path, tmp_path: Path) -> None:
    """It was the end of the run (exit 2); now the others are sized and it is named on the report's last line."""
    lines = corpus.read_text().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(lines[:3]) + '{"direction": "request", "hex": "0000000a00030009000000010000"}\n')
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(broken)])
    assert run.exit_code == 0, run.output
    assert run.stdout.splitlines()[-2].endswith(" bytes in 3 messages")
    assert run.stdout.splitlines()[-1].startswith("not sized: 1 request frame of API key 3 v9 (first: frame 3: "
                                                  "MetadataRequest v9: byte 14")
    assert ", 1 not decodable" in run.stderr and run.stderr.startswith("3 frames sized in ")


def test_a_corpus_of_refused_frames_only_is_one_line_exit_2(spark: Any, specs_dir: Path, tmp_path: Path) -> None:
    """No figure to give: one line, the same in this process and on Spark; an empty corpus still gives zeros."""
    refused = tmp_path / "refused.jsonl"
    refused.write_text(json.dumps({**UNKNOWN, "hex": "0000000400000007"}) + "\n" + "{not json\n")
    lines = []
    for master in ([], ["--master", "local[1]"]):
        run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(refused), *master])
        assert run.exit_code == 2 and len(run.output.splitlines()) == 1, run.output
        lines.append(run.output)
    assert lines[0] == lines[1] == (f"krpc-lint: error: {refused}: no frame could be sized (2 frames, none "
                                    "decodable; first: frame 0: response of API key 999 v0: no response spec with "
                                    "apiKey 999)\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(empty)])
    assert (run.exit_code, run.stdout) == (0, "Total: 0 bytes in 0 messages\n")


@pytest.mark.parametrize(("args", "error"), [
    (["--values", "v.jsonl", "--frames", "."], "--values and --frames are two sources of values"),
    (["--master", "local[1]"], "--master needs --frames"),
    (["MetadataResponse", "--frames", "CORPUS", "--tag", "Nope"], "MetadataResponse has no field 'Nope'"),
    (["MetadataResponse", "--frames", "CORPUS", "--version", "99"], "MetadataResponse has no version 99"),
    (["NoSuchResponse", "--frames", "CORPUS"], "unknown message 'NoSuchResponse'"),
])
def test_usage_errors_exit_2(specs_dir: Path, corpus: Path, args: list[str], error: str) -> None:
    args = [str(corpus) if arg == "CORPUS" else arg for arg in args]
    run = CliRunner().invoke(cli, ["size", str(specs_dir), *args])
    assert run.exit_code == 2, run.output
    assert error in run.output and len(run.output.strip().splitlines()) == 1


def test_the_help_states_the_in_process_threshold() -> None:
    run = CliRunner().invoke(cli, ["size", "--help"])
    assert f"{IN_PROCESS_FRAMES:,} frames is sized in this process" in " ".join(run.output.split())
