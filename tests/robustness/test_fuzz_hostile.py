"""Hostile input (issue 14) as properties: hypothesis drives each family of hostile input through the library
in this process, and every example must end the way the program promises (a value, findings, or the one
documented error type: ``ConfigError``, ``RuleError``, ``UsageError``), never another exception, and within
a generous bound that only a pathological cost (quadratic, exponential, unbounded) exceeds: ``tracemalloc``
peak bytes linear in the input, counts of tokens and findings at most proportional to it, and a 5 s alarm
that only a hang reaches.

Families: the reader (text, mutated spec text, nesting on both reader paths), lint on JSON-level mutants of
generated specs, compat on (valid, mutant) pairs, every output format on hostile strings, configs and rule
packs (wrong types, deep nesting, random regular expressions), and the audit's unit builders on a small git
history. The codec has its own fuzz test (test_codec_fuzz.py); ``tests/robustness/test_hostile.py`` holds the fixed
reproducers run through the CLI. ``bench/fuzz.py`` runs the larger seeded campaign (minutes, not CI).

Examples are derandomized and few (the module runs in well under a minute on two cores). The bugs the suite
found (positions costing values x depth, RE2 and JSON output on lone surrogates, config keys that are no
strings, YAML, TOML and pack schemas nested too deeply) are also kept as fixed-input regression tests.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import signal
import subprocess
import tracemalloc
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import pytest
from conftest import REPO_ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.hostile_output import (
    HOSTILE_PIECES,
    action_problems,
    breaking_edit,
    changelog_problems,
    disk_name,
    hostile_path,
    problems,
    report_problems,
    suggestion_problems,
    table_problems,
    text_lines,
    with_hostile_names,
    write_tree,
    written,
)
from support.spec_strategies import lint_files, message_specs

from linter.compat.api import compare_texts
from linter.compat.changelog import Changelog, changelog
from linter.compat.compare import compare, unbuildable
from linter.compat.report import to_report
from linter.compat.revision import Revision
from linter.compat.sources import read_revision
from linter.compat.suggest import suggest
from linter.engine.config import Config, ConfigError, load_config
from linter.engine.findings import Finding, Report
from linter.engine.patterns import compile_linear, linear_patterns
from linter.engine.rules import RuleError, RuleSet, load_pack
from linter.engine.runner import (
    UsageError,
    all_rules,
    kafka_target,
    lint,
    lint_texts,
    select_rules,
)
from linter.parse.bounded_json import MAX_DEPTH
from linter.parse.document import read_document
from linter.parse.jsonc import (
    JsonSyntaxError,
    PositionalParser,
    fast_load,
)
from linter.parse.scanner import tokens
from linter.report.formats import render
from linter.vocabulary import FORMATS, PROFILES, SEVERITIES

T = TypeVar("T")

SECONDS = 5.0  # per example: only a hang gets near it
MEGABYTES = 1 << 20
BYTES_PER_INPUT_BYTE = 300  # the positional index holds a node (parent, name, offsets) per value
RULE_ID = re.compile(r"KL\d{3,4}")
READ_KINDS = {"encoding", "syntax", "trailing", "empty", "io"}
VALID = REPO_ROOT / "fixtures" / "valid"
SPEC_DIR = Path("clients/src/main/resources/common/message")  # a Kafka spec location
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
           HealthCheck.function_scoped_fixture]


def fuzz(examples: int) -> settings:
    """Deterministic and bounded: CI replays the same examples, and no database is written."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=_HEALTH)


class Hang(BaseException):
    """Raised by the alarm; a BaseException, so that no ``except Exception`` in the linter swallows it."""


@contextmanager
def within(seconds: float = SECONDS) -> Iterator[None]:
    """Fail the example with ``Hang`` when the block runs longer than ``seconds``."""
    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def traced(work: Callable[[], T]) -> tuple[T, int]:
    """``work()`` under the alarm, with the peak bytes it allocated (tracemalloc; left on if it was on)."""
    was_tracing = tracemalloc.is_tracing()
    if was_tracing:
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with within():
            result = work()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()


def memory_bound(size: int) -> int:
    """Generous and linear: a cost per input byte that no real spec approaches, plus a constant."""
    return BYTES_PER_INPUT_BYTE * size + 8 * MEGABYTES


def encoded(text: str) -> bytes:
    """The bytes a text stands for; a lone surrogate becomes bytes that are not UTF-8 (as on disk)."""
    return text.encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module", autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Rule packs cache their parse under KRPC_LINT_CACHE_DIR: keep ours out of the user's cache; load the
    built-in rules once, so that no example's memory peak counts their first parse."""
    previous = os.environ.get("KRPC_LINT_CACHE_DIR")
    os.environ["KRPC_LINT_CACHE_DIR"] = str(tmp_path_factory.mktemp("rule-cache"))
    try:
        lint_texts({"Warm.json": (VALID / "WidgetFetchRequest.json").read_text()})
        yield
    finally:
        if previous is None:
            os.environ.pop("KRPC_LINT_CACHE_DIR", None)
        else:
            os.environ["KRPC_LINT_CACHE_DIR"] = previous


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """A fresh directory per example (hypothesis runs many examples in one test call)."""
    base = tmp_path_factory.mktemp("fuzz")
    counter = iter(range(1 << 30))
    return lambda: _mkdir(base / f"example-{next(counter)}")


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def assert_clean_findings(findings: list[Finding], names: set[str], size: int) -> None:
    """Every finding names a rule by id, a file of the run and a place; no check crashed; and there are
    never more findings than input bytes."""
    assert len(findings) <= size + 10, f"{len(findings)} findings for {size} bytes"
    for finding in findings:
        assert RULE_ID.fullmatch(finding.rule), finding
        assert finding.line >= 1 and finding.col >= 1, finding
        assert os.path.basename(finding.path) in names, (finding.path, names)
        assert "internal error" not in finding.message and "could not check" not in finding.message, finding


# ==== 1. the reader ======================================================================================

