"""The campaign of bench/fuzz.py through the command line, as a CI job runs it: each run is a fresh ``krpc-lint``
process (or the Action's ``python -m linter.cli.action`` in a git checkout) on hostile names, paths and numbers,
and what it writes to stdout, stderr, the job summary and the step outputs is checked.

Commands: lint and compat in every format, changelog, matrix, size, conformance, codec decode, rules explain,
usage mistakes naming hostile paths, and the Action on a pull request that renames things hostile. Each run must
exit 0, 1 or 2, with no traceback and no "internal error" on stderr, an exit 2 saying why in one line, and
no output holding what only unescaped input can (``tests/support/hostile_output.problems``: controls, bidi, forged
workflow commands, broken job-summary tables, bytes that are not UTF-8), within 30 s.

Slower than bench/fuzz.py (a process per run: ~0.3 s), so fewer inputs: ``--runs`` (default 300).

Usage: python bench/fuzz_cli.py [--runs N] [--seed S] [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.hostile_output import (
    SPEC_DIR,
    breaking_edit,
    disk_name,
    hostile_name,
    problems,
    table_problems,
    with_hostile_names,
    write_tree,
)

KRPC_LINT = [str(ROOT / ".venv" / "bin" / "python"), "-m", "linter.cli.main"]
ACTION = [str(ROOT / ".venv" / "bin" / "python"), "-m", "linter.cli.action"]
CORPUS = ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10"
RUN_SECONDS = 30
FORMATS = ("text", "json", "sarif", "github", "junit")
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
ENV = {**os.environ, **GIT_ENV, "LC_ALL": "C.UTF-8", "NO_COLOR": "1"}
DIGITS = "9" * 5000


def corpus() -> list[tuple[str, dict[str, Any]]]:
    """Kafka's specs (with their license comments) parsed."""
    from linter.parse.jsonc import fast_load

    source = CORPUS if CORPUS.is_dir() else ROOT / "fixtures" / "valid"
    parsed = ((path.name, fast_load(path.read_text(encoding="utf-8"))) for path in sorted(source.rglob("*.json")))
    return [(name, spec) for name, spec in parsed if isinstance(spec, dict)]


def argument(text: str) -> bytes:
    """A command-line argument: bytes (an undecodable name stays its byte; another lone surrogate becomes the
    three bytes that are no UTF-8), no NUL (argv cannot hold one)."""
    text = text.replace("\x00", "")
    try:
        return os.fsencode(text)
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


class Campaign:
    def __init__(self) -> None:
        self.runs = 0
        self.failures: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.commands: Counter[str] = Counter()
        self.exits: Counter[int] = Counter()
        self.slowest = (0.0, "")

    def fail(self, key: str, label: str) -> None:
        self.failures[key] += 1
        self.examples.setdefault(key, label)

    def run(self, label: str, command: list[Any], cwd: Path, *, stdout_annotations: int | None = None,
            env: dict[str, str] | None = None, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes] | None:
        """One process; its exit, stderr and stdout checked (``stdout_annotations``: -1 for any number of
        annotations, as ``--format github`` and the Action write)."""
        self.runs += 1
        self.commands[label.split(" ")[0]] += 1
        started = time.perf_counter()
        try:
            done = subprocess.run([argument(part) if isinstance(part, str) else part for part in command], cwd=cwd,
                                  env=env or ENV, input=stdin, capture_output=True, timeout=RUN_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            self.fail("hang", label)
            return None
        elapsed = time.perf_counter() - started
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, label)
        self.exits[done.returncode] += 1
        stderr = done.stderr.decode("utf-8", "replace")
        if done.returncode not in (0, 1, 2):
            self.fail(f"exit {done.returncode}", label)
        if "Traceback" in stderr:
            self.fail("traceback", label)
        if "internal error" in stderr:
            self.fail("internal error: " + stderr.strip().splitlines()[-1][:80], label)
        if done.returncode == 2 and (not stderr.strip() or stderr.strip().count("\n") > 1 and
                                     not stderr.lstrip().startswith("Usage:")):
            self.fail("exit 2 not in one line", label)
        for stream, data, commands in (("stdout", done.stdout, stdout_annotations), ("stderr", done.stderr, None)):
            for problem in problems(data, annotations=commands):
                self.fail(f"{label.split(' ')[0]} {stream}: {problem}", label)
        return done

    def print(self, seconds: float) -> None:
        print(f"cli: {self.runs} runs in {seconds:.0f} s ({', '.join(f'{c} {n}' for c, n in self.commands.items())}); "
              f"exits {dict(sorted(self.exits.items()))}; failures {sum(self.failures.values())}; slowest "
              f"{self.slowest[0]:.2f} s ({self.slowest[1]})")
        for key, count in self.failures.most_common():
            print(f"  {count} x {key}  e.g. {self.examples[key]}")


