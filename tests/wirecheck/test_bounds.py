"""What a hostile capture names (client ids, API keys, versions) never grows ``frames check``'s memory without bound:
the summary rows, the kinds of frame remembered and the findings kept are capped, and every frame is still counted."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from support.headers import REQUEST_HEADER, RESPONSE_HEADER

from linter.codec import Codec
from linter.engine.config import Config
from linter.frames.inputs import Inputs
from linter.wirecheck import findings as findings_module
from linter.wirecheck import frame as frame_module
from linter.wirecheck.findings import OTHERS, selection
from linter.wirecheck.run import Run

SPECS = {"RequestHeader.json": json.dumps(REQUEST_HEADER).encode(),
         "ResponseHeader.json": json.dumps(RESPONSE_HEADER).encode(),
         "PingRequest.json": b'{"apiKey": 1000, "type": "request", "name": "PingRequest", "validVersions": "0", '
                             b'"flexibleVersions": "none", "fields": [{"name": "Id", "type": "int32", "versions": "0+"}]}',
         "PingResponse.json": b'{"apiKey": 1000, "type": "response", "name": "PingResponse", "validVersions": "0", '
                              b'"flexibleVersions": "none", "fields": []}'}


def request(api_key: int, api_version: int, client_id: str) -> str:
    """A request frame (header v1 and an int32 body) as hex."""
    name = client_id.encode()
    payload = struct.pack(">hhih", api_key, api_version, 7, len(name)) + name + struct.pack(">i", 5)
    return (struct.pack(">i", len(payload)) + payload).hex()


def run(tmp_path: Path, lines: list[dict[str, object]]) -> tuple[Run, findings_module.Collector]:
    corpus = tmp_path / "hostile.jsonl"
    corpus.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    checker = Run(Codec.from_files(SPECS), selection(Config(profile="strict")))
    return checker, checker.read(Inputs(corpora=[str(corpus)]))


def test_summary_rows_and_kinds_are_capped_however_many_senders_and_keys(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(findings_module, "MAX_GROUPS", 40)
    monkeypatch.setattr(frame_module, "UNKNOWN_KEPT", 30)
    lines: list[dict[str, object]] = [{"direction": "request", "hex": request(2000 + n % 300, n % 7, f"client-{n}")}
                                      for n in range(600)]
    lines += [{"direction": "request", "hex": request(1000, 0, f"good-{n}")} for n in range(100)]
    checker, collector = run(tmp_path, lines)
    assert collector.frames == 700
    assert len(collector.groups) <= 41 and OTHERS in collector.groups
    assert sum(group.frames for group in collector.groups.values()) == 700  # every frame still counted
    assert len(checker.checker._kinds) <= 31
    assert collector.severities["info"] == 600  # each unknown API reported, cached or not


def test_findings_kept_are_capped_and_the_rest_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(findings_module, "MAX_KEPT", 25)
    _, collector = run(tmp_path, [{"direction": "request", "hex": request(1000, 0, "c") + "00"} for _ in range(90)])
    assert len(collector.findings) == 25 and collector.severities["error"] == 90  # trailing byte in each
    assert collector.failed("error") and len(collector.kinds) == 1