SPEC_TEXTS = [path.read_text(encoding="utf-8") for path in sorted(VALID.glob("*.json"))[:4]]
ANY_CHAR = st.characters(blacklist_categories=())  # surrogates included
SNIPPETS = ["/*", "*/", "//", "// x\x01", '"', "\\", "\x00", "\r", "\r\n", "\ufeff", '"\\ud800"', "\ud800", "\udcff",
            "[" * 300, '{"a":' * 300, "9" * 5000, "1e999", "-0", "01", "NaN", "x/*" * 500, '"' + "x" * 20_000 + '"',
            "\\u00", ",,", "}", "]", "\t\x01", '"\\' + "\\" * 101 + '"', "// krpc-lint: ignore[KL301]" + " " * 5000,
            '"name": "X", ', ", ,", "'single'", "#", "true", "nul"]


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    """A real spec's text with a few byte-level edits: snippets inserted, spans cut, repeated or truncated."""
    text = draw(st.sampled_from(SPEC_TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        operation = draw(st.sampled_from(["insert", "insert", "cut", "repeat", "truncate"]))
        if operation == "insert":
            text = text[:at] + draw(st.sampled_from(SNIPPETS) | st.text(ANY_CHAR, max_size=8)) + text[at:]
        elif operation == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 200)):]
        elif operation == "repeat":
            text = text[:at] + text[at:at + draw(st.integers(1, 80))] * draw(st.integers(2, 40)) + text[at:]
        else:
            text = text[:at]
    return text


HOSTILE_TEXT = st.text(ANY_CHAR, max_size=300) | mutated_text()


@lru_cache(maxsize=1)
def read_rules() -> RuleSet:
    """Only the reader's rules (KL001-KL005): the property is about the reader, not the model."""
    return RuleSet([rule for rule in all_rules() if rule.id in {f"KL00{n}" for n in range(1, 6)}])


def assert_inside(text: str, line: int, col: int) -> None:
    lines = text.split("\n")
    assert 1 <= line <= len(lines), (line, len(lines))
    assert 1 <= col <= len(lines[line - 1]) + 1, (line, col, len(lines[line - 1]))


@fuzz(300)
@given(HOSTILE_TEXT)
def test_the_reader_gives_a_value_or_a_placed_problem_in_linear_memory(text: str) -> None:
    data = encoded(text)

    def read() -> Any:
        document = read_document("Spec.json", data)
        document.positions, document.duplicates  # noqa: B018 - built, as a finding's location builds them
        return document

    document, peak = traced(read)
    assert peak < memory_bound(len(data)), f"{peak} bytes at the peak for {len(data)} bytes of input"
    problem = document.problem
    if problem is None:
        return
    assert problem.kind in READ_KINDS and problem.message and "\n" not in problem.message, problem
    assert 0 <= problem.offset <= len(document.text), (problem.offset, len(document.text))
    assert_inside(document.text, *document.line_col(problem.offset))


@fuzz(200)
@given(HOSTILE_TEXT)
def test_reader_findings_are_placed_inside_the_text(text: str) -> None:
    """What a user sees of a broken file: KL001-KL005 findings on a line and column of the file."""
    with within():
        report = lint_texts({"Spec.json": encoded(text)}, ruleset=read_rules())
    assert_clean_findings(report.findings, {"Spec.json"}, len(encoded(text)))
    shown = read_document("Spec.json", encoded(text)).text
    for finding in report.findings:
        assert finding.rule in {"KL001", "KL002", "KL003", "KL004", "KL005"}, finding
        assert_inside(shown, finding.line, finding.col)


@fuzz(150)
@given(HOSTILE_TEXT)
def test_the_token_scan_is_linear(text: str) -> None:
    """``tokens`` (suppressions and comment stripping) yields ordered, disjoint spans: at most one per
    character, so its work is bounded by the text whatever the text holds."""
    previous_end, count = 0, 0
    with within():
        for kind, start, end in tokens(text):
            count += 1
            assert kind in {"string", "comment", "open-string", "open-comment"}
            assert previous_end <= start < end <= len(text), (kind, start, end, previous_end)
            previous_end = end
    assert count <= len(text)


def nested(kinds: list[bool], innermost: str) -> str:
    """Containers nested as ``kinds`` says (True: object, False: array) around ``innermost``."""
    opened = "".join('{"a": ' if kind else "[" for kind in kinds)
    closed = "".join("}" if kind else "]" for kind in reversed(kinds))
    return opened + innermost + closed


NESTING = st.one_of(st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3), st.integers(1, MAX_DEPTH + 100))


@fuzz(120)
@given(st.data(), NESTING, st.sampled_from(["1", '"x"', "[]", "{}", "null"]))
def test_both_readers_share_one_nesting_limit(data: st.DataObject, depth: int, innermost: str) -> None:
    """The fast path (C json, with comments stripped or not) and the positional reader (forced by a duplicate
    key or a lone CR) accept a document exactly when no value lies deeper than MAX_DEPTH."""
    kinds = [True, *data.draw(st.lists(st.booleans(), min_size=depth - 1, max_size=depth - 1))]
    body = nested(kinds, innermost)
    expected = len(kinds) <= MAX_DEPTH  # the innermost value (an empty container too) lies at len(kinds)
    variants = {"plain": (body, True), "comment": ("/* c */ " + body + " // end", True),
                "duplicate": ('{"a": 1, ' + body[1:], False), "lone CR": ("\r" + body, False)}
    for label, (text, fast) in variants.items():
        with within():
            document = read_document("Deep.json", text.encode())
            assert (document.problem is None) is expected, (label, depth, innermost, document.problem)
            assert (fast_load(text) is not None) is (fast and expected), (label, depth, innermost)
            if not fast:
                parser = PositionalParser(text)
                try:
                    parser.parse()
                    parsed = True
                except JsonSyntaxError:
                    parsed = False
                assert parsed is expected, (label, depth, innermost)
        if not expected:
            assert "nesting" in document.problem.message, document.problem


def positions_peak(depth: int, values: int) -> int:
    """Peak bytes of the positional reader on a spec holding ``values`` small values ``depth`` deep."""
    text = ('{"name": "Deep", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": '
            + "[" * depth + "1," * values + "1" + "]" * depth + "}")
    return traced(lambda: PositionalParser(text).parse())[1]