def hostile_tree(rng: random.Random, specs: list[tuple[str, dict[str, Any]]], root: Path) -> tuple[str, str, str]:
    """An old and a new tree of one spec under a hostile (nested) name in a Kafka spec location, the new one with
    hostile names and a change: (old dir, new dir, the message's name)."""
    name, spec = rng.choice(specs)
    spec = copy.deepcopy(spec)
    hostile = copy.deepcopy(spec)
    with_hostile_names(hostile, rng)
    changed = copy.deepcopy(hostile)
    breaking_edit(changed, rng)
    parts = [disk_name(rng, "dir") for _ in range(rng.choice([0, 0, 1, 2]))]
    relative = "/".join([*parts, disk_name(rng, name.removesuffix(".json")) + ".json"])
    old_spec = hostile if rng.random() < 0.5 else spec
    write_tree(root / "old", {relative: json.dumps(old_spec, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")})
    write_tree(root / "new", {relative: json.dumps(changed, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")})
    return str(root / "old"), str(root / "new"), str(changed.get("name", "X"))


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", os.fsencode(repo), *args], check=True, env=ENV, capture_output=True)


def action_run(campaign: Campaign, rng: random.Random, specs: list[tuple[str, dict[str, Any]]], case: Path,
               label: str) -> None:
    """The Action on a pull request: a base commit of real specs, a head that makes names hostile and breaks."""
    repo = case / "repo"
    names = rng.sample(specs, 3)
    base = {name: json.dumps(spec).encode() for name, spec in names}
    write_tree(repo, base)
    subprocess.run(["git", "init", "-q", os.fsencode(repo)], check=True, env=ENV, capture_output=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    head = subprocess.run(["git", "-C", os.fsencode(repo), "rev-parse", "HEAD"], check=True, env=ENV,
                          capture_output=True, text=True).stdout.strip()
    for name, spec in names[:2]:
        changed = copy.deepcopy(spec)
        with_hostile_names(changed, rng)
        breaking_edit(changed, rng)
        target = name if rng.random() < 0.5 else disk_name(rng, name.removesuffix(".json")) + ".json"
        os.remove(os.fsencode(repo / SPEC_DIR / name)) if target != name else None
        write_tree(repo, {target: json.dumps(changed).encode("utf-8", "surrogatepass")})
    summary, outputs = case / "summary.md", case / "outputs.txt"
    env = {**ENV, "INPUT_AGAINST": head, "INPUT_LINT_SCOPE": rng.choice(["changed", "all"]),
           "INPUT_RELEASED": "none", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs),
           "INPUT_SARIF_FILE": str(case / "out" / "krpc.sarif")}
    done = campaign.run(label, ACTION, repo, stdout_annotations=-1, env=env)
    if done is None or done.returncode == 2:
        return
    for problem in table_problems(summary.read_text(encoding="utf-8"), -1):  # whatever rows, each of four cells
        campaign.fail(f"action job summary: {problem}", label)
    for problem in problems(outputs.read_bytes()):
        campaign.fail(f"action outputs: {problem}", label)
    json.loads((case / "out" / "krpc.sarif").read_bytes())


KINDS = ["lint", "lint", "compat", "compat", "changelog", "matrix", "size", "conformance", "codec", "rules", "missing",
         "config", "action"]


def one_run(campaign: Campaign, rng: random.Random, specs: list[tuple[str, dict[str, Any]]], case: Path,
            index: int, kinds: list[str]) -> None:
    kind = rng.choice(kinds)
    label = f"{kind} #{index}"
    if kind == "action":
        action_run(campaign, rng, specs, case, label)
        return
    old, new, message = hostile_tree(rng, specs, case)
    fmt = rng.choice(FORMATS)
    github = -1 if fmt == "github" else None
    if kind == "lint":
        diff = ["--diff"] if rng.random() < 0.3 else []  # the diff of the fixable findings instead of the report
        campaign.run(label, [*KRPC_LINT, "lint", *diff, "--format", fmt, new], case,
                     stdout_annotations=None if diff else github)
    elif kind == "compat":
        if rng.random() < 0.3:  # the edit that keeps the released bytes, as a diff or JSON
            campaign.run(label, [*KRPC_LINT, "compat", "--suggest", "--format", rng.choice(["text", "json"]), old, new],
                         case)
        else:
            campaign.run(label, [*KRPC_LINT, "compat", "--format", fmt, old, new], case, stdout_annotations=github)
    elif kind == "changelog":
        campaign.run(label, [*KRPC_LINT, "changelog", "--format", rng.choice(["markdown", "json"]), old, new], case)
    elif kind == "matrix":
        campaign.run(label, [*KRPC_LINT, "matrix", "--format", rng.choice(["text", "markdown", "json"]), old, new],
                     case)
    elif kind == "size":
        campaign.run(label, [*KRPC_LINT, "size", "--count", "3", "--allow-invalid", "--format",
                             rng.choice(["text", "json"]), new, *([message] if rng.random() < 0.5 else [])], case)
    elif kind == "conformance":
        campaign.run(label, [*KRPC_LINT, "conformance", new, old], case)
    elif kind == "codec":
        version = rng.choice(["0", DIGITS, "-" + DIGITS, "1e400", hostile_name(rng, "1")])
        campaign.run(label, [*KRPC_LINT, "codec", "decode", "--specs", new, rng.choice([message, hostile_name(rng)]),
                             version], case, stdin=b"00")
    elif kind == "rules":
        campaign.run(label, [*KRPC_LINT, "rules", "explain", hostile_name(rng, "KL301")], case)
    elif kind == "missing":  # a usage mistake naming a hostile path: the error line shows it escaped
        campaign.run(label, [*KRPC_LINT, rng.choice(["lint", "compat"]), str(case / hostile_name(rng, "nothing")),
                             *([new] if rng.random() < 0.5 else [])], case)
    else:  # a config whose values are hostile names and numbers
        key = rng.choice(["profile", "select", "ignore", "severity", "kafka-version", "fail-on", "exclude"])
        value = rng.choice([hostile_name(rng, "strict"), DIGITS, "4." + DIGITS, [hostile_name(rng, "KL1")],
                            {hostile_name(rng, "KL301"): "error"}])
        (case / ".krpc-lint.yaml").write_text(json.dumps({key: value}), encoding="utf-8", errors="surrogatepass")
        campaign.run(label, [*KRPC_LINT, "lint", "--config", str(case / ".krpc-lint.yaml"), new], case)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--only", choices=sorted(set(KINDS)), action="append", help="only these commands")
    parser.add_argument("--keep", type=Path, help="keep each run's directory below this one (for failing runs)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    specs = corpus()
    campaign = Campaign()
    scratch = Path(tempfile.mkdtemp(prefix="krpc-fuzz-cli-"))
    started = time.perf_counter()
    try:
        for index in range(args.runs):
            case = scratch / f"case-{index}"
            case.mkdir()
            failures = sum(campaign.failures.values())
            one_run(campaign, rng, specs, case, index, args.only or KINDS)
            if args.keep and sum(campaign.failures.values()) > failures:
                shutil.copytree(os.fsencode(case), os.fsencode(args.keep / case.name), symlinks=True)
            shutil.rmtree(os.fsencode(case))
    finally:
        shutil.rmtree(os.fsencode(scratch), ignore_errors=True)
    campaign.print(time.perf_counter() - started)
    return 1 if campaign.failures else 0


if __name__ == "__main__":
    sys.exit(main())
