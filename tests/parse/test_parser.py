"""Unit tests of the JSON-with-comments reader (Jackson's leniency, no more), version ranges and field types."""

from __future__ import annotations

import pytest

from linter.errors import KrpcLintError
from linter.model.types import FieldType, TypeSyntaxError
from linter.model.versions import ALL, NONE, SHORT_MAX, Versions, VersionsError
from linter.parse.document import read_document
from linter.parse.files import InputError, OutputOverInput
from linter.parse.jsonc import JsonSyntaxError, PositionalParser, fast_load
from linter.parse.yamlfile import YamlRefused, YamlTooLarge, load_yaml


def doc(text: str | bytes):
    return read_document("Example.json", text if isinstance(text, bytes) else text.encode("utf-8"))


def problem_kind(text: str | bytes) -> str | None:
    problem = doc(text).problem
    return problem.kind if problem else None


# --- what Jackson accepts ----------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '// leading comment\n{"a": 1}',
    '/* leading */ {"a": 1}',
    '{// after brace\n"a": 1}',
    '{"a" /* before colon */ : 1}',
    '{"a": /* before value */ 1}',
    '{"a": 1 // after value\n}',
    '{"a": 1 /* before comma */, "b": [1 /* in array */, 2 // eol\n]}',
    '{"a": 1}\n// trailing line comment',
    '{"a": 1} /* trailing block */ \n\n',
    '{"a": 1}\n/* multi\n line\n comment */',
    '{"a": 1} // no newline at the end',
    '/**/{"a": 1}/***/',
    '/* a /* not nested */ {"a": 1}',
])
def test_comments_between_tokens_are_accepted(text: str) -> None:
    document = doc(text)
    assert document.problem is None, document.problem
    assert document.value["a"] == 1
    assert PositionalParser(text).parse() == document.value


@pytest.mark.parametrize("text, value", [
    ('{"url": "http://example.com/x"}', {"url": "http://example.com/x"}),
    ('{"c": "/* not a comment */"}', {"c": "/* not a comment */"}),
    ('{"c": "a \\" // still a string"}', {"c": 'a " // still a string'}),
    ('{"c": "\\\\"} // real comment', {"c": "\\"}),
])
def test_comment_markers_inside_strings_are_text(text: str, value) -> None:
    assert doc(text).value == value
    assert fast_load(text) == value
    assert PositionalParser(text).parse() == value


def test_bom_is_skipped() -> None:
    document = doc(b'\xef\xbb\xbf{"a": 1}')
    assert document.problem is None
    assert document.value == {"a": 1}


def test_second_bom_is_an_error() -> None:
    assert problem_kind(b'\xef\xbb\xbf\xef\xbb\xbf{"a": 1}') == "syntax"


def test_crlf_line_endings() -> None:
    text = '{\r\n  // comment\r\n  "a": 1,\r\n  "b": "x"\r\n}\r\n'
    document = doc(text)
    assert document.value == {"a": 1, "b": "x"}
    assert document.locate(("b",), key=True) == (4, 3)
    assert document.locate(("b",)) == (4, 8)


def test_non_ascii_and_escapes() -> None:
    text = '{"about": "caf\u00e9 \\u00e9 \\n \\t \\/ \\ud83d\\ude00"}'
    assert doc(text).value == {"about": "caf\u00e9 \u00e9 \n \t / \U0001F600"}


# --- what Jackson rejects ----------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"a": 1,}',
    '{"a": [1, 2,]}',
    "{'a': 1}",
    '{a: 1}',
    '{"a": 1 # hash comment\n}',
    '# hash comment\n{"a": 1}',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 01}',
    '{"a": -01}',
    '{"a": 1.}',
    '{"a": .5}',
    '{"a": +1}',
    '{"a": 0x10}',
    '{"a": "raw\ttab"}',
    '{"a": "raw\nnewline"}',
    '{"a": "bad \\q escape"}',
    '{"a": "bad \\u12 escape"}',
    '{"a": "unterminated}',
    '{"a": 1 /* unterminated comment',
    '{"a" 1}',
    '{"a": 1 "b": 2}',
    '{"a": tru}',
    '{"a": 1} /',
    '/ {"a": 1}',
    '{"a": 1',
    '{"a": [1, 2}',
])
def test_syntax_errors(text: str) -> None:
    assert problem_kind(text) == "syntax"
    assert fast_load(text) is None
    with pytest.raises(JsonSyntaxError):
        PositionalParser(text).parse()


