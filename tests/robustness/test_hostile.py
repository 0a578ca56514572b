"""Hostile input (issue 14): each reproducer of the fuzzing campaign, run as a user runs krpc-lint (a fresh
process), must stay under a generous memory ceiling that only a pathological case exceeds (300 MB of peak
memory, measured by the kernel for that process alone) and end in a finding or a one-line error with exit
0, 1 or 2, never an "internal error" or a traceback. Time is never asserted as seconds (on two shared cores
any ceiling fails under load): a reproducer whose cost could grow faster than its input runs at two sizes,
and the CPU time of the larger (4x) must stay under 8x that of the smaller (linear work gives about 4x plus
the start-up both share; the quadratic bugs these reproduce gave 16x)."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared

SECONDS = 5.0  # a run still going after 20 times this is killed as a hang
MEGABYTES = 300
LINEAR_RATIO = 8.0  # CPU time at 4x the input over CPU time at 1x


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    megabytes: float
    cpu: float  # the process's own user + system seconds: what it computed, whatever else the machine ran


# Runs the command and writes its peak memory to argv[1]. A small process of its own: Linux counts into a child's
# peak the memory of the process it was spawned from (until exec), so spawning straight from a large pytest
# would count pytest's size.
LAUNCHER = """import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_bounded(*args: str, cwd: Path = REPO_ROOT, stdin: bytes = b"") -> Outcome:
    """``krpc-lint ARGS`` in a fresh process, with its wall time and its own peak memory; killed (with its
    process group) after 20 times the ceiling."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as given, \
            tempfile.NamedTemporaryFile("r") as peak:
        given.write(stdin)
        given.seek(0)
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, "-c", LAUNCHER, peak.name, sys.executable, "-m", "linter.cli.main",
                                    *args], cwd=cwd, stdin=given, stdout=out, stderr=err, start_new_session=True,
                                   env={**os.environ, "NO_COLOR": "1"})
        try:
            process.wait(timeout=20 * SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            pytest.fail(f"krpc-lint {' '.join(args)} still ran after {20 * SECONDS} s")
        seconds = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        rss, cpu = (peak.read() or "0 0").split()
        outcome = Outcome(process.returncode, out.read().decode("utf-8", "replace"),
                          err.read().decode("utf-8", "replace"), seconds, int(rss) / 1024, float(cpu))
    _record(args, outcome)
    return outcome


def _record(args: tuple[str, ...], outcome: Outcome) -> None:
    """With KRPC_LINT_HOSTILE_FIGURES=FILE, one JSON line per run (test, command, exit, time, memory): the
    figures of docs/reliability.md come from such a run."""
    figures = os.environ.get("KRPC_LINT_HOSTILE_FIGURES")
    if figures:
        with open(figures, "a", encoding="utf-8") as out:
            out.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
                                  "command": " ".join(arg[:60] for arg in args)[:200], "exit": outcome.code,
                                  "seconds": round(outcome.seconds, 2), "megabytes": round(outcome.megabytes)}) + "\n")


def assert_bounded(outcome: Outcome) -> None:
    text = outcome.stdout + outcome.stderr
    assert outcome.code in (0, 1, 2), text
    assert "internal error" not in text and "Traceback" not in text, text
    assert outcome.megabytes < MEGABYTES, f"{outcome.megabytes:.0f} MB"


def assert_linear(run: Callable[[int], Outcome], size: int) -> Outcome:
    """``run`` at ``size // 4`` and at ``size``, both bounded; the larger may cost at most LINEAR_RATIO times the
    smaller's CPU time. Returns the larger outcome for the test's own checks."""
    small = run(size // 4)
    assert_bounded(small)
    large = run(size)
    assert_bounded(large)
    ratio = large.cpu / max(small.cpu, 0.01)
    assert ratio < LINEAR_RATIO, f"4x the input took {ratio:.1f}x the CPU time ({small.cpu:.2f} s, {large.cpu:.2f} s)"
    return large


# --- the reader ------------------------------------------------------------------------------------


def _lint(tmp_path: Path, text: str | bytes, name: str = "Hostile.json") -> Outcome:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    return run_bounded("lint", "--no-cache", str(path))


@pytest.mark.parametrize(("label", "text", "size", "message"), [
    ("90 KB of unterminated block comments", lambda n: "{}" + "/*x" * n, 30_000, "unterminated block comment"),
    ("an unterminated string on a line holding //", lambda n: '{"name": "x // y' + ' "a" // "b' * n + "\n}", 30_000,
     "KL001"),
    ("a line comment followed by a control character", lambda n: '{} // x\x01' + "y" * n, 100_000,
     "control character in a comment"),
    ("a block comment holding a control character", lambda n: "{} /*" + "x" * n + "\x02 */", 100_000,
     "control character in a comment"),
])
def test_the_reader_is_linear(tmp_path: Path, label: str, text: Callable[[int], str], size: int, message: str) -> None:
    outcome = assert_linear(lambda n: _lint(tmp_path, text(n)), size)
    assert outcome.code == 1 and message in outcome.stdout, (label, outcome.stdout)


def test_a_15_mb_string_costs_memory_in_proportion(tmp_path: Path) -> None:
    """One string value of 15 MB (with escapes): the string pattern keeps no state per character."""
    def run(n: int) -> Outcome:
        return _lint(tmp_path, '{"name": "' + "abcdefg\\n" * n + '", "validVersions": "0", "fields": []}')

    small, large = run(425_000), assert_linear(run, 1_700_000)
    per_byte = (large.megabytes - small.megabytes) * 2**20 / (9 * (1_700_000 - 425_000))
    assert per_byte < 16, f"{per_byte:.1f} bytes of memory per input byte"


@pytest.mark.parametrize("depth", [199, 200, 201, 3000])
def test_both_readers_share_one_nesting_limit(tmp_path: Path, depth: int) -> None:
    """A duplicate key sends a file to the positional reader; the verdict on its nesting must not change."""
    base = '{"name": "X", %s"type": "data", "validVersions": "0", "fields": ' + "[" * depth + "1" + "]" * depth + "}"
    plain, duplicated = _lint(tmp_path, base % "", "A.json"), _lint(tmp_path, base % '"name": "X", ', "B.json")
    for outcome in (plain, duplicated):
        assert_bounded(outcome)
    too_deep = depth >= 200  # the innermost value lies at depth + 1
    assert ("nesting deeper than 200 levels" in plain.stdout) is too_deep, plain.stdout
    assert ("nesting deeper than 200 levels" in duplicated.stdout) is too_deep, duplicated.stdout


def test_a_suppression_with_a_long_reason_is_read_in_linear_time(tmp_path: Path) -> None:
    spec = (REPO_ROOT / "fixtures" / "invalid" / "KL301-field-name-pattern.json").read_text()
    outcome = assert_linear(lambda n: _lint(tmp_path, "// krpc-lint: ignore-file[KL301] legacy" + " " * n + "name\n" + spec,
                                            "TenantQuota.json"), 200_000)
    assert "KL301" not in outcome.stdout


# --- files that are not regular files ---------------------------------------------------------------

VALID = REPO_ROOT / "fixtures" / "valid"


@pytest.fixture
def specials(tmp_path: Path) -> Path:
    """A copy of the valid fixtures with a FIFO and a link to /dev/zero among them, both named *.json."""
    directory = tmp_path / "specs"
    directory.mkdir()
    for spec in VALID.glob("*.json"):
        (directory / spec.name).write_bytes(spec.read_bytes())
    os.mkfifo(directory / "Fifo.json")
    (directory / "Zero.json").symlink_to("/dev/zero")
    return directory


def test_a_directory_with_a_fifo_and_a_device_link_skips_both(specials: Path) -> None:
    outcome = run_bounded("lint", "--no-cache", str(specials))
    assert_bounded(outcome)
    assert outcome.code == 0 and "(2 other JSON files skipped)" in outcome.stdout, outcome.stdout
    compared = run_bounded("compat", str(specials), str(specials))
    assert_bounded(compared)
    assert compared.code == 0, compared.stdout + compared.stderr


@pytest.mark.parametrize("name", ["Fifo.json", "Zero.json"])
def test_a_fifo_or_device_named_alone_is_a_finding_not_a_read(specials: Path, name: str) -> None:
    outcome = run_bounded("lint", "--no-cache", "--no-siblings", str(specials / name))
    assert_bounded(outcome)
    kind = "a FIFO" if name == "Fifo.json" else "a character device"
    assert outcome.code == 1 and f"not a regular file ({kind})" in outcome.stdout, outcome.stdout
    compared = run_bounded("compat", str(specials / name), str(VALID / "WidgetFetchRequest.json"))
    assert_bounded(compared)
    assert compared.code == 2 and f"not a regular file ({kind})" in compared.stderr, compared.stderr


@pytest.mark.parametrize("name", ["Fifo.json", "Zero.json"])
def test_baseline_config_and_codec_inputs_must_be_regular_files(specials: Path, name: str) -> None:
    special = str(specials / name)
    for args in (["lint", "--baseline", special, str(VALID)], ["lint", "--config", special, str(VALID)],
                 ["codec", "batch", "--specs", str(VALID), "-i", special],
                 ["codec", "decode", "--specs", str(VALID), "-i", special, "WidgetFetchRequest", "0"]):
        outcome = run_bounded(*args)
        assert_bounded(outcome)
        assert outcome.code == 2 and "not a regular file" in outcome.stderr, (args, outcome.stderr)


def test_codec_batch_bounds_a_line_without_end(tmp_path: Path) -> None:
    """/dev/zero through a pipe: one endless line. Read in bounded pieces, it is one error answer."""
    outcome = run_bounded("codec", "batch", "--specs", str(VALID), stdin=b"\0" * (70 * 1024 * 1024))
    assert_bounded(outcome)
    assert outcome.code == 1 and "line longer than" in outcome.stdout, outcome.stdout[:300]


# --- compat, changelog and matrix on specs lint can read but the comparison cannot build -------------

LEDGER = {"name": "Ledger", "type": "data", "validVersions": "0", "flexibleVersions": "0+",
          "fields": [{"name": "A", "type": "int32", "versions": "0+"}]}


def _nested(depth: int) -> dict:
    field = {"name": "A", "type": "int32", "versions": "0+"}
    for level in range(depth):
        field = {"name": f"S{level}", "type": f"T{level}", "versions": "0+", "fields": [field]}
    return {**LEDGER, "fields": [field]}


def _edited(**changes) -> dict:
    return {**LEDGER, "fields": [{**LEDGER["fields"][0], **changes}]}


@pytest.mark.parametrize(("label", "broken", "reason"), [
    ("a type with a space", _edited(type="int 32"), 'invalid type "int 32"'),
    ("a field without a name", {**LEDGER, "fields": [{"type": "int32", "versions": "0+"}]}, "has no name"),
    ("a default that is no int32", _edited(default="1.5"), 'field A: "1.5" is not a decimal integer'),
    ("3,000 array prefixes", _edited(type="[]" * 3000 + "int32"), "can't have an array of arrays"),
    ("structs nested 70 deep", _nested(70), "structs nest more than 64 levels"),
    ("a struct with a default", _edited(type="Item", default="x", fields=[{"name": "B", "type": "int8", "versions": "0+"}]),
     "the only valid default for a struct is the empty struct or null"),
    ("5,001 digits of version", _edited(versions="0-" + "9" * 5001), "is out of the 16-bit range"),
    ("structs nested 199 deep", _nested(199), "nesting deeper than 200 levels"),
])
def test_compat_reports_an_unbuildable_spec_and_goes_on(tmp_path: Path, label: str, broken: dict, reason: str) -> None:
    import json

    for side, spec in (("old", LEDGER), ("new", broken)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "Ledger.json").write_text(json.dumps(spec))
        (tmp_path / side / "WidgetFetchRequest.json").write_bytes((VALID / "WidgetFetchRequest.json").read_bytes())
    changed = (tmp_path / "new" / "WidgetFetchRequest.json")
    changed.write_text(changed.read_text().replace('"validVersions": "0-3"', '"validVersions": "0-4"'))
    for old, new in (("old", "new"), ("new", "old")):
        outcome = run_bounded("compat", "--profile", "strict", str(tmp_path / old), str(tmp_path / new))
        assert_bounded(outcome)
        assert outcome.code == 1, (label, outcome.stdout, outcome.stderr)
        assert "new/Ledger.json:" in outcome.stdout and "KL1091" in outcome.stdout and reason in outcome.stdout, \
            (label, outcome.stdout)
        assert "WidgetFetchRequest.json:" in outcome.stdout  # the other spec's change (a version added or dropped) is still reported
    for command in ("changelog", "matrix"):
        assert_bounded(run_bounded(command, str(tmp_path / "old"), str(tmp_path / "new")))


# --- outputs: always printable, written whole, never onto an input ----------------------------------


@pytest.fixture
def odd_names(tmp_path: Path) -> Path:
    """A message named with a lone surrogate (JSON "\\ud800") and a file whose name is not UTF-8 (byte 0xff)."""
    directory = tmp_path / "odd"
    directory.mkdir()
    (directory / "Foo.json").write_text('{"name": "Foo\\ud800", "type": "data", "validVersions": "0", '
                                        '"flexibleVersions": "0+", "fields": []}')
    (Path(os.fsdecode(bytes(directory) + b"/Bar\xff.json"))).write_text(
        '{"name": "Bar", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": '
        '[{"name": "a_b", "type": "int32", "versions": "0+"}]}')
    return directory


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_every_format_prints_odd_names(odd_names: Path, fmt: str) -> None:
    outcome = run_bounded("lint", "--no-cache", "--format", fmt, str(odd_names))
    assert_bounded(outcome)
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    if fmt == "text":
        assert "Bar\\xff.json" in outcome.stdout and "Foo\\ud800" in outcome.stdout
    if fmt == "sarif":
        assert "Bar%FF.json" in outcome.stdout


def test_an_output_file_is_replaced_only_by_a_whole_report(odd_names: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    report.write_text("the previous report\n")
    bad_config = tmp_path / "bad.yaml"
    bad_config.write_text("profile: [nonsense\n")
    failed = run_bounded("lint", "--config", str(bad_config), "-o", str(report), str(odd_names))
    assert_bounded(failed)
    assert failed.code == 2 and report.read_text() == "the previous report\n"
    written = run_bounded("lint", "--no-cache", "-o", str(report), str(odd_names))
    assert_bounded(written)
    assert written.code == 1 and "Bar\\xff.json" in report.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no partial file left


def test_compat_and_changelog_never_write_onto_their_inputs(tmp_path: Path) -> None:
    demo = REPO_ROOT / "fixtures" / "compat" / "demo"
    message = "clients/src/main/resources/common/message"
    for side in ("old", "new"):
        (tmp_path / side / message).mkdir(parents=True)
        for spec in (demo / side).glob("*.json"):
            (tmp_path / side / message / spec.name).write_bytes(spec.read_bytes())
    old, new = str(tmp_path / "old"), str(tmp_path / "new")
    target = tmp_path / "new" / message / "WidgetFetchRequest.json"
    before = target.read_bytes()
    in_spec_dir = tmp_path / "new" / message / "report.json"  # the next walk would read it as a spec
    for args in (["compat", old, new, "-o", str(target)],
                 ["changelog", old, new, "-o", str(target)],
                 ["compat", old, new, "--format", "json", "-o", str(in_spec_dir)],
                 ["lint", new, "-o", str(in_spec_dir)],
                 ["lint", str(target), "-o", str(in_spec_dir)],  # a file named alone: its siblings are read too
                 ["lint", new, "--write-baseline", str(in_spec_dir)]):
        outcome = run_bounded(*args)
        assert_bounded(outcome)
        assert outcome.code == 2 and "refusing to write there" in outcome.stderr, (args, outcome.stderr)
    assert target.read_bytes() == before and not in_spec_dir.exists()


def test_a_report_beside_the_inputs_is_written_when_no_walk_reads_it(tmp_path: Path) -> None:
    """`lint . -o krpc.sarif` and `compat --against HEAD -o report.json` at a repository's top: the report is
    no input of the run, nor of the next one, so it is written; the next run finds the same."""
    demo = REPO_ROOT / "fixtures" / "compat" / "demo"
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        for spec in (demo / side).glob("*.json"):
            (tmp_path / side / spec.name).write_bytes(spec.read_bytes())
    first = run_bounded("compat", str(tmp_path / "old"), str(tmp_path / "new"), "--format", "json",
                        "-o", str(tmp_path / "new" / "report.json"))
    assert first.code == 1 and json.loads((tmp_path / "new" / "report.json").read_text())["findings"]
    again = run_bounded("compat", str(tmp_path / "old"), str(tmp_path / "new"), "--format", "json")
    assert json.loads(again.stdout) == json.loads((tmp_path / "new" / "report.json").read_text())
    sarif = run_bounded("lint", "--no-cache", str(tmp_path), "--format", "sarif", "-o", str(tmp_path / "krpc.sarif"))
    assert sarif.code in (0, 1) and json.loads((tmp_path / "krpc.sarif").read_text())["version"] == "2.1.0"


def test_audit_never_replaces_the_repository_it_reads(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "keep.txt").write_text("keep")
    for out in (repo, tmp_path, repo / ".git" / "audit"):
        outcome = run_bounded("audit", str(repo), "--out", str(out), "--overwrite")
        assert_bounded(outcome)
        assert outcome.code == 2 and "refusing to write there" in outcome.stderr, outcome.stderr
    assert (repo / "keep.txt").read_text() == "keep" and (repo / ".git").is_dir()


# --- configs and rule packs ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "text", "message"), [
    ("pyproject.toml", "[tool.krpc-lint]\nper-path = 5\n", "per-path must be a list"),
    ("pyproject.toml", "tool = 5\n", "[tool.krpc-lint] must be a table"),
    ("pyproject.toml", "[tool.krpc-lint]\nprofile = \"strict\n", "invalid TOML"),
    (".krpc-lint.yaml", "baseline: 5\n", "baseline must be a file name"),
    (".krpc-lint.yaml", "severity: {KL301: [error]}\n", "severity maps rule ids"),
    (".krpc-lint.yaml", "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi")), "aliases expand"),
])
def test_a_bad_config_is_exit_2_naming_file_and_key(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "TenantQuota.json").write_bytes(
        (REPO_ROOT / "fixtures" / "invalid" / "KL301-field-name-pattern.json").read_bytes())
    outcome = run_bounded("lint", "--no-cache", "specs", cwd=tmp_path)  # the config is found, as users have it
    assert_bounded(outcome)
    assert outcome.code == 2 and name in outcome.stderr and message in outcome.stderr, outcome.stderr


def _pack(tmp_path: Path, schema: str, length: int = 40_000) -> Path:
    tmp_path.mkdir(exist_ok=True)
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "KL9001-custom.yaml").write_text(f"""id: KL9001
name: custom
title: "A custom rule"
severity: error
category: fields
profiles: [recommended]
rationale: A rule from a pull request.
hint: Nothing.
check:
  on: field
  schema: {schema}
  message: "field {{name}}"
