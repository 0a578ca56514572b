"""Numbers of any length never reach ``int()`` (issue 25, class 4): release tags and git's answers.

Python refuses ``int()`` of more than 4,300 digits (ValueError), so a tag ``v<5000 digits>.0`` in a repository
made ``compat --against HEAD`` (the pre-commit hook's default) and ``audit`` internal errors. A tag holding a
number longer than ``releases.MAX_RELEASE_DIGITS`` is no release now: left out, whatever its length. Each test
runs at 5,000 and 50,000 digits, through the command line, on a real git repository.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.gitrepo import commit, git, init_repo, isolate_git, write

from linter.compat.releases import (
    MAX_RELEASE_DIGITS,
    Release,
    longest_number,
    version_key,
)

SPEC_DIR = "clients/src/main/resources/common/message"
OLD = '''{"apiKey": 1015, "type": "request", "name": "WidgetRequest", "validVersions": "0-1",
 "flexibleVersions": "1+",
 "fields": [
   {"name": "Id", "type": "int32", "versions": "0+", "about": "The id."},
   {"name": "Name", "type": "string", "versions": "0+", "about": "The name."}
 ]}
'''
GROWN = OLD.replace('"0-1"', '"0-2"').replace(
    ']}', ',\n   {"name": "Extra", "type": "int16", "versions": "2+", "about": "New."}\n ]}')
BROKEN_V2 = GROWN.replace('"Extra", "type": "int16"', '"Extra", "type": "int32"')
SIZES = (5_000, 50_000)


def _krpc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linter.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, check=False)


def _packed_tag(repo: Path, name: str, rev: str = "HEAD") -> None:
    """A tag git lists but could not store as a file (a name longer than a file name may be): packed-refs."""
    oid = git(repo, "rev-parse", rev).strip()
    with open(repo / ".git" / "packed-refs", "a", encoding="ascii") as refs:
        refs.write(f"{oid} refs/tags/{name}\n")


def _released_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, digits: int) -> tuple[Path, str]:
    """v1.0 tags version 0-1; a later commit adds version 2 and gets the hostile tag; the work tree breaks v2."""
    isolate_git(monkeypatch, tmp_path)
    repo = init_repo(tmp_path / "repo")
    write(repo, f"{SPEC_DIR}/WidgetRequest.json", OLD)
    commit(repo, "release")
    git(repo, "tag", "v1.0")
    write(repo, f"{SPEC_DIR}/WidgetRequest.json", GROWN)
    commit(repo, "v2 in development")
    hostile = f"v{'9' * digits}.0"
    _packed_tag(repo, hostile)
    assert hostile in git(repo, "tag")  # git itself lists it
    write(repo, f"{SPEC_DIR}/WidgetRequest.json", BROKEN_V2)
    return repo, hostile


@pytest.mark.parametrize("digits", SIZES)
def test_compat_against_head_leaves_a_tag_of_thousands_of_digits_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, digits: int) -> None:
    repo, _ = _released_repo(tmp_path, monkeypatch, digits)
    done = _krpc("compat", "--format", "json", "--against", "HEAD", cwd=repo)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    # v1.0 is the only release: version 2 never shipped, so its break is informational (exit 0); had the
    # hostile tag counted as a release (it tags version 2), the break would be released and fail
    assert done.returncode == 0, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["rule"], f["versions"], f["released"]) for f in findings] == [("KL1003", [2], False)]


@pytest.mark.parametrize("digits", SIZES)
def test_released_auto_with_only_a_hostile_tag_has_no_release(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, digits: int) -> None:
    isolate_git(monkeypatch, tmp_path)
    repo = init_repo(tmp_path / "repo")
    write(repo, f"{SPEC_DIR}/WidgetRequest.json", OLD)
    commit(repo)
    _packed_tag(repo, f"{'1' * digits}.2.3")
    done = _krpc("compat", "--against", "HEAD", "--released", "auto", cwd=repo)
    assert done.returncode == 2
    assert done.stderr == "krpc-lint: error: --released auto: this repository has no release tags (like 3.7.0 or v1.2)\n"


@pytest.mark.parametrize("digits", SIZES)
def test_audit_leaves_a_tag_of_thousands_of_digits_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, digits: int) -> None:
    import pyarrow.parquet as pq

    repo, hostile = _released_repo(tmp_path, monkeypatch, digits)
    commit(repo, "break v2")
    out = tmp_path / "audit"
    done = _krpc("audit", ".", "--out", str(out), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    rows = pq.read_table(out / "revisions").to_pylist()
    assert {row["release"] for row in rows} == {"v1.0", None}  # the first commit is in v1.0, the others in none
    assert hostile not in (out / "summary.json").read_text() + (out / "report.html").read_text()


def test_version_order_is_numeric_for_any_length_without_int() -> None:
    huge = "9" * 50_000
    names = [f"v{huge}.0", f"v{huge[:-1]}.0", "3.10.0", "3.9.1", "v010.0", "10.1"]
    assert sorted(names, key=version_key) == ["3.9.1", "3.10.0", "v010.0", "10.1", f"v{huge[:-1]}.0", f"v{huge}.0"]
    assert version_key("v010.0") == version_key("10.0")
    assert Release(f"v{huge}.0", "c", 0).order() > Release("99.0", "c", 0).order()
    assert longest_number(f"v{huge}.0") == 50_000 > MAX_RELEASE_DIGITS
    assert longest_number("20241031.1") <= MAX_RELEASE_DIGITS  # a date is a release number


def test_version_key_is_linear_in_the_tag() -> None:
    """Ordering and bounding a tag costs CPU time in proportion to its length: ratio at n and 10n digits."""
    def cost(n: int) -> float:
        name = f"v{'7' * n}.{'8' * n}.0"
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            for _ in range(20):
                version_key(name)
                longest_number(name)
            best = min(best, time.process_time() - start)
        return best

    small, large = cost(50_000), cost(500_000)
    assert large / small < 30  # linear: ~10; quadratic: ~100


# --- numbers in the files krpc-lint reads beside the specs: baselines, configs ------------------------------


@pytest.mark.parametrize("digits", SIZES)
@pytest.mark.parametrize(("name", "text", "option"), [
    ("baseline.json", '{"findings": [%s]}', "--baseline"),
    ("pyproject.toml", "[tool.krpc-lint]\nfail-on = %s\n", "--config"),
    (".krpc-lint.yaml", "fail-on: %s\n", "--config"),
    ("config.yaml", "ignore: [%s]\n", "--config"),
])
def test_a_number_of_thousands_of_digits_in_a_baseline_or_config_is_one_line(
        tmp_path: Path, digits: int, name: str, text: str, option: str) -> None:
    """Refused by its length before conversion (JSON: a parse_int hook) or in krpc-lint's words when the reader
    has no hook (tomllib, ruamel): never Python's advice to call sys.set_int_max_str_digits()."""
    file = tmp_path / name
    file.write_text(text % ("9" * digits))
    result = _krpc("lint", "--no-cache", option, str(file), "fixtures/valid", cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"a number of {digits:,} digits; at most 4,300 are read" in lines[0], result.stderr
    assert name in lines[0]
