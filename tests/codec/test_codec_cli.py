"""``krpc-lint codec``: encode, decode and batch, on the bundled ``fixtures/valid`` specs and on
Kafka's own specs (``../shared/kafka-specs/trunk-2024-10``) checked against the golden vectors.

Most tests use click's CliRunner in-process; a few run the installed script in a subprocess
(real exit codes, raw bytes on the pipes, streaming). Loading Kafka's 258 specs is the slow
part, so the tests on them share one loaded codec (``kafka``), after one real load.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import REPO_ROOT, require_shared

from linter.cli.main import cli
from linter.codec import Codec

FIXTURES = str(REPO_ROOT / "fixtures" / "valid")
INVALID = str(REPO_ROOT / "fixtures" / "invalid")

WIDGET_V3 = {"replicaId": -1, "groupId": "g", "maxWaitMs": 500, "rackId": None,
             "topics": [{"name": "t", "partitions": [0, 1], "resumeFrom": {"epoch": 3, "position": 42}}],
             "clientSoftwareLabel": "cli"}
# Worked out by hand: int32, compact string, int32, null compact string, compact array of one
# topic (name, compact int32 array, cursor struct with its empty tag section, the topic's tag
# section), then the message's tag section: 1 field, tag 0, 4 bytes, compact string "cli".
WIDGET_V3_HEX = ("ffffffff" "0267" "000001f4" "00" "02" "0274" "03" "00000000" "00000001"
                 "00000003" "000000000000002a" "00" "00" "01" "00" "04" "04636c69")

API_VERSIONS_HEADER = {"requestApiKey": 18, "requestApiVersion": 3, "correlationId": 7, "clientId": "x"}
API_VERSIONS_BODY = {"clientSoftwareName": "krpc", "clientSoftwareVersion": "1.0"}
# size 22; header v2: key, version, correlation id, clientId with an int16 length, no tags;
# body: two compact strings and an empty tag section.
API_VERSIONS_FRAME = ("00000016" "0012" "0003" "00000007" "0001" "78" "00"
                      "05" "6b727063" "04" "312e30" "00")


def codec(*args: str, input: str | bytes | None = None) -> Result:
    """``krpc-lint codec ARGS`` in-process; never an uncaught exception or a traceback."""
    result = CliRunner().invoke(cli, ["codec", *args], input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    return result


def failed(result: Result, exit_code: int) -> str:
    """The one error line of a failed command."""
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("krpc-lint: error: ")
    return result.stderr.strip()


def _command(*args: str) -> list[str]:
    """The installed ``krpc-lint codec ARGS`` (or the module, when no script is installed)."""
    exe = Path(sys.executable).parent / "krpc-lint"
    return [*([str(exe)] if exe.exists() else [sys.executable, "-m", "linter.cli.main"]), "codec", *args]


def script(*args: str, input: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "KRPC_LINT_DEBUG"}
    return subprocess.run(_command(*args), input=input, capture_output=True, timeout=120, env=env, check=False)


# --- Kafka's specs and the golden vectors -----------------------------------------------------


@pytest.fixture(scope="module")
def trunk(shared_dir: Path) -> str:
    return str(require_shared("kafka-specs", "trunk-2024-10"))


@pytest.fixture(scope="module")
def golden(shared_dir: Path) -> list[dict]:
    path = require_shared("golden", "vectors.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]


@pytest.fixture
def kafka(trunk: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The trunk specs, loaded once for the module's tests (the first test pays the real load)."""
    monkeypatch.setattr(Codec, "load", _cached_load)
    return trunk


@lru_cache(maxsize=2)
def _cached_load(*paths: str, allow_invalid: bool = False) -> Codec:
    return _real_load(*paths, allow_invalid=allow_invalid)


_real_load = Codec.load


def _vector(golden: list[dict], message: str, version: int, random_line: bool = True) -> dict:
    pairs = [v for v in golden if v["message"] == message and v["version"] == version]
    return pairs[1 if random_line else 0]


