"""The hooks of .pre-commit-hooks.yaml, installed and run by the real pre-commit.

Each test builds a git repository in a temp dir whose ``.pre-commit-config.yaml`` points at this
checkout at its current commit (commit your work before running these: pre-commit clones the
repository at that revision). The hook environment is installed once per session into a temp
``PRE_COMMIT_HOME``; installing it needs PyPI for the core dependencies, nothing else.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared, unavailable
from ruamel.yaml import YAML
from support.gitrepo import commit, git, init_repo, isolate_git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SPEC_DIR = "clients/src/main/resources/common/message"
DEMO = REPO_ROOT / "fixtures" / "compat" / "demo"
BAD_SPEC = REPO_ROOT / "fixtures" / "invalid" / "KL301-field-name-pattern.json"
HEAVY = ("pyspark", "pyarrow", "pandas", "numpy", "py4j")


@pytest.fixture(scope="session")
def hook_rev() -> str:
    """This checkout's current commit: what the repository under test installs the hooks from."""
    if not (REPO_ROOT / ".git").exists():
        unavailable("the pre-commit tests need this checkout to be a git repository")
    return git(REPO_ROOT, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pre_commit_home: Path) -> Path:
    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
    monkeypatch.delenv("PRE_COMMIT_COLOR", raising=False)
    return init_repo(tmp_path / "repo")


def _config(rev: str, compat_args: list[str] | None = None) -> str:
    args = "" if compat_args is None else f"\n    args: [{', '.join(compat_args)}]"
    return f"repos:\n- repo: {REPO_ROOT}\n  rev: {rev}\n  hooks:\n  - id: krpc-lint\n  - id: krpc-lint-compat{args}\n"


def _specs(repo: Path, source: Path, *, spec_dir: str = SPEC_DIR) -> None:
    for spec in source.glob("*.json"):
        write(repo, f"{spec_dir}/{spec.name}", spec.read_text())


def _pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args, "--color=never"], cwd=repo,
                          capture_output=True, check=False, text=True, timeout=900)


