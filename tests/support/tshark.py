"""What Wireshark's Kafka dissector reads from a capture: the independent check of frame headers (issue 27).

The frames reader cuts Kafka frames out of captures with the specs; tshark's dissector is a separate,
hand-kept reading of the same bytes. Where both agree on every request's (api_key, api_version,
correlation_id) and on which response answers which request, neither is wrong in the same way.
Written and checked with TShark 4.0.17 (Debian 12); its dissector stops at API key 74 and calls some
current versions malformed, so only the headers are taken from it, never the bodies.

Each committed capture in ``fixtures/captures/`` has this reading beside it as JSON Lines (``*.tshark.jsonl``),
so tests run where tshark is not installed; where it is, they read the capture live and compare.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

#: the fields of one Kafka PDU kept from the dissector, and their names in the JSON
FIELDS = {
    "kafka.request_key": "api_key",
    "kafka.response_key": "api_key",
    "kafka.request.version": "api_version",
    "kafka.response.version": "api_version",
    "kafka.correlation_id": "correlation_id",
    "kafka.response_frame": "response_frame",
    "kafka.request_frame": "request_frame",
}
TIMEOUT = 120


def available() -> bool:
    """Whether tshark is on PATH."""
    return shutil.which("tshark") is not None


def version() -> str:
    """tshark's first version line, e.g. ``TShark (Wireshark) 4.0.17 (...)``."""
    out = _run(["tshark", "--version"])
    return out.splitlines()[0].strip()


def server_port(capture: Path) -> int:
    """The port that answered the capture's first connection (the SYN-ACK's source port): the broker's."""
    out = _run(["tshark", "-r", str(capture), "-Y", "tcp.flags.syn == 1 && tcp.flags.ack == 1",
                "-T", "fields", "-e", "tcp.srcport"])
    return int(out.split()[0])


def kafka_pdus(capture: Path, port: int | None = None) -> list[dict[str, Any]]:
    """Every Kafka PDU tshark finds, requests and responses, in capture order.

    Each is ``{"frame", "stream", "kind", "api_key", "api_version", "correlation_id", "client_id"?,
    "response_frame"? | "request_frame"?}``: ``frame`` is the packet that completes the PDU, ``stream``
    tshark's TCP stream index; a response's api_key and api_version are tshark's, from its request.
    """
    port = server_port(capture) if port is None else port
    out = _run(["tshark", "-r", str(capture), "-d", f"tcp.port=={port},kafka", "-Y", "kafka",
                "-T", "json", "--no-duplicate-keys", "-j", "frame tcp kafka"])
    pdus: list[dict[str, Any]] = []
    for packet in json.loads(out) if out.strip() else []:
        layers = packet["_source"]["layers"]
        kafka = layers["kafka"]
        for layer in kafka if isinstance(kafka, list) else [kafka]:
            pdus.append(_pdu(layer, int(layers["frame"]["frame.number"]), int(_first(layers["tcp"]["tcp.stream"]))))
    return pdus


def request_headers(capture: Path, port: int | None = None) -> list[tuple[int, int, int]]:
    """Every request's ``(api_key, api_version, correlation_id)``, in capture order."""
    return [(p["api_key"], p["api_version"], p["correlation_id"]) for p in kafka_pdus(capture, port)
            if p["kind"] == "request"]


def reading(capture: Path, port: int | None = None) -> dict[str, Any]:
    """What is kept beside a committed capture: the port decoded as Kafka, tshark's version, the PDUs."""
    port = server_port(capture) if port is None else port
    return {"capture": capture.name, "port": port, "tshark": version(), "pdus": kafka_pdus(capture, port)}


def committed(capture: Path) -> dict[str, Any]:
    """The reading committed beside ``capture`` (``NAME.tshark.jsonl``), as ``reading`` returns it."""
    head, *pdus = (json.loads(line) for line in sidecar(capture).read_text(encoding="utf-8").splitlines())
    return {**head, "pdus": pdus}


def write(capture: Path, port: int | None = None) -> Path:
    """Read ``capture`` with tshark and keep the reading beside it; the file written.

    JSON Lines: the first line says which capture, port and tshark, then one PDU a line (a diff shows
    which PDUs changed; and fixtures' ``*.json`` files are lint fixtures, which this is not).
    """
    found = reading(capture, port)
    pdus = found.pop("pdus")
    lines = [json.dumps(found)] + [json.dumps(pdu) for pdu in pdus]
    path = sidecar(capture)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sidecar(capture: Path) -> Path:
    """``fixtures/captures/x.pcap`` -> ``fixtures/captures/x.tshark.jsonl``."""
    return capture.with_name(capture.name.split(".")[0] + ".tshark.jsonl")


def _pdu(layer: dict[str, Any], frame: int, stream: int) -> dict[str, Any]:
    pdu: dict[str, Any] = {"frame": frame, "stream": stream,
                           "kind": "request" if "kafka.request_key" in layer else "response"}
    for field, name in FIELDS.items():
        if field in layer:
            pdu[name] = int(_first(layer[field]))
    if "kafka.client_id" in layer:
        pdu["client_id"] = _first(layer["kafka.client_id"])
    return pdu


def _first(value: Any) -> Any:
    """A field tshark repeats within one PDU comes as a list: its first occurrence is the header's."""
    return value[0] if isinstance(value, list) else value


def _run(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, check=True)
    return done.stdout