def test_positions_cost_the_same_per_value_at_any_depth() -> None:
    """Positions are built for any finding of a file, on its whole text: a hostile file of many small values
    deep down must cost what the same values cost at the top, not ~depth times that (a path tuple per value
    did: 500 KB nested 190 deep took 450 MB, and 16 MB would have taken gigabytes)."""
    flat, deep = positions_peak(1, 10_000), positions_peak(MAX_DEPTH - 10, 10_000)
    assert deep < 3 * flat, f"{deep >> 20} MB nested {MAX_DEPTH - 10} deep, {flat >> 20} MB flat"


# ==== 2. lint on JSON-level mutants of generated specs ===================================================

SPEC_KEYS = ["name", "type", "versions", "validVersions", "flexibleVersions", "nullableVersions", "taggedVersions",
             "tag", "default", "apiKey", "fields", "commonStructs", "mapKey", "entityType", "about", "ignorable",
             "zeroCopy", "latestVersionUnstable", "deprecatedVersions", "listeners"]
HOSTILE_VALUES = [2**63, -(2**63), 2**64, 1.5, -1, 0, True, False, None, [], {}, "0-32766", "32767", "-1+", "none",
                  "0+", "1-0", "3-1", "0-" + "9" * 5001, "9" * 5001, "int 32", "Foo;Bar", "Foo/Bar", "Foo\x00Bar",
                  "[]It\x01em", "x" * 20_000, [[[[[]]]]], {"fields": []}, "2147483648", "0x10", " 1 ", "int32 ", "[]",
                  "[][]int8", "records", "Item", "[]Item", "uuid", "bytes", "1e3", "NaN", "null", "", "1.5", "-1",
                  "0.0", "true", "request", "response", "header", "metadata", "é\u200b\U0001F600",
                  [{"name": f"X{n}", "type": "int8", "versions": "0+"} for n in range(3)],
                  {"name": "X", "type": "X", "versions": "0+", "fields": []}]
SURROGATES = ["\ud800", "\udcff", "Foo\udbff", "[]\udc80Item"]  # reach the model as JSON escapes ("\ud800")


def json_values(chars: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    leaf = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(chars, max_size=12)
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(SPEC_KEYS) | st.text(chars, max_size=6), inner, max_size=3), max_leaves=8)


HOSTILE_VALUE = st.one_of(st.sampled_from(HOSTILE_VALUES + SURROGATES),
                          st.integers(1, 3000).map(lambda n: "[]" * n + "int32"), json_values(ANY_CHAR))


def slots(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) of a JSON value, in a fixed order."""
    out, stack = [], [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            out.append((node, key))
            stack.append(child)
    return out


def mutate(draw: st.DrawFn, spec: Any, pool: st.SearchStrategy[Any]) -> Any:
    """One JSON-level edit of ``spec`` in place: a value replaced, wrapped or deleted, a key renamed or added;
    rarely the root itself replaced. Returns the (maybe new) root."""
    values = pool.map(copy.deepcopy)  # sampled values are shared objects: edited in place, they would grow cycles
    where = slots(spec)
    operation = draw(st.sampled_from(["replace", "replace", "replace", "delete", "rename", "add", "wrap", "root"]))
    if operation == "root" or not where:
        return draw(values)
    node, key = where[draw(st.integers(0, len(where) - 1))]
    if operation == "replace":
        node[key] = draw(values)
    elif operation == "delete":
        del node[key]
    elif operation == "wrap":
        for _ in range(draw(st.integers(1, 30))):
            node[key] = [node[key]] if draw(st.booleans()) else {"fields": node[key]}
    elif isinstance(node, dict):
        new_key = draw(st.sampled_from(SPEC_KEYS) | st.text(ANY_CHAR, max_size=8))
        node[new_key] = node.pop(key) if operation == "rename" else draw(values)
    return spec


@st.composite
def mutants(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, bytes]]:
    """A generated valid spec's files (with a request's response) and the same files with one spec mutated:
    JSON-level edits, written with or without escapes, sometimes with bytes that are not UTF-8 inserted."""
    original = lint_files(draw(message_specs()))
    target = draw(st.sampled_from(sorted(original)))
    mutant: Any = json.loads(original[target])
    for _ in range(draw(st.integers(1, 3))):
        mutant = mutate(draw, mutant, HOSTILE_VALUE)
    data = encoded(json.dumps(mutant, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2]))))
    if draw(st.integers(0, 5)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc3", b"\xef\xbb\xbf"])) + data[at:]
    return original, {**{name: encoded(text) for name, text in original.items()}, target: data}


def write_specs(directory: Path, files: dict[str, bytes]) -> Path:
    """The files in a Kafka spec location below ``directory``: every *.json there is a spec, however broken."""
    specs = directory / SPEC_DIR
    specs.mkdir(parents=True)
    for name, data in files.items():
        (specs / name).write_bytes(data)
    return specs


@fuzz(200)
@given(mutants(), st.sampled_from(PROFILES))
def test_lint_of_a_mutated_spec_is_findings(scratch: Callable[[], Path], files: tuple, profile: str) -> None:
    _, mutated = files
    directory = write_specs(scratch(), mutated)
    size = sum(map(len, mutated.values()))
    report, peak = traced(lambda: lint([directory], Config(profile=profile)))
    assert isinstance(report, Report) and report.files == len(mutated)
    assert_clean_findings(report.findings, set(mutated), size)
    assert peak < memory_bound(size), f"{peak} bytes at the peak for {size} bytes of specs"


@st.composite
def with_a_surrogate(draw: st.DrawFn) -> dict[str, str]:
    """A generated valid spec with one of its strings given a lone surrogate, as the JSON escape "\\ud800"."""
    files = lint_files(draw(message_specs()))
    name = next(iter(files))
    spec = json.loads(files[name])
    strings = [(node, key) for node, key in slots(spec) if isinstance(node[key], str)]
    node, key = strings[draw(st.integers(0, len(strings) - 1))]
    at = draw(st.integers(0, len(node[key])))
    node[key] = node[key][:at] + draw(st.sampled_from(SURROGATES)) + node[key][at:]
    return {**files, name: json.dumps(spec)}


@fuzz(40)
@given(with_a_surrogate())
def test_a_lone_surrogate_escape_in_a_spec_string_is_findings(files: dict[str, str]) -> None:
    """RE2 (KL301, KL802, packs) once encoded the names it matched as strict UTF-8: 'internal error in check'."""
    with within():
        report = lint_texts(files, Config(profile="strict"))
    assert_clean_findings(report.findings, set(files), sum(map(len, files.values())))


@pytest.mark.parametrize("key", ["versions", "nullableVersions", "taggedVersions", "flexibleVersions"])
def test_a_field_range_of_thousands_of_digits_is_findings(key: str) -> None:
    """KL254 once compared the two ends with int(): 5,001 digits exceed Python's limit (found by a seeded run)."""
    field = {"name": "F1", "type": "string", "versions": "0+", "about": "x", key: "0-" + "9" * 5001}
    text = json.dumps({"name": "Example", "type": "data", "validVersions": "0", "flexibleVersions": "0+",
                       "fields": [field]})
    with within():
        report = lint_texts({"Example.json": text}, Config())
    assert_clean_findings(report.findings, {"Example.json"}, len(text))


