"""``linter.size.report``, the report of ``krpc-lint size`` without click: the library's dict is the CLI's JSON,
its text the CLI's text, for generated values, given values and a frames corpus; usage errors and bad lines
are ``SizeError``s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO_ROOT

from linter.cli.main import cli
from linter.codec import Codec
from linter.size.measure import SizeError
from linter.size.report import (
    SizeOptions,
    check_usage,
    read_values,
    render,
    size_report,
    text,
)

VALID = "fixtures/valid"


def cli_output(*args: str) -> str:
    run = CliRunner().invoke(cli, ["size", *args])
    assert run.exit_code == 0, run.output
    return run.stdout


def test_generated_report_is_the_cli_json() -> None:
    options = SizeOptions(version=0, count=7, seed=3, flexible=True)
    report = size_report(VALID, "WidgetFetchRequest", options)
    shown = cli_output(VALID, "WidgetFetchRequest", "--version", "0", "--count", "7", "--seed", "3", "--flexible",
                       "--format", "json")
    assert report == json.loads(shown)
    assert render(report, "json", VALID) == shown
    assert report["total"]["what_if"]["saved"] > 0  # v0 is not flexible: compact encodings save bytes


def test_every_message_and_its_text_are_the_cli_s() -> None:
    report = size_report(VALID, options=SizeOptions(count=2))
    assert {m["name"] for m in report["messages"]} >= {"WidgetFetchRequest", "WidgetFetchResponse"}
    assert text(report) == cli_output(VALID, "--count", "2")
    assert render(report, "html", VALID) == cli_output(VALID, "--count", "2", "--format", "html")


def test_given_values_report_is_the_cli_json(tmp_path: Path) -> None:
    codec = Codec.load(VALID)
    values = tmp_path / "values.jsonl"
    value = codec.to_json("WidgetFetchRequest", 2, codec.default("WidgetFetchRequest", 2))
    values.write_text(json.dumps(value) + "\n\n" + json.dumps(value) + "\n")
    report = size_report(VALID, "WidgetFetchRequest", SizeOptions(values_file=str(values)))
    assert report == json.loads(cli_output(VALID, "WidgetFetchRequest", "--values", str(values), "--format", "json"))
    assert report["messages"][0]["count"] == 2


def test_one_message_is_singular_in_text() -> None:
    shown = text(size_report(VALID, "WidgetFetchRequest", SizeOptions(count=1)))
    assert shown.splitlines()[0].endswith(" bytes in 1 message")
    assert shown.splitlines()[-1].endswith(" bytes in 1 message")


def test_frames_report_is_the_cli_json(kafka_specs: Path, tmp_path: Path) -> None:
    specs, frames = str(kafka_specs / "4.3"), tmp_path / "frames.jsonl"
    made = CliRunner().invoke(cli, ["frames", "generate", "--specs", specs, "--count", "40", "--seed", "2",
                                    "--out", str(frames)])
    assert made.exit_code == 0, made.output
    report = size_report(specs, options=SizeOptions(frames=str(frames), kip636=True))
    assert report == json.loads(cli_output(specs, "--frames", str(frames), "--kip636", "--format", "json"))
    assert report["total"]["count"] == 40


def test_frames_not_sized_are_in_the_library_report_as_in_the_cli(kafka_specs: Path, tmp_path: Path) -> None:
    """Bad frames were the end of the run (exit 2): now counted, per kind, in the dict, the text and the page."""
    specs, frames = str(kafka_specs / "4.3"), tmp_path / "frames.jsonl"
    made = CliRunner().invoke(cli, ["frames", "generate", "--specs", specs, "--count", "40", "--seed", "2",
                                    "--out", str(frames)])
    assert made.exit_code == 0, made.output
    unknown = json.dumps({"direction": "request", "api_key": 999, "api_version": 0, "hex": "0000000a03e70000000000050000"})
    frames.write_text(frames.read_text() + unknown + "\n\x1b[31m##[error]\n")
    report = size_report(specs, options=SizeOptions(frames=str(frames)))
    assert report == json.loads(cli_output(specs, "--frames", str(frames), "--format", "json"))
    assert report["total"]["count"] == 40
    assert report["refused"] == [
        {"direction": "request", "api_key": 999, "api_version": 0, "frames": 1, "first_frame": 40,
         "first_error": "request of API key 999 v0: no request spec with apiKey 999"},
        {"direction": None, "api_key": None, "api_version": None, "frames": 1, "first_frame": 41,
         "first_error": report["refused"][1]["first_error"]}]
    assert report["refused"][1]["first_error"].startswith("not a frame record: 'line 42 at byte ")
    assert text(report) == cli_output(specs, "--frames", str(frames))
    assert text(report).splitlines()[-2:] == [
        "not sized: 1 request frame of API key 999 v0 (first: frame 40: request of API key 999 v0: no request spec "
        "with apiKey 999)", f"not sized: 1 row that is not a frame (first: frame 41: "
                            f"{report['refused'][1]['first_error']})"]
    assert render(report, "html", specs) == cli_output(specs, "--frames", str(frames), "--format", "html")


def test_frames_not_sized_are_escaped_in_text_and_html() -> None:
    """A row's own text reaches the first error (Spark keeps a line that is not JSON whole): shown, never acted on."""
    hostile = "not a frame record: '\x1b[31m##[error]<script>alert(1)</script>\u202e'"
    refused = [{"direction": None, "api_key": None, "api_version": None, "frames": 2, "first_frame": 3,
                "first_error": hostile},
               {"direction": "response", "api_key": 71, "api_version": 0, "frames": 1, "first_frame": 17,
                "first_error": "no response spec with apiKey 71"}]
    report = {"messages": [], "total": {"count": 0, "bytes": 0}, "refused": refused}
    shown = text(report).splitlines()
    assert shown[1] == ("not sized: 2 rows that are not frames (first: frame 3: not a frame record: "
                        "'\\x1b[31m##\\x5berror]<script>alert(1)</script>\\u202e')")
    assert shown[2] == "not sized: 1 response frame of API key 71 v0 (first: frame 17: no response spec with apiKey 71)"
    page = render(report, "html", VALID)
    assert "<script>" not in page and "&lt;script&gt;alert(1)" in page and "\x1b" not in page
    assert "Frames not sized" in page and "not a frame" in page


