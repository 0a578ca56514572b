"""Checks of ``headerVersions`` (KIP-1313): the map from API versions to header versions (rules KL211-KL218,
KL258).

Kafka's generator (trunk, September 2026; ``MessageSpec.java`` and ``HeaderVersions.java``,
sources in docs/kafka-versions.md) accepts the map only on requests and responses with valid
versions, requires it to cover every version from 0 in contiguous ranges ending open-ended, and
requires a flexible version to use a flexible header. A release without KIP-1313 rejects the
key itself (KL101 through ``KafkaTarget``), so these checks stay quiet then.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from linter.engine.checks.common import versioned
from linter.engine.checks.registry import check
from linter.engine.context import FileContext, Hit
from linter.engine.fixes import member_removal
from linter.model.spec import RPC_TYPES, HeaderVersions, MessageSpec
from linter.model.traits import (
    API_VERSIONS_KEY,
    CONTROLLED_SHUTDOWN_KEY,
    implied_header_version,
)
from linter.model.versions import SHORT_MAX, Versions
from linter.parse.jsonc import JsonPath

HIGHEST_HEADER = {"request": 2, "response": 1}  # HIGHEST_REQUEST_HEADER / HIGHEST_RESPONSE_HEADER
FIRST_FLEXIBLE_HEADER = {"request": 2, "response": 1}
_KEY = ("headerVersions",)


class _Entry(NamedTuple):
    """One range of the map that parsed: its key as written, its versions and its header version."""

    key: str
    versions: Versions
    header: int

    @property
    def at(self) -> JsonPath:
        return (*_KEY, self.key)


@dataclass(frozen=True)
class _RpcMap:
    """A request or response with valid versions and a headerVersions map."""

    message: MessageSpec
    type: str  # request | response
    versions: Versions  # the valid versions, not empty
    headers: HeaderVersions

    @cached_property
    def entries(self) -> list[_Entry]:
        """The ranges sorted by their first version; none when the map is empty or any key or value does not
        parse."""
        entries = [_Entry(r.key, r.versions, r.header) for r in self.headers.ordered
                   if r.versions is not None and r.header is not None]
        return entries if len(entries) == len(self.headers.ranges) else []


def _known(ctx: FileContext) -> bool:
    """This target's generator knows headerVersions (else KL101 reports the key)."""
    return ctx.target.header_versions != "unknown"


def _rpc_map(ctx: FileContext) -> _RpcMap | None:
    """The message, when it is a request or response with valid versions and a headerVersions map: worked
    out once per file for all the checks of the family (a hostile map has thousands of ranges)."""
    return ctx.derived(_build_rpc_map)


def _build_rpc_map(ctx: FileContext) -> _RpcMap | None:
    found = versioned(ctx) if _known(ctx) else None
    if found is None:
        return None
    message, versions = found
    if message.header_versions is None or message.type is None or message.type not in RPC_TYPES:
        return None
    return _RpcMap(message, message.type, versions, message.header_versions)


def _entries(ctx: FileContext) -> Iterator[tuple[_RpcMap, _Entry]]:
    """Each parsed range of the map, with the map (nothing when the message has no map or one that does
    not parse)."""
    rpc = _rpc_map(ctx)
    if rpc is not None:
        for entry in rpc.entries:
            yield rpc, entry