# ==== 3. compat on (valid, mutant) pairs =================================================================


def unbuildable_files(files: dict[str, bytes]) -> set[str]:
    """The files the comparison cannot use: unreadable, or holding a named message it cannot build."""
    revision = Revision("side", files)
    bad = set(revision.unreadable())
    bad |= {rel for rel, message in revision.messages.items() if unbuildable(message) is not None}
    return bad


@fuzz(200)
@given(mutants(), st.booleans())
def test_compat_of_a_mutant_never_raises_and_names_what_it_cannot_build(files: tuple, backwards: bool) -> None:
    original, mutated = files
    old, new = {name: encoded(text) for name, text in original.items()}, mutated
    if backwards:
        old, new = new, old
    with within():
        report = compare_texts(old, new, Config(profile="strict"))
    assert_clean_findings(report.findings, set(old) | set(new), sum(map(len, (*old.values(), *new.values()))))
    flagged = {finding.path for finding in report.findings if finding.rule == "KL1091"}
    broken = unbuildable_files(mutated)
    assert broken <= flagged, f"no KL1091 for {sorted(broken - flagged)}: {[f.message for f in report.findings]}"


# ==== 4. output: every format prints whatever a spec or a file name held ================================

ODD_STRINGS = ["\ud800", "\udcff", "Bar\udcff.json", "a\nb", "a\r\nb", "\r", "%", "%0A", "::error::x", ",", ":",
               "\x00", "\x1b[31m", "]]>", "<&>\"'", "\ufffe", "\uffff", "\U0001F600", "\x7f", "[bold]x[/]", "\t",
               "../../etc/passwd", "C:\\x", "file:///x", "é" * 40]
ODD_TEXT = st.sampled_from(ODD_STRINGS) | st.text(ANY_CHAR, max_size=30) | st.lists(
    st.sampled_from(ODD_STRINGS), max_size=4).map("".join)
WITNESS = st.none() | st.fixed_dictionaries({"version": st.integers(0, 40), "writer": st.sampled_from(["old", "new"]),
                                             "hex": st.text("0123456789abcdef", max_size=300)},
                                            optional={"error": ODD_TEXT, "reason": ODD_TEXT})


@st.composite
def odd_findings(draw: st.DrawFn, text: st.SearchStrategy[str] = ODD_TEXT) -> Finding:
    compat = draw(st.booleans())
    return Finding(draw(text), draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6)),
                   draw(st.sampled_from(["KL001", "KL1003"]) | text), draw(text), draw(st.sampled_from(SEVERITIES)),
                   draw(text), draw(text), draw(text),
                   message_name=draw(text) if compat else None,
                   versions=tuple(draw(st.lists(st.integers(0, 32767), max_size=4))) if compat else (),
                   released=draw(st.booleans()) if compat else None,
                   witness=draw(WITNESS) if compat else None)


@lru_cache(maxsize=1)
def described_rules() -> dict[str, Any]:
    """Rules as ``lint --format sarif`` describes them (a few: their text is ours, not hostile)."""
    return dict(list(select_rules(Config()).effective().items())[:5])


@fuzz(100)
@given(st.lists(odd_findings(), max_size=5), st.lists(ODD_TEXT, max_size=3), st.booleans())
def test_every_format_renders_odd_strings_as_utf8(scratch: Callable[[], Path], findings: list[Finding],
                                                  files: list[str], color: bool) -> None:
    """Each renderer keeps its format (JSON parses, XML parses, one GitHub command per finding: a newline in a
    message must not start another), and what ``emit`` writes is UTF-8 with nothing the strings brought that a
    terminal or a CI runner would act on (``hostile_output.problems``); the text format keeps its lines."""
    report = Report(sorted(findings), files=len(files))
    directory = scratch()
    for fmt in FORMATS:
        colour = color and fmt == "text"
        with within():
            text = render(report, fmt, color=colour, rules=described_rules(), files=files)
        data = written(text, directory, colour=colour)  # what ``emit`` writes to a file (-o)
        shown = data.decode("utf-8")
        assert_format(fmt, shown, data, report)
        assert not problems(data, annotations=len(findings) if fmt == "github" else None, colour=colour), (fmt, shown)
        if fmt == "text":
            assert shown.count("\n") == text_lines(report), shown


def assert_format(fmt: str, shown: str, data: bytes, report: Report) -> None:
    if fmt == "json":
        assert len(json.loads(data)["findings"]) == len(report.findings)
    elif fmt == "sarif":
        assert len(json.loads(data)["runs"][0]["results"]) == len(report.findings)
    elif fmt == "junit":
        ET.fromstring(data)
    elif fmt == "github":
        *lines, last = shown.split("\n")  # the runner reads commands line by line
        assert last == "" and len(lines) == len(report.findings), lines
        assert all(line.startswith("::") and "\r" not in line for line in lines), lines
    else:
        assert shown.endswith("\n") and ("checks passed" in shown or "Found" in shown)


UNDECODABLE = st.builds("{}{}{}.json".format, st.sampled_from(["", "specs/", "Bar", "é/"]),
                        st.sampled_from(["\udcff", "\udc80", "\udce9"]), st.sampled_from(["", "Foo", "\ud800"]))


