"""Property tests: the reader and the linter never raise, the two JSON readers agree, positions are sane."""

from __future__ import annotations

import functools
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import format_findings, require_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linter.engine.config import Config
from linter.engine.runner import lint, lint_texts
from linter.parse.document import read_document
from linter.parse.jsonc import PositionalParser, fast_load

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROFILES = ("kafka", "recommended")
NAME = "ExampleRequest.json"

# --- strategies --------------------------------------------------------------------------

# Strings rich in the characters that matter to a comment stripper: slashes, stars, quotes, backslashes.
JSON_STRINGS = st.text(st.one_of(st.sampled_from(list('/*"\\ \n\t')), st.characters(blacklist_categories=("Cs",))),
                       max_size=12)
JSON_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
                | st.floats(allow_nan=False, allow_infinity=False) | JSON_STRINGS)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(JSON_STRINGS, children, max_size=4),
    max_leaves=16,
)
# Comment text without control characters: Jackson rejects all of them inside comments but tab, CR and LF.
_COMMENT_CHARS = st.characters(blacklist_categories=("Cs", "Cc"))
SEPARATORS = st.one_of(
    st.sampled_from(["", " ", "\n", "\t", "\r\n"]),
    st.text(_COMMENT_CHARS, max_size=10).map(lambda s: f"//{s}\n"),
    st.text(_COMMENT_CHARS, max_size=10).filter(lambda s: "*/" not in s).map(lambda s: f"/*{s}*/"),
)
# JSON-ish noise: mostly the characters that matter to a JSON reader.
JSONISH_TEXT = st.text(st.sampled_from(list('{}[]":,/*\\\n\r\t 0123456789-+.eEtrufalsn#\'\x00\ufeff')), max_size=60)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


def _lint_text(text: str, profile: str):
    return lint_texts({NAME: text}, Config(profile=profile), complete=True)


def _assert_positions(report, text: str) -> None:
    last_line = text.count("\n") + 1
    for finding in report.findings:
        assert finding.line >= 1 and finding.col >= 1, finding
        assert finding.line <= last_line, (finding, last_line)


def _assert_problem_reported(document, findings) -> None:
    if document.problem is not None:
        errors = [f for f in findings if f.severity == "error"]
        assert errors, f"read problem {document.problem} gave no error; findings:\n{format_findings(findings)}"


# --- (a) arbitrary input -----------------------------------------------------------------


@PROPERTY
@given(st.one_of(st.text(max_size=80), JSONISH_TEXT))
def test_random_text_never_raises(text: str) -> None:
    document = read_document(NAME, text.encode("utf-8"))
    for profile in PROFILES:
        report = _lint_text(text, profile)
        _assert_positions(report, text)
        _assert_problem_reported(document, report.findings)


_BYTES_DIR = tempfile.TemporaryDirectory(prefix="krpc-lint-props-")


@PROPERTY
@given(st.one_of(st.binary(max_size=80), JSONISH_TEXT.map(lambda s: s.encode("utf-8") + b"\xff"),
                 st.binary(max_size=8).map(lambda b: b'{"name": "' + b + b'"}')))
def test_random_bytes_never_raise(data: bytes) -> None:
    document = read_document(NAME, data)
    assert (document.value is None) or document.problem is None
    file = Path(_BYTES_DIR.name) / NAME
    file.write_bytes(data)
    for profile in PROFILES:
        report = lint([file], Config(profile=profile))
        assert all(f.line >= 1 and f.col >= 1 for f in report.findings), format_findings(report.findings)
        _assert_problem_reported(document, report.findings)


# --- (b) valid JSON with comments --------------------------------------------------------


@st.composite
def json_with_comments(draw) -> tuple[Any, str]:
    value = draw(JSON_VALUES)
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2])))
    if draw(st.booleans()):
        tokens = _TOKEN.findall(text)
        text = draw(SEPARATORS) + "".join(token + draw(SEPARATORS) for token in tokens)
    return value, text


