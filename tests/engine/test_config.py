"""The config file's keys: one JSON Schema (``linter/engine/config.schema.json``) says their shape, README.md
documents each, ``Config`` has a field for each, and a refused config is one line naming the file and the key."""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, run_cli
from jsonschema import Draft202012Validator

from linter.engine.config import (
    FILE_NAMINGS,
    Config,
    ConfigError,
    PathOverride,
    config_schema,
    generate_validator_source,
    load_config,
    schema_digest,
)
from linter.engine.rules import unsafe_schema
from linter.vocabulary import KAFKA_VERSIONS, PROFILES, SEVERITIES

NOT_FROM_THE_FILE = {"source", "cache_dir", "allow_empty", "siblings", "configured"}  # set by the CLI or the loader
KNOWN = ("baseline, conformance, entity-types, exclude, fail-on, file-naming, ignore, include, kafka-version, "
         "listeners, per-path, preview, profile, rule-packs, select, severity")


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema["properties"])


def _per_path_item() -> dict[str, Any]:
    item: dict[str, Any] = config_schema()["properties"]["per-path"]["else"]["items"]
    return item


def _config_section() -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]


def test_the_schema_is_a_valid_schema_that_runs_on_hostile_input() -> None:
    Draft202012Validator.check_schema(config_schema())
    assert unsafe_schema(config_schema()) is None  # local only, patterns RE2 runs


def test_every_key_of_the_schema_is_documented_in_the_readme() -> None:
    table_keys = set(re.findall(r"(?m)^\| `([a-z-]+)`(?: / `([a-z-]+)`)? \|", _config_section()))
    documented = {key for pair in table_keys for key in pair if key}
    assert set(_properties(config_schema())) == documented
    per_path_row = next(line for line in _config_section().splitlines() if line.startswith("| `per-path` |"))
    for key in _properties(_per_path_item()):
        assert key in per_path_row, key


def test_the_schema_and_config_agree() -> None:
    """Every field of Config that a config file sets is a key of the schema, and every key a field."""
    fields = {f.name.replace("_", "-") for f in dataclasses.fields(Config)} - {n.replace("_", "-") for n in NOT_FROM_THE_FILE}
    assert fields == set(_properties(config_schema()))
    assert {f.name.replace("_", "-") for f in dataclasses.fields(PathOverride)} == set(_properties(_per_path_item()))


def test_every_key_says_what_it_must_be() -> None:
    for key, node in [*_properties(config_schema()).items(), *_properties(_per_path_item()).items()]:
        assert node.get("x-message") and node.get("description"), key


def test_the_schemas_choices_are_the_vocabulary() -> None:
    properties = _properties(config_schema())
    assert properties["profile"]["enum"] == list(PROFILES)
    assert properties["fail-on"]["enum"] == list(SEVERITIES)
    assert properties["kafka-version"]["enum"] == [None, *KAFKA_VERSIONS]
    assert properties["file-naming"]["enum"] == list(FILE_NAMINGS)
    assert properties["severity"]["additionalProperties"]["enum"] == list(SEVERITIES)
    assert _properties(_per_path_item())["file-naming"]["enum"] == [None, *FILE_NAMINGS]
    assert _properties(_per_path_item())["severity"]["additionalProperties"]["enum"] == list(SEVERITIES)


def test_the_schema_ships_with_the_package() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "*.json" in pyproject["tool"]["setuptools"]["package-data"]["linter.engine"]


def _load(tmp_path: Path, text: str) -> Config:
    config = tmp_path / ".krpc-lint.yaml"
    config.write_text(text, encoding="utf-8")
    return load_config(config)