""")
    (tmp_path / ".krpc-lint.yaml").write_text("rule-packs: [pack]\n")
    (tmp_path / "Spec.json").write_text('{"name": "Spec", "type": "data", "validVersions": "0", "flexibleVersions": '
                                        '"0+", "fields": [{"name": "' + "a" * length + 'b", "type": "int32", '
                                        '"versions": "0+", "about": "x"}]}')
    return tmp_path


def test_a_pack_pattern_runs_in_linear_time(tmp_path: Path) -> None:
    """^(a+)+$ against 40,000 a's and a b: exponential in Python's re, linear in RE2."""
    def run(n: int) -> Outcome:
        root = _pack(tmp_path / str(n), '{"properties": {"name": {"pattern": "^(a+)+$"}}}', n)
        return run_bounded("lint", "--no-cache", "Spec.json", cwd=root)

    outcome = assert_linear(run, 40_000)
    assert outcome.code == 1 and "KL9001 [custom] field aaaa" in outcome.stdout, outcome.stdout[-500:]


def test_a_pack_pattern_that_needs_backtracking_is_refused(tmp_path: Path) -> None:
    root = _pack(tmp_path, '{"properties": {"name": {"pattern": "^(a)\\\\1$"}}}')
    outcome = run_bounded("lint", "--no-cache", "Spec.json", cwd=root)
    assert_bounded(outcome)
    assert outcome.code == 2 and "cannot run in linear time" in outcome.stderr, outcome.stderr


class _Counting(http.server.BaseHTTPRequestHandler):
    requests = 0

    def do_GET(self) -> None:
        type(self).requests += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"type": "string"}')

    def log_message(self, *args) -> None:
        pass


def test_a_pack_ref_to_a_url_or_file_makes_no_connection(tmp_path: Path) -> None:
    """Acceptance 3: a loopback server counts the requests a pack's $ref would make."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/schema.json"
        for ref in (url, "file:///etc/hostname"):
            root = tmp_path / ref.split(":")[0]
            root.mkdir()
            _pack(root, '{"properties": {"name": {"$ref": "%s"}}}' % ref)
            outcome = run_bounded("lint", "--no-cache", "Spec.json", cwd=root)
            assert_bounded(outcome)
            assert outcome.code == 2 and "only local references" in outcome.stderr, outcome.stderr
        assert _Counting.requests == 0
        assert urllib.request.urlopen(url, timeout=5).status == 200 and _Counting.requests == 1  # the server works
    finally:
        server.shutdown()


