"""The runner of bench/fuzz.py's campaign: each item runs under an alarm through the library as the CLI and the Action
call it (``Runner``), every output is checked (``tests/support/hostile_output``), and ``Campaign`` counts what
went wrong per family (tracebacks, internal errors, unescaped outputs, hangs) and dumps failing inputs.
"""

from __future__ import annotations

import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.hostile_output import (
    action_problems,
    changelog_problems,
    report_problems,
    suggestion_problems,
)

ITEM_SECONDS = 5


class Hang(BaseException):
    """An item ran past its alarm (a BaseException: no ``except Exception`` in the linter swallows it)."""


def on_alarm(_signum: int, _frame: Any) -> None:
    raise Hang


def encoded(text: str) -> bytes:
    """The bytes a text stands for; a lone surrogate becomes bytes that are not UTF-8 (as on disk)."""
    return text.encode("utf-8", "surrogatepass")

@dataclass
class Checked:
    """What an item produced: its findings and the problems of its outputs (output -> labels)."""

    findings: list[Any] = field(default_factory=list)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    internal: list[str] = field(default_factory=list)  # an error that is not the documented one


class Campaign:
    def __init__(self, name: str, dump: Path | None) -> None:
        self.name = name
        self.dump = dump
        self.items = 0
        self.tracebacks: Counter[str] = Counter()
        self.internal: Counter[str] = Counter()
        self.unescaped: Counter[str] = Counter()  # "output: problem" -> items
        self.unescaped_items = 0
        self.examples: dict[str, str] = {}
        self.hangs = 0
        self.slowest = (0.0, "")
        self.seconds = 0.0
        self.rules: Counter[str] = Counter()  # what the inputs triggered: the campaign reaches the checks
        self.dumped: Counter[str] = Counter()

    def run(self, label: str, call: Callable[[], Checked], inputs: dict[str, bytes]) -> None:
        self.items += 1
        signal.alarm(ITEM_SECONDS)
        started = time.perf_counter()
        keys: list[str] = []
        try:
            checked = call()
            signal.alarm(0)
            self.rules.update(f.rule for f in checked.findings)
            internal = checked.internal + [f.message.split(":")[0] for f in checked.findings
                                           if "internal error" in f.message or "could not check" in f.message]
            for key in internal:
                self.internal[key] += 1
                keys.append(f"internal {key}")
            for output, labels in sorted(checked.outputs.items()):
                for problem in labels:
                    self.unescaped[f"{output}: {problem}"] += 1
                    keys.append(f"{output}: {problem}")
            self.unescaped_items += bool(checked.outputs)
        except Hang:
            self.hangs += 1
            keys.append("hang")
        except Exception as exc:  # noqa: BLE001 - what the campaign counts
            signal.alarm(0)
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            key = f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"
            self.tracebacks[key] += 1
            keys.append(key)
        finally:
            signal.alarm(0)
        elapsed = time.perf_counter() - started
        self.seconds += elapsed
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, label)
        for key in keys:
            self.examples.setdefault(key, label)
        if keys and self.dump is not None:
            self.write_dump(label, keys, inputs)

    def write_dump(self, label: str, keys: list[str], inputs: dict[str, bytes]) -> None:
        """The inputs of a failing item (at most 5 per kind of failure), with what failed, for minimising."""
        if all(self.dumped[key] >= 5 for key in keys):
            return
        for key in keys:
            self.dumped[key] += 1
        assert self.dump is not None
        folder = self.dump / f"{self.name}-{label.split('#')[1].split(' ')[0]}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "FAILED.txt").write_text(label + "\n" + "\n".join(keys) + "\n", encoding="utf-8")
        for number, (name, data) in enumerate(inputs.items()):
            (folder / f"{number}.bin").write_bytes(data)
            (folder / f"{number}.name").write_bytes(encoded(name))

    def print(self) -> None:
        print(f"{self.name}: {self.items} inputs in {self.seconds:.1f} s; tracebacks {sum(self.tracebacks.values())}, "
              f"internal errors {sum(self.internal.values())}, unescaped {self.unescaped_items}, hangs over "
              f"{ITEM_SECONDS} s {self.hangs}, slowest {self.slowest[0]:.2f} s ({self.slowest[1]})")
        if self.rules:
            print(f"  {sum(self.rules.values())} findings of {len(self.rules)} rules; most: "
                  + ", ".join(f"{rule} {count}" for rule, count in self.rules.most_common(8)))
        for counter in (self.tracebacks, self.internal):
            for key, count in counter.most_common(12):
                print(f"  {count} x {key}  e.g. {self.examples.get(key) or self.examples.get('internal ' + key)}")
        by_output: dict[str, Counter[str]] = {}
        for key, count in self.unescaped.items():
            output, _, problem = key.partition(": ")
            by_output.setdefault(output, Counter())[problem] = count
        for output, found in sorted(by_output.items(), key=lambda item: -sum(item[1].values())):
            example = self.examples[f"{output}: {found.most_common(1)[0][0]}"]
            print(f"  {output}: " + ", ".join(f"{problem} {count}" for problem, count in found.most_common())
                  + f"  e.g. {example}")

    @property
    def failed(self) -> bool:
        return bool(self.tracebacks or self.internal or self.unescaped_items or self.hangs)


