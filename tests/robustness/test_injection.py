"""Injection into what people read (issue 25): names, paths and messages from specs a pull request wrote, in every
output format, never act on the terminal, the CI log or the Markdown that shows them.

Hostile names go into field names, struct names, message names and real file names in temporary directories; each
command runs in a fresh process as a user runs it. What only unescaped input could put in an output is checked by
``problems``: a control character (C0 but our newlines, DEL, C1, U+2028/U+2029, bidi), a line that GitHub's runner
would read as a workflow command (``::`` at its start after blanks, ``##[`` anywhere), and a Markdown table row with
another number of cells than its header.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from linter.escape import (
    guard_lines,
    json_text,
    lead_path,
    markdown_code,
    markdown_text,
    printable,
)

# Pieces of names: a forged command after a line break, terminal sequences, CR, NUL, separators, bidi overrides,
# table and code breakers, HTML, rich markup, a Markdown link, the legacy command marker, a lone surrogate.
HOSTILE = [
    "\n::error file=README.md,line=1::pwned", "\x1b]0;title\x07", "x\ry", "nul\x00", "ls\u2028ps\u2029",
    "rl\u202eo", "is\u2066o\u2069", "a|b", "tick`s```", "<script>alert(1)</script>", "[bold]x[/]",
    "[x](https://evil)", "##[error]legacy", "  ::warning::indented", "c1\x9b31m\x85", "del\x7f", "amp&amp;",
    "*em*_em_~s~", "sur\ud800", "tab\there",
]
# Whole file names (bytes: one is not UTF-8), each a spec in the same directory.
FILE_NAMES = [b"::warning::x.json", b"a\n::error::b.json", b"t\x1b]0;t\x07.json", b"p|`<b>[l](u).json",
              b"r\xe2\x80\xaeo.json", b"u\xff.json", b"##[error]f.json"]

CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
SGR = re.compile("\x1b\\[[0-9;]*m")  # what rich writes in colour
BLANKS = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + "\u180e\u200b\ufeff"
SURROGATE = re.compile("[\ud800-\udfff]")


def problems(output: str, *, commands: re.Pattern[str] | None = None, colour: bool = False) -> list[str]:
    """What in ``output`` only unescaped input can have put there; ``commands``: the lines we write as commands."""
    if colour:
        output = SGR.sub("", output)
    found = [f"control U+{ord(char):04X}" for char in sorted(set(CONTROL.findall(output)))]
    for line in output.split("\n"):
        if "##[" in line:
            found.append(f"legacy command in {line[:60]!r}")
        if line.lstrip(BLANKS).startswith("::") and not (commands and commands.match(line)):
            found.append(f"command {line[:60]!r}")
    return found + table_problems(output)


def unescaped_pipes(line: str) -> int:
    count = backslashes = 0
    for char in line:
        if char == "|" and backslashes % 2 == 0:
            count += 1
        backslashes = backslashes + 1 if char == "\\" else 0
    return count


def table_problems(markdown: str) -> list[str]:
    """Rows of a Markdown table (consecutive lines starting with ``|``) with more or fewer cells than its header."""
    found, header = [], None
    for line in markdown.split("\n"):
        if not line.startswith("|"):
            header = None
            continue
        if header is None:
            header = unescaped_pipes(line)
        elif unescaped_pipes(line) != header:
            found.append(f"table row of {unescaped_pipes(line)} pipes for {header}: {line[:80]!r}")
    return found


# --- the escapes themselves ---------------------------------------------------------------------------------


@pytest.mark.parametrize("piece", HOSTILE)
def test_printable_is_one_inert_line(piece: str) -> None:
    shown = printable(piece)
    assert "\n" not in shown and "##[" not in shown and not CONTROL.search(shown) and not SURROGATE.search(shown)
    shown.encode("utf-8")
    assert problems(guard_lines(f"{shown}\n")) == []
    cell = markdown_text(piece)
    assert problems(f"| a | b |\n| --- | --- |\n| {cell} | {markdown_code(piece)} |\n") == []
    assert not re.search(r"(?<!\\)\]\(|(?<!\\)<[a-z/]", cell), cell  # no link, no tag


def test_printable_shows_what_it_escapes() -> None:
    assert printable("a\nb\rc\td\x1be\x00f\x7fg\x85h\u2028i\u202ej\ud800k\udcffl##[m") == (
        "a\\nb\\rc\\td\\x1be\\x00f\\x7fg\\x85h\\u2028i\\u202ej\\ud800k\\xffl##\\x5bm")
    clean = "WidgetFetchRequest (v0-3): MaxWaitMs: int32 -> int64 é 日本 😀"
    assert printable(clean) is clean  # clean text is returned as it is, after one scan
    assert markdown_text("Topics[].Name ['broker'] -> x") == "Topics[].Name ['broker'] -> x"
    assert markdown_text("[x](https://evil) a|b <i> *e* `c` &amp; \\") == (
        "[x\\](https://evil) a\\|b \\<i> \\*e\\* \\`c\\` \\&amp; \\\\")
    assert markdown_code("a`|b") == "``a`\\|b``" and markdown_code("`x") == "`` `x ``"
    assert lead_path("::warning::x.json") == "./::warning::x.json" and lead_path(" \u00a0::x") == "./ \u00a0::x"
    assert lead_path("specs/::x.json") == "specs/::x.json"
    assert guard_lines(" \u2003::error::x\nok ::x\n") == " \u2003\\x3a:error::x\nok ::x\n"


def test_json_keeps_the_exact_names() -> None:
    names = [piece for piece in HOSTILE if not SURROGATE.search(piece)]
    text = json_text({"names": names})
    assert problems(text) == [] and json.loads(text)["names"] == names
    assert json.loads(json_text({"n": "sur\ud800"}))["n"] == "sur\\ud800"  # JSON cannot carry it: shown as text


def _escape_costs(size: int) -> tuple[float, int]:
    text = ("Name\n::error::x\x1b]0;t\x07\u202e|`[a](b)##[" * (size // 40 + 1))[:size]
    tracemalloc.start()
    start = time.process_time()
    for function in (printable, markdown_text, guard_lines, lambda t: json_text([t])):
        shown = function(text)
        assert len(shown) <= 8 * len(text) + 16
    seconds = time.process_time() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


def test_escaping_is_linear_in_time_and_memory() -> None:
    """At n and 4n characters of dense hostile text: CPU time and peak memory grow about 4 times (16 if
    quadratic); CPU time of this process, not wall time, so other work on the machine does not skew it."""
    _escape_costs(10_000)  # warm up
    small, large = _escape_costs(250_000), _escape_costs(1_000_000)
    assert large[0] / small[0] < 8, (small, large)
    assert large[1] / small[1] < 6, (small, large)
    assert large[1] < 1_000_000 * 40, large  # bytes per input character, whatever the escapes


# --- every format, through the command line -------------------------------------------------------------


def _spec(name: str, kind: str, piece: str, *, extra_field: bool = True) -> dict[str, object]:
    fields: list[dict[str, object]] = [{"name": f"F{piece}", "type": "int32", "versions": "0+", "about": f"a{piece}"}]
    if extra_field:
        fields.append({"name": f"G{piece}", "type": "int64", "versions": "0+", "about": "b"})
    fields.append({"name": "Items", "type": f"[]S{piece}", "versions": "0+", "about": "c",
                   "fields": [{"name": f"H{piece}", "type": "int32", "versions": "0+", "about": "d"}]})
    return {"apiKey": 900, "type": kind, "listeners": ["broker"], "name": name, "validVersions": "0-1",
            "flexibleVersions": "0+", "fields": fields}


def _write_specs(root: Path, *, new: bool = False) -> list[str]:
    """One spec per hostile file name, its message, field and struct names holding hostile pieces; ``new``: the
    second field removed and the first retyped (compat findings that name them). Returns the file names."""
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for index, raw in enumerate(FILE_NAMES):
        piece = HOSTILE[index % len(HOSTILE)] + HOSTILE[(index + 7) % len(HOSTILE)]
        spec = _spec(f"M{index}{piece}Request", "request", piece, extra_field=not new)
        if new:
            spec["fields"][0]["type"] = "int64"  # type: ignore[index]
        spec["apiKey"] = 900 + index
        path = os.path.join(os.fsencode(root), raw)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(spec, indent=2))  # ASCII: escapes for NUL and the lone surrogate
        names.append(os.fsdecode(raw))
    return names


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run([sys.executable, "-m", "linter.cli.main", *args], cwd=cwd, env=env, capture_output=True,
                          check=False)
    stdout, stderr = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")  # strict: UTF-8 or fail
    assert done.returncode in (0, 1), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert problems(stderr) == [], stderr
    return subprocess.CompletedProcess(done.args, done.returncode, stdout, stderr)


ANNOTATION = re.compile(r"::(error|warning|notice) file=[^\n]*::")
FORMATS = ["text", "color", "json", "sarif", "github", "junit"]


def _check_format(fmt: str, output: str, findings: int) -> None:
    assert problems(output, commands=ANNOTATION if fmt == "github" else None, colour=fmt == "color") == [], output
    assert "pwned" in output  # the hostile names did reach the report
    if fmt in ("text", "color"):
        assert "\\n::error file=README.md,line=1::pwned" in output and "[bold]x[/]" in output
    elif fmt == "json":
        data = json.loads(output)
        assert len(data["findings"]) == findings
        shown = {item["message"] for item in data["findings"]} | {item["path"] for item in data["findings"]}
        assert any("\n::error file=README.md,line=1::pwned" in text for text in shown)  # exact, round-trip
        assert any("\x1b]0;title\x07" in text for text in shown)
    elif fmt == "sarif":
        assert len(json.loads(output)["runs"][0]["results"]) == findings
    elif fmt == "github":
        lines = output.splitlines()
        assert len(lines) == findings and all(ANNOTATION.match(line) for line in lines), lines
    else:
        ET.fromstring(output)


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("hostile")
    return root, _write_specs(root / "old")


@pytest.mark.parametrize("fmt", FORMATS)
def test_lint_escapes_every_format(specs: tuple[Path, list[str]], fmt: str) -> None:
    root, names = specs
    option = ["--color"] if fmt == "color" else ["--format", fmt]
    findings = len(json.loads(_run("lint", "--format", "json", *names, cwd=root / "old").stdout)["findings"])
    assert findings >= 3 * len(names)
    output = _run("lint", *option, *names, cwd=root / "old").stdout  # paths as given: some start with ::
    _check_format(fmt, output, findings)
    if fmt == "text":
        assert "./::warning::x.json:" in output


@pytest.fixture(scope="module")
def pair(specs: tuple[Path, list[str]]) -> Path:
    root, _ = specs
    _write_specs(root / "new", new=True)
    return root


@pytest.mark.parametrize("fmt", FORMATS)
def test_compat_escapes_every_format(pair: Path, fmt: str) -> None:
    option = ["--color"] if fmt == "color" else ["--format", fmt]
    findings = len(json.loads(_run("compat", "--format", "json", "old", "new", cwd=pair).stdout)["findings"])
    assert findings >= 2 * len(FILE_NAMES)
    _check_format(fmt, _run("compat", *option, "old", "new", cwd=pair).stdout, findings)


@pytest.mark.parametrize(("command", "fmt"), [("changelog", "markdown"), ("changelog", "json"), ("matrix", "text"),
                                              ("matrix", "markdown"),
                                              ("matrix", "json")])
def test_changelog_and_matrix_escape(pair: Path, command: str, fmt: str) -> None:
    output = _run(command, "--format", fmt, "old", "new", cwd=pair).stdout
    assert problems(output) == [], output
    assert "pwned" in output
    if fmt == "json":
        json.loads(output)
    if command == "matrix" and fmt == "markdown":
        assert sum(line.startswith("| M") for line in output.splitlines()) == len(FILE_NAMES)  # a row each


def test_matrix_json_escapes(pair: Path) -> None:
    from linter.compat.matrix import matrix
    from linter.compat.sources import read_revision

    output = matrix([read_revision(str(pair / "old")), read_revision(str(pair / "new"))]).to_json()
    assert problems(output) == [] and "pwned" in output
    json.loads(output)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "sarif"])
def test_conformance_escapes(pair: Path, fmt: str) -> None:
    output = _run("conformance", "new", "--upstream", "old", "--format", fmt, cwd=pair).stdout
    assert problems(output) == [], output
    assert "pwned" in output or fmt == "markdown" and "diverges" in output
    if fmt in ("json", "sarif"):
        json.loads(output)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_size_escapes_message_names(tmp_path: Path, fmt: str) -> None:
    """A metadata record named with hostile pieces (lint warns about its file name only): the header line that
    names it, in text, and the JSON report never carry a control character or start a command."""
    name = "Confi\u2029\n::error file=README.md,line=1::pwned\x1b]0;t\x07gRecord"
    (tmp_path / "ConfigRecord.json").write_text(json.dumps({
        "apiKey": 16, "type": "metadata", "name": name, "validVersions": "0", "flexibleVersions": "0+",
        "fields": [{"name": "A", "type": "int32", "versions": "0+", "about": "x"}]}))
    result = _run("size", ".", name, "--count", "1", "--format", fmt, cwd=tmp_path)
    assert problems(result.stdout) == [], result.stdout
    assert "pwned" in result.stdout and "5 bytes" in result.stdout or fmt == "json"
    if fmt == "json":
        assert json.loads(result.stdout)["messages"][0]["name"] == name