# --- costs bounded by the input's size, not by its version numbers ----------------------------------


def _widget(tmp_path: Path, side: str, edit, top: int = 32_766) -> Path:
    directory = tmp_path / side
    directory.mkdir(parents=True)
    text = (VALID / "WidgetFetchRequest.json").read_text().replace('"validVersions": "0-3"', f'"validVersions": "0-{top}"')
    (directory / "WidgetFetchRequest.json").write_text(edit(text))
    return directory


@pytest.mark.parametrize(("label", "edit", "rule"), [
    ("an about edit", lambda t: t.replace("The group whose widgets", "The group whose items"), None),
    ("a retype in every version", lambda t: t.replace('"MaxWaitMs", "type": "int32"', '"MaxWaitMs", "type": "int64"'),
     "KL1003 [field-retyped] WidgetFetchRequest (v0-32766)"),
    ("a tagged field in every flexible version", lambda t: t.replace(
        '"fields": [', '"fields": [ { "name": "Extra", "type": "int32", "versions": "2+", "taggedVersions": "2+", '
        '"tag": 9, "about": "x" },', 1), "KL1083 [tagged-field-added] WidgetFetchRequest (v2-32766)"),
])
def test_32767_versions_cost_what_their_ranges_cost(tmp_path: Path, label: str, edit, rule: str | None) -> None:
    """The same change over versions 0-32766 and over 0-126: the cost follows the ranges, not the numbers (it
    was more than 280 s and 7.1 GB), so the CPU times stay within the linear ratio of each other."""
    for command in (["compat", "--profile", "strict"], ["changelog"]):
        def run(top: int, command: list[str] = command) -> Outcome:
            old, new = (_widget(tmp_path / f"{command[0]}-{top}", side, change, top)
                        for side, change in (("old", lambda t: t), ("new", edit)))
            return run_bounded(*command, str(old), str(new))

        small, large = run(126), run(32_766)
        for outcome in (small, large):
            assert_bounded(outcome)
        assert large.cpu / max(small.cpu, 0.01) < LINEAR_RATIO, (small.cpu, large.cpu)
        shown = rule and rule.replace("32766", "126")
        assert small.code in (0, 1) and (shown is None or command[0] != "compat" or shown in small.stdout), small.stdout
        assert large.code in (0, 1) and (rule is None or command[0] != "compat" or rule in large.stdout), \
            (label, large.stdout)


