"""The release a cluster moves to, as readiness needs it: each API's request versions, and which are deprecated.

A target comes from spec files (a directory, or ``REF:path`` in a Kafka checkout, read as ``compat`` reads
them) or from a release name whose ranges krpc-lint ships (``linter.readiness.releases``). Only the request
specs matter: a client breaks on the versions of what it sends.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from linter.compat.sources import read_revision
from linter.model.spec import MessageSpec, build_message
from linter.parse.document import read_document

if TYPE_CHECKING:
    from linter.compat.revision import Revision


@dataclass(frozen=True, slots=True)
class ApiRange:
    """One API of the target: its request versions ``lowest..highest`` and the deprecated ones, if any."""

    api_key: int
    name: str  # the API's name: the request spec's without "Request" ("Produce", "ApiVersions")
    lowest: int
    highest: int
    deprecated: tuple[int, int] | None = None  # deprecatedVersions, inclusive

    def shown(self) -> str:
        """``3-13``, or ``3`` for a single version."""
        return str(self.lowest) if self.lowest == self.highest else f"{self.lowest}-{self.highest}"

    def is_deprecated(self, version: int) -> bool:
        return self.deprecated is not None and self.deprecated[0] <= version <= self.deprecated[1]


@dataclass(frozen=True, slots=True)
class Target:
    """The APIs of the release to move to, by API key. ``name`` is what the user named (a directory, a ref, a
    release); ``source`` says where its ranges come from, for the report."""

    name: str
    source: str
    apis: Mapping[int, ApiRange] = field(hash=False)


def api_name(spec_name: str) -> str:
    """``ProduceRequest`` -> ``Produce``."""
    return spec_name.removesuffix("Request")


def ranges_of(specs: Iterable[MessageSpec]) -> dict[int, ApiRange]:
    """The ``ApiRange`` of every request spec with versions (a removed API, ``"validVersions": "none"``, has none:
    the target does not have it)."""
    found: dict[int, ApiRange] = {}
    for spec in specs:
        versions = spec.versions
        if spec.type != "request" or spec.api_key is None or versions is None or versions.empty or not spec.name:
            continue
        deprecated = spec.deprecated_versions.value
        found[spec.api_key] = ApiRange(spec.api_key, api_name(spec.name), versions.lowest, versions.highest,
                                       None if deprecated is None or deprecated.empty
                                       else (deprecated.lowest, deprecated.highest))
    return dict(sorted(found.items()))




def spec_target(arg: str) -> tuple[Target, Revision]:
    """The target of spec files: a directory or ``REF:path`` in a git checkout (as ``compat`` reads them), with
    the revision read. Only the ranges are read, so a release whose specs an older generator accepted (2.8.0's,
    which the codec refuses) is a target all the same."""
    revision = read_revision(arg)
    values = ((path, read_document(path, data).value) for path, data in revision.files.items())
    specs = [build_message(value, path) for path, value in values if isinstance(value, dict)]
    where = "at git " if ":" in arg and not os.path.exists(arg) else "in "
    return Target(arg, f"the request specs {where}{arg}", ranges_of(specs)), revision


__all__ = ["ApiRange", "Target", "api_name", "ranges_of", "spec_target"]