@fuzz(20)
@given(st.lists(odd_findings(UNDECODABLE), min_size=1, max_size=3), st.sampled_from(["json", "sarif"]))
def test_json_formats_stay_json_for_names_that_are_not_utf8(scratch: Callable[[], Path], findings: list[Finding],
                                                            fmt: str) -> None:
    """``printable`` once wrote the byte 0xff of a file name as the characters \\xff inside a JSON string: an
    invalid escape, so ``--format json`` and ``sarif`` printed invalid JSON."""
    report = Report(sorted(findings))
    data = written(render(report, fmt, rules={}), scratch())
    assert_format(fmt, data.decode("utf-8"), data, report)


# ==== 5. configs and rule packs ==========================================================================

CONFIG_KEYS = ["profile", "kafka-version", "include", "select", "ignore", "severity", "fail-on", "exclude",
               "rule-packs", "baseline", "per-path"]
PLAUSIBLE = st.sampled_from([*PROFILES, *SEVERITIES, "4.3", "any", "KL801", "missing-about", "**/test/**",
                             {"KL301": "error"}, ["KL8"], [{"paths": ["a/**"], "ignore": ["KL801"]}],
                             [{"paths": "x"}], [{}], "baseline.json", 4.3, 3])
CONFIG_VALUE = PLAUSIBLE | st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10)
YAML_TOKENS = st.sampled_from(["profile", "per-path", "paths", "severity", "select", ":", ": ", " ", "\n", "- ",
                               "[", "]", "{", "}", ",", "&a ", "*a", "!!python/object/apply:os.system ", "!!binary ",
                               "'", '"', "#", "---\n", "...\n", "? ", "|\n", ">\n", "\t", "null", "~", "1e3", "0x1F",
                               "true", "<<: *a\n", "KL301", "error", "\\u", "%YAML 1.1\n", "!a!b ", "\ud800",
                               "1: ", "null: ", "? [a]\n: ", "\n1.5: "])
TOML_TOKENS = st.sampled_from(["[tool.krpc-lint]\n", "[[tool.krpc-lint.per-path]]\n", "profile", "paths", " = ",
                               "=", "\n", "[", "]", "{", "}", ",", '"', "'", '"""', "#", "1979-05-27T07:32:00Z",
                               "inf", "nan", "true", "0x1F", "1_000", "tool", ".", "KL301", "\\u", "\ud800"])


