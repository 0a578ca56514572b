"""Across the files of a directory: apiKeys, and requests with their responses (rules KL255, KL702-KL704); what
Kafka's tests assert across a request and its response is in ``kafka_tests``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from linter.engine.checks.common import by_api_key, request_response_pairs
from linter.engine.checks.registry import RPC_TYPE, check, options
from linter.engine.context import DirectoryContext, Hit


@check("unique-api-key", scope="directory")
def unique_api_key(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """One request, one response, one metadata record and one coordinator key and value per apiKey in a
    directory; a removed API (validVersions none) keeps its apiKey reserved."""
    for kind in ("request", "response", "metadata", "coordinator-key", "coordinator-value"):
        for key, owners in by_api_key(directory, kind).items():
            first = owners[0][1]
            owner = f"removed {kind} {first.name} (validVersions none)" if first.removed else f"{kind} {first.name}"
            for ctx, message in owners[1:]:
                yield Hit(("apiKey",), f"{kind} {message.name} has apiKey {key}, already used by {owner}",
                          file=ctx.path)


@check("paired-api", scope="directory", options_schema=options(of=RPC_TYPE))
def paired_api(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """Every request has a response with its apiKey (``of: request``, the default), and the reverse
    (``of: response``)."""
    if not directory.complete or any(ctx.message is None for ctx in directory.files):
        return  # an unreadable file may be the missing partner: absence is not proven
    have, want = ("request", "response") if options.get("of", "request") == "request" else ("response", "request")
    partners = by_api_key(directory, want)
    for key, owners in by_api_key(directory, have).items():
        if key not in partners:
            ctx, message = owners[0]
            yield Hit(("apiKey",), f"{have} {message.name} (apiKey {key}) has no {want} in {directory.directory.name}/",
                      file=ctx.path)


@check("request-response-agree", scope="directory")
def request_response_agree(directory: DirectoryContext, options: dict[str, Any]) -> Iterator[Hit]:
    """A request and its response share flexibleVersions (they are negotiated together), and the response is named
    after the request. validVersions is KL3001's (request-response-versions): Kafka's build fails on it."""
    for key, _, request, response_ctx, response in request_response_pairs(directory):
        left, right = request.flexible_versions.value, response.flexible_versions.value
        if left is not None and right is not None and left != right:
            yield Hit(("flexibleVersions",), f"{response.name} has flexibleVersions {right} but {request.name} has "
                      f"{left}", file=response_ctx.path)
        if request.name and response.name and request.name.endswith("Request") \
                and response.name != request.name[: -len("Request")] + "Response":
            yield Hit(("name",), f"{response.name} answers {request.name} (apiKey {key}); expected "
                      f"{request.name[:-len('Request')]}Response", file=response_ctx.path)