def test_removing_20000_fields_of_a_common_struct_is_linear(tmp_path: Path) -> None:
    """Each of 19,999 findings names its field through the common struct's uses: worked out once per spec,
    not once per finding (a walk of the message per finding took over 120 s)."""
    def run(count: int) -> Outcome:
        inner = [{"name": f"F{i}", "type": "int32", "versions": "0+"} for i in range(count)]
        spec = {"name": "Big", "type": "data", "validVersions": "0", "flexibleVersions": "0+",
                "fields": [{"name": "Items", "type": "[]Item", "versions": "0+"}]}
        for side, kept in (("old", inner), ("new", inner[:1])):
            (tmp_path / str(count) / side).mkdir(parents=True)
            (tmp_path / str(count) / side / "Big.json").write_text(
                json.dumps({**spec, "commonStructs": [{"name": "Item", "versions": "0+", "fields": kept}]}))
        return run_bounded("compat", str(tmp_path / str(count) / "old"), str(tmp_path / str(count) / "new"))

    outcome = assert_linear(run, 20_000)
    assert outcome.code == 1 and "Found 19999 errors" in outcome.stdout
    assert "Items[].F1 (int32) removed shifts the bytes" in outcome.stdout


def test_removing_20000_fields_is_linear(tmp_path: Path) -> None:
    def run(count: int, new: str) -> Outcome:
        fields = [{"name": f"F{i}", "type": "int32", "versions": "0+"} for i in range(count)]
        spec = {"name": "Big", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": fields}
        for side, kept in (("old", fields), ("new", []), ("one", fields[1:])):
            (tmp_path / str(count) / side).mkdir(parents=True, exist_ok=True)
            (tmp_path / str(count) / side / "Big.json").write_text(json.dumps({**spec, "fields": kept}))
        return run_bounded("compat", str(tmp_path / str(count) / "old"), str(tmp_path / str(count) / new))

    for new in ("new", "one"):
        outcome = assert_linear(lambda count, new=new: run(count, new), 20_000)
        assert outcome.code == 1 and "KL1002 [field-removed]" in outcome.stdout


# --- the pipeline ----------------------------------------------------------------------------------


def test_a_corrupt_git_object_is_an_error_row_and_the_audit_goes_on(tmp_path: Path) -> None:
    from linter.audit.history import extract
    from linter.audit.run import run_in_process, units

    repo = tmp_path / "repo"
    directory = repo / "clients" / "src" / "main" / "resources" / "common" / "message"
    directory.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name in ("A", "B", "C"):
        text = (VALID / "WidgetFetchRequest.json").read_text().replace("WidgetFetchRequest", f"Widget{name}Request")
        (directory / f"Widget{name}Request.json").write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "specs"], check=True)
    for name in ("B", "C"):
        with open(directory / f"Widget{name}Request.json", "a") as spec:
            spec.write("// edited\n")
    subprocess.run([*git, "commit", "-qam", "edits"], check=True)
    oid = subprocess.run([*git, "rev-parse", f"HEAD~1:{directory.relative_to(repo)}/WidgetBRequest.json"],
                         check=True, capture_output=True, text=True).stdout.strip()
    loose = repo / ".git" / "objects" / oid[:2] / oid[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"not zlib at all")
    work = units(extract(str(repo)))
    rows = run_in_process(work)
    errors = [row["error"] for table in rows.values() for row in table if row["error"]]
    assert len(errors) == 2 and all(oid in error and "\n" not in error for error in errors), errors  # blob and pair
    assert len(work.blobs) == 5 and len(work.pairs) == 2  # the other blobs and the other pair went on
    assert not [row for row in rows["changes"] if row["error"] is None and "WidgetB" in row["new_path"]]
    pytest.importorskip("pyspark")
    outcome = run_bounded("audit", str(repo), "--out", str(tmp_path / "out"))  # as a user runs it: a small history
    assert_bounded(outcome)
    assert outcome.code == 0 and "2 errors in" in outcome.stdout and "no Spark" in outcome.stdout, outcome.stdout


