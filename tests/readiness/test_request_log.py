"""Broker request logs (kafka.request.logger) read as the requests clients sent: the fixtures' three forms exactly,
and hostile input counted, bounded, never a traceback."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared

from linter.engine.checks.messages import snake_case
from linter.errors import KrpcLintError
from linter.frames.traffic import Tally
from linter.parse.document import load_document
from linter.readiness import request_log
from linter.readiness.request_log import (
    API_KEYS_2X,
    LoggedRequest,
    NotARequestLog,
    connection_of,
    is_request_log,
    read_request_log,
)

LOGS = REPO_ROOT / "fixtures" / "request-logs"
LOG_37 = LOGS / "kafka-request-3.7.0.log"
LOG_26 = LOGS / "kafka-request-2.6.0.log"
LOG_40 = LOGS / "kafka-request-4.0.0.log.2025-06-01-10.gz"
OTHER, UNREADABLE = request_log.OTHER, request_log.UNREADABLE

JAVA_37 = ("apache-kafka-java", "3.7.0")
BROKER = "10.0.0.5:9092"


def read(path: Path) -> tuple[list[LoggedRequest], Tally]:
    tally = Tally()
    return list(read_request_log(path, tally)), tally


def logged(key: int, version: int, client: str | None, software: tuple[str, str] | None, connection: str | None,
           deprecated: bool | None = None) -> LoggedRequest:
    name, release = software or (None, None)
    return LoggedRequest(key, version, client, name, release, connection, deprecated)


def test_a_3_7_log_gives_each_request_with_its_client_and_the_deprecated_flag() -> None:
    requests, tally = read(LOG_37)
    assert requests == [
        logged(18, 3, "producer-1", JAVA_37, f"10.0.0.21:53318 > {BROKER}"),
        logged(3, 12, "producer-1", JAVA_37, f"10.0.0.21:53318 > {BROKER}"),
        logged(0, 9, "producer-1", JAVA_37, f"10.0.0.22:40112 > {BROKER}"),
        logged(18, 3, "rdkafka", ("librdkafka", "2.3.0"), f"10.0.0.31:37002 > {BROKER}"),
        logged(1, 11, "rdkafka", ("librdkafka", "2.3.0"), f"10.0.0.31:37002 > {BROKER}"),
        logged(0, 2, "kafka-python-producer-1", None, f"10.0.0.41:52110 > {BROKER}", deprecated=True),
        logged(1, 3, "kafka-python-consumer-1", None, f"10.0.0.42:52200 > {BROKER}", deprecated=True),
    ]
    # a TRACE line of RequestChannel$, an ERROR line and its three stack-trace lines; the blank line is not counted
    assert tally == Tally({OTHER: 5})


def test_a_2_x_text_log_names_apis_by_their_constants_and_java_nulls_as_none() -> None:
    requests, tally = read(LOG_26)
    java = ("apache-kafka-java", "2.6.0")
    assert requests == [
        logged(18, 3, "producer-1", java, f"10.0.0.21:53318 > {BROKER}"),
        logged(0, 8, "producer-1", java, f"10.0.0.21:53318 > {BROKER}"),
        logged(1, 4, None, None, "[0:0:0:0:0:0:0:1]:50944 > [0:0:0:0:0:0:0:1]:9092"),
    ]
    assert tally == Tally({OTHER: 1})


def test_a_gzip_compressed_4_x_log_is_read_through() -> None:
    requests, tally = read(LOG_40)
    java, where = ("apache-kafka-java", "4.0.0"), "10.0.0.50:41000 > 10.0.0.6:9092"
    assert requests == [logged(18, 4, "consumer-orders-1", java, where), logged(68, 0, "consumer-orders-1", java, where),
                        logged(1, 17, "consumer-orders-1", java, where)]
    assert tally == Tally({OTHER: 1})


def test_a_log_is_known_by_its_content_never_its_name(tmp_path: Path) -> None:
    renamed = tmp_path / "notes.txt"
    shutil.copy(LOG_37, renamed)
    server_log = tmp_path / "kafka-request.log"
    server_log.write_text("[2024-05-02 10:11:12,345] INFO Kafka version: 3.7.0 (org.apache.kafka.common.utils.AppInfoParser)\n")
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    assert all(is_request_log(path) for path in (LOG_37, LOG_26, LOG_40, renamed))
    not_logs = (server_log, fifo, tmp_path, tmp_path / "missing.log", REPO_ROOT / "fixtures" / "captures",
                next((REPO_ROOT / "fixtures" / "captures").glob("*.pcap*")))
    assert not any(is_request_log(path) for path in not_logs)


@pytest.mark.parametrize("content", [b"", b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64,
                                     b"[2024-05-02 10:11:12,345] INFO started (kafka.server.KafkaServer)\n"])
def test_a_file_that_is_no_request_log_is_refused_in_one_line_naming_it(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "server.log"
    path.write_bytes(content)
    with pytest.raises(NotARequestLog) as refused:
        read(path)
    assert isinstance(refused.value, KrpcLintError)
    message = str(refused.value)
    assert message.startswith(f"{path}: not a Kafka request log") and "\n" not in message


def _varied_gzip(copies: int) -> bytes:
    """The 3.7 log ``copies`` times, each copy followed by a line of noise so the gzip stream does not shrink to
    one repeated block (its damage then lies after lines that can still be read)."""
    noise = random.Random(copies)
    return gzip.compress(b"".join(LOG_37.read_bytes() + b"[t] INFO " + noise.randbytes(3000).hex().encode() + b"\n"
                                  for _ in range(copies)))


def test_a_truncated_gzip_log_gives_what_came_before_the_cut(tmp_path: Path) -> None:
    data = _varied_gzip(20)
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(data[:len(data) // 2])
    requests, tally = read(cut)
    assert 7 < len(requests) < 7 * 20 and tally[request_log.TRUNCATED] == 1


def test_a_corrupt_gzip_log_is_counted_not_raised(tmp_path: Path) -> None:
    data = bytearray(_varied_gzip(20))
    data[len(data) // 2:len(data) // 2 + 64] = bytes(64)
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(bytes(data))
    requests, tally = read(broken)
    assert 7 < len(requests) <= 7 * 20 and tally[request_log.CORRUPT] + tally[request_log.TRUNCATED] == 1


def test_a_gzip_log_corrupt_from_its_start_is_refused_saying_so(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(LOG_37.read_bytes()))
    data[20:84] = bytes(64)
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(bytes(data))
    assert not is_request_log(broken)
    with pytest.raises(NotARequestLog, match="gzip data is cut short or corrupt before any 'Completed request:'"):
        read(broken)


def _peak_reading(path: Path) -> tuple[list[LoggedRequest], Tally, int]:
    tracemalloc.start()
    try:
        requests, tally = read(path)
        return requests, tally, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_10_mb_line_of_noise_costs_bounded_memory_and_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "noise.log"
    first = LOG_37.read_text().splitlines(keepends=True)[0]
    path.write_text(first + "x" * 10_000_000 + "\n" + first)
    requests, tally, peak = _peak_reading(path)
    assert len(requests) == 2 and tally == Tally({OTHER: 1})
    assert peak < 2_000_000  # the line is 10 MB; a reader holding it whole would peak above that


def test_a_completion_line_with_a_10_mb_response_is_read_from_its_two_ends(tmp_path: Path) -> None:
    line = LOG_37.read_text().splitlines()[1]  # the Metadata v12 request
    big = '"response":{"throttleTimeMs":0,"topics":[' + ",".join(['{"name":"t","partitions":[]}'] * 350_000) + "]},"
    path = tmp_path / "big.log"
    path.write_text(line.replace('"response":', big + '"ignored":', 1) + "\n")
    assert path.stat().st_size > 10_000_000
    requests, tally, peak = _peak_reading(path)
    assert requests == [logged(3, 12, "producer-1", JAVA_37, f"10.0.0.21:53318 > {BROKER}")] and not tally
    assert peak < 2_000_000


def _json_line(header: str, trailer: str = '"connection":"10.0.0.5:9092-10.0.0.9:5000-1"') -> str:
    return (f'[2024-05-02 10:11:12,345] DEBUG Completed request:{{"isForwarded":false,"requestHeader":{header},'
            f'"request":{{}},"response":{{}},{trailer}}} (kafka.request.logger)\n')


HOSTILE_LINES = {
    "api key past int16": _json_line('{"requestApiKey":40000,"requestApiVersion":0,"correlationId":1}'),
    "api key of 30 digits": _json_line('{"requestApiKey":' + "9" * 30 + ',"requestApiVersion":0}'),
    "api key of 100,000 digits": _json_line('{"requestApiKey":' + "9" * 100_000 + ',"requestApiVersion":0}'),
    "api key negative": _json_line('{"requestApiKey":-1,"requestApiVersion":0}'),
    "api key a boolean": _json_line('{"requestApiKey":true,"requestApiVersion":0}'),
    "api key a string": _json_line('{"requestApiKey":"0","requestApiVersion":0}'),
    "client id a number": _json_line('{"requestApiKey":0,"requestApiVersion":9,"clientId":7}'),
    "deprecated a string": _json_line('{"requestApiKey":0,"requestApiVersion":2,"requestApiVersionDeprecated":"yes"}'),
    "header nested 100,000 deep": _json_line('{"requestApiKey":0,"x":' + "[" * 100_000 + "]" * 100_000 + "}"),
    "header an array": _json_line("[0,9]"),
    "header never closed": "[t] DEBUG Completed request:{\"isForwarded\":false,\"requestHeader\":{\"clientId\":\""
                           + "a" * 600_000 + "\n",
    "trailer nested 100,000 deep": _json_line('{"requestApiKey":0,"requestApiVersion":9}',
                                              '"connection":"a:1-b:2-0","x":' + "[" * 100_000 + "]" * 100_000),
    "software name a number": _json_line('{"requestApiKey":0,"requestApiVersion":9}',
                                         '"connection":"a:1-b:2-0","clientInformation":{"softwareName":1}'),
    "line cut in its response": _json_line('{"requestApiKey":0,"requestApiVersion":9}')[:-90] + "\n",
    "line cut in its trailer": _json_line('{"requestApiKey":0,"requestApiVersion":9}')[:-40] + "\n",
    "text line cut in its body": "[t] DEBUG Completed request:RequestHeader(apiKey=FETCH, apiVersion=4, "
                                 "clientId=c, correlationId=1) -- {replica_id=-1,max_wa\n",
    "text version of 8 digits": "[t] DEBUG Completed request:RequestHeader(apiKey=FETCH, apiVersion=12345678, "
                                "clientId=c, correlationId=1) -- {} (kafka.request.logger)\n",
    "text version past int16": "[t] DEBUG Completed request:RequestHeader(apiKey=FETCH, apiVersion=99999, "
                               "clientId=c, correlationId=1) -- {} (kafka.request.logger)\n",
    "neither form": "[t] DEBUG Completed request:something else (kafka.request.logger)\n",
}


@pytest.mark.parametrize("line", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_a_completion_line_that_cannot_be_read_is_counted_and_the_next_one_read(tmp_path: Path, line: str) -> None:
    good = LOG_37.read_text().splitlines(keepends=True)[0]
    path = tmp_path / "hostile.log"
    path.write_text(good + line + good)
    requests, tally = read(path)
    assert len(requests) == 2 and tally == Tally({UNREADABLE: 1})


def test_a_deeply_nested_request_body_is_never_parsed(tmp_path: Path) -> None:
    line = _json_line('{"requestApiKey":0,"requestApiVersion":9,"clientId":"p"}').replace(
        '"request":{}', '"request":' + "[" * 100_000 + "]" * 100_000)
    path = tmp_path / "nested.log"
    path.write_text(line)
    assert read(path) == ([logged(0, 9, "p", None, "10.0.0.9:5000 > 10.0.0.5:9092")], Tally())


def test_binary_garbage_inside_a_log_is_counted_as_other_lines(tmp_path: Path) -> None:
    path = tmp_path / "garbage.log"
    path.write_bytes(LOG_37.read_bytes() + os.urandom(200_000).replace(b"Completed", b"C0mpleted") + b"\n"
                     + LOG_26.read_bytes())
    requests, tally = read(path)
    assert len(requests) == 7 + 3 and set(tally) == {OTHER}


def test_a_text_line_naming_an_api_2_x_never_had_is_counted_under_its_own_reason(tmp_path: Path) -> None:
    path = tmp_path / "unknown.log"
    path.write_text(LOG_26.read_text().replace("apiKey=FETCH", "apiKey=SHARE_FETCH"))
    requests, tally = read(path)
    assert len(requests) == 2 and tally == Tally({OTHER: 1, request_log.UNKNOWN_API: 1})


def test_a_header_of_version_0_has_no_client_id(tmp_path: Path) -> None:
    path = tmp_path / "v0.log"
    path.write_text(_json_line('{"requestApiKey":7,"requestApiVersion":0,"correlationId":1,'
                               '"requestApiKeyName":"CONTROLLED_SHUTDOWN"}'))
    assert read(path) == ([logged(7, 0, None, None, "10.0.0.9:5000 > 10.0.0.5:9092")], Tally())


@pytest.mark.parametrize("connection_id", ["", "a:1-b:2", "a:1-b:2-c", "a-b:2-0", "a:1-b:x-0", "a:1-b:99999-0",
                                           "a:1-b:2-0-1", ":1-b:2-0", "a:\u0661-b:2-0"])
def test_a_connection_id_not_of_kafka_s_form_is_no_connection(connection_id: str) -> None:
    assert connection_of(connection_id) is None


def test_the_2_x_api_names_are_the_2_8_specs_names_in_kafka_s_constant_form() -> None:
    """The text form's names (ApiKeys constants) against the 2.8.0 request specs: CamelCase -> UPPER_SNAKE."""
    messages = require_shared("kafka-specs", "2.8.0", "clients", "src", "main", "resources", "common", "message")
    by_key = {}
    for path in messages.glob("*Request.json"):
        spec = load_document(path).value
        if spec is None:  # DescribeProducersRequest.json (key 61) has a trailing ']' Jackson lets through
            continue
        by_key[spec["apiKey"]] = snake_case(spec["name"].removesuffix("Request")).upper()
    expected = {name: key for key, name in by_key.items() if key <= 57} | {"ELECT_PREFERRED_LEADERS": 43}
    assert API_KEYS_2X == expected