@pytest.mark.parametrize("text", ['{"a": 1} ]', '{"a": 1}\n]\n}', '{"a": 1} {"b": 2}', '{"a": 1} x', '{"a": 1} # c'])
def test_trailing_content(text: str) -> None:
    problem = doc(text).problem
    assert problem.kind == "trailing"
    after_root = text[text.index("}") + 1:]
    assert problem.offset == len(text) - len(after_root.lstrip())


@pytest.mark.parametrize("text", ["", "   \n\t", "// only a comment\n", "/* only */ // comments", "\ufeff"])
def test_empty_documents(text: str) -> None:
    assert problem_kind(text) == "empty"


def test_syntax_error_offset_points_at_the_problem() -> None:
    text = '{\n  "a": 1,\n  "b": 2,\n}'
    document = doc(text)
    assert document.problem.kind == "syntax"
    assert document.line_col(document.problem.offset) == (4, 1)


@pytest.mark.parametrize("data", [b'{"a": "\xff"}', b'{"a": "\xc3"}'])
def test_invalid_utf8_is_an_encoding_problem(data: bytes) -> None:
    document = doc(data)
    assert document.value is None
    assert document.problem.kind == "encoding"
    assert document.problem.offset == next(i for i in range(len(data)) if data[i] >= 0x80)


# --- duplicates and positions ------------------------------------------------------------


def test_duplicate_keys_last_wins_and_are_recorded() -> None:
    text = '{\n  "a": 1,\n  "b": {"c": 1, "c": 2},\n  "a": 3\n}'
    document = doc(text)
    assert document.problem is None
    assert document.value == {"a": 3, "b": {"c": 2}}
    duplicates = sorted(document.duplicates)
    assert [d[0] for d in duplicates] == [("a",), ("b", "c")]
    (_path_a, offset_a, first_a), (_path_c, offset_c, first_c) = duplicates
    assert document.line_col(offset_a) == (4, 3)
    assert document.line_col(first_a) == (2, 3)
    assert text[first_c:].startswith('"c": 1') and text[offset_c:].startswith('"c": 2')


def test_clean_documents_have_no_duplicates() -> None:
    assert doc('{"a": 1, "b": {"a": 2}}').duplicates == []


SPEC = """// header comment
{
  "name": "ExampleRequest",
  /* block */ "fields": [
    { "name": "First", "type": "int32", "versions": "0+" },
    {
      "name": "Second",
      "type": "[]Item", "versions": "1+",
      "fields": [ { "name": "Leaf", "type": "string", "versions": "1+" } ]
    }
  ]
}
"""


@pytest.mark.parametrize("path, key, expected", [
    (("name",), True, (3, 3)),
    (("name",), False, (3, 11)),
    (("fields",), True, (4, 15)),
    (("fields", 0), False, (5, 5)),
    (("fields", 0, "type"), False, (5, 32)),
    (("fields", 1, "name"), True, (7, 7)),
    (("fields", 1, "fields", 0, "name"), False, (9, 29)),
    (("fields", 1, "fields", 0, "missing"), False, (9, 19)),  # falls back to the closest ancestor
    (("nowhere",), False, (2, 1)),
])
def test_locate_keys_and_values(path, key, expected) -> None:
    for text in (SPEC, SPEC.replace("\n", "\r\n"), "\ufeff" + SPEC):
        document = doc(text)
        assert document.problem is None
        assert document.locate(path, key=key) == expected


def test_positions_of_a_broken_document_are_kept_up_to_the_error() -> None:
    document = doc('{\n  "a": 1,\n  "b": [1, 2,]\n}')
    assert document.problem.kind == "syntax"
    assert document.locate(("a",)) == (2, 8)