def test_unit_errors_are_one_line() -> None:
    from linter.audit.run import _error_row
    from linter.spark import schema

    try:
        {}["missing"]
    except KeyError as exc:
        row = _error_row(schema.CHANGES, {"lineage": "x"}, exc)
    assert row["error"].startswith("KeyError: 'missing' (at test_hostile.py:") and "\n" not in row["error"]


def test_replay_of_a_truncated_parquet_file_is_one_line(tmp_path: Path) -> None:
    """Refused before Spark starts (no session is given or needed: the check comes first)."""
    pytest.importorskip("pyarrow")
    from linter.frames.generate import generate
    from linter.replay.run import replay

    specs = require_shared("kafka-specs", "3.7.0")
    generate(specs, 200, tmp_path / "frames.parquet")
    data = (tmp_path / "frames.parquet").read_bytes()
    (tmp_path / "truncated.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated.parquet: not a readable Parquet file") as raised:
        replay(tmp_path / "truncated.parquet", specs, specs, tmp_path / "out", master="local[1]")
    assert "\n" not in str(raised.value) and "\tat " not in str(raised.value)
    assert not (tmp_path / "out").exists()
    outcome = run_bounded("replay", str(tmp_path / "truncated.parquet"), "--specs", str(specs), "--against",
                          str(specs), "--out", str(tmp_path / "out"))  # as a user runs it
    assert_bounded(outcome)
    assert outcome.code == 2 and "not a readable Parquet file" in outcome.stderr, outcome.stderr


