"""What each client really sent: its calls (API, version) with request counts, from frames or request logs.

One ``Usage`` gathers a run, whatever its inputs: rows of frames extracted from captures (each carries its
client id and the software its connection's ApiVersions v3+ request named), rows of a frames corpus (the client
id read from each request's header), and lines of a broker's request log. A client is the triple (client id,
software name, software version). Besides the calls, what decides whether a client can negotiate past a removed
version: whether it sent ApiVersions at all (KIP-35 negotiation), and the highest version of each API a broker
offered it in ApiVersions responses (a client picks the highest version both sides have, so a version below the
broker's offer is the client's own highest).

Usages of parts of a run (a Spark task each) merge into the usage of the whole (``merge``), with the same totals.
Memory is bounded: at most ``MAX_CLIENTS`` clients and ``MAX_ADDRESSES`` addresses each; the rest is counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linter.frames.kafka_facts import API_VERSIONS, Requests, v0_error_layout
from linter.frames.traffic import Tally

if TYPE_CHECKING:
    from linter.codec import Codec
    from linter.readiness.request_log import LoggedRequest

ClientKey = tuple[str | None, str | None, str | None]  # client id, software name, software version
MAX_CLIENTS = 100_000
MAX_ADDRESSES = 64
TOO_MANY_CLIENTS = f"requests of clients over {MAX_CLIENTS:,} (not reported)"
NO_HEADER = "requests without a readable header"
REQUEST = "request"


@dataclass
class ClientUsage:
    """One client's calls and what shows how it negotiates."""

    calls: Counter[tuple[int, int]] = field(default_factory=Counter)  # (api_key, version) -> requests
    addresses: set[str] = field(default_factory=set)  # client hosts
    negotiates: bool = False  # it sent ApiVersions
    offered: dict[int, int] = field(default_factory=dict)  # api_key -> highest version a broker offered it
    flagged: set[tuple[int, int]] = field(default_factory=set)  # calls a request log marked deprecated

    def merge(self, other: ClientUsage) -> None:
        self.calls.update(other.calls)
        self.addresses |= set(sorted(other.addresses)[:max(0, MAX_ADDRESSES - len(self.addresses))])
        self.negotiates = self.negotiates or other.negotiates
        for api_key, highest in other.offered.items():
            self.offered[api_key] = max(highest, self.offered.get(api_key, -1))
        self.flagged |= other.flagged


@dataclass
class Usage:
    """The clients of a run, with what its inputs held and could not use."""

    clients: dict[ClientKey, ClientUsage] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)
    files: int = 0
    frames: int = 0
    requests: int = 0
    log_lines: int = 0

    def client(self, key: ClientKey) -> ClientUsage | None:
        """The usage of ``key``, made on first sight; None past ``MAX_CLIENTS`` (counted by the caller)."""
        found = self.clients.get(key)
        if found is None and len(self.clients) < MAX_CLIENTS:
            found = self.clients[key] = ClientUsage()
        return found

    def call(self, key: ClientKey, api_key: int, version: int, address: str | None, count: int = 1) -> None:
        """``count`` requests of ``key`` at (``api_key``, ``version``), from ``address`` when known."""
        self.requests += count
        usage = self.client(key)
        if usage is None:
            self.tally[TOO_MANY_CLIENTS] += count
            return
        usage.calls[(api_key, version)] += count
        if api_key == API_VERSIONS:
            usage.negotiates = True
        if address is not None and len(usage.addresses) < MAX_ADDRESSES:
            usage.addresses.add(address)

    def logged(self, request: LoggedRequest) -> None:
        """A request a broker's request log recorded."""
        self.log_lines += 1
        key = (request.client_id, request.software_name, request.software_version)
        self.call(key, request.api_key, request.api_version, client_host(request.connection))
        usage = self.clients.get(key)
        if request.deprecated and usage is not None:
            usage.flagged.add((request.api_key, request.api_version))

    def merge(self, other: Usage) -> None:
        """Add the usage of another part of the run."""
        for key, theirs in other.clients.items():
            ours = self.client(key)
            if ours is None:
                self.tally[TOO_MANY_CLIENTS] += sum(theirs.calls.values())
            else:
                ours.merge(theirs)
        self.tally.update(other.tally)
        self.files += other.files
        self.frames += other.frames
        self.requests += other.requests
        self.log_lines += other.log_lines


class FrameReader:
    """Frame rows into a ``Usage``: requests counted per client, ApiVersions responses read for what a broker
    offered. The codec reads request headers (a corpus without a client id column) and ApiVersions responses."""

    def __init__(self, usage: Usage, codec: Codec) -> None:
        self.usage = usage
        self.requests = Requests(codec)

    def row(self, direction: Any, api_key: Any, api_version: Any, data: bytes | None, client_id: Any = None,
            software_name: Any = None, software_version: Any = None, connection: Any = None,
            has_client: bool = True) -> None:
        """One frame; ``has_client`` False for a corpus whose rows carry no client id (read from the header)."""
        usage = self.usage
        usage.frames += 1
        if direction == REQUEST:
            if not has_client and data is not None and len(data) >= 12:
                header = self.requests.header(data)
                api_key, api_version, client_id = header.api_key, header.api_version, header.client_id
            if not isinstance(api_key, int) or not isinstance(api_version, int):
                usage.tally[NO_HEADER] += 1
                return
            usage.call((client_id, software_name, software_version), api_key, api_version, client_host(connection))
        elif api_key == API_VERSIONS and has_client and data is not None and isinstance(api_version, int):
            self._offered((client_id, software_name, software_version), api_version, data)

    def _offered(self, key: ClientKey, api_version: int, data: bytes) -> None:
        """The versions an ApiVersions response offered (at version 0 when it is KIP-511's error layout)."""
        usage = self.usage.client(key)
        if usage is None:
            return
        version = 0 if v0_error_layout(data) else api_version
        try:
            body = self.requests.codec.decode_response(API_VERSIONS, version, data)[1]
        except (ValueError, KeyError):
            self.usage.tally["ApiVersions responses not decodable"] += 1
            return
        for entry in body.get("apiKeys") or ():
            api_key, highest = entry.get("apiKey"), entry.get("maxVersion")
            if isinstance(api_key, int) and isinstance(highest, int):
                usage.offered[api_key] = max(highest, usage.offered.get(api_key, -1))


def client_host(connection: Any) -> str | None:
    """The client's host of a ``client:port > broker:port`` connection (``frames extract``'s column).

    >>> client_host("10.0.0.7:51234 > 10.0.0.1:9092"), client_host("[::1]:5 > [::1]:9092"), client_host(None)
    ('10.0.0.7', '::1', None)
    """
    if not isinstance(connection, str) or not connection:
        return None
    client = connection.split(" > ", 1)[0]
    host = client.rsplit(":", 1)[0] if ":" in client else client
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


__all__ = ["MAX_ADDRESSES", "MAX_CLIENTS", "ClientKey", "ClientUsage", "FrameReader", "Usage", "client_host"]