# --- robustness --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [50, 199, 201, 1000, 100_000])
def test_deep_nesting_does_not_crash(depth: int) -> None:
    for opening, closing in (("[", "]"), ('{"a":', "}")):
        text = opening * depth + "1" + closing * depth
        document = doc(text)
        assert (document.value is None) == (document.problem is not None)
        if document.problem:
            assert document.problem.kind == "syntax"


def test_huge_integer_does_not_crash() -> None:
    text = '{"apiKey": ' + "9" * 5000 + "}"
    document = doc(text)
    assert document.value is not None or document.problem is not None


def test_numbers() -> None:
    assert doc('{"a": -0, "b": 1.5e3, "c": 1E-2, "d": 12345678901234567890}').value == {
        "a": 0, "b": 1500.0, "c": 0.01, "d": 12345678901234567890}


@pytest.mark.parametrize("text", ['{"a": 1} // comment\r}', '{"a": 1 // comment\r}'])
def test_line_comment_ends_at_a_lone_carriage_return(text: str) -> None:
    """Jackson's _skipLine stops at CR as well as LF: what follows a lone CR is content again."""
    kind = problem_kind(text)
    assert kind == ("trailing" if text.startswith('{"a": 1}') else None)


@pytest.mark.parametrize("text", ['{"a": 1 // control \x01 char\n}', '{"a": 1 /* control \x00 char */}'])
def test_control_characters_inside_comments_are_rejected(text: str) -> None:
    """Jackson throws on characters below U+0020 other than tab, CR and LF inside comments (_throwInvalidSpace)."""
    assert problem_kind(text) == "syntax"


# --- versions ----------------------------------------------------------------------------


@pytest.mark.parametrize("text, lowest, highest", [
    ("0+", 0, SHORT_MAX),
    ("1-3", 1, 3),
    ("5", 5, 5),
    (" 8+ ", 8, SHORT_MAX),
    ("+0+", 0, SHORT_MAX),
    ("00+", 0, SHORT_MAX),
    ("0-32767", 0, SHORT_MAX),
    ("\t2-4\n", 2, 4),
])
def test_versions_parse(text: str, lowest: int, highest: int) -> None:
    assert Versions.parse(text) == Versions(lowest, highest)


def test_versions_none_and_reversed_are_empty() -> None:
    assert Versions.parse("none") == NONE
    assert Versions.parse("none").empty
    reversed_range = Versions.parse("3-1")
    assert reversed_range.empty
    assert str(reversed_range) == "none"
    assert list(reversed_range) == []


@pytest.mark.parametrize("text", [None, "", "   "])
def test_versions_missing_gives_the_default(text) -> None:
    assert Versions.parse(text) is None
    assert Versions.parse(text, ALL) == ALL


@pytest.mark.parametrize("text", ["1-", "x", "-3+", "99999+", "0-x", "1 - 3", "-1", "1-2-3", "+", "None", "1.5", "0x1"])
def test_versions_parse_errors(text: str) -> None:
    with pytest.raises(VersionsError):
        Versions.parse(text)


@pytest.mark.parametrize("versions, text", [(Versions(0, SHORT_MAX), "0+"), (Versions(1, 3), "1-3"),
                                            (Versions(4, 4), "4"), (NONE, "none")])
def test_versions_str_round_trips(versions: Versions, text: str) -> None:
    assert str(versions) == text
    assert Versions.parse(text) == versions


def test_versions_intersect() -> None:
    assert Versions(0, 5).intersect(Versions(3, SHORT_MAX)) == Versions(3, 5)
    assert Versions(3, SHORT_MAX).intersect(Versions(0, 5)) == Versions(3, 5)
    assert Versions(0, 2).intersect(Versions(3, 5)).empty
    assert Versions(0, 2).intersect(NONE).empty
    assert Versions(2, 2).intersect(Versions(2, 9)) == Versions(2, 2)


