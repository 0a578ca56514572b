"""Text edits for ``compat --suggest``/``--fix``: set, add or drop one member of a spec's object, and put a
field object (copied from the old revision's text) back among its siblings.

Every edit is made at positions the parser recorded, as ``lint --fix`` does (``linter.engine.fixes``), so the
comments and layout of the rest of the file stay as they were.
"""

from __future__ import annotations

import json

from linter.engine.findings import Edit
from linter.engine.fixes import apply_edits, member_removal, value_edit
from linter.parse.document import SpecDocument
from linter.parse.jsonc import JsonPath
from linter.parse.scanner import value_end

__all__ = ["copied_value", "element_removal", "field_insertion", "set_member"]


def set_member(document: SpecDocument, obj: JsonPath, key: str, value: str | None,
               after: tuple[str, ...] = ("versions", "name")) -> tuple[Edit, ...]:
    """The edit that gives the object at ``obj`` the string member ``key: value`` (``None``: no such member):
    the value replaced in place, or the member added after the first of ``after`` the object has, or removed
    with one adjacent comma."""
    path = (*obj, key)
    if document.positions.exact(path) is not None:
        if value is None:
            return member_removal(document, path) or value_edit(document, path, '"none"')
        return value_edit(document, path, json.dumps(value))
    if value is None:
        return ()
    for anchor in after:
        found = document.positions.exact((*obj, anchor))
        if found is not None:
            end = value_end(document.text, found[1])
            return (Edit(end, end, "", f', "{key}": {json.dumps(value)}'),)
    found = document.positions.exact(obj)
    if found is None:
        return ()
    opening = found[1] + 1  # just inside the "{"
    return (Edit(opening, opening, "", f'"{key}": {json.dumps(value)}, '),)


def copied_value(document: SpecDocument, path: JsonPath, edits: tuple[Edit, ...] = ()) -> str:
    """The text of the value at ``path`` as the file has it (comments inside kept), with those of ``edits``
    that fall inside it applied."""
    found = document.positions.exact(path)
    if found is None:
        raise KeyError(path)
    start = found[1]
    end = value_end(document.text, start)
    inside = [Edit(e.start - start, e.end - start, e.old, e.new) for e in edits if start <= e.start and e.end <= end]
    return apply_edits(document.text[start:end], inside)[0]


def field_insertion(document: SpecDocument, fields: JsonPath, index: int, texts: list[str]) -> Edit | None:
    """The edit that puts the objects ``texts`` into the array at ``fields`` so that they come before its
    element ``index`` (after its last one when ``index`` is its length), indented like their neighbours."""
    text = document.text
    array = document.positions.exact(fields)
    if array is None:
        return None
    count = 0
    while document.positions.exact((*fields, count)) is not None:
        count += 1
    if count == 0:
        opening = array[1] + 1
        return Edit(opening, opening, "", ", ".join(texts))
    if index < count:
        start = _at(document, (*fields, index))
        indent = _indent(text, start)
        joiner = f",{_newline(text)}{indent}" if indent is not None else ", "
        return Edit(start, start, "", joiner.join(texts) + joiner)
    last = _at(document, (*fields, count - 1))
    end = value_end(text, last)
    indent = _indent(text, last)
    joiner = f",{_newline(text)}{indent}" if indent is not None else ", "
    return Edit(end, end, "", joiner + joiner.join(texts))


def element_removal(document: SpecDocument, path: JsonPath) -> Edit | None:
    """The edit that cuts the array element at ``path`` with the comma before it (after it, for the first)."""
    *array, index = path
    if not isinstance(index, int) or document.positions.exact(path) is None:
        return None
    text = document.text
    start = _at(document, path)
    end = value_end(text, start)
    if index > 0:
        start = value_end(text, _at(document, (*array, index - 1)))
    elif document.positions.exact((*array, 1)) is not None:
        end = _at(document, (*array, 1))
    return Edit(start, end, text[start:end], "")


def _at(document: SpecDocument, path: JsonPath) -> int:
    found = document.positions.exact(path)
    assert found is not None  # the caller counted the elements
    return found[1]


def _newline(text: str) -> str:
    """The file's line end: a CRLF file gets CRLF in what is inserted."""
    return "\r\n" if "\r\n" in text else "\n"


def _indent(text: str, offset: int) -> str | None:
    """The blanks before ``offset`` on its line, or ``None`` when something else precedes it there."""
    line_start = text.rfind("\n", 0, offset) + 1
    before = text[line_start:offset]
    return before if before.strip(" \t") == "" else None