@check("header-versions-rpc-only")
def header_versions_rpc_only(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """headerVersions says which header frames a request or response; other messages have no header."""
    found = versioned(ctx) if _known(ctx) else None
    message = found[0] if found is not None else None
    if message is not None and "headerVersions" in message.raw and message.type not in RPC_TYPES:
        yield Hit(_KEY, f"headerVersions is only valid on requests and responses, not on a {message.type}", at_key=True,
                  fix=member_removal(ctx.document, _KEY))


@check("header-versions-syntax")
def header_versions_syntax(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Each key a non-empty version range, each value a header version (0 to 32767); the map not empty."""
    rpc = _rpc_map(ctx)
    if rpc is None:
        return
    if not rpc.headers.ranges:
        yield Hit(_KEY, f"{rpc.message.name} specifies an empty headerVersions map")
    for issue in ctx.model_issues("header-versions-syntax"):
        yield Hit(issue.path, issue.message, issue.at_key)


@check("header-versions-contiguous")
def header_versions_contiguous(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """The ranges start at 0, follow each other without gap or overlap, and only the last is open-ended."""
    rpc = _rpc_map(ctx)
    ranges = rpc.entries if rpc is not None else []
    if not ranges:
        return
    first = ranges[0]
    if first.versions.lowest != 0:
        yield Hit(first.at, f"headerVersions start at version {first.versions.lowest}; the first range must start "
                  "at 0 so that the map covers every version the schema describes, removed ones too", at_key=True)
    for previous, entry in itertools.pairwise(ranges):
        if previous.versions.open_ended:
            yield Hit(previous.at, f"the open-ended headerVersions range {previous.versions} is followed by "
                      f"{entry.versions}; only the last range may be open-ended", at_key=True)
        elif entry.versions.lowest != previous.versions.highest + 1:
            yield Hit(entry.at, f"non-contiguous headerVersions: the range after {previous.versions} must start at "
                      f"version {previous.versions.highest + 1}, not {entry.versions.lowest}", at_key=True)
    last = ranges[-1]
    if not last.versions.open_ended:
        yield Hit(last.at, f"the last headerVersions range {last.versions} is not open-ended; end it with a plus "
                  "sign", at_key=True)


@check("header-versions-within-valid")
def header_versions_within_valid(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """No range starts above the highest valid version (a version the message does not have)."""
    for rpc, entry in _entries(ctx):
        if entry.versions.lowest > rpc.versions.highest:
            yield Hit(entry.at, f"headerVersions range {entry.versions} starts above the highest valid version "
                      f"{rpc.versions.highest}", at_key=True)


@check("header-version-exists")
def header_version_exists(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A header version Kafka has: request headers 0-2, response headers 0-1."""
    for rpc, entry in _entries(ctx):
        highest = HIGHEST_HEADER[rpc.type]
        if entry.header > highest:
            yield Hit(entry.at, f"versions {entry.versions} map to {rpc.type} header version {entry.header}, "
                      f"which does not exist; the highest {rpc.type} header version is {highest}")


@check("api-versions-response-header-zero")
def api_versions_response_header_zero(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """ApiVersionsResponse uses response header v0 at every version, so older clients can parse it (KIP-511)."""
    rpc = _rpc_map(ctx)
    if rpc is None or rpc.type != "response" or rpc.message.api_key != API_VERSIONS_KEY:
        return
    for entry in rpc.entries:
        if entry.header != 0:
            yield Hit(entry.at, f"versions {entry.versions} map to response header version {entry.header}, but "
                      "ApiVersionsResponse must use a v0 response header at every version (KIP-511)")


@check("header-versions-flexible")
def header_versions_flexible(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A flexible version uses a flexible header: request header 2 or higher, response header 1 or higher."""
    rpc = _rpc_map(ctx)
    if rpc is None or (rpc.type == "response" and rpc.message.api_key == API_VERSIONS_KEY):
        return
    least = FIRST_FLEXIBLE_HEADER[rpc.type]
    for entry in rpc.entries:
        flexible = entry.versions.intersect(rpc.versions).intersect(rpc.message.flexible)
        if not flexible.empty and entry.header < least:
            yield Hit(entry.at, f"version {flexible.lowest} is flexible but maps to {rpc.type} header version "
                      f"{entry.header}; a flexible {rpc.type} must use header version {least} or higher")


@check("header-versions-required")
def header_versions_required(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Kafka trunk (KAFKA-20923) requires headerVersions on every request and response with valid versions."""
    found = versioned(ctx)
    if found is None or ctx.target.header_versions != "required" or found[0].type not in RPC_TYPES:
        return
    message, versions = found
    if "headerVersions" not in message.raw:
        yield Hit((), f"{message.type} {message.name} has no headerVersions; Kafka {ctx.target.name} requires it "
                  f'(what flexibleVersions implies: "headerVersions": {implied_map(message, versions)})')


@check("header-versions-match-flexible")
def header_versions_match_flexible(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A version that is not flexible keeps the header flexibleVersions implies (request 1, response 0)."""
    for rpc, entry in _entries(ctx):
        for version in _non_flexible_samples(entry.versions.intersect(rpc.versions), rpc.message):
            implied = implied_header_version(rpc.message, version)
            if entry.header != implied:
                yield Hit(entry.at, f"version {version} is not flexible but maps to {rpc.type} header version "
                          f"{entry.header}; flexibleVersions implies {implied}, which every peer that predates "
                          "headerVersions uses: Kafka's build fails (ApiMessageTypeTest."
                          "testHeaderVersionsMatchSchemaFlexibility)")
                break


def _non_flexible_samples(versions: Versions, message: MessageSpec) -> list[int]:
    """The versions whose implied header stands for all non-flexible ones of ``versions``: the first
    below and the first above the flexible range, and ControlledShutdown's v0 (its own header).
    Constant work per range, however wide: a hostile map cannot make this loop 32767 times per entry."""
    if versions.empty:
        return []
    flexible = message.flexible
    candidates = [versions.lowest, flexible.highest + 1 if not flexible.empty else versions.lowest]
    if message.api_key == CONTROLLED_SHUTDOWN_KEY:
        candidates.append(0)
    return sorted({v for v in candidates if versions.contains(v) and not flexible.contains(v)})


def implied_map(message: MessageSpec, versions: Versions) -> str:
    """The headerVersions map (as JSON text) that reproduces what flexibleVersions implies, from version 0 to
    the highest of ``versions``."""
    entries: list[tuple[int, int | None]] = []  # (first version, header)
    for version in range(versions.highest + 1):
        header = implied_header_version(message, version)
        if not entries or entries[-1][1] != header:
            entries.append((version, header))
    parts = []
    for index, (first, header) in enumerate(entries):
        last = entries[index + 1][0] - 1 if index + 1 < len(entries) else SHORT_MAX
        key = f"{first}+" if last == SHORT_MAX else (str(first) if first == last else f"{first}-{last}")
        parts.append(f'"{key}": "{header}"')
    return "{" + ", ".join(parts) + "}"