@pytest.mark.parametrize(("message", "options", "error"), [
    (None, SizeOptions(values_file="v.jsonl"), "--values needs a MESSAGE"),
    ("M", SizeOptions(values_file="v.jsonl", frames="f"), "two sources of values"),
    (None, SizeOptions(version=1), "--version needs a MESSAGE"),
    (None, SizeOptions(tags=("A",)), "--tag needs a MESSAGE"),
    (None, SizeOptions(master="local[1]"), "--master needs --frames"),
])
def test_usage_errors_without_click(message: str | None, options: SizeOptions, error: str) -> None:
    with pytest.raises(SizeError, match=error):
        check_usage(message, options)


def test_unknown_message_and_version_are_size_errors() -> None:
    with pytest.raises(SizeError, match="unknown message 'Nope'"):
        size_report(VALID, "Nope")
    with pytest.raises(SizeError, match="did you mean WidgetFetchRequest"):  # the library suggests, as the CLI
        size_report(VALID, "WidgetFetchRequst")
    with pytest.raises(SizeError, match="WidgetFetchRequest has no version 99"):
        size_report(VALID, "WidgetFetchRequest", SizeOptions(version=99))


def test_read_values_numbers_lines_and_refuses_a_long_one() -> None:
    codec = Codec.load(VALID)
    value = json.dumps(codec.to_json("WidgetFetchRequest", 2, codec.default("WidgetFetchRequest", 2))).encode()
    read = read_values(codec, "WidgetFetchRequest", 2, "v.jsonl", [value + b"\r\n", b"\n", value + b"\n"])
    assert len(list(read)) == 2
    with pytest.raises(SizeError, match=r"^v\.jsonl:3: a line longer than"):
        list(read_values(codec, "WidgetFetchRequest", 2, "v.jsonl", [value + b"\n", b"\n", None]))
    with pytest.raises(SizeError, match=r"^v\.jsonl:2: not JSON"):
        list(read_values(codec, "WidgetFetchRequest", 2, "v.jsonl", [b"\rnope\n"]))


def test_a_plain_size_report_loads_neither_the_corpus_readers_nor_the_page() -> None:
    # --frames (its corpus readers, compat.sources, Spark) and --format html (the page's charts) import what they
    # need when asked: a `krpc-lint size` of generated values pays for neither.
    code = ("import sys\nfrom linter.cli.main import main\nsys.argv = ['krpc-lint', 'size', 'fixtures/valid']\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "print(sorted(set(sys.modules) & {'linter.size.run', 'linter.size.html', 'linter.size.frames', "
            "'linter.compat.sources', 'linter.frames.corpus'}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, check=False, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"
