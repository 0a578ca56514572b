"""Lint on vendor copies and forks (issue 17): KL752 learns snake_case file names (inferred per directory or set
by ``file-naming``), and KL103 accepts the entityType / listeners values a fork's generator adds (config
``entity-types`` / ``listeners``, or the generator's Java enums found in the linted tree)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from conftest import run_cli

from linter import Config, lint
from linter.engine.checks.messages import snake_case
from linter.engine.config import ConfigError, PathOverride, load_config
from linter.model.generator import json_property_names

MESSAGES = ("trunk-2024-10", "clients", "src", "main", "resources", "common", "message")
GENERATOR = ("generator", "src", "main", "java", "org", "apache", "kafka", "message")

def _java_enum(name: str, constants: list[tuple[str, str]]) -> str:
    """A generator enum in Kafka's Java form: ``@JsonProperty("brokerId")`` then ``BROKER_ID(...)``."""
    body = ",\n\n".join(f'    @JsonProperty("{json_name}")\n    {constant}' for json_name, constant in constants)
    return f"package org.apache.kafka.message;\n\npublic enum {name} {{\n{body};\n}}\n"


_INT32, _INT64, _STRING = "FieldType.Int32FieldType.INSTANCE", "FieldType.Int64FieldType.INSTANCE", \
    "FieldType.StringFieldType.INSTANCE"
# Kafka's EntityType.java as AutoMQ extends it.
ENTITY_TYPE_JAVA = _java_enum("EntityType", [
    ("unknown", "UNKNOWN(null)"), ("transactionalId", f"TRANSACTIONAL_ID({_STRING})"),
    ("producerId", f"PRODUCER_ID({_INT64})"), ("groupId", f"GROUP_ID({_STRING})"),
    ("topicName", f"TOPIC_NAME({_STRING})"), ("brokerId", f"BROKER_ID({_INT32})"),
    ("nodeId", f"NODE_ID({_INT32})"), ("nodeEpoch", f"NODE_EPOCH({_INT64})"),
    ("streamId", f"STREAM_ID({_INT64})"), ("streamEpoch", f"STREAM_EPOCH({_INT64})")])
LISTENER_JAVA = _java_enum("RequestListenerType", [("broker", "BROKER"), ("controller", "CONTROLLER"),
                                                   ("proxy", "PROXY")])


def _spec(name: str, kind: str = "data", **extra: object) -> str:
    spec: dict[str, object] = {"name": name, "type": kind, "validVersions": "0-1", "flexibleVersions": "0+",
                               "fields": [{"name": "Id", "type": "int32", "versions": "0+"}]}
    if kind in ("request", "response"):
        spec["apiKey"] = 1000
    spec.update(extra)
    return json.dumps(spec)


def _write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


def _rules(report, rule: str) -> list:  # type: ignore[no-untyped-def]
    return [f for f in report.findings if f.rule == rule]


# --- KL752: naming conventions ------------------------------------------------------------------


def test_snake_case_rule() -> None:
    assert snake_case("FetchRequest") == "fetch_request"
    assert snake_case("AddPartitionsToTxnRequest") == "add_partitions_to_txn_request"
    assert snake_case("LeaderAndIsrRequest") == "leader_and_isr_request"
    assert snake_case("Dummy2Record") == "dummy2_record"
    assert snake_case("DescribeUserScramCredentialsResponse") == "describe_user_scram_credentials_response"