@pytest.mark.parametrize(("column", "values", "message"), [
    ("bytes", [1, 2], "column bytes is int64; replay reads binary values there"),
    ("direction", [0, 1], "column direction is int64; replay reads string values there"),
    ("api_key", ["0", "1"], "column api_key is string; replay reads integer values there"),
])
def test_replay_of_a_column_of_the_wrong_type_is_one_line_before_spark(tmp_path: Path, column: str, values: list,
                                                                       message: str) -> None:
    """Issue 14: a bytes column of the wrong type gave an AnalysisException. Refused from the footer, as a user
    runs it (a fresh process: no Spark session is started, so it is quick and small)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    specs = require_shared("kafka-specs", "3.7.0")
    columns = {"bytes": [b"\0\0\0\0"] * 2, "direction": ["request"] * 2, column: values}
    pq.write_table(pa.table(columns), tmp_path / "frames.parquet")
    outcome = run_bounded("replay", str(tmp_path / "frames.parquet"), "--specs", str(specs), "--against", str(specs),
                          "--out", str(tmp_path / "out"))
    assert_bounded(outcome)
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("krpc-lint: error:")]
    assert outcome.code == 2 and len(errors) == 1 and message in errors[0], outcome.stderr
    assert not (tmp_path / "out").exists()


def _damage_row_group(file: Path, group: int) -> None:
    """Overwrite the first page header of each column chunk of row group ``group`` with garbage."""
    import pyarrow.parquet as pq

    metadata = pq.read_metadata(file)
    data = bytearray(file.read_bytes())
    for column in range(metadata.num_columns):
        start = metadata.row_group(group).column(column).data_page_offset
        data[start:start + 16] = b"\xff" * 16
    file.write_bytes(bytes(data))


def test_replay_goes_on_past_a_damaged_row_group_and_a_damaged_file(tmp_path: Path, spark) -> None:
    """Issue 14: a bad row group (or, in a directory, a file without a footer) is one error row naming
    it; the job and the other frames go on; the input is not touched."""
    import pyarrow.parquet as pq

    from linter.frames.generate import generate
    from linter.replay.run import replay

    specs = require_shared("kafka-specs", "3.7.0")
    generate(specs, 300, tmp_path / "generated.parquet")
    frames = tmp_path / "frames"
    frames.mkdir()
    pq.write_table(pq.read_table(tmp_path / "generated.parquet"), frames / "a.parquet", row_group_size=100)
    _damage_row_group(frames / "a.parquet", 1)
    damaged = (frames / "a.parquet").read_bytes()
    (frames / "b.parquet").write_bytes((tmp_path / "generated.parquet").read_bytes()[:100])  # no footer
    summary = replay(frames, specs, specs, tmp_path / "out", spark=spark)
    assert summary.frames == 200 + 1 + 1  # a's good row groups, its damaged one, b
    assert summary.outcomes["same"] == 200 and summary.outcomes["both_fail"] == 2
    errors = sorted(row["old_error"] for row in pq.read_table(tmp_path / "out" / "mismatches").to_pylist())
    assert len(errors) == 2 and all("\n" not in error for error in errors)
    assert "a.parquet: row group 1 of 3 (rows 100-199) cannot be read" in errors[0]
    assert "b.parquet: not a readable Parquet file" in errors[1]
    assert (frames / "a.parquet").read_bytes() == damaged and sorted(p.name for p in frames.iterdir()) == [
        "a.parquet", "b.parquet"]


@pytest.mark.parametrize(("type_text", "rule"), [
    ("Item;Drop", "KL653"), ("Item/Part", "KL653"), ("Item\\u0000Part", "KL653"), ("[]It\\u0001em", "KL653"),
])
def test_struct_names_that_are_no_class_names_fail_strict(tmp_path: Path, type_text: str, rule: str) -> None:
    spec = ('{"name": "Example", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": '
            '[{"name": "Items", "type": "%s", "versions": "0+", "about": "x", "fields": [{"name": "Id", '
            '"type": "int32", "versions": "0+", "about": "x"}]}]}' % type_text)
    outcome = _lint(tmp_path, spec, "Example.json")
    assert_bounded(outcome)
    assert outcome.code == 1 and f"{rule} [struct-name-pattern]" in outcome.stdout, outcome.stdout


def test_numbers_of_thousands_of_digits_are_findings(tmp_path: Path) -> None:
    """Python refuses int() of more than 4,300 digits; versions, apiKeys and defaults never try."""
    digits = "9" * 5001
    spec = ('{"name": "Example", "type": "request", "apiKey": "%s", "validVersions": "0-%s", "flexibleVersions": '
            '"0+", "fields": [{"name": "A", "type": "int32", "versions": "0+", "default": "%s", "about": "x"}]}'
            % (digits, digits, digits))
    outcome = _lint(tmp_path, spec, "Example.json")
    assert_bounded(outcome)
    assert outcome.code == 1 and "KL201" in outcome.stdout and "KL501" in outcome.stdout, outcome.stdout[-800:]


def test_an_output_that_is_no_regular_file_is_written_to_never_replaced(tmp_path: Path) -> None:
    """`-o /dev/null` (as bench/lint.py uses it) must stay the device: here a FIFO stands for it."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    outcome = run_bounded("lint", "--no-cache", "-o", str(fifo), str(VALID))
    reader.join(timeout=SECONDS)
    assert_bounded(outcome)
    assert outcome.code == 0 and received and b"All checks passed" in received[0]
    assert fifo.is_fifo() and [p.name for p in tmp_path.iterdir()] == ["out.fifo"]


