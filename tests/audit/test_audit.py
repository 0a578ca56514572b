"""``krpc-lint audit`` on a real git repository built here, on Spark in local mode and on a real
standalone cluster: the tables row by row, the same results as the library in-process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_spark, run_cli, unavailable
from support.gitrepo import git, init_repo, isolate_git, write

from linter import compare, lint_texts
from linter.audit.history import extract
from linter.audit.run import (
    BlobUnit,
    Units,
    audit,
    distributed,
    run_in_process,
    units,
)
from linter.engine.config import Config
from linter.spark import schema

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the audit needs git")

SPECS = "clients/src/main/resources/common/message"
DEMO = REPO_ROOT / "fixtures" / "compat" / "demo"
BAD_SPEC = (REPO_ROOT / "fixtures" / "invalid" / "KL301-field-name-pattern.json").read_text()


def _commit(repo: Path, message: str, date: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GIT_AUTHOR_DATE", date)
    monkeypatch.setenv("GIT_COMMITTER_DATE", date)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def history_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Five commits: specs added and released, a safe change, a rename, a wire break (released),
    a bad spec added then deleted, a corrupt file."""
    isolate_git(monkeypatch, tmp_path)
    repo = init_repo(tmp_path / "specs", "trunk")
    for spec in (DEMO / "old").glob("*.json"):
        write(repo, f"{SPECS}/{spec.name}", spec.read_text())
    commits = {"added": _commit(repo, "specs", "2024-01-10T10:00:00Z", monkeypatch)}
    git(repo, "tag", "1.0.0")
    safe = (DEMO / "new" / "WidgetFetchRequest.json").read_text().replace(
        '"MaxWaitMs", "type": "int64"', '"MaxWaitMs", "type": "int32"')
    write(repo, f"{SPECS}/WidgetFetchRequest.json", safe)
    write(repo, f"{SPECS}/WidgetFetchResponse.json", (DEMO / "new" / "WidgetFetchResponse.json").read_text())
    write(repo, f"{SPECS}/TenantQuota.json", BAD_SPEC)
    commits["safe"] = _commit(repo, "v4", "2024-02-05T10:00:00Z", monkeypatch)
    git(repo, "mv", f"{SPECS}/WidgetRegistrationRecord.json", f"{SPECS}/WidgetRecord.json")
    commits["renamed"] = _commit(repo, "rename", "2024-02-20T10:00:00Z", monkeypatch)
    write(repo, f"{SPECS}/WidgetFetchRequest.json", safe.replace('"MaxWaitMs", "type": "int32"',
                                                                  '"MaxWaitMs", "type": "int64"'))
    commits["break"] = _commit(repo, "retype", "2024-03-01T10:00:00Z", monkeypatch)
    (repo / SPECS / "TenantQuota.json").unlink()
    write(repo, f"{SPECS}/Broken.json", "{ not json")
    commits["deleted"] = _commit(repo, "cleanup", "2024-03-15T10:00:00Z", monkeypatch)
    git(repo, "tag", "1.1.0")
    return {"repo": str(repo), **commits}


def _changes(rows: list[dict], commits: dict[str, str]) -> set[tuple]:
    by_commit = {commit: name for name, commit in commits.items() if name != "repo"}
    return {(by_commit[r["new_commit"]], r["new_path"].rsplit("/", 1)[-1], r["rule"], r["category"], r["released"],
             tuple(r["versions"] or ()), r["release"], r["released_in"]) for r in rows}


EXPECTED_CHANGES = {
    ("safe", "WidgetFetchRequest.json", "KL1061", "SOURCE_ONLY", True, (1, 2, 3), "1.1.0", "1.0.0"),
    ("safe", "WidgetFetchRequest.json", "KL1081", "SAFE", False, (4,), "1.1.0", "1.0.0"),  # v4: never shipped
    ("safe", "WidgetFetchRequest.json", "KL1083", "SAFE", True, (2, 3), "1.1.0", "1.0.0"),
    ("safe", "WidgetFetchResponse.json", "KL1081", "SAFE", False, (4,), "1.1.0", "1.0.0"),
    ("renamed", "WidgetRecord.json", "KL1063", "SOURCE_ONLY", True, (0, 1), "1.1.0", "1.0.0"),
    ("break", "WidgetFetchRequest.json", "KL1003", "WIRE_BREAKING", True, (0, 1), "1.1.0", "1.0.0"),
    # released is decided by layout (issue 13): 1.0.0 shipped v2-3 without the tag the "safe" commit added, so
    # the old revision's v2-3 never shipped in that form; v4 came after release 1.0.0
    ("break", "WidgetFetchRequest.json", "KL1003", "WIRE_BREAKING", False, (2, 3, 4), "1.1.0", "1.0.0"),
    ("deleted", "TenantQuota.json", "KL1042", "VERSION_DROPPED", False, (0,), "1.1.0", "1.0.0"),
}