REFUSED = [
    ("selct: [KL1]\n1: 2\n~: 3\n", f"unknown key(s) 1, None, selct (known: {KNOWN})"),
    ("profile: paranoid\nbad: 1\n", f"unknown key(s) bad (known: {KNOWN})"),  # unknown keys first
    ("profile: [strict]\n", "profile must be one of kafka, kafka-ci, recommended, strict"),
    ("fail-on: 3\n", "fail-on must be one of error, warning, info"),
    ("kafka-version: 4\n", f"kafka-version must be one of {', '.join(KAFKA_VERSIONS)}"),  # "4" is no release
    ("kafka-version: true\n", f"kafka-version must be one of {', '.join(KAFKA_VERSIONS)}"),
    ("per-path: 5\n", "per-path must be a list of tables, each with paths"),
    ("per-path: [5]\n", "per-path[0] needs paths"),
    ("per-path: [{paths: a}, {ignore: [x], bad: 1}]\n", "per-path[1] needs paths"),  # before its unknown key
    ("per-path: [{paths: a, bad: 1, ignore: 3}]\n",
     "per-path[0]: unknown key(s) bad (known: file-naming, ignore, paths, severity)"),
    ("per-path: [{paths: a, ignore: [1]}]\n", "per-path.ignore must be a list of strings"),
    ("per-path: [{paths: [a, 2]}]\n", "per-path.paths must be a list of strings"),
    ("per-path: [{paths: a, severity: {KL1: fatal}}]\n",
     "per-path.severity maps rule ids or names to one of error, warning, info"),
    ("per-path: [{paths: a, file-naming: camel}]\n", "per-path.file-naming must be one of kafka, snake_case, any, infer"),
    ("baseline: 5\n", "baseline must be a file name"),
    ("preview: 1\n", "preview must be true or false"),
    ("select: {a: 1}\n", "select must be a list of strings"),
    ("preview: 1\nselect: 3\n", "preview must be true or false"),  # the first key in the order they are checked
    ("severity: {~: error, KL1: fatal}\n", "severity maps rule ids or names to one of error, warning, info"),
    ("rule-packs: [~]\n", "rule-packs must be a list of strings"),
    ("file-naming: ~\n", "file-naming must be one of kafka, snake_case, any, infer"),
    ("entity-types: streamId\n", 'entity-types must be a list of names such as "streamId"'),
    ("listeners: [proxy, 'a b']\n", 'listeners must be a list of names such as "streamId"'),
    ("listeners: ['']\n", 'listeners must be a list of names such as "streamId"'),
    ("entity-types: [\"abc\\n\"]\n", 'entity-types must be a list of names such as "streamId"'),
    ("conformance: [Fetch]\n", "conformance must be a table (per API: supported versions, passthrough, unsupported)"),
]


@pytest.mark.parametrize(("text", "message"), REFUSED, ids=[message for _, message in REFUSED])
def test_a_refused_config_names_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    assert str(caught.value) == f"{tmp_path / '.krpc-lint.yaml'}: {message}"


def test_a_refused_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / ".krpc-lint.yaml"
    config.write_text("per-path: [{paths: a}, {paths: b, severity: {KL1: [error]}}]\n", encoding="utf-8")
    outcome = run_cli("lint", str(REPO_ROOT / "fixtures" / "valid"), "--config", str(config))
    assert (outcome.returncode, outcome.stdout) == (2, "")
    assert outcome.stderr == (f"krpc-lint: error: {config}: per-path.severity maps rule ids or names to one of "
                              "error, warning, info\n")


ACCEPTED = [
    ("kafka-version: 3.7\n", {"kafka_version": "3.7"}),  # YAML reads a number: the release named so
    ("kafka-version: 4.0\n", {"kafka_version": "4.0"}),
    ("kafka-version: ~\n", {"kafka_version": None}),
    ("per-path: 0\n", {"per_path": ()}),  # an empty or false per-path is none, as it always was
    ("per-path: {}\n", {"per_path": ()}),
    ("select: KL8\nseverity: {1: error}\n", {"select": ("KL8",), "severity": {"1": "error"}}),
    ("entity-types: [streamId, a-b_1]\n", {"entity_types": ("streamId", "a-b_1")}),
    ("", {"profile": "recommended"}),
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_an_accepted_config_is_converted(tmp_path: Path, text: str, expected: dict[str, Any]) -> None:
    config = _load(tmp_path, text)
    assert {key: getattr(config, key) for key in expected} == expected


def test_paths_in_the_config_are_its_folders(tmp_path: Path) -> None:
    config = _load(tmp_path, "baseline: base.json\nrule-packs: rules/\nper-path: [{paths: 'vendor/**', file-naming: ~}]\n")
    assert (config.baseline, config.rule_packs) == (str(tmp_path / "base.json"), (str(tmp_path / "rules"),))
    assert config.per_path == (PathOverride(("vendor/**",)),)
    assert config.source == str(tmp_path / ".krpc-lint.yaml")


def test_a_toml_config_goes_through_the_same_schema(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.krpc-lint]\nkafka-version = 3.7\n[[tool.krpc-lint.per-path]]\nignore = ["KL1"]\n',
                         encoding="utf-8")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: per-path\[0\] needs paths$"):
        load_config(pyproject)


def test_the_generated_validator_matches_the_schema() -> None:
    from linter.engine import _config_validator

    assert _config_validator.SCHEMA_SHA256 == schema_digest(), "run `python -m linter.engine.config`"
    assert Path(_config_validator.__file__).read_text(encoding="utf-8") == generate_validator_source()


@pytest.mark.parametrize("text", [text for text, _ in [*REFUSED, *ACCEPTED]])
def test_the_shipped_validator_judges_as_the_schema_compiled_now(text: str) -> None:
    import fastjsonschema

    from linter.engine.config import _as_read, _validator
    from linter.engine.declarative import compiled
    from linter.parse.yamlfile import load_yaml

    data = _as_read(load_yaml(text) or {})

    def accepts(validate: Any) -> bool:
        try:
            validate(data)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    assert accepts(_validator()) == accepts(compiled(json.dumps(config_schema()))) == (text not in dict(REFUSED))