def _git_commit(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    """``git commit`` of everything, through the hook that ``pre-commit install`` wrote (its output is on stderr)."""
    git(repo, "add", "-A")
    return subprocess.run(["git", "commit", "-m", message], cwd=repo, capture_output=True, check=False, text=True,
                          env={**os.environ, "PRE_COMMIT_COLOR": "never"}, timeout=900)


def _hook_status(output: str) -> dict[str, str]:
    """``{hook name: Passed | Failed | Skipped...}`` from pre-commit's dotted status lines."""
    return {m[1]: m[2] for m in re.finditer(r"^(krpc-lint[^.\n]*?)\.{2,}(?:\([^)]*\))?(\w+)$", output, re.MULTILINE)}


def test_hooks_file_declares_its_hooks() -> None:
    hooks = {hook["id"]: hook for hook in YAML(typ="safe").load(REPO_ROOT / ".pre-commit-hooks.yaml")}
    assert set(hooks) == {"krpc-lint", "krpc-lint-compat", "krpc-lint-conformance"}
    assert hooks["krpc-lint-conformance"]["pass_filenames"] is False
    assert hooks["krpc-lint-compat"]["pass_filenames"] is False
    assert hooks["krpc-lint-compat"]["args"] == ["--against", "HEAD"]
    pattern = re.compile(hooks["krpc-lint"]["files"])
    assert pattern.search("clients/src/main/resources/common/message/FetchRequest.json")
    assert pattern.search("metadata/src/main/resources/common/metadata/TopicRecord.json")
    assert pattern.search("src/test/resources/common/message/SimpleExampleMessage.json")
    assert pattern.search("storage/src/main/resources/message/RemoteLogSegmentMetadataRecord.json")
    assert not pattern.search("clients/src/main/resources/common/message/nested/X.json")
    assert not pattern.search("package.json")


def test_good_specs_pass_and_a_bad_spec_fails_with_its_finding(repo: Path, hook_rev: str) -> None:
    _specs(repo, REPO_ROOT / "fixtures" / "valid")
    write(repo, ".pre-commit-config.yaml", _config(hook_rev))
    commit(repo, "specs")
    result = _pre_commit(repo, "run", "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _hook_status(result.stdout) == {"krpc-lint": "Passed", "krpc-lint compat": "Passed"}

    write(repo, f"{SPEC_DIR}/TenantQuota.json", BAD_SPEC.read_text())
    commit(repo, "a bad spec")
    result = _pre_commit(repo, "run", "--all-files")
    assert result.returncode == 1
    assert _hook_status(result.stdout)["krpc-lint"] == "Failed"
    assert f"{SPEC_DIR}/TenantQuota.json:11:15: KL301 [field-name-pattern]" in result.stdout


def test_wire_break_against_the_base_branch_fails_and_a_safe_change_passes(repo: Path, hook_rev: str) -> None:
    _specs(repo, DEMO / "old")
    write(repo, ".pre-commit-config.yaml", _config(hook_rev, ["--against", "main"]))
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    _specs(repo, DEMO / "new")
    commit(repo, "v4, with MaxWaitMs retyped")
    result = _pre_commit(repo, "run", "--all-files")
    assert result.returncode == 1
    assert _hook_status(result.stdout) == {"krpc-lint": "Passed", "krpc-lint compat": "Failed"}
    assert (f"{SPEC_DIR}/WidgetFetchRequest.json:24:36: KL1003 [field-retyped] WidgetFetchRequest (v0-3): "
            "MaxWaitMs: int32 -> int64") in result.stdout
    assert "witness: v0 written by the old revision" in result.stdout

    spec = repo / SPEC_DIR / "WidgetFetchRequest.json"
    spec.write_text(spec.read_text().replace('"MaxWaitMs", "type": "int64"', '"MaxWaitMs", "type": "int32"'))
    commit(repo, "MaxWaitMs stays int32")
    result = _pre_commit(repo, "run", "--all-files")
    assert result.returncode == 0, result.stdout
    assert _hook_status(result.stdout) == {"krpc-lint": "Passed", "krpc-lint compat": "Passed"}


def test_hooks_skip_when_no_spec_changed(repo: Path, hook_rev: str) -> None:
    write(repo, "README.md", "no specs here\n")
    write(repo, ".pre-commit-config.yaml", _config(hook_rev))
    commit(repo, "docs")
    result = _pre_commit(repo, "run", "--all-files")
    assert result.returncode == 0, result.stdout
    assert _hook_status(result.stdout) == {"krpc-lint": "Skipped", "krpc-lint compat": "Skipped"}


def test_the_hook_environment_has_only_the_core_dependencies(repo: Path, hook_rev: str, pre_commit_home: Path) -> None:
    write(repo, ".pre-commit-config.yaml", _config(hook_rev))
    commit(repo, "config")
    result = _pre_commit(repo, "install-hooks")
    assert result.returncode == 0, result.stdout + result.stderr
    site_packages = list(pre_commit_home.glob("*/py_env-*/lib/python*/site-packages"))
    assert site_packages, f"no hook environment under {pre_commit_home}"
    installed = {path.name.lower() for path in site_packages[0].iterdir()}
    assert "linter" in installed
    assert not [name for name in installed if name.startswith(HEAVY)]


def test_the_first_commit_of_a_repository_passes(repo: Path, hook_rev: str) -> None:
    """Before the first commit HEAD does not exist: every spec is new, which is safe."""
    _specs(repo, REPO_ROOT / "fixtures" / "valid")
    write(repo, ".pre-commit-config.yaml", _config(hook_rev))
    assert _pre_commit(repo, "install").returncode == 0
    result = _git_commit(repo, "first")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _hook_status(result.stderr) == {"krpc-lint": "Passed", "krpc-lint compat": "Passed"}


def test_a_commit_that_retypes_a_released_field_of_kafka_fails_and_passes_once_reverted(
        repo: Path, hook_rev: str) -> None:
    """Acceptance: Kafka 3.7.0's specs, the hooks installed in git, FetchRequest.MaxWaitMs retyped."""
    kafka = require_shared("kafka-specs", "3.7.0")
    shutil.copytree(kafka, repo, dirs_exist_ok=True)
    write(repo, ".pre-commit-config.yaml", _config(hook_rev))
    commit(repo, "Kafka 3.7.0")
    assert _pre_commit(repo, "install").returncode == 0
    fetch = repo / SPEC_DIR / "FetchRequest.json"
    original = fetch.read_text()
    fetch.write_text(original.replace('"name": "MaxWaitMs", "type": "int32"', '"name": "MaxWaitMs", "type": "int64"')
                     .replace("// Version 1 is the same", "// Version 1 (noted) is the same", 1))
    result = _git_commit(repo, "retype MaxWaitMs")
    assert result.returncode == 1
    assert (f"{SPEC_DIR}/FetchRequest.json:73:36: KL1003 [field-retyped] FetchRequest (v0-16): "
            "MaxWaitMs: int32 -> int64") in result.stderr
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"

    fetch.write_text(fetch.read_text().replace('"MaxWaitMs", "type": "int64"', '"MaxWaitMs", "type": "int32"'))
    result = _git_commit(repo, "a comment")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _hook_status(result.stderr) == {"krpc-lint": "Passed", "krpc-lint compat": "Passed"}
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "2"


def test_the_hooks_in_a_clone_of_kafkas_history(repo: Path, hook_rev: str, tmp_path: Path) -> None:
    """Acceptance (issue 13): a real Kafka checkout, with its non-spec JSON: an `about` edit of FetchRequest.json
    passes both hooks; ReplicaId int32 -> int64 fails, naming the file."""
    bundle = require_shared("kafka-history", "kafka-json.bundle")
    kafka = tmp_path / "kafka"
    subprocess.run(["git", "clone", "-q", str(bundle), str(kafka)], check=True, capture_output=True)
    write(kafka, ".pre-commit-config.yaml", _config(hook_rev))
    commit(kafka, "krpc-lint hooks")
    assert _pre_commit(kafka, "install").returncode == 0
    fetch = kafka / SPEC_DIR / "FetchRequest.json"
    original = fetch.read_text()
    about = '"about": "The maximum time in milliseconds to wait for the response."'
    fetch.write_text(original.replace(about, about.replace("to wait", "the broker waits")))
    result = _git_commit(kafka, "reword an about")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _hook_status(result.stderr) == {"krpc-lint": "Passed", "krpc-lint compat": "Passed"}
    retyped = fetch.read_text().replace('{ "name": "ReplicaId", "type": "int32", "versions": "0-14"',
                                        '{ "name": "ReplicaId", "type": "int64", "versions": "0-14"')
    fetch.write_text(retyped)
    result = _git_commit(kafka, "ReplicaId is int64")
    assert result.returncode == 1
    assert _hook_status(result.stderr)["krpc-lint compat"] == "Failed"
    assert re.search(rf"^{SPEC_DIR}/FetchRequest\.json:\d+:\d+: KL1003 \[field-retyped\] FetchRequest \(v0-14\): "
                     "ReplicaId: int32 -> int64", result.stderr, re.MULTILINE), result.stderr

    # Issue 13's acceptance 3, and issue 31's: the request bumped to v18 without its response. pre-commit passes
    # the lint hook only FetchRequest.json; the hook reads its directory as context and reports the pair on the
    # response. Kafka's ApiMessageTypeTest fails on it, so it is an error (KL3001): the commit fails, and
    # pre-commit shows the finding without --verbose.
    fetch.write_text(original.replace('"validVersions": "0-17"', '"validVersions": "0-18"'))
    commits = git(kafka, "rev-list", "--count", "HEAD")
    result = _git_commit(kafka, "FetchRequest v18")
    assert result.returncode == 1, result.stdout + result.stderr
    assert _hook_status(result.stderr)["krpc-lint"] == "Failed"
    assert (f"{SPEC_DIR}/FetchResponse.json:52:20: KL3001 [request-response-versions] FetchResponse has "
            "validVersions 0-17 but FetchRequest has 0-18: Kafka's build fails (ApiMessageTypeTest."
            "testAllVersionsHaveSchemas: a request and its response have schemas for the same versions)") in result.stderr
    assert "Found 1 error in 1 file." in result.stderr
    assert git(kafka, "rev-list", "--count", "HEAD") == commits
    result = _pre_commit(kafka, "run", "krpc-lint", "--files", f"{SPEC_DIR}/FetchRequest.json")  # no --verbose
    assert result.returncode == 1 and _hook_status(result.stdout) == {"krpc-lint": "Failed"}
    assert f"{SPEC_DIR}/FetchResponse.json:52:20: KL3001 [request-response-versions]" in result.stdout


VENDOR_DIR = "kafka/protocol/schemas"


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def test_the_conformance_hook_fails_a_vendor_commit_that_diverges_from_upstream(repo: Path, hook_rev: str) -> None:
    """A vendor's copy (snake_case names, a few APIs) checked against Kafka's specs at every commit: the
    identical copy passes, a commit retyping a field of a declared version fails naming it."""
    upstream = require_shared() / "kafka-specs" / "trunk-2024-10" / SPEC_DIR
    for name in ("ApiVersionsRequest", "ApiVersionsResponse", "FetchRequest", "FetchResponse"):
        write(repo, f"{VENDOR_DIR}/{_snake(name)}.json", (upstream / f"{name}.json").read_text())
    write(repo, ".pre-commit-config.yaml",
          f"repos:\n- repo: {REPO_ROOT}\n  rev: {hook_rev}\n  hooks:\n  - id: krpc-lint-conformance\n"
          f"    args: [{VENDOR_DIR}, --upstream, {upstream}]\n")
    commit(repo, "vendored specs")
    result = _pre_commit(repo, "run", "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _hook_status(result.stdout) == {"krpc-lint conformance": "Passed"}

    fetch = repo / VENDOR_DIR / "fetch_request.json"
    text = fetch.read_text()
    retyped = text.replace('"name": "ReplicaId", "type": "int32"', '"name": "ReplicaId", "type": "int64"', 1)
    assert retyped != text
    fetch.write_text(retyped)
    result = _pre_commit(repo, "run", "--all-files")
    assert result.returncode == 1
    assert _hook_status(result.stdout) == {"krpc-lint conformance": "Failed"}
    assert "diverges" in result.stdout and "FetchRequest" in result.stdout
