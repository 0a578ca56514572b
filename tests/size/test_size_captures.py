"""``size --frames CAPTURE``: a packet capture is a corpus like any other (recognised by its first bytes), its
undecodable frames counted and reported, figures given for the rest (issue 27, points 2 and 3)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO_ROOT, require_shared

CAPTURE = REPO_ROOT / "fixtures" / "captures" / "kafkajs.pcap"


def test_size_reads_a_capture_and_reports_what_it_cannot_decode() -> None:
    """kafkajs against librdkafka's mock cluster: the mock's LeaveGroup v3 response does not decode (its Members
    array is cut short), so it is counted as refused, and every other frame is sized."""
    specs = require_shared("kafka-specs", "4.3")
    result = subprocess.run([sys.executable, "-m", "linter.cli.main", "size", "--frames", str(CAPTURE),
                             "--format", "json", str(specs)], capture_output=True, text=True, cwd=REPO_ROOT,
                            check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    sized = {entry["name"] for entry in report["messages"]}
    assert {"ProduceRequest", "FetchResponse", "JoinGroupRequest", "MetadataResponse"} <= sized
    assert [(refused["direction"], refused["api_key"], refused["api_version"]) for refused in report["refused"]] \
        == [("response", 13, 3)]
    assert "LeaveGroupResponse v3" in report["refused"][0]["first_error"]
    stderr = result.stderr.splitlines()
    assert any(line.startswith("krpc-lint: 1 capture, ") for line in stderr), stderr
    assert any(line.endswith(", 1 not decodable") for line in stderr), stderr
