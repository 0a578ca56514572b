"""What Kafka's own unit tests assert over every API (rules KL3001 and up, category ``kafka-tests``): a spec that
Kafka's generator accepts can still fail Kafka's build, because tests such as ``ApiMessageTypeTest`` and
``ApiKeysTest`` loop over every request and response. Each check names its test; docs/kafka-tests.md lists every
invariant with its source file and commit, and the ones that need Java code (``ApiKeys`` flags) and are no rule."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import request_response_pairs
from linter.engine.checks.registry import check
from linter.engine.context import DirectoryContext, FileContext, Hit
from linter.model.spec import MessageSpec
from linter.model.targets import DEFAULT_TARGET

# KIP-595's quorum APIs, which ApiVersionsResponseTest.testMetadataQuorumApisAreDisabled keeps off the ZooKeeper
# broker's ApiVersions (VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, DESCRIBE_QUORUM).
QUORUM_API_KEYS = {52: "Vote", 53: "BeginQuorumEpoch", 54: "EndQuorumEpoch", 55: "DescribeQuorum"}


def _fails(test: str, why: str) -> str:
    """The end of every finding of the family: which test of Kafka's fails, and what it asserts."""
    return f": Kafka's build fails ({test}: {why})"


def _named(ctx: FileContext, message: MessageSpec) -> str:
    """The message's name, or its file's when the name is missing or no string."""
    return message.name or os.path.basename(ctx.path)


def _request(ctx: FileContext) -> MessageSpec | None:
    """The file's request, unless it is a removed API (``validVersions: none``), which the tests skip."""
    message = ctx.message
    return message if message is not None and message.type == "request" and not message.removed else None


@check("request-response-versions", scope="directory")
def request_response_versions(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A request and its response have the same validVersions (ApiMessageTypeTest.testAllVersionsHaveSchemas: the
    two schema arrays have one length, and a schema below the request's lowest version is null in both)."""
    for pair in request_response_pairs(directory):
        request, response = pair.request, pair.response
        left, right = request.versions, response.versions
        if left is None or right is None or left == right or (left.empty and right.empty):
            continue
        yield Hit(("validVersions",), f"{_named(pair.response_ctx, response)} has validVersions "
                  f"{response.valid_versions.value} but {_named(pair.request_ctx, request)} has "
                  f"{request.valid_versions.value}"
                  + _fails("ApiMessageTypeTest.testAllVersionsHaveSchemas",
                           "a request and its response have schemas for the same versions"),
                  file=pair.response_ctx.path)


@check("api-key-non-negative")
def api_key_non_negative(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A request's apiKey is 0 or more (ApiMessageTypeTest.testApiIdsArePositive); Kafka's generator takes any
    Java short."""
    message = ctx.message
    if message is not None and message.type == "request" and message.api_key is not None and message.api_key < 0:
        yield Hit(("apiKey",), f"{message.name} has apiKey {message.api_key}"
                  + _fails("ApiMessageTypeTest.testApiIdsArePositive", "every apiKey is >= 0"))


@check("unique-message-names", scope="directory")
def unique_message_names(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """No two requests, and no two responses, share a name: the generated data classes and ApiMessageType's
    constants are named after them, so the build fails to compile, and ApiMessageTypeTest.testUniqueness asserts
    the names unique. Removed APIs too: they stay constants of ApiMessageType."""
    for kind in ("request", "response"):
        first: dict[str, str] = {}
        for ctx, message in directory.messages():
            if message.type != kind or not message.name:
                continue
            if message.name in first:
                yield Hit(("name",), f"{kind} {message.name} is also the name of {first[message.name]}: Kafka's "
                          f"build fails (two generated classes {message.name}Data; ApiMessageTypeTest.testUniqueness "
                          f"asserts no two ApiMessageType objects share a {kind}Name)", file=ctx.path)
            else:
                first[message.name] = ctx.path


@check("listeners-declared", scope="directory")
def listeners_declared(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A request with versions names the listeners that serve it (ApiKeysTest.testApiScope: no API without a
    scope). Specs from before listeners (Kafka 2.7 and earlier) have no such key: a directory is checked when one of
    its requests has ``listeners``, or when ``--kafka-version`` names a release (2.8 and later)."""
    requests = [(ctx, request) for ctx in directory.files if (request := _request(ctx)) is not None]
    named_release = any(ctx.target.name != DEFAULT_TARGET for ctx, _ in requests)
    if not named_release and not any("listeners" in request.raw for _, request in requests):
        return
    for ctx, request in requests:
        if request.versions is None or request.listeners:
            continue
        where = ("listeners",) if "listeners" in request.raw else ("type",)
        yield Hit(where, f"{request.name} lists no listeners"
                  + _fails("ApiKeysTest.testApiScope", "Found some APIs missing scope definition"),
                  at_key=where == ("type",), file=ctx.path)


@check("quorum-apis-not-on-zk-broker")
def quorum_apis_not_on_zk_broker(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """KIP-595's quorum APIs (apiKeys 52-55) are not served by the ZooKeeper broker
    (ApiVersionsResponseTest.testMetadataQuorumApisAreDisabled)."""
    request = _request(ctx)
    if request is None or request.api_key not in QUORUM_API_KEYS or "zkBroker" not in request.listeners:
        return
    raw = request.raw.get("listeners")
    where = ("listeners", raw.index("zkBroker")) if isinstance(raw, list) else ("listeners",)
    yield Hit(where, f"{request.name} (apiKey {request.api_key}) lists zkBroker"
              + _fails("ApiVersionsResponseTest.testMetadataQuorumApisAreDisabled",
                       "the APIs of the KRaft quorum are not exposed through the ZooKeeper broker's ApiVersions"))


@check("versions-start-at-zero")
def versions_start_at_zero(ctx: FileContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A request's versions start at 0 (ApiMessageTypeTest.testAllVersionsHaveSchemas before KIP-896: "Kafka
    currently supports direct upgrades from 0.8 to the latest version")."""
    request = _request(ctx)
    if request is None or request.versions is None or request.versions.empty or request.versions.lowest == 0:
        return
    yield Hit(("validVersions",), f"{request.name} starts at version {request.versions.lowest}"
              + _fails("ApiMessageTypeTest.testAllVersionsHaveSchemas", "lowestSupportedVersion must be 0"))
