"""The library face of compat: ``compare(old, new, config=None) -> Report`` and friends."""

from __future__ import annotations

import os

from linter.compat.compare import DEFAULT_CROSS_CHECK, CompatResult, compare as compare_revisions
from linter.compat.report import to_report
from linter.compat.revision import Revision
from linter.compat.sources import read_revision
from linter.engine.config import Config
from linter.engine.findings import Report

Source = str | os.PathLike | Revision


def as_revision(source: Source) -> Revision:
    """A revision from a file, a directory, ``REF:path``, or a ready ``Revision``."""
    return source if isinstance(source, Revision) else read_revision(os.fspath(source))


def compare_result(old: Source, new: Source, *, released: Source | None = None, witnesses: bool = True,
                   cross_check: int = DEFAULT_CROSS_CHECK, seed: int = 0) -> CompatResult:
    """Every change between two revisions, before rules and config are applied."""
    return compare_revisions(as_revision(old), as_revision(new),
                             released=as_revision(released) if released is not None else None,
                             witnesses=witnesses, cross_check=cross_check, seed=seed)


def compare(old: Source, new: Source, config: Config | None = None, *, released: Source | None = None,
            witnesses: bool = True, cross_check: int = DEFAULT_CROSS_CHECK, seed: int = 0) -> Report:
    """Compare two revisions of the specs; findings use the compat rules (KL1xxx) of the config.

    >>> report = compare("fixtures/valid", "fixtures/valid")
    >>> report.findings
    []
    """
    result = compare_result(old, new, released=released, witnesses=witnesses, cross_check=cross_check, seed=seed)
    return to_report(result, config)


def compare_texts(old: dict[str, str | bytes], new: dict[str, str | bytes], config: Config | None = None,
                  **options) -> Report:
    """Compare in-memory spec texts (file name -> content); used by rule examples and tests."""
    return compare(_texts("old", old), _texts("new", new), config, **options)


def _texts(label: str, texts: dict[str, str | bytes]) -> Revision:
    return Revision(label, {name: text.encode("utf-8") if isinstance(text, str) else text
                            for name, text in texts.items()})


def changelog(old: Source, new: Source):
    """The protocol changelog from ``old`` to ``new`` (``.to_markdown()``, ``.to_json()``)."""
    from linter.compat.changelog import changelog as build

    return build(as_revision(old), as_revision(new))


def matrix(sources, *, include_unstable: bool = False):
    """Per API: the versions each spec set supports, the overlap and the negotiated version."""
    from linter.compat.matrix import matrix as build

    return build([as_revision(source) for source in sources], include_unstable=include_unstable)