def test_audit_tables_row_by_row(history_repo: dict[str, str], tmp_path: Path, spark) -> None:
    out = tmp_path / "audit"
    summary = audit(history_repo["repo"], str(out), spark=spark)
    read = {name: [row.asDict(recursive=True) for row in spark.read.parquet(str(out / name)).collect()]
            for name in ("revisions", "findings", "changes")}
    for name, rows in read.items():
        assert list(rows[0]) == schema.columns(getattr(schema, name.upper())), name

    by_commit = {commit: name for name, commit in history_repo.items() if name != "repo"}
    revisions = sorted((by_commit[r["commit"]], r["status"], r["path"].rsplit("/", 1)[-1],
                        (r["old_path"] or "").rsplit("/", 1)[-1], r["lineage"].rsplit("/", 1)[-1], r["release"])
                       for r in read["revisions"])
    assert revisions == sorted([
        ("added", "A", "WidgetFetchRequest.json", "", "WidgetFetchRequest.json", "1.0.0"),
        ("added", "A", "WidgetFetchResponse.json", "", "WidgetFetchResponse.json", "1.0.0"),
        ("added", "A", "WidgetRegistrationRecord.json", "", "WidgetRegistrationRecord.json", "1.0.0"),
        ("safe", "M", "WidgetFetchRequest.json", "", "WidgetFetchRequest.json", "1.1.0"),
        ("safe", "M", "WidgetFetchResponse.json", "", "WidgetFetchResponse.json", "1.1.0"),
        ("safe", "A", "TenantQuota.json", "", "TenantQuota.json", "1.1.0"),
        ("renamed", "R", "WidgetRecord.json", "WidgetRegistrationRecord.json", "WidgetRegistrationRecord.json",
         "1.1.0"),
        ("break", "M", "WidgetFetchRequest.json", "", "WidgetFetchRequest.json", "1.1.0"),
        ("deleted", "D", "TenantQuota.json", "", "TenantQuota.json", "1.1.0"),
        ("deleted", "A", "Broken.json", "", "Broken.json", "1.1.0"),
    ])

    findings = sorted((r["path"].rsplit("/", 1)[-1], r["rule"], r["line"], r["col"]) for r in read["findings"])
    assert findings == [("Broken.json", "KL001", 1, 3), ("TenantQuota.json", "KL301", 11, 15)]
    assert _changes(read["changes"], history_repo) == EXPECTED_CHANGES
    wire = [r for r in read["changes"] if r["category"] == "WIRE_BREAKING"]
    assert sorted((r["witness_version"], r["witness_writer"], r["witness_hex"][:12]) for r in wire) == [
        (0, "old", "ebaa94550000"), (0, "old", "ebaa94550000")]  # one change, one witness: v0's
    assert all(r["error"] is None for rows in read.values() for r in rows if "error" in r)

    assert (summary.commits, summary.revisions, summary.blobs, summary.pairs) == (5, 10, 8, 5)
    meta = json.loads((out / "summary.json").read_text())
    assert (meta["releases"], meta["pairs"], meta["master"]) == (2, 5, spark.sparkContext.master)
    html = (out / "report.html").read_text()
    assert "<!doctype html>" in html.lower() and "WidgetFetchRequest" in html