def toml_value(value: Any) -> str | None:
    """A value as TOML (no TOML writer is installed); None for what TOML cannot hold (null)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(t for t in map(toml_value, value) if t is not None) + "]"
    items = ((json.dumps(str(k)), toml_value(v)) for k, v in value.items())
    return "{" + ", ".join(f"{k} = {v}" for k, v in items if v is not None) + "}"


def toml_document(data: dict[str, Any]) -> str:
    lines = ["[tool.krpc-lint]"]
    lines += [f"{json.dumps(key)} = {text}" for key, value in data.items() if (text := toml_value(value)) is not None]
    return "\n".join(lines) + "\n"


CONFIG_MAPPING = st.dictionaries(st.sampled_from(CONFIG_KEYS) | st.text(max_size=6), CONFIG_VALUE, max_size=5)
CONFIG_FILE = st.one_of(
    CONFIG_MAPPING.map(lambda d: (".krpc-lint.yaml", json.dumps(d))),
    CONFIG_MAPPING.map(lambda d: ("pyproject.toml", toml_document(d))),
    st.lists(YAML_TOKENS, max_size=30).map(lambda parts: (".krpc-lint.yaml", "".join(parts))),
    st.lists(TOML_TOKENS, max_size=30).map(lambda parts: ("pyproject.toml", "".join(parts))),
)


def load_or_config_error(path: Path) -> Config | None:
    """``load_config``, asserting that it fails only with a ConfigError that names the file."""
    try:
        with within():
            return load_config(path)
    except ConfigError as exc:
        assert str(path) in str(exc), exc
        return None


@fuzz(300)
@given(CONFIG_FILE)
def test_a_config_with_wrong_types_is_a_config_or_a_config_error(scratch: Callable[[], Path], file: tuple) -> None:
    name, text = file
    path = scratch() / name
    path.write_bytes(encoded(text))
    config = load_or_config_error(path)
    if config is None:
        return
    assert config.profile in PROFILES and config.fail_on in SEVERITIES
    for values in (config.select, config.ignore, config.exclude, config.include, config.rule_packs):
        assert isinstance(values, tuple) and all(isinstance(value, str) for value in values)
    assert all(isinstance(k, str) and v in SEVERITIES for k, v in config.severity.items())
    config.excluded("specs/test/FooRequest.json")
    config.included("specs/test/FooRequest.json")
    for override in config.per_path:
        override.applies("specs/FooRequest.json")
    try:  # packs named by random strings are left out: they may name any directory (the pack tests cover packs)
        select_rules(replace(config, rule_packs=()))
        kafka_target(config)
    except UsageError:
        pass


@pytest.mark.parametrize("text", ["1: x\n", "null: x\n", "true: strict\n", "[a]: x\n", "profile: strict\n2: x\n"])
def test_a_config_key_that_is_no_string_is_a_config_error(tmp_path: Path, text: str) -> None:
    """The unknown-key message once joined the keys as strings: TypeError, and 'internal error' in the CLI."""
    (tmp_path / ".krpc-lint.yaml").write_text(text)
    assert load_or_config_error(tmp_path / ".krpc-lint.yaml") is None


UNHASHABLE_KEY = "? - a: 1\n: x\n"  # the key is a sequence holding a mapping: the tuple it becomes is unhashable


@pytest.mark.parametrize("where", ["config", "rule pack"])
def test_a_yaml_key_holding_a_mapping_is_a_clear_error(tmp_path: Path, where: str) -> None:
    """ruamel raises TypeError (unhashable dict) for such a key; the CLI once said 'internal error'."""
    if where == "config":
        (tmp_path / ".krpc-lint.yaml").write_text(UNHASHABLE_KEY)
        assert load_or_config_error(tmp_path / ".krpc-lint.yaml") is None
        return
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "KL9001-custom.yaml").write_text(UNHASHABLE_KEY)
    with pytest.raises(RuleError, match="KL9001-custom.yaml"):
        load_pack(tmp_path / "pack")


NESTED_CONFIGS = {"yaml list": (".krpc-lint.yaml", "profile: " + "[" * 1000 + "]" * 1000 + "\n"),
                  "yaml map": (".krpc-lint.yaml", "profile: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n"),
                  "toml list": ("pyproject.toml", "[tool.krpc-lint]\nprofile = " + "[" * 1000 + "]" * 1000 + "\n"),
                  "toml table": ("pyproject.toml", "[tool.krpc-lint]\nprofile = " + "{a = " * 1000 + "1"
                                 + "}" * 1000 + "\n")}


@pytest.mark.parametrize("form", sorted(NESTED_CONFIGS))
def test_a_deeply_nested_config_is_a_config_error(tmp_path: Path, form: str) -> None:
    """ruamel and tomllib recurse once per level: ~500 levels once raised RecursionError from load_config."""
    name, text = NESTED_CONFIGS[form]
    (tmp_path / name).write_text(text)
    assert load_or_config_error(tmp_path / name) is None  # a nested value is the wrong type for profile


REGEX_ATOMS = st.sampled_from(["a", "b", "(", ")", "(?:", "+", "*", "?", "+?", "|", "{2,}", "{1000}", "{1,1000}",
                               "\\1", "(?=a)", "(?!a)", "(?<=a)", "[", "]", "[^a]", "^", "$", ".", ".*", "\\d", "\\b",
                               "(?P<n>", "(?P=n)", "\\", "\\p{L}", "(?i)", "\\x{10FFFF}", "\\Z", "\\A", "\\z",
                               "\\u0041", "\x00", "(?<n>", "\\k<n>", "[[:alpha:]]", "(?s)", "é", "\U0001F600",
                               "\ud800"])
CATASTROPHIC = st.sampled_from(["^(a+)+$", "(a|aa)+$", "(a*)*b", "^(a|a?)+$", "(\\w+\\s?)+$", "(.*a){12}$",
                                "^(([a-z])+.)+[A-Z]([a-z])+$", "(a+)+(b+)+c"])  # exponential when backtracking
PATTERN = st.one_of(st.lists(REGEX_ATOMS, max_size=14).map("".join), st.text(ANY_CHAR, max_size=12), CATASTROPHIC,
                    st.tuples(REGEX_ATOMS, CATASTROPHIC).map("".join))
ADVERSARIAL = ["a" * 100_000 + "b", "ab" * 50_000 + "!", "\U0001F600" * 1000 + "a" * 50_000,
               "\ud800" * 1000 + "a" * 50_000]


@fuzz(150)
@given(PATTERN)
def test_a_pack_pattern_is_compiled_linear_or_refused(pattern: str) -> None:
    """RE2 compiles the pattern or says why not; a compiled one matches adversarial text in linear time."""
    with within():
        compiled, problem = compile_linear(pattern)
    if compiled is None:
        assert isinstance(problem, str) and problem, pattern
        return
    assert problem is None
    _, formats = linear_patterns({"properties": {"name": {"pattern": pattern}}})
    (matches,) = formats.values()
    for text in ADVERSARIAL:
        with within(2.0):
            assert matches(text) in (True, False)


def write_pack(directory: Path, schema: Any, *, escaped: bool = False) -> Path:
    """A one-rule pack checking ``schema``, written as YAML (``escaped``: non-ASCII as ``\\u`` escapes)."""
    pack = directory / "pack"
    pack.mkdir()
    (pack / "KL9001-custom.yaml").write_text(
        "id: KL9001\nname: custom\ntitle: A custom rule\nseverity: error\ncategory: fields\nprofiles: [recommended]\n"
        "rationale: A rule from a pull request.\nhint: Nothing.\ncheck:\n  on: field\n"
        f"  schema: {json.dumps(schema, ensure_ascii=escaped)}\n  message: \"field {{name}}\"\n",
        encoding="utf-8", errors="surrogatepass")
    return pack


LONG_NAME_SPEC = ('{"name": "Spec", "type": "data", "validVersions": "0", "flexibleVersions": "0+", "fields": '
                  '[{"name": "' + "a" * 40_000 + 'b", "type": "int32", "versions": "0+", "about": "x"}]}')


def lint_with_pack(pack: Path) -> Report | None:
    """The pack loaded and run on a spec with a 40,000-character name, or None when it is refused."""
    try:
        with within():
            load_pack(pack)
    except RuleError as exc:
        assert str(pack) in str(exc), exc
        return None
    with within():
        return lint_texts({"Spec.json": LONG_NAME_SPEC}, Config(rule_packs=(str(pack),)))


@pytest.mark.filterwarnings("ignore::FutureWarning")  # jsonschema checks "pattern" with Python's re too
@fuzz(60)
@given(PATTERN, st.sampled_from(["name", "type", "about"]), st.booleans())
def test_a_pack_with_a_random_pattern_loads_or_is_refused(scratch: Callable[[], Path], pattern: str, key: str,
                                                          escaped: bool) -> None:
    schema = {"properties": {key: {"pattern": pattern}}}
    report = lint_with_pack(write_pack(scratch(), schema, escaped=escaped))
    if report is not None:
        assert_clean_findings(report.findings, {"Spec.json"}, len(LONG_NAME_SPEC))


def nots(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"not": schema}
    return {"properties": {"name": schema}}


@pytest.mark.parametrize("schema", [nots(21), nots(120), nots(300), {"properties": {"name": {"pattern": "\ud800"}}}],
                         ids=["21 deep", "120 deep", "300 deep", "surrogate pattern"])
def test_a_hostile_pack_schema_is_refused_or_runs(tmp_path: Path, schema: dict[str, Any]) -> None:
    """Once: 21+ levels loaded, then every lint said 'internal error in check' (the compiled validator nests too
    many blocks); ~150 levels raised RecursionError from load_pack; a lone surrogate, UnicodeEncodeError."""
    report = lint_with_pack(write_pack(tmp_path, schema, escaped=True))
    if report is not None:
        assert_clean_findings(report.findings, {"Spec.json"}, len(LONG_NAME_SPEC))


# ==== 6. the audit's unit builders on a small git history ================================================

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=GIT_ENV, capture_output=True)


def seeded_mutant(text: str, rng: random.Random) -> bytes:
    """One of a few hostile edits, chosen by ``rng``: bytes that are not UTF-8, a cut, a snippet, a value."""
    operation = rng.randrange(4)
    at = rng.randrange(len(text) + 1)
    if operation == 0:
        return text[:at].encode() + b"\xff\xfe" + text[at:].encode()
    if operation == 1:
        return text[:at].encode()
    if operation == 2:
        return encoded(text[:at] + rng.choice(SNIPPETS) + text[at:])
    value = fast_load(text)
    node, key = rng.choice(slots(value))
    node[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
    return encoded(json.dumps(value, ensure_ascii=rng.random() < 0.5))


def history(repo: Path, seed: int) -> None:
    """Specs committed valid, then mutated twice, one of them under a file name that is not UTF-8."""
    rng = random.Random(seed)
    directory = repo / SPEC_DIR
    directory.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=GIT_ENV)
    texts = {path.name: path.read_text() for path in sorted(VALID.glob("*.json"))[:4]}
    odd = Path(os.fsdecode(bytes(directory) + b"/Odd\xffRequest.json"))
    for name, text in texts.items():
        (directory / name).write_text(text)
    odd.write_text(SPEC_TEXTS[0])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "valid specs")
    for round_ in range(2):
        for name, text in texts.items():
            (directory / name).write_bytes(seeded_mutant(text, rng))
        odd.write_bytes(seeded_mutant(SPEC_TEXTS[0], rng))
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"mutants {round_}")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_audit_units_of_a_hostile_history_are_rows_or_one_line_errors(tmp_path: Path, seed: int) -> None:
    """Seeded, not hypothesis: a repository costs a dozen git processes. Every blob here is readable, so a unit
    that fails (an error row) is an exception the linter let escape; its row must still be one line."""
    from linter.audit.history import extract
    from linter.audit.run import run_in_process, units

    history(tmp_path / "repo", seed)
    with within(4 * SECONDS):
        work = units(extract(str(tmp_path / "repo")))
        rows = run_in_process(work)
    assert len(work.blobs) >= 5 and len(work.pairs) >= 5, (len(work.blobs), len(work.pairs))
    assert any("\\xff" in unit.path for unit in work.blobs)
    for table, found in rows.items():
        for row in found:
            error = row["error"]
            assert error is None or ("\n" not in error and "Traceback" not in error), error
            assert error is None, f"{table}: a unit failed on readable blobs: {error}"
            assert RULE_ID.fullmatch(row["rule"]) and row["line"] >= 1, row
            assert "internal error" not in row["message"] and "could not check" not in row["message"], row


# ==== 7. hostile names and paths through lint, compat and everything they print (issue 25) ===============

HOSTILE = st.lists(st.sampled_from(HOSTILE_PIECES), min_size=1, max_size=3).map("".join) | st.text(ANY_CHAR, max_size=6)


def all_problems(lint_report: Report, compat_report: Report, log: Changelog, directory: Path, files: list[str],
                 suggestions: tuple[Any, ...]) -> dict[str, list[str]]:
    """What every output of the two reports, the changelog, the Action and ``compat --suggest`` shows that only
    unescaped input can."""
    found = {f"lint {fmt}": labels for fmt, labels in
             report_problems(lint_report, directory, rules=described_rules(), files=files, colour=True).items()}
    found |= report_problems(compat_report, directory, files=files, colour=True)
    found |= changelog_problems(log, directory)
    found |= action_problems(lint_report, compat_report, log, Config(profile="strict"), suggestions)
    return found | suggestion_problems(suggestions)


@st.composite
def hostile_changes(draw: st.DrawFn) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(old, new) files of a generated spec whose names (message, fields, structs, abouts, defaults, entity
    types, the file and its directories) hold hostile pieces, the new side with a change compat reports."""
    rng = draw(st.randoms(use_true_random=False))
    spec = draw(message_specs())
    hostile = copy.deepcopy(spec)
    with_hostile_names(hostile, rng)
    if draw(st.booleans()):
        hostile["fields"][0]["name"] = draw(HOSTILE)  # any text, not only the pieces
    changed = copy.deepcopy(hostile)
    breaking_edit(changed, rng)
    path = hostile_path(rng, f"{spec['name']}.json")
    old, new = lint_files(hostile if draw(st.booleans()) else spec), lint_files(changed)
    ascii_only = draw(st.booleans())

    def placed(files: dict[str, str]) -> dict[str, bytes]:  # the spec (first) under the hostile path
        return {path if at == 0 else name: encoded(json.dumps(json.loads(text), ensure_ascii=ascii_only))
                for at, (name, text) in enumerate(files.items())}

    return placed(old), placed(new)