def _cpu_reading(path: Path, lines: int) -> float:
    body = LOG_37.read_text() + HOSTILE_LINES["header never closed"] + "\x00" * 1000 + "\n"
    path.write_text(body * lines)
    start = time.process_time()
    requests, _ = read(path)
    spent = time.process_time() - start
    assert len(requests) == 7 * lines
    return spent


def test_reading_takes_time_linear_in_the_log(tmp_path: Path) -> None:
    small, large = _cpu_reading(tmp_path / "small.log", 100), _cpu_reading(tmp_path / "large.log", 400)
    assert large < 8 * max(small, 0.01)  # 4x the lines: quadratic work would be 16x


def test_fixture_lines_are_kafka_s_compact_json() -> None:
    """The JSON after the marker is one object Jackson wrote: no spaces between tokens, the top-level keys in
    requestDescMetrics' order."""
    for line in LOG_37.read_text().splitlines():
        if "Completed request:" not in line:
            continue
        text = line.split("Completed request:", 1)[1].removesuffix(" (kafka.request.logger)")
        value = json.loads(text)
        assert json.dumps(value, separators=(",", ":"), ensure_ascii=False) == text
        assert list(value)[:5] == ["isForwarded", "requestHeader", "request", "response", "connection"]
        assert list(value)[-4:] == ["securityProtocol", "principal", "listener", "clientInformation"]