def _staircase(fields: int) -> str:
    """A request whose every field starts at its own version: as many layout segments as fields."""
    specs = [{"name": f"F{i}", "type": "int32", "versions": f"{i}+"} for i in range(fields)]
    return json.dumps({"apiKey": 9999, "type": "request", "name": "StairsRequest", "validVersions": f"0-{fields}",
                       "flexibleVersions": "none", "fields": specs})


@pytest.mark.parametrize(("fields", "refused"), [(500, False), (3000, True)])
def test_compat_refuses_a_spec_cut_into_too_many_version_segments(fields: int, refused: bool) -> None:
    """Layouts are compared once per segment, each the size of the spec: a staircase of 3,000 fields would be
    9 million field comparisons (52 s). Past ``MAX_SEGMENTS`` the pair is KL1091, named, instead; Kafka's
    specs have at most 14 segments, and 500 still compare."""
    from linter.compat.api import compare_texts
    from linter.compat.compare import MAX_SEGMENTS

    old = _staircase(fields)
    new = old.replace('"name": "F1", "type": "int32"', '"name": "F1", "type": "int64"')
    report = compare_texts({"StairsRequest.json": old}, {"StairsRequest.json": new}, witnesses=False, cross_check=0)
    rules = [f.rule for f in report.findings]
    if refused:
        assert rules == ["KL1091"], rules
        assert f"more than the {MAX_SEGMENTS} compat compares" in report.findings[0].message
    else:
        assert "KL1003" in rules and "KL1091" not in rules