@fuzz(60)
@given(hostile_changes())
def test_hostile_names_reach_no_output_unescaped(scratch: Callable[[], Path], change: tuple) -> None:
    """A pull request's names in every format of lint and compat, the changelog and the Action's log and job
    summary: no control character, no line a CI runner reads as a command, no broken table, no traceback."""
    old, new = change
    config = Config(profile="strict")
    with within():
        lint_report = lint_texts(new, config)
        result = compare(Revision("old", old), Revision("new", new))
        compat_report = to_report(result, config)
        log = changelog(Revision("old", old), Revision("new", new), result)
        found = all_problems(lint_report, compat_report, log, scratch(), sorted(new), tuple(suggest(result)))
    size = sum(map(len, (*old.values(), *new.values())))
    names = {os.path.basename(name) for name in (*old, *new)}
    assert_clean_findings(lint_report.findings + compat_report.findings, names, size)
    assert not found, found


@fuzz(15)
@given(st.randoms(use_true_random=False), message_specs(), st.integers(0, 3))
def test_hostile_paths_on_disk_reach_no_output_unescaped(scratch: Callable[[], Path], rng: random.Random,
                                                        spec: dict[str, Any], depth: int) -> None:
    """The same names as directories and files on disk (undecodable bytes, long components), walked by lint and
    read by compat as directories."""
    changed = copy.deepcopy(spec)
    breaking_edit(changed, rng)
    parts = [disk_name(rng, "dir") if rng.random() < 0.6 else "a" * rng.randrange(100, 250) for _ in range(depth)]
    relative = "/".join([*parts, disk_name(rng, spec["name"]) + ".json"])
    case = scratch()
    write_tree(case / "old", {relative: encoded(json.dumps(spec))})
    write_tree(case / "new", {relative: encoded(json.dumps(changed))})
    config = Config(profile="strict")
    with within():
        lint_report = lint([case / "new"], config)
        old, new = read_revision(str(case / "old")), read_revision(str(case / "new"))
        result = compare(old, new)
        compat_report = to_report(result, config)
        log = changelog(old, new, result)
        found = all_problems(lint_report, compat_report, log, case, [], tuple(suggest(result)))
    assert lint_report.files == 1 and len(new.files) == 1, (lint_report.files, new.files)
    assert not found, found