@pytest.fixture(scope="module")
def snake_copy(kafka_specs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Kafka's client specs (trunk 2024-10) renamed to snake_case, as a vendor copies them."""
    source = kafka_specs.joinpath(*MESSAGES)
    copy = tmp_path_factory.mktemp("vendor") / "schemata"
    copy.mkdir()
    for spec in sorted(source.glob("*.json")):
        shutil.copyfile(spec, copy / f"{snake_case(spec.stem)}.json")
    return copy


def test_snake_case_copy_gets_no_kl752_by_default(snake_copy: Path) -> None:
    report = lint([snake_copy])
    assert report.files == len(list(snake_copy.glob("*.json"))) > 100
    assert _rules(report, "KL752") == []


def test_file_naming_kafka_brings_kl752_back(snake_copy: Path) -> None:
    report = lint([snake_copy], Config(file_naming="kafka"))
    found = _rules(report, "KL752")
    assert len(found) == report.files  # every name has a capital after a lowercase letter
    first = next(f for f in found if f.path.endswith("fetch_request.json"))
    assert first.message == ("message FetchRequest is in fetch_request.json; expected FetchRequest.json "
                             "(file-naming: kafka)")
    assert first.line >= 1 and first.col > 1  # at the message's name in the file


def test_file_naming_kafka_from_a_config_file(snake_copy: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.krpc-lint]\nfile-naming = "kafka"\n')
    config = load_config(tmp_path / "pyproject.toml")
    assert config.file_naming == "kafka"
    assert len(_rules(lint([snake_copy], config), "KL752")) > 100


def test_snake_case_file_named_alone_uses_its_directory(snake_copy: Path) -> None:
    """pre-commit passes files one by one: the directory's other specs still decide the convention."""
    assert _rules(lint([snake_copy / "fetch_request.json"]), "KL752") == []
    assert len(_rules(lint([snake_copy / "fetch_request.json"], Config(file_naming="kafka")), "KL752")) == 1


def test_kafka_corpus_still_clean(kafka_specs: Path) -> None:
    assert _rules(lint([kafka_specs.joinpath(*MESSAGES)]), "KL752") == []


def test_mixed_directory_is_judged_against_kafka(tmp_path: Path) -> None:
    folder = _write(tmp_path / "mixed", {"LedgerSummary.json": _spec("LedgerSummary"),
                                         "ledger_detail.json": _spec("LedgerDetail"),
                                         "Ledger.json": _spec("Ledger")})
    found = _rules(lint([folder]), "KL752")
    assert [(Path(f.path).name, f.message) for f in found] == [
        ("ledger_detail.json", "message LedgerDetail is in ledger_detail.json; expected LedgerDetail.json "
                               "(files here mix Kafka's and snake_case names)")]
    assert (found[0].line, found[0].col) == (1, 10)  # file:line:col of the name


def test_misnamed_file_in_a_snake_case_directory(tmp_path: Path) -> None:
    folder = _write(tmp_path / "v", {"ledger_summary.json": _spec("LedgerSummary"),
                                     "ledger_detail.json": _spec("LedgerDetail"),
                                     "ledger_detial.json": _spec("LedgerTotals")})
    found = _rules(lint([folder]), "KL752")
    assert [f.message for f in found] == [
        "message LedgerTotals is in ledger_detial.json; expected ledger_totals.json (this directory: snake_case)"]


def test_a_file_following_neither_is_judged_against_kafka(tmp_path: Path) -> None:
    folder = _write(tmp_path / "k", {"Other.json": _spec("Example")})
    assert [f.message for f in _rules(lint([folder]), "KL752")] == [
        "message Example is in Other.json; expected Example.json"]


def test_file_naming_per_path(tmp_path: Path) -> None:
    kafka_dir = _write(tmp_path / "kafka", {"LedgerSummary.json": _spec("LedgerSummary")})
    vendor = _write(tmp_path / "vendor", {"ledger_summary.json": _spec("LedgerSummary"),
                                          "Odd.json": _spec("LedgerOdd")})
    config = Config(file_naming="kafka", per_path=(PathOverride(("vendor/*",), file_naming="snake_case"),))
    found = _rules(lint([kafka_dir, vendor], config), "KL752")
    assert [(Path(f.path).name, f.message) for f in found] == [
        ("Odd.json", "message LedgerOdd is in Odd.json; expected ledger_odd.json (file-naming: snake_case)")]
    anything = Config(per_path=(PathOverride(("vendor/*",), file_naming="any"),))
    assert _rules(lint([vendor], anything), "KL752") == []


def test_file_naming_per_path_from_config(tmp_path: Path) -> None:
    (tmp_path / ".krpc-lint.yaml").write_text("file-naming: kafka\nper-path:\n  - paths: ['vendor/**']\n"
                                              "    file-naming: snake_case\n")
    config = load_config(tmp_path / ".krpc-lint.yaml")
    assert config.file_naming_of("vendor/x/fetch_request.json") == "snake_case"
    assert config.file_naming_of("clients/FetchRequest.json") == "kafka"


@pytest.mark.parametrize(("text", "message"), [
    ('file-naming = "camel"', "file-naming must be one of kafka, snake_case, any, infer"),
    ("file-naming = 1", "file-naming must be one of kafka, snake_case, any, infer"),
    ('entity-types = "streamId"', 'entity-types must be a list of names such as "streamId"'),
    ("entity-types = [1]", 'entity-types must be a list of names such as "streamId"'),
    ('listeners = ["a b"]', 'listeners must be a list of names such as "streamId"'),
    ('[[tool.krpc-lint.per-path]]\npaths = ["x/**"]\nfile-naming = "Kafka"',
     "per-path.file-naming must be one of kafka, snake_case, any, infer"),
    ('[[tool.krpc-lint.per-path]]\npaths = ["x/**"]\nfile-namig = "kafka"',
     "per-path[0]: unknown key(s) file-namig (known: file-naming, ignore, paths, severity)"),
])
def test_config_errors(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(f"[tool.krpc-lint]\n{text}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value) == f"{config}: {message}"
    assert "\n" not in str(caught.value)


# --- KL103: a fork's entity types and listeners -----------------------------------------------------


STREAM_SPEC = json.dumps({
    "name": "OpenStreamsRequest", "type": "request", "apiKey": 501, "validVersions": "0", "flexibleVersions": "0+",
    "listeners": ["broker", "controller"],
    "fields": [{"name": "StreamId", "type": "int64", "versions": "0+", "entityType": "streamId"},
               {"name": "BrokerId", "type": "int32", "versions": "0+", "entityType": "brokerId"}]})
PROXY_SPEC = json.dumps({
    "name": "ProxyRequest", "type": "request", "apiKey": 502, "validVersions": "0", "flexibleVersions": "0+",
    "listeners": ["broker", "proxy"], "fields": [{"name": "Id", "type": "int32", "versions": "0+"}]})


def test_unknown_entity_type_is_kl103_by_default(tmp_path: Path) -> None:
    folder = _write(tmp_path / "specs", {"OpenStreamsRequest.json": STREAM_SPEC})
    found = _rules(lint([folder], Config(profile="kafka")), "KL103")
    assert [f.message for f in found] == [
        'entityType "streamId" is not one of: unknown, transactionalId, producerId, groupId, topicName, brokerId']


def test_entity_types_config_allows_it(tmp_path: Path) -> None:
    folder = _write(tmp_path / "specs", {"OpenStreamsRequest.json": STREAM_SPEC})
    assert _rules(lint([folder], Config(profile="kafka", entity_types=("streamId",))), "KL103") == []
    assert len(_rules(lint([folder], Config(profile="kafka", entity_types=("nodeId",))), "KL103")) == 1
    (tmp_path / "pyproject.toml").write_text('[tool.krpc-lint]\nprofile = "kafka"\nentity-types = ["streamId"]\n')
    assert _rules(lint([folder], load_config(tmp_path / "pyproject.toml")), "KL103") == []


def test_listeners_config_allows_it(tmp_path: Path) -> None:
    single = json.loads(PROXY_SPEC)
    single["listeners"] = "proxy"
    folder = _write(tmp_path / "specs", {"ProxyRequest.json": PROXY_SPEC})
    alone = _write(tmp_path / "single", {"ProxyRequest.json": json.dumps(single)})
    assert len(_rules(lint([folder]), "KL103")) == 1
    assert _rules(lint([folder], Config(listeners=("proxy",))), "KL103") == []
    assert [f.rule for f in lint([alone]).findings if f.rule in ("KL102", "KL103")] != []
    assert [f.rule for f in lint([alone], Config(listeners=("proxy",))).findings if f.rule in ("KL102", "KL103")] == []


def _fork(root: Path) -> Path:
    """A fork's tree: its generator with an extended EntityType, and its specs."""
    (root / ".git").mkdir(parents=True)
    _write(root.joinpath(*GENERATOR), {"EntityType.java": ENTITY_TYPE_JAVA, "RequestListenerType.java": LISTENER_JAVA})
    return _write(root / "clients" / "src" / "main" / "resources" / "common" / "message",
                  {"OpenStreamsRequest.json": STREAM_SPEC, "ProxyRequest.json": PROXY_SPEC})


def test_generator_in_the_tree_extends_the_enums(tmp_path: Path) -> None:
    specs = _fork(tmp_path / "automq")
    report = lint([specs], Config(profile="kafka"))
    assert _rules(report, "KL103") == []
    assert len(report.notes) == 1
    assert "EntityType.java, RequestListenerType.java; read as text, not run" in report.notes[0]
    assert report.notes[0].endswith("adds nodeId, nodeEpoch, streamId, streamEpoch, proxy")
    # the same spec outside the fork's tree
    elsewhere = _write(tmp_path / "elsewhere", {"OpenStreamsRequest.json": STREAM_SPEC})
    outside = lint([elsewhere], Config(profile="kafka"))
    assert len(_rules(outside, "KL103")) == 1 and outside.notes == []
    # both at once: each file is judged by its own tree
    both = lint([specs, elsewhere], Config(profile="kafka"))
    assert [Path(f.path).parent.name for f in _rules(both, "KL103")] == ["elsewhere"]


def test_generator_is_not_looked_for_above_the_repository_root(tmp_path: Path) -> None:
    _write(tmp_path.joinpath(*GENERATOR), {"EntityType.java": ENTITY_TYPE_JAVA})
    repo = tmp_path / "other"
    (repo / ".git").mkdir(parents=True)
    specs = _write(repo / "specs", {"OpenStreamsRequest.json": STREAM_SPEC})
    assert len(_rules(lint([specs]), "KL103")) == 1


def test_generator_file_that_is_not_regular_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "fork"
    (root / ".git").mkdir(parents=True)
    root.joinpath(*GENERATOR, "EntityType.java").mkdir(parents=True)  # a directory, not a file
    specs = _write(root / "specs", {"OpenStreamsRequest.json": STREAM_SPEC})
    report = lint([specs])
    assert len(_rules(report, "KL103")) == 1 and report.notes == []


def test_cli_says_once_where_the_values_came_from(tmp_path: Path) -> None:
    specs = _fork(tmp_path / "automq")
    result = run_cli("lint", "--profile", "kafka", "--no-cache", str(specs), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "KL103" not in result.stdout
    notes = [line for line in result.stderr.splitlines() if "EntityType.java" in line]
    assert len(notes) == 1
    assert notes[0].startswith("krpc-lint: entity types and listeners from automq/generator/src/main/java/")


def test_json_property_scan() -> None:
    assert json_property_names(ENTITY_TYPE_JAVA)[-4:] == ["nodeId", "nodeEpoch", "streamId", "streamEpoch"]
    assert json_property_names('@JsonProperty("a b")\n@JsonProperty("ok")\n@JsonProperty("x\\"y")') == ["ok"]

    def cpu_seconds(n: int) -> float:
        hostile = '@JsonProperty("' * n + "\n" + '@JsonProperty("' + "a" * (n * 5 // 2)
        start = time.process_time()
        assert json_property_names(hostile) == []
        return time.process_time() - start

    small, large = cpu_seconds(50_000), cpu_seconds(200_000)
    assert large / max(small, 1e-3) < 8, f"4x the input took {large / max(small, 1e-3):.1f}x the CPU time"
