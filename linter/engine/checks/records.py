"""Checks of coordinator records (KAFKA-18301) and removed APIs (``"validVersions": "none"``, KAFKA-14552).

Coordinator records are the group, share and transaction coordinators' log records: a
``coordinator-key`` and a ``coordinator-value`` per record type, the type being their common
``apiKey``. On disk a key is ``int16 apiKey`` + the key at version 0 and a value is
``int16 version`` + the value at that version, so a key has exactly version 0 and no flexible
versions. Sources: docs/kafka-versions.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import by_api_key, versioned
from linter.engine.checks.registry import check
from linter.engine.context import DirectoryContext, FileContext, Hit
from linter.model.spec import MessageSpec
from linter.model.versions import Versions

_VERSION_ZERO = Versions(0, 0)


def _coordinator_key(ctx: FileContext) -> tuple[MessageSpec, Versions] | None:
    """A coordinator-key with its valid versions, when this target's generator knows the type."""
    found = versioned(ctx)
    if found is None or found[0].type != "coordinator-key" or "coordinator-key" not in ctx.target.message_types:
        return None
    return found


@check("coordinator-key-version-zero")
def coordinator_key_version_zero(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A coordinator key is written at version 0: its record type is the apiKey, not the version."""
    found = _coordinator_key(ctx)
    if found is not None and found[1] != _VERSION_ZERO:
        message = found[0]
        yield Hit(("validVersions",), f'coordinator-key {message.name} has validVersions "{message.valid_versions.text}"'
                  '; a coordinator key has exactly version "0" (its record type is its apiKey)')


@check("coordinator-key-not-flexible")
def coordinator_key_not_flexible(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A coordinator key has no flexible versions: its bytes must stay readable by every coordinator."""
    found = _coordinator_key(ctx)
    if found is not None and not found[0].flexible.empty:
        message = found[0]
        yield Hit(("flexibleVersions",), f'coordinator-key {message.name} has flexibleVersions "{message.flexible}"; '
                  'coordinator keys support none')


@check("coordinator-record-complete", scope="directory")
def coordinator_record_complete(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Every coordinator record type has a key and a value (Kafka generates one enum entry from both)."""
    if not directory.complete or any(ctx.message is None for ctx in directory.files):
        return  # an unreadable file may be the missing half
    keys, values = by_api_key(directory, "coordinator-key"), by_api_key(directory, "coordinator-value")
    for have, other, table, partners in (("coordinator-key", "value", keys, values),
                                         ("coordinator-value", "key", values, keys)):
        for api_key, owners in sorted(table.items()):
            ctx, message = owners[0]
            if api_key not in partners and have in ctx.target.message_types:
                yield Hit(("apiKey",), f"coordinator record {api_key} has no {other}: {have} {message.name} has no "
                          f"coordinator-{other} with apiKey {api_key} in {directory.directory.name}/", file=ctx.path)


@check("coordinator-record-names", scope="directory")
def coordinator_record_names(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """The key and value of one record type are named ``XKey`` and ``XValue``, so readers find the pair."""
    keys, values = by_api_key(directory, "coordinator-key"), by_api_key(directory, "coordinator-value")
    for api_key, owners in sorted(keys.items()):
        if api_key not in values or len(owners) != 1 or len(values[api_key]) != 1:
            continue
        (key_ctx, key), (value_ctx, value) = owners[0], values[api_key][0]
        key_name, value_name = key.name or "", value.name or ""
        stem = key_name[:-3] if key_name.endswith("Key") else None
        if stem is None:
            yield Hit(("name",), f"coordinator-key {key_name} (apiKey {api_key}) should end with Key", file=key_ctx.path)
        elif value_name != stem + "Value":
            yield Hit(("name",), f"coordinator-value {value_name} has the apiKey {api_key} of {key_name}; name it "
                      f"{stem}Value (or give it the apiKey of its own key)", file=value_ctx.path)


_LEFTOVERS = (("fields", "its fields are never generated"),
              ("flexibleVersions", "there is no version to be flexible"),
              ("listeners", "no listener serves an API without versions"),
              ("latestVersionUnstable", "there is no latest version"),
              ("headerVersions", "there is no version to frame"),
              ("commonStructs", "no field uses them"))


@check("removed-api-leftovers")
def removed_api_leftovers(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A removed API (validVersions none) keeps only what reserves its apiKey; Kafka ignores the rest."""
    message = ctx.message
    if message is None or not message.removed or not ctx.target.removed_apis:
        return
    for key, why in _LEFTOVERS:
        value = message.raw.get(key)
        if value not in (None, [], {}, False, ""):
            yield Hit((key,), f'{message.name} has no versions (validVersions "{message.valid_versions.text}"), so '
                      f"{key} is ignored: {why}", at_key=True)