def test_versions_contains() -> None:
    assert Versions(1, 3).contains(1) and Versions(1, 3).contains(3)
    assert not Versions(1, 3).contains(0) and not Versions(1, 3).contains(4)
    assert Versions(0, SHORT_MAX).contains(Versions(2, 5))
    assert Versions(1, 3).contains(Versions(1, 3))
    assert not Versions(1, 3).contains(Versions(0, 3))
    assert not Versions(1, 3).contains(Versions(2, 4))
    assert Versions(1, 3).contains(NONE)
    assert not NONE.contains(Versions(1, 1))


@pytest.mark.parametrize("a, b, expected", [
    (Versions(0, 10), Versions(0, 3), Versions(4, 10)),
    (Versions(0, 10), Versions(7, SHORT_MAX), Versions(0, 6)),
    (Versions(0, 10), Versions(0, 10), NONE),
    (Versions(2, 5), Versions(0, 20), NONE),
    (Versions(5, 10), Versions(0, 2), Versions(5, 10)),
    (Versions(0, 3), Versions(5, 9), Versions(0, 3)),
    (Versions(0, 10), NONE, Versions(0, 10)),
    (Versions(0, 10), Versions(3, 5), None),  # two ranges
])
def test_versions_subtract(a: Versions, b: Versions, expected) -> None:
    result = a.subtract(b)
    if expected is None:
        assert result is None
    elif expected.empty:
        assert result.empty
    else:
        assert result == expected


# --- field types -------------------------------------------------------------------------


@pytest.mark.parametrize("text, name, is_array", [
    ("int32", "int32", False),
    (" string ", "string", False),
    ("[]Foo", "Foo", True),
    ("[]int64", "int64", True),
    ("Int32", "Int32", False),  # a capitalised primitive is a struct name
    ("String", "String", False),
    ("records", "records", False),
    ("uuid", "uuid", False),
])
def test_field_type_parse(text: str, name: str, is_array: bool) -> None:
    parsed = FieldType.parse(text)
    assert (parsed.name, parsed.is_array) == (name, is_array)
    assert str(parsed) == ("[]" if is_array else "") + name


def test_field_type_kinds() -> None:
    assert FieldType.parse("Int32").is_struct
    assert FieldType.parse("Int32").struct_name == "Int32"
    assert not FieldType.parse("int32").is_struct
    assert FieldType.parse("[]Foo").is_struct_array and not FieldType.parse("[]Foo").is_struct
    assert FieldType.parse("[]int32").struct_name is None
    assert FieldType.parse("[]Foo").element == FieldType("Foo")
    assert FieldType.parse("bytes").is_bytes and FieldType.parse("string").is_string
    assert FieldType.parse("string").can_be_nullable and not FieldType.parse("int32").can_be_nullable
    assert FieldType.parse("[]int32").can_be_nullable


def test_array_of_arrays_is_its_own_error() -> None:
    with pytest.raises(TypeSyntaxError) as info:
        FieldType.parse("[][]int32")
    assert info.value.array_of_arrays


@pytest.mark.parametrize("text", ["int", "long", "boolean", "int32[]", "[]", "", "foo", "[]int", "1Foo", "[] "])
def test_field_type_errors(text: str) -> None:
    with pytest.raises(TypeSyntaxError) as info:
        FieldType.parse(text)
    assert not info.value.array_of_arrays


# --- the errors of the readers --------------------------------------------------------------


@pytest.mark.parametrize(("error", "builtin"), [
    (JsonSyntaxError, Exception), (InputError, OSError), (OutputOverInput, ValueError),
    (YamlRefused, ValueError), (YamlTooLarge, ValueError),
])
def test_reader_errors_are_krpc_lint_errors(error: type[Exception], builtin: type[Exception]) -> None:
    """One ``except KrpcLintError`` catches each; the ``except`` clauses written for the built-in base still do."""
    assert issubclass(error, KrpcLintError)
    assert issubclass(error, builtin)


def test_yaml_key_that_is_a_collection_is_refused() -> None:
    with pytest.raises(YamlRefused, match="a mapping key is a collection"):
        load_yaml("? - a: 1\n: 2\n")