@PROPERTY
@given(json_with_comments())
def test_readers_agree_on_json_with_comments(sample: tuple[Any, str]) -> None:
    value, text = sample
    positional = PositionalParser(text).parse()
    assert positional == value
    fast = fast_load(text)
    if fast is not None:
        assert fast == positional
    document = read_document(NAME, text.encode("utf-8"))
    assert document.problem is None and document.value == value
    for profile in PROFILES:
        _assert_positions(_lint_text(text, profile), text)


# --- (c) mutated real specs --------------------------------------------------------------


@functools.cache
def _trunk_specs() -> tuple[Path, ...]:
    return tuple(sorted(require_shared("kafka-specs", "trunk-2024-10").rglob("*.json")))


@pytest.fixture(scope="module")
def trunk_specs() -> None:
    """Skip (or fail in CI) before Hypothesis starts when the corpus is missing."""
    assert _trunk_specs(), "no spec files in kafka-specs/trunk-2024-10"


def _containers(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every object and array in the document, in document order."""
    out = []
    if isinstance(value, (dict, list)):
        out.append(path)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in items:
            out.extend(_containers(child, (*path, key)))
    return out


def _at(value: Any, path: tuple) -> Any:
    for part in path:
        value = value[part]
    return value


SPEC_KEYS = ("name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "default", "mapKey",
             "ignorable", "entityType", "zeroCopy", "flexibleVersions", "about", "fields", "apiKey", "listeners",
             "latestVersionUnstable", "commonStructs", "validVersions", "deprecatedVersions")
KEYS = st.one_of(st.sampled_from(SPEC_KEYS), st.text(max_size=10))
NEW_VALUES = st.one_of(JSON_VALUES, st.sampled_from(["0+", "none", "1-", "[]Foo", "int32", "x", "", "-1", "99999"]))


@st.composite
def mutated_spec(draw) -> tuple[str, str]:
    """A real spec with one structural edit (or truncated); returns (operation, text)."""
    file = draw(st.sampled_from(_trunk_specs()))
    original = file.read_text(encoding="utf-8")
    operation = draw(st.sampled_from(["drop", "change", "duplicate-field", "insert", "truncate"]))
    if operation == "truncate":
        return operation, original[: draw(st.integers(0, original.rindex("}")))]
    value = PositionalParser(original).parse()  # some real specs repeat a key: fast_load declines them
    objects = [p for p in _containers(value) if isinstance(_at(value, p), dict) and _at(value, p)]
    field_lists = [p for p in _containers(value) if p[-1:] == ("fields",) and _at(value, p)]
    if operation == "drop":
        node = _at(value, draw(st.sampled_from(objects)))
        del node[draw(st.sampled_from(sorted(node)))]
    elif operation == "change":
        node = _at(value, draw(st.sampled_from(objects)))
        node[draw(st.sampled_from(sorted(node)))] = draw(NEW_VALUES)
    elif operation == "duplicate-field" and field_lists:
        fields = _at(value, draw(st.sampled_from(field_lists)))
        fields.insert(draw(st.integers(0, len(fields))), json.loads(json.dumps(draw(st.sampled_from(fields)))))
    else:
        _at(value, draw(st.sampled_from(objects)))[draw(KEYS)] = draw(NEW_VALUES)
    header = original[: original.index("{")]
    return operation, header + json.dumps(value, indent=draw(st.sampled_from([None, 2])), ensure_ascii=False) + "\n"


@pytest.mark.usefixtures("trunk_specs")
@PROPERTY
@given(data=st.data())
def test_mutated_specs_never_raise(data) -> None:
    operation, text = data.draw(mutated_spec(), label="mutation")
    for profile in PROFILES:
        report = _lint_text(text, profile)
        _assert_positions(report, text)
        if operation == "truncate":
            errors = [f for f in report.findings if f.severity == "error"]
            assert errors, f"truncated file ({len(text)} chars) has no error with profile {profile}"
