"""The library face of compat: ``compare(old, new, config=None) -> Report`` and friends."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from linter.compat.compare import DEFAULT_CROSS_CHECK, CompatResult
from linter.compat.compare import compare as compare_revisions
from linter.compat.report import to_report
from linter.compat.revision import Revision
from linter.compat.sources import read_revision
from linter.engine.config import Config
from linter.engine.findings import Report

if TYPE_CHECKING:
    from linter.compat.changelog import Changelog
    from linter.compat.matrix import Matrix
    from linter.compat.suggest import Suggestion

Source = str | os.PathLike[str] | Revision


def as_revision(source: Source) -> Revision:
    """A revision from a file, a directory, ``REF:path``, or a ready ``Revision``."""
    return source if isinstance(source, Revision) else read_revision(os.fspath(source))


def compare_result(old: Source, new: Source, *, released: Source | Sequence[Source] | None = None,
                   witnesses: bool = True, cross_check: int = DEFAULT_CROSS_CHECK, seed: int = 0) -> CompatResult:
    """Every change between two revisions, before rules and config are applied."""
    return compare_revisions(as_revision(old), as_revision(new), released=_releases(released),
                             witnesses=witnesses, cross_check=cross_check, seed=seed)


def _releases(released: Source | Sequence[Source] | None) -> list[Revision] | None:
    """One release or several (``krpc-lint compat --released`` repeated), as revisions."""
    if released is None:
        return None
    if isinstance(released, (str, os.PathLike, Revision)):
        return [as_revision(released)]
    return [as_revision(item) for item in released]


def compare(old: Source, new: Source, config: Config | None = None, *,
            released: Source | Sequence[Source] | None = None,
            witnesses: bool = True, cross_check: int = DEFAULT_CROSS_CHECK, seed: int = 0) -> Report:
    """Compare two revisions of the specs; findings use the compat rules (KL1xxx) of the config.

    ``old`` and ``new`` are files, directories or git trees (``REF:path``, as ``git show`` reads
    them). Findings sit in the new file (the old one for removals); their ``category`` is the
    compat category (``WIRE_BREAKING``, ``VERSION_DROPPED``, ``SOURCE_ONLY``, ``SAFE``, ...) and
    a wire break carries a ``witness``: bytes one revision writes that the other misreads.
    ``released`` names the shipped revision, so a break confined to unreleased versions is told
    apart (``Finding.released``).

    >>> report = compare("fixtures/compat/demo/old", "fixtures/compat/demo/new")
    >>> [(f.rule, f.category, f.line) for f in report.findings]
    [('KL1003', 'WIRE_BREAKING', 24), ('KL1061', 'SOURCE_ONLY', 26)]
    >>> report.findings[0].message
    'WidgetFetchRequest (v0-3): MaxWaitMs: int32 -> int64'
    >>> compare("fixtures/valid", "fixtures/valid").findings
    []
    """
    result = compare_result(old, new, released=released, witnesses=witnesses, cross_check=cross_check, seed=seed)
    return to_report(result, config)


def compare_texts(old: dict[str, str | bytes], new: dict[str, str | bytes], config: Config | None = None,
                  **options: Any) -> Report:
    """Compare in-memory spec texts (file name -> content); used by rule examples and tests.

    ``options`` are those of ``compare``. Files pair up by name, as in two directories.

    >>> old = '''{"name": "Example", "type": "data", "validVersions": "0-1", "flexibleVersions": "0+",
    ...   "fields": [{"name": "Id", "type": "int32", "versions": "0+"}]}'''
    >>> new = old.replace('"int32"', '"int64"')
    >>> report = compare_texts({"Example.json": old}, {"Example.json": new})
    >>> [(f.rule, f.name, f.line, f.versions) for f in report.findings]
    [('KL1003', 'field-retyped', 2, (0, 1))]
    """
    return compare(_texts("old", old), _texts("new", new), config, **options)


def _texts(label: str, texts: dict[str, str | bytes]) -> Revision:
    return Revision(label, {name: text.encode("utf-8") if isinstance(text, str) else text
                            for name, text in texts.items()})


def suggest(old: Source, new: Source, *, released: Source | Sequence[Source] | None = None) -> list[Suggestion]:
    """The spec edits that keep every released version's bytes and move each released wire break into a new
    version (``krpc-lint compat --suggest``): per new-revision file, ``edits`` of ``text`` giving ``fixed``, or
    ``blocked`` with why Kafka's format cannot carry the change in a new version.

    >>> [(s.message, s.fixable) for s in suggest("fixtures/compat/demo/old", "fixtures/compat/demo/new")]
    [('WidgetFetchRequest', False)]
    """
    from linter.compat.suggest import suggest as plan

    return plan(compare_result(old, new, released=released, witnesses=False, cross_check=0))


def changelog(old: Source, new: Source) -> Changelog:
    """The protocol changelog from ``old`` to ``new`` (``.to_markdown()``, ``.to_json()``).

    Per API (request and response by apiKey) and per record type: the version ranges before and
    after, what each new version adds, and every change to the versions both revisions share.
    Unchanged APIs are left out.

    >>> log = changelog("fixtures/compat/demo/old", "fixtures/compat/demo/new")
    >>> [(entry.title, entry.key, entry.status) for entry in log.entries]
    [('WidgetFetch', 1000, 'changed')]
    >>> [(m.name, m.old_versions, m.new_versions) for m in log.entries[0].messages]
    [('WidgetFetchRequest', '0-3', '0-4'), ('WidgetFetchResponse', '0-3', '0-4')]
    """
    from linter.compat.changelog import changelog as build

    return build(as_revision(old), as_revision(new))


def matrix(sources: Iterable[Source], *, include_unstable: bool = False) -> Matrix:
    """Per API: the versions each spec set supports, the overlap and the negotiated version.

    ``sources`` go oldest first, in the order of an upgrade. An API whose ranges do not overlap
    is in ``Matrix.problems``: peers of those revisions cannot talk during a rolling upgrade.

    >>> table = matrix(["fixtures/compat/demo/old", "fixtures/compat/demo/new"])
    >>> [(row.name, str(row.overlap), row.negotiated) for row in table.apis]
    [('WidgetFetch', '0-3', 3)]
    >>> table.problems
    ()
    """
    from linter.compat.matrix import matrix as build

    return build([as_revision(source) for source in sources], include_unstable=include_unstable)
