"""``krpc-lint size --frames`` (a captured corpus, in this process and on Spark), ``--flexible``, corpus
totals and the HTML page. Expected figures are derived here independently: frames decoded with the
codec's own ``decode_request`` / ``decode_response`` and bodies re-encoded, header bytes subtracted from
the frame, specs edited by hand."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from linter.cli.main import cli
from linter.codec import Codec
from linter.codec.values import random_value
from linter.frames.decode import Decoders
from linter.frames.errors import FramesInputError
from linter.frames.generate import generate
from linter.size.frames import FrameSizer, size_in_process
from linter.size.html import size_page
from linter.size.measure import measure, what_if_bytes
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


# --- on Spark: the same tally ----------------------------------------------------------------------


def test_spark_gives_the_in_process_totals(spark: Any, codec: Codec, specs_dir: Path, corpus: Path) -> None:
    what_if = WhatIf(kip636=True, flexible=True)
    local = size_in_process(corpus, FrameSizer(Decoders(codec), what_if))
    small = {"spark.sql.files.openCostInBytes": "1", "spark.sql.files.maxPartitionBytes": "20000"}
    saved = {key: spark.conf.get(key, None) for key in small}
    try:
        for key, value in small.items():
            spark.conf.set(key, value)
        assert spark.read.text(str(corpus)).rdd.getNumPartitions() > 1  # partitions are merged
        run = size_frames(corpus, codec, specs_dir, what_if, spark=spark)
    finally:
        for key, value in saved.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)
    assert run.master != IN_PROCESS
    assert run.tally.frames == local.frames == 600
    assert run.tally.what_if == local.what_if
    assert {key: (s.count, s.bytes, s.fields) for key, s in run.tally.sizes.items()} == \
        {key: (s.count, s.bytes, s.fields) for key, s in local.sizes.items()}


def test_spark_names_the_frame_it_refuses_as_in_process(spark: Any, codec: Codec, specs_dir: Path, corpus: Path,
                                                        tmp_path: Path) -> None:
    lines = corpus.read_text().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    bad = json.loads(lines[400])
    bad["hex"] = bad["hex"][:-2]
    bad["hex"] = f"{len(bytes.fromhex(bad['hex'])) - 4:08x}" + bad["hex"][8:]  # a consistent size, a short body
    broken.write_text("".join(lines[:400]) + json.dumps(bad) + "\n" + "".join(lines[401:]))
    with pytest.raises(FramesInputError) as in_process:
        size_frames(broken, codec, specs_dir, WhatIf())
    with pytest.raises(FramesInputError) as on_spark:
        size_frames(broken, codec, specs_dir, WhatIf(), spark=spark)
    offset = sum(len(line.encode()) for line in lines[:400])
    assert str(in_process.value).startswith(f"{broken}: frame 400 (byte {offset} of the file): ")
    assert str(on_spark.value) == str(in_process.value).replace(f" (byte {offset} of the file)", "")


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


def test_a_frame_that_does_not_decode_names_its_number_and_byte(specs_dir: Path, corpus: Path, tmp_path: Path) -> None:
    lines = corpus.read_text().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(lines[:3]) + '{"direction": "request", "hex": "0000000a00030009000000010000"}\n')
    run = CliRunner().invoke(cli, ["size", str(specs_dir), "--frames", str(broken)])
    offset = sum(len(line.encode()) for line in lines[:3])
    assert run.exit_code == 2
    assert run.output.startswith(f"krpc-lint: error: {broken}: frame 3 (byte {offset} of the file): MetadataRequest v9: "
                                 "byte 14")
    assert len(run.output.splitlines()) == 1


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