def test_a_vendor_layout_audits_its_specs_and_skips_other_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Specs outside Kafka's locations (a vendor's copy) among other JSON: the audit tells them apart as
    lint and compat do (by content), and a spec broken in one revision stays a spec."""
    isolate_git(monkeypatch, tmp_path)
    repo = init_repo(tmp_path / "vendor", "main")
    for spec in (DEMO / "old").glob("*.json"):
        write(repo, f"kafka/protocol/schemas/{spec.name}", spec.read_text())
    write(repo, "package.json", '{"name": "client", "version": "1.0.0"}\n')
    write(repo, "kafka/protocol/schemas/manifest.json", '{"files": 3}\n')
    _commit(repo, "vendored", "2024-01-10T10:00:00Z", monkeypatch)
    write(repo, "kafka/protocol/schemas/WidgetFetchRequest.json", "{ broken")
    write(repo, "package.json", '{"name": "client", "version": "1.0.1"}\n')
    _commit(repo, "broken", "2024-01-11T10:00:00Z", monkeypatch)
    work = units(extract(str(repo)))
    assert work.skipped == 2
    assert sorted({r.path.rsplit("/", 1)[-1] for r in work.revisions}) == [
        "WidgetFetchRequest.json", "WidgetFetchResponse.json", "WidgetRegistrationRecord.json"]
    assert [unit.pair["new_path"].rsplit("/", 1)[-1] for unit in work.pairs] == ["WidgetFetchRequest.json"]
    rows = run_in_process(work)
    assert not {r["path"] for r in rows["findings"]} & {"package.json", "kafka/protocol/schemas/manifest.json"}
    assert "KL001" in {r["rule"] for r in rows["findings"]}  # the broken revision is linted, as a spec


def test_distributed_results_equal_the_library_in_process(history_repo: dict[str, str], spark) -> None:
    """Spark's rows against direct calls of the public library (lint_texts, compare) per unit."""
    history = extract(history_repo["repo"])
    work = units(history)
    expected_findings = set()
    for unit in work.blobs:
        for f in lint_texts({Path(unit.path).name: unit.data}, complete=False).findings:
            expected_findings.add((unit.blob, f.rule, f.line, f.col, f.message))
    expected_changes = set()
    for unit in work.pairs:
        from linter.compat.revision import Revision

        old = Revision("old", {unit.pair["old_path"]: unit.old})
        new = Revision("new", {unit.pair["new_path"]: unit.new} if unit.new is not None else {})
        released = None if unit.released is None else [Revision(tag, files) for tag, files in unit.released]
        for f in compare(old, new, Config(profile="strict"), released=released).findings:
            expected_changes.add((unit.pair["new_commit"], f.rule, f.versions, f.message,
                                  (f.witness or {}).get("hex")))

    tables = distributed(spark, work)
    assert {(r["blob"], r["rule"], r["line"], r["col"], r["message"]) for r in tables["findings"]} == expected_findings
    assert {(r["new_commit"], r["rule"], tuple(r["versions"]), r["message"], r["witness_hex"])
            for r in tables["changes"]} == expected_changes
    assert len(expected_changes) > 5 and len(expected_findings) == 2
    in_process = run_in_process(work)
    assert sorted(map(repr, in_process["changes"])) == sorted(map(repr, tables["changes"]))