@pytest.mark.parametrize("path", ["a\x00b/Spec.json", "\ud800/Spec.json", "\udcff\x00/Spec.json"])
def test_lint_texts_takes_a_name_no_file_system_holds(path: str) -> None:
    """``lint_texts`` (the API) once raised ValueError from ``os.path.realpath`` for a directory name holding a
    NUL or a lone surrogate (found by bench/fuzz.py's names family); such a name is no directory on disk."""
    with within():
        report = lint_texts({path: LONG_NAME_SPEC}, Config())
    assert report.files == 1 and all(finding.path == path for finding in report.findings), report.findings


@pytest.mark.parametrize(("output", "found"), [
    ("F\x1b]0;x\x07 ok\n", ["C0 0x07", "ESC"]), ("a\rb\n", ["CR"]), ("a\u202eb\n", ["bidi U+202E"]),
    ("a\x9bb\u2028\n", ["C1 0x9b", "U+2028"]), ("ok\n  ::error::x\n", ["forged ::"]), ("a ##[error]x\n", ["forged ##["]),
    (b"\xff\n", ["not UTF-8"]), ("\ud800\n", ["lone surrogate"]), ("a\tb\n", ["TAB"]), ("a\\x1b \\n ::x\n", []),
])
def test_the_output_check_finds_what_input_brought(output: str | bytes, found: list[str]) -> None:
    """The check the hostile-name tests and bench/fuzz.py apply to every output: each kind is found, and the
    visible escapes krpc-lint writes instead are not."""
    assert problems(output) == found


def test_the_output_check_counts_annotations_and_table_rows() -> None:
    annotation = "::error file=a.json,line=1,col=1,title=KL301::m\n"
    assert problems(annotation * 2, annotations=2) == []
    assert problems(annotation * 2, annotations=1) == ["annotations 2 for 1 findings"]
    stopped = "::group::krpc-lint lint\n::stop-commands::" + "f" * 32 + "\n::error::x\n::" + "f" * 32 + "::\n"
    assert problems(stopped, annotations=0) == ["forged ::"]  # inert for the runner, still not ours
    table = "| Severity | Location | Rule | Message |\n| --- | --- | --- | --- |\n| error | `a` | KL1 | {} |\n\n"
    assert table_problems(table.format("a \\| b"), 1) == []
    assert table_problems(table.format("a | b"), 1) == ["table row not of 4 cells"]
    assert table_problems(table.format("a\n| b"), 1) == ["table rows", "table row not of 4 cells"]


def suggest_case(directory: Path) -> None:
    """A released field removed (``--suggest`` puts it back) from a spec whose file name forges a workflow
    command and whose texts hold ``##[``, a bidi override, a terminal title and comment lines starting ``::``."""
    spec = {"apiKey": 90, "type": "request", "name": "FooRequest", "validVersions": "0-1", "flexibleVersions": "0+",
            "fields": [{"name": "A", "type": "int32", "versions": "0+", "about": "##[error]a \u202e \x1b]0;t\x07 x"},
                       {"name": "B", "type": "int32", "versions": "0+", "about": "\u2028::error::b"}]}
    name = "Foo\n::error file=README.md,line=1::pwned.json"
    head = "/*\n::error::comment\n  ##[warning]x\n*/\n"
    for side in ("old", "new"):
        (directory / side).mkdir()
        (directory / side / name).write_text(head + json.dumps(spec, indent=2, ensure_ascii=False), encoding="utf-8")
        spec["fields"] = spec["fields"][:1]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_compat_suggest_shows_hostile_names_and_spec_lines_escaped(tmp_path: Path, fmt: str) -> None:
    """``compat --suggest`` once printed the diff's file name and the spec's lines raw (a forged ``::error`` line,
    ``##[`` and ESC in a CI log), and its explanations on stderr too (found by bench/fuzz_cli.py). The header's
    path is quoted as git quotes it, so the diff still names the file."""
    suggest_case(tmp_path)
    done = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "krpc-lint"), "compat", "--suggest", "--format", fmt,
                           "old", "new"], cwd=tmp_path, capture_output=True, check=False, timeout=60)
    assert done.returncode == 1, done.stderr
    assert problems(done.stdout) == [] and problems(done.stderr) == [], (done.stdout, done.stderr)
    if fmt == "text":
        assert b'--- "a/new/Foo\\n::error file=README.md,line=1::pwned.json"\n' in done.stdout, done.stdout
    else:
        assert json.loads(done.stdout)["suggestions"][0]["fixable"] is True


def test_a_diff_quotes_paths_as_git_and_keeps_a_crlf_file_applicable() -> None:
    from linter.cli.lint_fix import printable_diff
    from linter.engine.fixes import git_quoted, unified_diff

    assert git_quoted("a/specs/Foo.json") == "a/specs/Foo.json"
    assert git_quoted('a/x\n"\\\udcff\u202e.json') == '"a/x\\n\\"\\\\\\377\\342\\200\\256.json"'
    diff = printable_diff(unified_diff("Foo.json", "a\r\nb\u2028c\r\n", "a\r\nB\u2028c\r\n"))
    assert diff.split("\n")[4:6] == ["-b\\u2028c\r", "+B\\u2028c\r"], diff  # one line each, CR kept before LF
    assert problems(diff) == []
