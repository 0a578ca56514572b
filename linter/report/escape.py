"""Text that can always be written: a spec may hold a lone surrogate (``"Foo\\ud800"``) and a file name a byte
that is not UTF-8 (``os.fsdecode`` leaves ``\\udcff``). Both are shown as escapes, the same in every format:
``\\xff`` for the byte, ``\\ud800`` for the surrogate; inside JSON the backslash is itself escaped, so the
document stays valid JSON and its strings read as the text formats show them."""

from __future__ import annotations

import codecs
import json
from typing import Any


def _escape_surrogates(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    bad = error.object[error.start:error.end]
    shown = "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}" for c in bad)
    return shown, error.end


def _escape_surrogates_in_json(error: UnicodeError) -> tuple[str, int]:
    shown, end = _escape_surrogates(error)
    return shown.replace("\\", "\\\\"), end


codecs.register_error("krpc-lint-escape", _escape_surrogates)
codecs.register_error("krpc-lint-json-escape", _escape_surrogates_in_json)


def printable(text: str) -> str:
    """``text`` with every lone surrogate escaped, so that it encodes as UTF-8 (and prints) whatever a spec
    or a file name held; text without any is returned as it is."""
    return _escaped(text, "krpc-lint-escape")


def json_text(data: Any) -> str:
    """``data`` as indented JSON (non-ASCII kept), its lone surrogates escaped inside their strings."""
    return _escaped(json.dumps(data, indent=2, ensure_ascii=False), "krpc-lint-json-escape") + "\n"


def _escaped(text: str, handler: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", handler).decode("utf-8")