def test_a_small_history_audits_in_process_with_the_tables_spark_writes(history_repo: dict[str, str], tmp_path: Path,
                                                                         spark, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --master and at most IN_PROCESS_UNITS blobs and pairs: no Spark session, the same tables; above the
    threshold (or with a master) the work goes to Spark."""
    import pyarrow.parquet as pq

    from linter.audit import run as audit_module
    from linter.cli.audit_cmd import AUDIT_MASTER_HELP

    assert f"at most {audit_module.IN_PROCESS_UNITS} blobs" in AUDIT_MASTER_HELP  # the help says the threshold

    def tables(out: Path) -> dict[str, list[str]]:
        return {name: sorted(map(repr, pq.read_table(out / name).to_pylist()))
                for name in ("revisions", "findings", "changes")}

    sessions: list[str | None] = []
    monkeypatch.setattr("linter.spark.session.session", lambda master=None: sessions.append(master) or spark)
    small = audit(history_repo["repo"], str(tmp_path / "small"))
    assert small.master == audit_module.IN_PROCESS and sessions == []
    assert json.loads((tmp_path / "small" / "summary.json").read_text())["master"] == audit_module.IN_PROCESS
    with_spark = audit(history_repo["repo"], str(tmp_path / "spark"), spark=spark)
    assert tables(tmp_path / "small") == tables(tmp_path / "spark")
    monkeypatch.setattr(audit_module, "IN_PROCESS_UNITS", small.blobs + small.pairs - 1)
    large = audit(history_repo["repo"], str(tmp_path / "large"))
    assert sessions == [None] and large.master == with_spark.master == spark.sparkContext.master
    audit(history_repo["repo"], str(tmp_path / "master"), master="local[1]")
    assert sessions == [None, "local[1]"]


def test_a_unit_that_fails_is_a_row_not_a_failed_job(spark) -> None:
    broken = BlobUnit("deadbeef", None, b"{}")  # type: ignore[arg-type]  - no path: lint_blob raises
    rows = distributed(spark, Units([broken, BlobUnit("cafe", "specs/Y.json", b"{}")], []))["findings"]
    errors = [r for r in rows if r["error"]]
    assert [(r["blob"], r["path"], r["rule"]) for r in errors] == [("deadbeef", None, None)]
    assert errors[0]["error"].startswith("TypeError: ")
    assert {r["blob"] for r in rows if not r["error"]} == {"cafe"}


def test_the_core_linter_does_not_import_pyspark() -> None:
    code = ("import sys, linter; linter.lint(['fixtures/valid']); linter.compare('fixtures/compat/demo/old', "
            "'fixtures/compat/demo/new'); import linter.cli.main; "
            "assert not [m for m in sys.modules if m.startswith(('pyspark', 'pyarrow', 'py4j'))], 'heavy import'")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, check=False, text=True)
    assert result.returncode == 0, result.stderr


def test_audit_on_a_standalone_cluster_via_therun_cli(history_repo: dict[str, str], tmp_path: Path) -> None:
    """A real master and worker started from the installed pyspark, on 127.0.0.1."""
    from support.spark_cluster import standalone_cluster

    require_spark()
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    out = tmp_path / "audit"
    with standalone_cluster(cluster_dir) as master:
        result = run_cli("audit", history_repo["repo"], "--out", str(out), "--master", master)
        assert result.returncode == 0, result.stdout + result.stderr
    assert f"on {master}" in result.stdout
    assert "5 commits, 10 spec revisions, 8 distinct blobs linted (2 findings), 5 revision pairs compared " \
           f"({len(EXPECTED_CHANGES)} changes), 0 errors" in result.stdout
    assert json.loads((out / "summary.json").read_text())["master"] == master
    assert "app-" in " ".join(os.listdir(cluster_dir / "worker")), "the job did not run on the worker"

    again = run_cli("audit", history_repo["repo"], "--out", str(out))
    assert again.returncode == 2 and "already exists: pass --overwrite" in again.stderr


def test_audit_of_this_repository_writes_a_report_that_parses_strictly(tmp_path: Path, spark) -> None:
    """As a new user would try it: the project's own history (its specs are the fixtures)."""
    import html5lib

    if not (REPO_ROOT / ".git").exists():
        unavailable("this checkout is not a git repository: the audit needs its history")
    out = tmp_path / "own"
    summary = audit(str(REPO_ROOT), str(out), spark=spark)
    assert summary.revisions > 0 and summary.blobs > 0 and summary.errors == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(html)
    assert "<script" not in html.lower() and "krpc-lint audit of" in html
    assert json.loads((out / "summary.json").read_text())["globs"] == "**/*.json"


def without_pyspark(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``krpc-lint COMMAND`` in a fresh process where ``import pyspark`` fails."""
    code = f"import sys; sys.modules['pyspark'] = None; from linter.cli.main import main; main({command!r})"
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, check=False, text=True)


# --master: Spark is certain, so the missing extra is said before any work (an audit without it reads the history
# first: see the tests below)
@pytest.mark.parametrize("command", [["audit", str(REPO_ROOT), "--master", "local[1]"],
                                     ["replay", "README.md", "--specs", "fixtures/valid", "--against", "fixtures/valid"]])
def test_without_pyspark_the_pipeline_commands_say_how_to_install_it(tmp_path: Path, command: list[str]) -> None:
    result = without_pyspark([*command, "--out", str(tmp_path / "a")])
    assert result.returncode == 2
    assert result.stderr == "krpc-lint: error: the pipeline needs PySpark: pip install 'krpc-lint[spark]'\n"
    assert not (tmp_path / "a").exists()


def test_without_pyspark_a_large_history_is_read_then_refused(tmp_path: Path) -> None:
    """This repository's history is above IN_PROCESS_UNITS: Spark is needed once it is read."""
    result = without_pyspark(["audit", str(REPO_ROOT), "--out", str(tmp_path / "a")])
    assert result.returncode == 2
    assert result.stderr.startswith("krpc-lint: reading the history\n")
    assert result.stderr.endswith("starting Spark\n"
                                  "krpc-lint: error: the pipeline needs PySpark: pip install 'krpc-lint[spark]'\n")
    assert not (tmp_path / "a").exists()


def test_without_pyspark_a_small_history_is_audited_in_this_process(history_repo: dict[str, str],
                                                                     tmp_path: Path) -> None:
    """As AUDIT_MASTER_HELP says: the extra was required before the history was read, even when no Spark ran."""
    result = without_pyspark(["audit", history_repo["repo"], "--out", str(tmp_path / "a")])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].endswith(" s in this process (a small history: no Spark)")
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["master"] == "in-process"


def test_a_spark_run_prints_no_jvm_noise(history_repo: dict[str, str], tmp_path: Path) -> None:
    """Issue 15: Spark 4's "WARNING: Using incubator modules" and "Setting default log level" reached stderr on
    every audit and replay. A fresh process with Spark (--master), as a user runs it: stderr holds krpc-lint's
    progress lines only."""
    require_spark()
    result = run_cli("audit", history_repo["repo"], "--out", str(tmp_path / "out"), "--master", "local[1]")
    assert result.returncode == 0, result.stderr
    assert "on local[1]" in result.stdout
    noise = [line for line in result.stderr.splitlines() if not line.startswith("krpc-lint: ")]
    assert noise == [], noise