def test_golden_vectors_one_command_each(kafka, golden):
    # Nullable and tagged nullable structs; a flexible response with tagged arrays; a metadata record.
    for vector in (_vector(golden, "NullableStructMessage", 1), _vector(golden, "ApiVersionsResponse", 3),
                   _vector(golden, "PartitionRecord", 1)):
        name, version = vector["message"], str(vector["version"])
        encoded = codec("encode", "--specs", kafka, name, version, input=json.dumps(vector["json"]))
        assert encoded.exit_code == 0, encoded.stderr
        assert encoded.stdout == vector["hex"] + "\n"
        decoded = codec("decode", "--specs", kafka, name, version, input=vector["hex"])
        assert decoded.exit_code == 0, decoded.stderr
        assert json.loads(decoded.stdout) == vector["json"]
        # Compact output is the golden file's own text for the value.
        assert decoded.stdout == json.dumps(vector["json"], separators=(",", ":")) + "\n"


def test_golden_vectors_in_one_batch(kafka, golden):
    sample = golden[::23]
    jobs = []
    for vector in sample:
        head = {"message": vector["message"], "version": vector["version"]}
        jobs.append(json.dumps({"op": "encode", **head, "json": vector["json"]}))
        jobs.append(json.dumps({"op": "decode", **head, "hex": vector["hex"]}))
    result = codec("batch", "--specs", kafka, input="\n".join(jobs) + "\n")
    assert result.exit_code == 0, result.stdout[:2000]
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == 2 * len(sample)
    for vector, encoded, decoded in zip(sample, answers[::2], answers[1::2], strict=True):
        assert encoded == {"hex": vector["hex"]}, vector["message"]
        assert decoded == {"json": vector["json"]}, vector["message"]


def test_request_frame(kafka):
    frame = json.dumps({"header": API_VERSIONS_HEADER, "body": API_VERSIONS_BODY})
    encoded = codec("encode", "--specs", kafka, "--frame", "ApiVersionsRequest", "3", input=frame)
    assert encoded.exit_code == 0, encoded.stderr
    assert encoded.stdout == API_VERSIONS_FRAME + "\n"

    binary = codec("encode", "--specs", kafka, "--frame", "--binary", "ApiVersionsRequest", "3", input=frame)
    assert binary.stdout_bytes == bytes.fromhex(API_VERSIONS_FRAME)

    expected = {"message": "ApiVersionsRequest", "version": 3, "header": API_VERSIONS_HEADER,
                "body": API_VERSIONS_BODY}
    decoded = codec("decode", "--specs", kafka, "--frame", input=API_VERSIONS_FRAME)
    assert decoded.exit_code == 0, decoded.stderr
    assert json.loads(decoded.stdout) == expected
    # The decoded frame encodes again as it is; NAME and VERSION, when given, must match the frame.
    again = codec("encode", "--specs", kafka, "--frame", "ApiVersionsRequest", "3", input=decoded.stdout)
    assert again.stdout == API_VERSIONS_FRAME + "\n"
    named = codec("decode", "--specs", kafka, "--frame", "--binary", "ApiVersionsRequest", "3",
                  input=bytes.fromhex(API_VERSIONS_FRAME))
    assert json.loads(named.stdout) == expected
    assert "not FetchRequest" in failed(codec("decode", "--specs", kafka, "--frame", "FetchRequest",
                                              input=API_VERSIONS_FRAME), 1)

    # ControlledShutdownRequest v0 uses request header v0: no clientId.
    shutdown = json.dumps({"header": {"correlationId": 1}, "body": {"brokerId": 3}})
    encoded = codec("encode", "--specs", kafka, "--frame", "ControlledShutdownRequest", "0", input=shutdown)
    assert encoded.stdout == "0000000c" "0007" "0000" "00000001" "00000003" "\n"


def test_response_frames(kafka):
    # ApiVersionsResponse always uses response header v0 (no tag section), even at a flexible version.
    body = {"errorCode": 0, "apiKeys": [{"apiKey": 18, "minVersion": 0, "maxVersion": 4}], "throttleTimeMs": 0}
    frame = json.dumps({"header": {"correlationId": 7}, "body": body})
    encoded = codec("encode", "--specs", kafka, "--frame", "ApiVersionsResponse", "3", input=frame)
    assert encoded.stdout == "00000013" "00000007" "0000" "02" "0012" "0000" "0004" "00" "00000000" "00" "\n"
    decoded = codec("decode", "--specs", kafka, "--frame", "ApiVersionsResponse", "3", input=encoded.stdout)
    assert json.loads(decoded.stdout) == {"message": "ApiVersionsResponse", "version": 3,
                                          "header": {"correlationId": 7}, "body": body}

    # Other flexible responses use header v1: a tag section after the correlation id.
    frame = json.dumps({"header": {"correlationId": 7}, "body": {"throttleTimeMs": 0, "errorCode": 0}})
    encoded = codec("encode", "--specs", kafka, "--frame", "AddOffsetsToTxnResponse", "3", input=frame)
    assert encoded.stdout == "0000000c" "00000007" "00" "00000000" "0000" "00" "\n"

    message = failed(codec("decode", "--specs", kafka, "--frame", "AddOffsetsToTxnResponse",
                           input=encoded.stdout), 2)
    assert "needs VERSION" in message


