"""Outputs that fail and usage mistakes are one line and exit 2, never an internal error (issue 25, class 6).

Every command runs in a fresh process as a user runs it, with its standard output on a full disk
(``/dev/full``: ENOSPC), on a pipe whose reader has gone (EPIPE), closed (``>&-``), and with ``-o``/``--out``
where it cannot be written (ENOSPC, EACCES, ENOENT). Then a table of usage mistakes, one per row: what was
tried and what the one line says.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.gitrepo import commit, init_repo, isolate_git, write

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC = '''{"apiKey": 1015, "type": "request", "listeners": ["broker"], "name": "WidgetRequest",
 "validVersions": "0-1", "flexibleVersions": "1+",
 "fields": [
   {"name": "Id", "type": "int32", "versions": "0+", "about": "The id."},
   {"name": "Name", "type": "string", "versions": "0+", "about": "The name."}
 ]}
'''
RESPONSE = '''{"apiKey": 1015, "type": "response", "name": "WidgetResponse", "validVersions": "0-1", "flexibleVersions": "1+",
 "fields": [{"name": "ErrorCode", "type": "int16", "versions": "0+", "about": "The error code."}]}
'''
VALUE = '{"id": 1, "name": "a"}'
HEX = "000000010001" + "61"  # Id 1, Name "a" (int16 length 1) at version 0
BATCH = '{"op": "encode", "message": "WidgetRequest", "version": 0, "json": {"id": 1, "name": "a"}}\n'
STDOUT_FULL = "krpc-lint: error: standard output: cannot write: No space left on device"
STDOUT_PIPE = "krpc-lint: error: standard output: cannot write: its reader stopped reading (broken pipe)"
STDOUT_CLOSED = "krpc-lint: error: standard output is closed: leave it open, or write the report with -o FILE"

# Every command that writes to standard output: its arguments ({specs}: a directory with SPEC) and its input.
COMMANDS: dict[str, tuple[list[str], str | None]] = {
    "lint": (["lint", "{specs}"], None),
    "lint json": (["lint", "--format", "json", "{specs}"], None),
    "lint sarif": (["lint", "--format", "sarif", "{specs}"], None),
    "compat": (["compat", "{specs}", "{specs}"], None),
    "changelog": (["changelog", "{specs}", "{specs}"], None),
    "matrix": (["matrix", "{specs}", "{specs}/WidgetRequest.json"], None),
    "matrix json": (["matrix", "--format", "json", "{specs}", "{specs}/WidgetRequest.json"], None),
    "codec encode": (["codec", "encode", "--specs", "{specs}", "WidgetRequest", "0"], VALUE),
    "codec encode binary": (["codec", "encode", "--binary", "--specs", "{specs}", "WidgetRequest", "0"], VALUE),
    "codec decode": (["codec", "decode", "--specs", "{specs}", "WidgetRequest", "0"], HEX),
    "codec batch": (["codec", "batch", "--specs", "{specs}"], BATCH),
    "size": (["size", "{specs}", "WidgetRequest", "--count", "3"], None),
    "conformance": (["conformance", "{specs}", "--upstream", "{specs}"], None),
    "rules": (["rules"], None),
    "rules json": (["rules", "--format", "json"], None),
    "rules explain": (["rules", "explain", "KL101"], None),
    "schema": (["schema"], None),
    "help": (["--help"], None),
    "version": (["--version"], None),
    "audit": (["audit", "{repo}", "--out", "{tmp}/audit"], None),
}


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    directory = tmp_path / "specs"
    directory.mkdir()
    (directory / "WidgetRequest.json").write_text(SPEC)
    (directory / "WidgetResponse.json").write_text(RESPONSE)
    return directory


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path)
    top = init_repo(tmp_path / "repo")
    write(top, "clients/src/main/resources/common/message/WidgetRequest.json", SPEC)
    write(top, "clients/src/main/resources/common/message/WidgetResponse.json", RESPONSE)
    commit(top)
    return top


def _krpc(args: list[str], *, stdin: str | None = None, stdout: int | None = None, cwd: Path = REPO_ROOT,
          before: Callable[[], None] | None = None) -> tuple[int, list[str]]:
    """(exit code, stderr lines) of ``krpc-lint ARGS`` in a fresh process."""
    done = subprocess.run([sys.executable, "-m", "linter.cli.main", *args], cwd=cwd, input=stdin, text=True,
                          stdout=subprocess.DEVNULL if stdout is None else stdout, stderr=subprocess.PIPE,
                          env={**os.environ, "NO_COLOR": "1"}, preexec_fn=before, check=False, timeout=600)
    return done.returncode, done.stderr.splitlines()


def _args(name: str, specs: Path, repo: Path, tmp: Path) -> tuple[list[str], str | None]:
    args, stdin = COMMANDS[name]
    return [arg.format(specs=specs, repo=repo, tmp=tmp) for arg in args], stdin


def _one_error(lines: list[str]) -> str:
    """The one error line: no traceback, no internal error; progress lines (audit) may come before it."""
    assert not any("Traceback" in line or "internal error" in line for line in lines), lines
    errors = [line for line in lines if line.startswith("krpc-lint: error")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines
    return errors[0]


def _runs_ok(name: str, specs: Path, repo: Path, tmp: Path) -> None:
    """The command itself works (exit 0 or 1) when its output can be written: the failures below are the output's."""
    args, stdin = _args(name, specs, repo, tmp)
    code, lines = _krpc(args, stdin=stdin, cwd=tmp)
    assert code in (0, 1), lines


