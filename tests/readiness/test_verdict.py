"""Verdicts of calls and clients against a target (issue 28): each verdict from its own ranges, negotiation
deciding between a break and a risk, the report's order and counts, and merging usages as Spark tasks do."""

from __future__ import annotations

import json

import pytest

from linter.readiness.target import ApiRange, Target
from linter.readiness.usage import Usage, client_host
from linter.readiness.verdict import (
    ABSENT,
    AT_RISK,
    BREAKS,
    DEPRECATED,
    NEWER,
    READY,
    REMOVED,
    SUPPORTED,
    call_verdict,
    failing,
    report,
)

TARGET = Target("t", "test ranges", {
    0: ApiRange(0, "Produce", 3, 13),
    1: ApiRange(1, "Fetch", 4, 18, deprecated=(4, 6)),
    18: ApiRange(18, "ApiVersions", 0, 4),
})
KEY = ("app", "librdkafka", "2.3.0")


@pytest.mark.parametrize(("api_key", "version", "verdict"), [
    (0, 2, REMOVED), (0, 3, SUPPORTED), (0, 13, SUPPORTED), (0, 14, NEWER), (1, 5, DEPRECATED), (1, 7, SUPPORTED),
    (99, 0, ABSENT),
])
def test_call_verdict(api_key: int, version: int, verdict: str) -> None:
    assert call_verdict(TARGET, api_key, version) == verdict


def _client(usage: Usage) -> dict[str, object]:
    (client,) = report(TARGET, usage)["clients"]
    return client


def test_a_removed_version_breaks_a_client_that_does_not_negotiate() -> None:
    usage = Usage()
    usage.call(KEY, 0, 2, "10.0.0.7", count=5)
    client = _client(usage)
    assert client["verdict"] == BREAKS and client["negotiates"] is False
    assert client["reasons"] == ["Produce v2: removed (target has 3-13)"]
    assert client["calls"] == [{"api_key": 0, "api": "Produce", "version": 2, "requests": 5, "verdict": REMOVED,
                                "target_versions": "3-13",
                                "note": "the client never sent ApiVersions: it does not negotiate"}]


def test_a_removed_version_below_what_the_broker_offered_breaks_a_negotiating_client() -> None:
    usage = Usage()
    usage.call(KEY, 18, 3, None)
    usage.call(KEY, 0, 2, None)
    usage.clients[KEY].offered[0] = 9
    assert _client(usage)["verdict"] == BREAKS


def test_a_removed_version_that_was_the_brokers_highest_is_a_risk() -> None:
    usage = Usage()
    usage.call(KEY, 18, 3, None)
    usage.call(KEY, 0, 2, None)
    usage.clients[KEY].offered[0] = 2  # the client may support more than the old broker offered
    client = _client(usage)
    assert client["verdict"] == AT_RISK
    assert "may support" in client["calls"][0]["note"]


def test_deprecated_and_newer() -> None:
    usage = Usage()
    usage.call(KEY, 18, 3, None)
    usage.call(KEY, 0, 14, None)
    assert _client(usage)["verdict"] == READY  # negotiates down
    usage.call(KEY, 1, 5, None)
    assert _client(usage)["verdict"] == AT_RISK
    silent = Usage()
    silent.call(KEY, 0, 14, None)
    assert _client(silent)["verdict"] == AT_RISK  # no ApiVersions seen: whether it negotiates down is not shown


def test_absent_api_breaks_unless_it_is_telemetry_of_a_negotiating_client() -> None:
    usage = Usage()
    usage.call(KEY, 99, 0, None)
    assert _client(usage)["verdict"] == BREAKS
    telemetry = Usage()
    telemetry.call(KEY, 18, 3, None)
    telemetry.call(KEY, 71, 0, None)
    client = _client(telemetry)
    assert client["verdict"] == READY and client["calls"][1]["verdict"] == ABSENT


def test_a_log_flag_makes_a_supported_call_deprecated() -> None:
    usage = Usage()
    usage.call(KEY, 0, 5, None)
    usage.clients[KEY].flagged.add((0, 5))
    assert _client(usage)["calls"][0]["verdict"] == DEPRECATED


def test_report_orders_worst_first_counts_and_honours_the_baseline() -> None:
    usage = Usage()
    usage.call(("ok", None, None), 0, 9, None, count=50)
    usage.call(("old", None, None), 0, 1, None)
    usage.call(("risky", None, None), 1, 5, None)
    document = report(TARGET, usage, accepted=[("old", None, None)])
    assert [c["client_id"] for c in document["clients"]] == ["old", "risky", "ok"]
    assert document["summary"] == {"clients": 3, "breaks": 1, "at_risk": 1, "ready": 1, "baselined": 1}
    assert failing(document) == []
    assert [c["client_id"] for c in failing(report(TARGET, usage))] == ["old"]


def test_merged_usages_are_the_usage_of_the_whole() -> None:
    whole, first, second = Usage(), Usage(), Usage()
    for part, (key, api_key, version) in zip([first, second, first, second],
                                             [(KEY, 0, 2), (KEY, 0, 2), (("b", None, None), 1, 7), (KEY, 18, 3)]):
        part.call(key, api_key, version, "h")
        whole.call(key, api_key, version, "h")
    first.tally["x"] += 1
    whole.tally["x"] += 1
    first.merge(second)
    assert report(TARGET, first) == report(TARGET, whole)


def test_client_host() -> None:
    assert client_host("10.1.2.3:5 > 10.0.0.1:9092") == "10.1.2.3"
    assert client_host("[fe80::1]:5 > [fe80::2]:9092") == "fe80::1"
    assert client_host("") is None


def test_the_json_format_escapes_what_the_wire_may_carry() -> None:
    """A client id is the client's to choose: in JSON it cannot start a CI workflow command or hide behind bidi
    characters, and the document still reads back to the same values."""
    from linter.readiness.formats import render

    hostile = "x\n##[error]pwned \u202e"
    usage = Usage()
    usage.call((hostile, "sw", "1"), 0, 2, None)
    text = render(report(TARGET, usage), "json")
    assert "##[" not in text and "\u202e" not in text
    assert json.loads(text)["clients"][0]["client_id"] == hostile