def test_frame_errors_say_header_or_body(kafka):
    def encode(header: dict, body: dict) -> str:
        frame = json.dumps({"header": header, "body": body})
        return failed(codec("encode", "--specs", kafka, "--frame", "ApiVersionsRequest", "3", input=frame), 1)

    assert encode({**API_VERSIONS_HEADER, "correlationId": "7"}, API_VERSIONS_BODY) == \
        "krpc-lint: error: header.CorrelationId: expected an integer (int32), got str"
    assert encode(API_VERSIONS_HEADER, {**API_VERSIONS_BODY, "clientSoftwareName": 5}) == \
        "krpc-lint: error: body.ClientSoftwareName: expected a str, got int"
    assert "header.requestApiKey" in encode({**API_VERSIONS_HEADER, "requestApiKey": 3}, API_VERSIONS_BODY)

    def decode(frame_hex: str) -> str:
        return failed(codec("decode", "--specs", kafka, "--frame", input=frame_hex), 1)

    bad_utf8 = API_VERSIONS_FRAME.replace("6b727063", "ff727063")  # byte 17: the first byte of the name
    assert decode(bad_utf8).startswith("krpc-lint: error: byte 17 at body.ClientSoftwareName: invalid UTF-8")
    long_client_id = API_VERSIONS_FRAME.replace("00017800", "7fff7800")  # bytes 12-13: the clientId length
    assert decode(long_client_id).startswith("krpc-lint: error: byte 14 at header.ClientId: ")
    assert decode(API_VERSIONS_FRAME[:-2]).startswith("krpc-lint: error: byte 0: frame size 22 does not match")
    assert "apiKey -1" in decode(API_VERSIONS_FRAME.replace("00160012", "0016ffff"))


# --- the bundled fixtures ---------------------------------------------------------------------


def test_encode_and_decode():
    encoded = codec("encode", "--specs", FIXTURES, "WidgetFetchRequest", "3", input=json.dumps(WIDGET_V3))
    assert encoded.exit_code == 0, encoded.stderr
    assert encoded.stdout == WIDGET_V3_HEX + "\n"
    spaced = " ".join(WIDGET_V3_HEX[i:i + 8] for i in range(0, len(WIDGET_V3_HEX), 8))
    decoded = codec("decode", "--specs", FIXTURES, "WidgetFetchRequest", "3", input=f"{spaced}\n\n")
    assert decoded.exit_code == 0, decoded.stderr
    assert decoded.stdout == json.dumps(WIDGET_V3, separators=(",", ":")) + "\n"
    pretty = codec("decode", "--specs", FIXTURES, "--pretty", "WidgetFetchRequest", "3", input=WIDGET_V3_HEX)
    assert pretty.stdout == json.dumps(WIDGET_V3, indent=2) + "\n"


def test_input_file_and_binary(tmp_path):
    source = tmp_path / "widget.json"
    source.write_text(json.dumps(WIDGET_V3), encoding="utf-8")
    encoded = codec("encode", "--specs", FIXTURES, "--binary", "WidgetFetchRequest", "3", "--input", str(source))
    assert encoded.stdout_bytes == bytes.fromhex(WIDGET_V3_HEX)
    raw = tmp_path / "widget.bin"
    raw.write_bytes(encoded.stdout_bytes)
    decoded = codec("decode", "--specs", FIXTURES, "--binary", "WidgetFetchRequest", "3", "-i", str(raw))
    assert json.loads(decoded.stdout) == WIDGET_V3