@pytest.mark.parametrize("name", COMMANDS)
def test_stdout_on_a_full_disk(name: str, specs: Path, repo: Path, tmp_path: Path) -> None:
    _runs_ok(name, specs, repo, tmp_path)
    args, stdin = _args(name, specs, repo, tmp_path)
    args = [arg.replace("/audit", "/audit-full") for arg in args]
    with open("/dev/full", "w") as full:
        code, lines = _krpc(args, stdin=stdin, stdout=full.fileno(), cwd=tmp_path)
    assert (code, _one_error(lines)) == (2, STDOUT_FULL)


@pytest.mark.parametrize("name", COMMANDS)
def test_stdout_whose_reader_has_gone(name: str, specs: Path, repo: Path, tmp_path: Path) -> None:
    """EPIPE, deterministically: the pipe's read end is closed before krpc-lint writes (Python ignores SIGPIPE,
    so the write fails with EPIPE), as after `| head -c1` on a large output."""
    args, stdin = _args(name, specs, repo, tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        code, lines = _krpc(args, stdin=stdin, stdout=write_end, cwd=tmp_path)
    finally:
        os.close(write_end)
    assert (code, _one_error(lines)) == (2, STDOUT_PIPE)


@pytest.mark.parametrize("name", COMMANDS)
def test_stdout_closed(name: str, specs: Path, repo: Path, tmp_path: Path) -> None:
    args, stdin = _args(name, specs, repo, tmp_path)
    code, lines = _krpc(args, stdin=stdin, cwd=tmp_path, before=lambda: os.close(1))
    assert (code, _one_error(lines)) == (2, STDOUT_CLOSED)


def test_head_c1_on_a_large_output() -> None:
    """A real `krpc-lint rules --format json | head -c1`: 86 KB, more than a pipe holds, so krpc-lint is still
    writing when head leaves."""
    writer = subprocess.Popen([sys.executable, "-m", "linter.cli.main", "rules", "--format", "json"], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert writer.stdout is not None and writer.stderr is not None
    head = subprocess.run(["head", "-c1"], stdin=writer.stdout, capture_output=True, check=True)
    writer.stdout.close()
    lines = writer.stderr.read().decode().splitlines()
    assert (head.stdout, writer.wait(), _one_error(lines)) == (b"[", 2, STDOUT_PIPE)


# -o/--out on a full disk, where files may not be created (EACCES as any user in sysfs), under a missing directory
TARGETS = {"/dev/full": "No space left on device", "/sys/krpc-lint-test": ("Permission denied",
                                                                            "Operation not permitted"),
           "/proc/no-such-dir/out": "No such file or directory"}
OUTPUTS: dict[str, list[str]] = {
    "lint -o": ["lint", "{specs}", "-o", "{out}"],
    "lint --write-baseline": ["lint", "{specs}", "--write-baseline", "{out}"],
    "compat -o": ["compat", "{specs}", "{specs}", "-o", "{out}"],
    "changelog -o": ["changelog", "{specs}", "{specs}", "-o", "{out}"],
    "size -o": ["size", "{specs}", "WidgetRequest", "--count", "3", "-o", "{out}"],
    "conformance -o": ["conformance", "{specs}", "--upstream", "{specs}", "-o", "{out}"],
    "audit --out": ["audit", "{repo}", "--out", "{out}"],
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", OUTPUTS)
def test_an_output_file_that_cannot_be_written(name: str, target: str, specs: Path, repo: Path,
                                               tmp_path: Path) -> None:
    if name == "audit --out" and target == "/dev/full":
        target = "/proc/no-such-dir/audit"  # a directory output refuses a device before writing (tested elsewhere)
    args = [arg.format(specs=specs, repo=repo, out=target) for arg in OUTPUTS[name]]
    code, lines = _krpc(args, cwd=tmp_path)
    line = _one_error(lines)
    reasons = TARGETS.get(target, "No such file or directory")
    assert code == 2
    assert line.startswith(f"krpc-lint: error: {target}: cannot write: ")
    assert line.endswith(reasons), line


# What was tried, and what the one line says ({specs}: a spec directory, {file}: a spec file, {dir}: an empty
# directory, {big}: 50,000 digits, {repo}: a git repository with one commit; IN_REPO: run there). Click's usage form ("Usage: ...",
# "Error: ...") counts as the one line: its last line.
MISTAKES: list[tuple[str, list[str], str]] = [
    ("lint without paths", ["lint"], "Missing argument"),
    ("lint an empty path", ["lint", ""], "an empty path names no file"),
    ("lint a missing path", ["lint", "nonexistent"], "nonexistent: no such file or directory"),
    ("lint an empty directory", ["lint", "{dir}"], "no spec files here"),
    ("lint -o ''", ["lint", "{specs}", "-o", ""], "an empty path names no file"),
    ("lint -o a directory", ["lint", "{specs}", "-o", "{dir}"], "is a directory"),
    ("lint --format unknown", ["lint", "{specs}", "--format", "nope"], "'nope' is not one of"),
    ("lint --select ''", ["lint", "{specs}", "--select", ""], "an empty value selects no rule"),
    ("lint --ignore ''", ["lint", "{specs}", "--ignore", ""], "an empty value selects no rule"),
    ("lint --select unknown", ["lint", "{specs}", "--select", "KL99999"], "unknown rule selector 'KL99999'"),
    ("lint --kafka-version 99", ["lint", "{specs}", "--kafka-version", "99"], "'99' is not one of"),
    ("lint --profile unknown", ["lint", "{specs}", "--profile", "nope"], "'nope' is not one of"),
    ("lint --config ''", ["lint", "{specs}", "--config", ""], "an empty path names no file"),
    ("lint --config missing", ["lint", "{specs}", "--config", "nonexistent.yaml"], "config file not found"),
    ("lint --config a directory", ["lint", "{specs}", "--config", "{dir}"], "is a directory"),
    ("lint --baseline ''", ["lint", "{specs}", "--baseline", ""], "an empty path names no file"),
    ("lint --baseline missing", ["lint", "{specs}", "--baseline", "nonexistent.json"], "cannot read file"),
    ("lint --baseline of 50,000 digits", ["lint", "{specs}", "--baseline", "{big}"], "a number of 50,000 digits; at most 4,300 are read"),
    ("lint --write-baseline ''", ["lint", "{specs}", "--write-baseline", ""], "an empty path names no file"),
    ("lint --write-baseline onto the spec", ["lint", "{specs}", "--write-baseline", "{file}"], "refusing to write"),
    ("lint --changed-since ''", ["lint", "{specs}", "--changed-since", ""], "the git revision must not be empty"),
    ("lint --changed-since outside git", ["lint", "{specs}", "--changed-since", "main"], "needs a git repository"),
    ("lint --changed-since an unknown ref", ["IN_REPO", "lint", "--changed-since", "nosuch"], "unknown git revision"),
    ("lint --cache-dir ''", ["lint", "{specs}", "--cache-dir", ""], "an empty path names no file"),
    ("lint --cache-dir a file", ["lint", "{specs}", "--cache-dir", "{file}"], "is a file"),
    ("lint --fix --diff", ["lint", "{specs}", "--fix", "--diff"], "--fix and --diff go neither together"),
    ("rules explain ''", ["rules", "explain", ""], "unknown rule ''"),
    ("rules explain unknown", ["rules", "explain", "KL99999"], "unknown rule 'KL99999'"),
    ("schema with an argument", ["schema", "extra"], "unexpected extra argument"),
    ("compat with one side", ["compat", "{specs}"], "give OLD and NEW"),
    ("compat with three sides", ["compat", "{specs}", "{specs}", "{specs}"], "give OLD and NEW"),
    ("compat of empty paths", ["compat", "", ""], "an empty path names no file"),
    ("compat of a missing path", ["compat", "nonexistent", "{specs}"], "nonexistent: no such file or directory"),
    ("compat --against ''", ["compat", "--against", ""], "the git revision must not be empty"),
    ("compat --against outside git", ["compat", "--against", "HEAD"], "needs a git repository"),
    ("compat REF:path with an unknown ref", ["IN_REPO", "compat", "nosuch:x", "."], "unknown git revision 'nosuch'"),
    ("compat --against an unknown ref", ["IN_REPO", "compat", "--against", "nosuch"], "unknown git revision 'nosuch'"),
    ("compat --released ''", ["compat", "{specs}", "{specs}", "--released", ""], "must not be empty"),
    ("compat --cross-check -1", ["compat", "{specs}", "{specs}", "--cross-check", "-1"], "is not in the range"),
    ("compat --cross-check of 50 digits", ["compat", "{specs}", "{specs}", "--cross-check", "9" * 50],
     "is not in the range"),
    ("compat --suggest --fix", ["compat", "{specs}", "{specs}", "--suggest", "--fix"], "--suggest goes with"),
    ("compat --suggest --format sarif", ["compat", "{specs}", "{specs}", "--suggest", "--format", "sarif"],
     "--suggest goes with"),
    ("compat -o ''", ["compat", "{specs}", "{specs}", "-o", ""], "an empty path names no file"),
    ("changelog -o ''", ["changelog", "{specs}", "{specs}", "-o", ""], "an empty path names no file"),
    ("changelog of empty revisions", ["changelog", "", ""], "must not be empty"),
    ("matrix of one spec set", ["matrix", "{specs}"], "give at least two spec sets"),
    ("matrix of one spec set twice", ["matrix", "{specs}", "{specs}"], "is named twice"),
    ("codec encode without a version", ["codec", "encode", "--specs", "{specs}", "WidgetRequest"],
     "Missing argument 'VERSION'"),
    ("codec encode version x", ["codec", "encode", "--specs", "{specs}", "WidgetRequest", "x"],
     "'x' is not a valid integer"),
    ("codec encode version of 50 digits", ["codec", "encode", "--specs", "{specs}", "WidgetRequest", "9" * 50],
     "WidgetRequest has no version"),
    ("codec encode an unknown message", ["codec", "encode", "--specs", "{specs}", "Nope", "0", "-i", "{file}"],
     "unknown message 'Nope'"),
    ("codec encode -i a directory", ["codec", "encode", "--specs", "{specs}", "WidgetRequest", "0", "-i", "{dir}"],
     "is a directory"),
    ("codec decode without NAME", ["codec", "decode", "--specs", "{specs}"], "decode needs NAME and VERSION"),
    ("size --count 0", ["size", "{specs}", "WidgetRequest", "--count", "0"], "is not in the range"),
    ("size --version of 30 digits", ["size", "{specs}", "WidgetRequest", "--version", "9" * 30],
     "WidgetRequest has no version"),
    ("size --tag ''", ["size", "{specs}", "WidgetRequest", "--tag", ""], "WidgetRequest has no field ''"),
    ("conformance without --upstream", ["conformance", "{specs}"], "Missing option '--upstream'"),
    ("conformance --manifest ''", ["conformance", "{specs}", "--upstream", "{specs}", "--manifest", ""],
     "an empty path names no file"),
    ("conformance --since-upstream ''", ["conformance", "{specs}", "--upstream", "{specs}", "--since-upstream", ""],
     "an empty value names no revision"),
    ("conformance --fail-on unknown", ["conformance", "{specs}", "--upstream", "{specs}", "--fail-on", "nope"],
     "Invalid value for --fail-on"),
    ("conformance -o ''", ["conformance", "{specs}", "--upstream", "{specs}", "-o", ""], "an empty path names no file"),
    ("audit of a directory outside git", ["audit", "{dir}", "--out", "x"], "is not a git repository"),
    ("audit --out ''", ["audit", "{repo}", "--out", ""], "an empty path names no file"),
    ("audit --out onto a file", ["audit", "{repo}", "--out", "{file}"], "already exists"),
    ("audit --refs ''", ["audit", "{repo}", "--out", "x", "--refs", ""], "the git revision must not be empty"),
    ("audit --refs unknown", ["audit", "{repo}", "--out", "x", "--refs", "nosuch"], "unknown git revision 'nosuch'"),
    ("audit --since ''", ["audit", "{repo}", "--out", "x", "--since", ""], "an empty value is no date"),
    ("audit --paths ''", ["audit", "{repo}", "--out", "x", "--paths", ""], "an empty value matches no spec file"),
    ("audit --master ''", ["audit", "{repo}", "--out", "x", "--master", ""], "an empty value names no Spark master"),
    ("replay --out ''", ["replay", "{file}", "--specs", "{specs}", "--against", "{specs}", "--out", ""],
     "an empty path names no file"),
    ("replay --master ''", ["replay", "{file}", "--specs", "{specs}", "--against", "{specs}", "--out", "x",
                            "--master", ""], "an empty value names no Spark master"),
    ("frames generate --count 0", ["frames", "generate", "--specs", "{specs}", "--count", "0", "--out", "f.parquet"],
     "is not in the range"),
    ("frames generate --out ''", ["frames", "generate", "--specs", "{specs}", "--count", "1", "--out", ""],
     "an empty path names no file"),
    ("an unknown command", ["nope"], "No such command 'nope'"),
]


@pytest.mark.parametrize(("args", "says"), [case[1:] for case in MISTAKES], ids=[case[0] for case in MISTAKES])
def test_a_usage_mistake_is_one_line_and_exit_2(args: list[str], says: str, specs: Path, repo: Path,
                                                tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    big = tmp_path / "big.json"
    big.write_text("9" * 50_000)
    values = {"specs": specs, "file": specs / "WidgetRequest.json", "dir": empty, "big": big, "repo": repo}
    cwd = repo if args[0] == "IN_REPO" else tmp_path
    code, lines = _krpc([arg.format(**values) for arg in args if arg != "IN_REPO"], cwd=cwd)
    assert not any("Traceback" in line or "internal error" in line for line in lines), lines
    shown = [line for line in lines if line.strip() and not line.startswith(("Usage:", "Try ", "krpc-lint: reading",
                                                                             "krpc-lint: replaying"))]
    assert code == 2 and len(shown) == 1 and says in shown[0], lines


@pytest.mark.parametrize("command", [["codec", "encode", "--specs", "{specs}", "WidgetRequest", "0"],
                                     ["codec", "decode", "--specs", "{specs}", "WidgetRequest", "0"],
                                     ["codec", "batch", "--specs", "{specs}"]])
def test_stdin_closed(command: list[str], specs: Path, tmp_path: Path) -> None:
    code, lines = _krpc([arg.format(specs=specs) for arg in command], cwd=tmp_path, before=lambda: os.close(0))
    assert (code, _one_error(lines)) == (
        2, "krpc-lint: error: standard input is closed: give the input with -i FILE (or a pipe)")


def test_a_report_with_stdout_closed_goes_to_o(specs: Path, tmp_path: Path) -> None:
    """Closed stdout is only an error when something is written there: -o works, and the file opened is never
    descriptor 1."""
    out = tmp_path / "report.json"
    code, lines = _krpc(["lint", "--format", "json", str(specs), "-o", str(out)], cwd=tmp_path,
                        before=lambda: os.close(1))
    assert code == 0, lines
    assert out.read_text().startswith("{")


@pytest.mark.parametrize("command", [["lint", "{specs}", "-o", "{out}"],
                                     ["conformance", "{specs}", "--upstream", "{specs}", "-o", "{out}"],
                                     ["lint", "{specs}", "--write-baseline", "{out}"]])
def test_what_is_said_about_an_output_is_escaped(command: list[str], specs: Path, tmp_path: Path) -> None:
    """The line naming the file written ("wrote ...", "recorded ... in ...") shows a name's control characters and
    newline as escapes: no terminal sequence, no second line a CI log could read as a workflow command."""
    out = "report\x1b]0;pwned\x07\n::error file=README.md::pwned.txt"
    code, lines = _krpc([arg.format(specs=specs, out=out) for arg in command], cwd=tmp_path)
    assert code == 0 and len(lines) == 1, lines
    assert (tmp_path / out).is_file()
    assert "\x1b" not in lines[0] and "\x07" not in lines[0] and "::error" in lines[0]
