"""``frames check`` on real clients' traffic: every finding is one docs/wire-check.md explains ("Findings on real
traffic"), the clients' requests are clean but for the documented deviations, and every documented row is still
seen. The committed captures are checked always; captures made now by ``bench/captures.py`` (the Python clients
against librdkafka's mock cluster, under tcpdump) where tcpdump can capture and the clients are installed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared, unavailable
from support.old_clients import make_captures, why_not_live

from linter.codec import Codec
from linter.engine.config import Config
from linter.frames.inputs import Inputs
from linter.wirecheck.findings import WireFinding, selection
from linter.wirecheck.run import Run

DOC = REPO_ROOT / "docs" / "wire-check.md"
CAPTURES = REPO_ROOT / "fixtures" / "captures"
COMMITTED = ("confluent-kafka", "kafka-python", "aiokafka", "kafkajs", "kafka-python-0_10", "librdkafka-0_9")
LIVE = ("confluent-kafka", "kafka-python", "aiokafka")  # kafkajs needs npm's network; its capture is committed
LIVE_MODULES = ("confluent_kafka", "kafka", "aiokafka")
SPECS = {"trunk-2024-10": "trunk-2024-10", "4.3": "4.3"}


@dataclass(frozen=True)
class Row:
    """A documented finding: each column a value or ``*``; versions a number, a range ``A-B`` or ``*``."""

    capture: str
    direction: str
    apis: tuple[str, ...]
    versions: str
    rule: str
    specs: str

    def covers(self, key: tuple[str, str, str, int, str, str]) -> bool:
        capture, direction, api, version, rule, specs = key
        low, _, high = self.versions.partition("-")
        return (self.capture in ("*", capture) and self.direction in ("*", direction)
                and ("*" in self.apis or api in self.apis) and rule == self.rule and self.specs in ("*", specs)
                and (self.versions == "*" or int(low) <= version <= int(high or low)))


def documented() -> list[Row]:
    """The rows of the table between the ``real-traffic-findings`` markers of docs/wire-check.md."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- real-traffic-findings")[1].split("<!-- end real-traffic-findings -->")[0]
    rows = []
    for line in table.splitlines()[3:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 7:
            rows.append(Row(cells[0], cells[1], tuple(api.strip() for api in cells[2].split(",")), cells[3],
                            cells[4], cells[5]))
    assert len(rows) >= 8, "the documented table was not found in docs/wire-check.md"
    return rows


def _key(finding: WireFinding, specs: str, names: dict[int, str]) -> tuple[str, str, str, int, str, str]:
    """(capture, direction, API name as the specs say it, version, rule, specs) of a finding."""
    seen = finding.seen
    api = names.get(seen.api_key, "?") if seen.api_key is not None else "?"
    return (Path(seen.input).stem, seen.direction or "?", api, -1 if seen.api_version is None else seen.api_version,
            finding.rule.id, specs)


def check(captures: list[Path], specs: str) -> list[tuple[tuple[str, str, str, int, str, str], WireFinding]]:
    """Every finding of the captures (each read as its own stream) against one of ../shared's spec sets."""
    codec = Codec.load(require_shared("kafka-specs", SPECS[specs]))
    found = []
    for capture in captures:
        run = Run(codec, selection(Config(profile="strict")))
        collector = run.read(Inputs(captures=[str(capture)]))
        assert collector.unexplained == 0, f"{capture.name}: frames not canonical that the walk found nothing in"
        assert collector.unreadable_count == 0, collector.unreadable
        assert collector.reported == len(collector.findings)
        found += [(_key(finding, specs, collector.names), finding) for finding in collector.findings]
    return found


def undocumented(found: list[tuple[tuple[str, str, str, int, str, str], WireFinding]],
                 rows: list[Row]) -> list[str]:
    return sorted({f"{key}: {finding.message}" for key, finding in found if not any(row.covers(key) for row in rows)})


@pytest.mark.parametrize("specs", sorted(SPECS))
def test_every_finding_on_the_committed_captures_is_documented(specs: str) -> None:
    found = check([CAPTURES / f"{name}.pcap" for name in COMMITTED], specs)
    assert found, "the captures hold the mock broker's known deviations: a check that finds nothing is broken"
    assert undocumented(found, documented()) == []


def test_every_documented_finding_is_still_seen() -> None:
    """A row nothing produces any more is stale: the table says what the traffic holds, no more."""
    found = [key for specs in SPECS for key, _ in check([CAPTURES / f"{name}.pcap" for name in COMMITTED], specs)]
    stale = [row for row in documented() if not any(row.covers(key) for key in found)]
    assert stale == []


def test_the_clients_requests_are_clean_but_for_the_documented_deviation() -> None:
    """Requests (the clients' own bytes) give no warning or error, except librdkafka's Metadata v13 request."""
    errors = [(key, finding.message) for specs in SPECS
              for key, finding in check([CAPTURES / f"{name}.pcap" for name in COMMITTED], specs)
              if key[1] == "request" and finding.rule.severity in ("error", "warning")]
    assert [key[:5] for key, _ in errors] == [("confluent-kafka", "request", "Metadata", 13, "KL2001")], errors
    assert "fit the layout of versions 9, 10" in errors[0][1]


def test_captures_made_now_of_the_python_clients_hold_only_documented_findings(tmp_path: Path) -> None:
    reason = why_not_live(LIVE_MODULES)
    if reason is not None:
        unavailable(f"cannot capture the clients here: {reason}")
    captures = make_captures(tmp_path, LIVE)
    rows = documented()
    for specs in SPECS:
        found = check(captures, specs)
        assert undocumented(found, rows) == []
        requests = [key for key, finding in found
                    if key[1] == "request" and finding.rule.severity in ("error", "warning")]
        assert {key[:5] for key in requests} <= {("confluent-kafka", "request", "Metadata", 13, "KL2001")}