class Runner:
    """The library as the CLI and the Action call it, with one config and rule set for the whole campaign."""

    def __init__(self, scratch: Path, colour_every: int) -> None:
        from linter.compat.report import compat_ruleset
        from linter.engine.config import Config
        from linter.engine.runner import select_rules

        self.scratch = scratch
        self.config = Config(profile="strict")
        self.ruleset = select_rules(self.config)
        self.compat_rules = compat_ruleset(self.config)
        self.lint_rules = self.ruleset.effective()
        self.compat_described = self.compat_rules[0].effective("compat")
        self.colour_every = colour_every
        self.count = 0

    def outputs(self, report: Any, rules: dict[str, Any], files: list[str]) -> dict[str, list[str]]:
        self.count += 1
        return report_problems(report, self.scratch, rules=rules, files=files,
                               colour=self.count % self.colour_every == 0)

    def lint(self, files: dict[str, bytes]) -> Checked:
        from linter.engine.runner import lint_texts

        report = lint_texts(dict(files), self.config, ruleset=self.ruleset)
        return Checked(report.findings, self.outputs(report, self.lint_rules, sorted(files)))

    def compat(self, old: Any, new: Any, *, lint_report: Any = None) -> Checked:
        """Compare two revisions; every format, the changelog, the Action's log and summary of the change, and the
        diffs of ``compat --suggest``."""
        from linter.compat.changelog import changelog
        from linter.compat.compare import compare
        from linter.compat.report import to_report
        from linter.compat.suggest import suggest
        from linter.engine.findings import Report

        result = compare(old, new)
        report = to_report(result, self.config, self.compat_rules)
        log = changelog(old, new, result)
        suggestions = tuple(suggest(result))
        outputs = self.outputs(report, self.compat_described, sorted(new.files))
        outputs.update(changelog_problems(log, self.scratch))
        outputs.update(action_problems(lint_report or Report([]), report, log, self.config, suggestions))
        outputs.update(suggestion_problems(suggestions))
        findings = report.findings + (lint_report.findings if lint_report else [])
        return Checked(findings, outputs)

    def lint_and_compat(self, old: dict[str, bytes], new: dict[str, bytes]) -> Checked:
        """What the Action does with a pull request: lint the new side, compare it with the old."""
        from linter.compat.revision import Revision
        from linter.engine.runner import lint_texts

        lint_report = lint_texts(dict(new), self.config, ruleset=self.ruleset)
        checked = self.compat(Revision("old", dict(old)), Revision("new", dict(new)), lint_report=lint_report)
        checked.outputs.update({f"lint {fmt}": labels for fmt, labels in
                                self.outputs(lint_report, self.lint_rules, sorted(new)).items()})
        return checked