def test_real_script_binary_pipes_and_errors():
    encoded = script("encode", "--specs", FIXTURES, "--binary", "WidgetFetchRequest", "3",
                     input=json.dumps(WIDGET_V3).encode())
    assert encoded.returncode == 0, encoded.stderr
    assert encoded.stdout == bytes.fromhex(WIDGET_V3_HEX)
    decoded = script("decode", "--specs", FIXTURES, "--binary", "WidgetFetchRequest", "3", input=encoded.stdout)
    assert json.loads(decoded.stdout) == WIDGET_V3

    garbage = script("decode", "--specs", FIXTURES, "--binary", "WidgetFetchRequest", "3", input=bytes(range(256)))
    assert garbage.returncode == 1
    assert garbage.stderr.decode().startswith("krpc-lint: error: byte ")
    assert b"Traceback" not in garbage.stderr
    usage = script("encode", "--specs", FIXTURES, "Zzz", "0")
    assert usage.returncode == 2
    assert usage.stderr == b"krpc-lint: error: unknown message 'Zzz' (the specs define 11 messages)\n"


@pytest.mark.parametrize(("args", "expected"), [
    (("encode", "--specs", FIXTURES, "WidgetFetchRequst", "0"), "did you mean WidgetFetchRequest"),
    (("encode", "--specs", FIXTURES, "WidgetFetchRequest", "9"), "WidgetFetchRequest has no version 9"),
    (("decode", "--specs", FIXTURES, "WidgetFetchRequest", "4"), "has no version 4 (valid versions: 0-3)"),
    (("encode", "--specs", "no/such/dir", "WidgetFetchRequest", "0"), "no/such/dir: no such file or directory"),
    (("encode", "--specs", INVALID, "WidgetFetchRequest", "0"), "have errors Kafka's generator refuses"),
    (("decode", "--specs", FIXTURES, "WidgetFetchRequest"), "decode needs NAME and VERSION"),
    (("encode", "--specs", FIXTURES, "--frame", "WidgetSnapshot", "0"), "WidgetSnapshot is a data spec"),
    (("encode", "--specs", FIXTURES, "--frame", "WidgetFetchRequest", "0"), "needs the RequestHeader spec"),
    (("decode", "--specs", FIXTURES, "--frame"), "needs the RequestHeader spec"),
    (("encode", "--specs", FIXTURES, "WidgetSnapshot", "0", "-i", "missing.json"), "missing.json: cannot read"),
    (("batch", "--specs", "no/such/dir"), "no/such/dir: no such file or directory"),
])
def test_usage_errors_exit_2(args, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert expected in failed(codec(*args, input="{}"), 2)


@pytest.mark.parametrize(("command", "data", "expected"), [
    ("encode", {**WIDGET_V3, "replicaId": "1"}, "ReplicaId: expected an integer (int32), got str"),
    ("encode", {**WIDGET_V3, "topics": [{"name": "t", "partitions": [2 ** 31]}]},
     "Topics[0].Partitions[0]: 2147483648 is out of the int32 range"),
    ("encode", {k: v for k, v in WIDGET_V3.items() if k != "groupId"}, "GroupId: missing required value"),
    ("encode", {**WIDGET_V3, "colour": "red"}, "WidgetFetchRequest has no field 'colour'"),
    ("decode", WIDGET_V3_HEX[:10], "byte 5 at GroupId: string: needs 1 bytes, only 0 left"),
    ("decode", WIDGET_V3_HEX[:12], "byte 6 at MaxWaitMs: "),
    ("decode", "ffffffff0a67", "byte 5 at GroupId: string: needs 9 bytes, only 1 left"),
    ("decode", WIDGET_V3_HEX + "00", "byte 44: 1 trailing bytes after the message"),
])
def test_data_errors_exit_1(command, data, expected):
    text = json.dumps(data) if command == "encode" else data
    message = failed(codec(command, "--specs", FIXTURES, "WidgetFetchRequest", "3", input=text), 1)
    assert message.startswith(f"krpc-lint: error: {expected}"), message


def test_down_conversion():
    def encode(version: int, value: dict) -> Result:
        return codec("encode", "--specs", FIXTURES, "WidgetFetchRequest", str(version), input=json.dumps(value))

    v0 = {"replicaId": -1, "groupId": "g", "maxWaitMs": 500, "topics": []}
    # RackId (v1+) is ignorable: dropped at v0 whatever it holds.
    assert encode(0, {**v0, "rackId": "rack-1"}).stdout == encode(0, v0).stdout
    # ClientSoftwareLabel (v2+) is not: its default (null) may stay, another value may not.
    v1 = {**v0, "rackId": None}
    assert encode(1, {**v1, "clientSoftwareLabel": None}).stdout == encode(1, v1).stdout
    assert "ClientSoftwareLabel: field ClientSoftwareLabel does not exist in version 1 and is not ignorable" \
        in failed(encode(1, {**v1, "clientSoftwareLabel": "x"}), 1)


@pytest.mark.parametrize("text", [
    "", "not json", "[" * 100_000, '{"replicaId": ' + "9" * 5000 + "}", "\udcff", '"a string"', "[1, 2]",
    '{"replicaId": NaN}', json.dumps({**WIDGET_V3, "_unknownTaggedFields": [[9, 10 ** 12]]}),
    json.dumps({**WIDGET_V3, "topics": [{"name": "t", "partitions": [], "_unknownTaggedFields": [[9, 1]]}]}),
])
def test_hostile_json_is_bad_data(text):
    data = text.encode("utf-8", "surrogateescape")
    failed(codec("encode", "--specs", FIXTURES, "WidgetFetchRequest", "3", input=data), 1)


@pytest.mark.parametrize("data", ["xyz", "abc", "0x00", "é1", b"\xff\xfe"])
def test_non_hex_is_bad_data(data):
    message = failed(codec("decode", "--specs", FIXTURES, "WidgetSnapshot", "1", input=data), 1)
    assert "input is not hex" in message


# --- batch ------------------------------------------------------------------------------------


def test_batch_mixed_good_and_bad_lines():
    good_hex = WIDGET_V3_HEX
    lines = [
        {"op": "encode", "message": "WidgetFetchRequest", "version": 3, "json": WIDGET_V3},
        "this is not json",
        {"op": "decode", "message": "WidgetFetchRequest", "version": 3, "hex": good_hex},
        {"op": "decode", "message": "WidgetFetchRequest", "version": 3},
        {"op": "encode", "message": "NoSuchThing", "version": 0, "json": {}},
        {"op": "encode", "message": "WidgetFetchRequest", "version": 7, "json": {}},
        {"op": "encode", "message": "WidgetFetchRequest", "version": 3, "json": {**WIDGET_V3, "maxWaitMs": 1.5}},
        {"op": "decode", "message": "WidgetFetchRequest", "version": 3, "hex": good_hex[:10]},
        "",
        {"op": "reverse", "message": "WidgetFetchRequest", "version": 3, "json": {}},
        {"op": "decode", "message": "WidgetFetchRequest", "version": "3", "hex": good_hex},
        {"op": "decode", "message": "WidgetSnapshot", "version": 0, "hex": "zz"},
        [1, 2, 3],
        {"op": "decode", "message": "WidgetSnapshot", "version": 0, "hex": "00000000000000000000000000000000 01 01 00"},
    ]
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    result = codec("batch", "--specs", FIXTURES, input=text)
    assert result.exit_code == 1
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == len(lines)
    assert answers[0] == {"hex": good_hex}
    assert answers[2] == {"json": WIDGET_V3}
    assert answers[13] == {"json": {"widgetId": "AAAAAAAAAAAAAAAAAAAAAA", "label": "", "tags": []}}
    errors = {number: answer["error"] for number, answer in enumerate(answers) if "error" in answer}
    assert sorted(errors) == [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    for error in errors.values():
        assert set(error) == {"message", "offset", "path"}
        assert isinstance(error["message"], str) and error["message"]
    assert errors[1]["message"].startswith("line is not valid JSON")
    assert "'hex'" in errors[3]["message"]
    assert "unknown message 'NoSuchThing'" in errors[4]["message"]
    assert "no version 7" in errors[5]["message"]
    assert errors[6] == {"message": "expected an integer (int32), got float", "offset": None, "path": "MaxWaitMs"}
    assert errors[7] == {"message": "string: needs 1 bytes, only 0 left", "offset": 5, "path": "GroupId"}
    assert errors[8] == {"message": "empty line", "offset": None, "path": ""}
    assert errors[11]["path"] == "" and errors[11]["offset"] is None


def test_batch_all_good_exits_0(tmp_path):
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(json.dumps({"op": "encode", "message": "WidgetSnapshot", "version": 1,
                                "json": {"widgetId": "AAAAAAAAAAAAAAAAAAAAAQ", "label": "w", "owner": None,
                                         "tags": ["a"]}}) + "\n", encoding="utf-8")
    result = codec("batch", "--specs", FIXTURES, "--input", str(jobs))
    assert result.exit_code == 0, result.stdout
    # uuid, compact string "w", null struct marker, compact array of one compact string, no tags.
    expected = "00000000000000000000000000000001" "0277" "ff" "02" "0261" "00"
    assert result.stdout == json.dumps({"hex": expected}, separators=(",", ":")) + "\n"


def test_batch_streams_line_by_line():
    process = subprocess.Popen(_command("batch", "--specs", FIXTURES),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for version in (0, 1):
            job = {"op": "decode", "message": "WidgetSnapshot", "version": version, "hex": "00"}
            process.stdin.write(json.dumps(job).encode() + b"\n")
            process.stdin.flush()
            # The answer comes while the input is still open.
            answer = json.loads(process.stdout.readline())
            assert answer["error"]["offset"] == 0
        process.stdin.close()
        assert process.wait(timeout=60) == 1
    finally:
        process.kill()
        process.wait()


def test_batch_survives_garbage():
    """Random bytes, truncations and bit flips of real encodings, and random lines: one answer
    line each, no traceback."""
    rng = random.Random(20241025)
    base = {("WidgetFetchRequest", 3): WIDGET_V3_HEX,
            ("WidgetSnapshot", 1): "00000000000000000000000000000001027701027000000000000000070002026100"}
    lines = []
    for (name, version), hex_text in base.items():
        data = bytes.fromhex(hex_text)
        for cut in range(len(data)):
            lines.append({"op": "decode", "message": name, "version": version, "hex": data[:cut].hex()})
        for _ in range(150):
            flipped = bytearray(data)
            flipped[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            lines.append({"op": "decode", "message": name, "version": version, "hex": flipped.hex()})
            noise = rng.randbytes(rng.randrange(64))
            lines.append({"op": "decode", "message": name, "version": version, "hex": noise.hex()})
    text = b"\n".join(json.dumps(line).encode() for line in lines)
    junk = [rng.randbytes(rng.randrange(1, 40)).replace(b"\n", b"") for _ in range(50)]
    junk = [line for line in junk if line.strip()]
    result = codec("batch", "--specs", FIXTURES, input=text + b"\n" + b"\n".join(junk) + b"\n")
    assert result.exit_code == 1
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == len(lines) + len(junk)
    for answer in answers:
        assert len(answer) == 1 and next(iter(answer)) in ("json", "error")
    assert all("error" in answer for answer in answers[len(lines):])


# --- the guide ----------------------------------------------------------------------------------


def test_guide_python_examples_run(shared_dir, monkeypatch):
    """docs/codec.md's Python sessions are doctests (its frame examples load ../shared's specs)."""
    import doctest

    require_shared("kafka-specs", "trunk-2024-10")
    monkeypatch.chdir(REPO_ROOT)
    if os.path.relpath(shared_dir, REPO_ROOT) != os.path.join("..", "shared"):
        pytest.skip("the guide's examples name ../shared; KRPC_LINT_SHARED points elsewhere")
    result = doctest.testfile(str(REPO_ROOT / "docs" / "codec.md"), module_relative=False)
    assert result.failed == 0


def test_allow_invalid_skips_only_the_broken_specs_in_one_line() -> None:
    """Issue 15: Kafka's own 2.8.0 specs hold 30 files its later generators refuse; without the flag the
    refusal is one line, with it the rest decode and the skipped files are one line on stderr."""
    from conftest import require_shared

    specs = str(require_shared("kafka-specs", "2.8.0"))
    refused = script("decode", "--specs", specs, "FetchRequest", "4", input=b"00")
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
    assert b"30 spec files have errors" in refused.stderr and b"--allow-invalid" in refused.stderr
    request = {"replicaId": -1, "maxWaitMs": 500, "minBytes": 1, "maxBytes": 1000, "isolationLevel": 0, "topics": []}
    encoded = script("encode", "--specs", specs, "--allow-invalid", "FetchRequest", "4",
                     input=json.dumps(request).encode())
    assert encoded.returncode == 0, encoded.stderr
    decoded = script("decode", "--specs", specs, "--allow-invalid", "FetchRequest", "4", input=encoded.stdout)
    assert decoded.returncode == 0 and json.loads(decoded.stdout) == request
    assert decoded.stderr.decode().startswith("krpc-lint: skipped 30 spec files with errors (--allow-invalid): ")
    assert len(decoded.stderr.splitlines()) == 1
