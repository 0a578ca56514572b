"""A seeded fuzzing campaign against lint and compat, as an attacker's pull request would run them, and against
everything they print.

Inputs start from Kafka's trunk specs (../shared/kafka-specs/trunk-2024-10, else the bundled fixtures), in six
families (``--specs``, ``--pairs``, ``--names``, ``--paths``, ``--numbers``, ``--nesting``: how many of each):

- specs: byte-level mutations (flips, truncations, cut and repeated spans, hostile snippets such as unterminated
  comments, deep nesting, huge numbers, lone surrogates, NUL) and JSON-level ones (a value replaced by a hostile
  one: ``"0-32766"``, ``"[]"*3000 + "int32"``, ``"int 32"``, ``"Foo;Bar"``, wrong types, a key removed, structs
  nested deep), linted;
- pairs: the original and a mutant, compared (both directions);
- names: message, field, struct, about, default and file names holding hostile pieces (``tests/hostile_output``:
  a newline and ``::error file=README.md,line=1::pwned``, ESC sequences, ``\\r``, NUL, U+2028, U+202E, ``|``,
  backticks, lone surrogates, ``[bold]``...), linted and compared with a breaking edit beside them;
- paths: such names as directories and files on disk (nested, long components, undecodable bytes), linted and
  compared as directories;
- numbers: versions, tags, defaults and apiKey of thousands of digits, negative, with exponents, as JSON numbers
  and as strings, linted and compared;
- nesting: specs, baselines and configs nested 199 to 100,000 deep (arrays and objects), read and used.

Every report goes through every output format (text, colour text, json, sarif, github, junit) as ``-o`` writes
it, compat's also through the changelog (Markdown and JSON) and the Action's step log and job summary; each
output is checked (``tests/hostile_output.problems``): no C0 but the newline, no C1, no U+2028/2029, no bidi
override, no line a CI runner reads as a command (``::``, ``##[``) but ours, one annotation per finding, the
summary table intact, valid UTF-8. Each item runs in this process under a 5 s alarm.

Prints per family: inputs, tracebacks (exceptions that escaped), internal errors (a finding saying a check
crashed or could not run, or an error type that is not the documented one), unescaped outputs (items with at
least one output problem, and the most common (output, problem)), hangs (items over 5 s), the slowest item;
then the peak RSS. Exit 1 when any is found. Not part of ``make test`` (it takes minutes).

Usage: python bench/fuzz.py [--specs N] [--pairs N] [--names N] [--paths N] [--numbers N] [--nesting N]
                            [--seed S] [--dump DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from hostile_output import (
    action_problems,
    breaking_edit,
    changelog_problems,
    disk_name,
    fields_of,
    hostile_path,
    report_problems,
    suggestion_problems,
    with_hostile_names,
    write_tree,
)

CORPUS = ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10"
ITEM_SECONDS = 5

SNIPPETS = ["/*", "*/", "//", '"', "\\", "\x00", "\r", "\ufeff", '"\\ud800"', "[" * 300, '{"a":' * 300, "9" * 5000,
            "1e999", "-0", "NaN", "/*" + "x/*" * 2000, '"' + "x" * 200_000 + '"', "\\u00", ",,", "}", "]", "\t\x01",
            '"\\' + "\\" * 1001 + '"', "// krpc-lint: ignore[KL301]" + " " * 50_000 + "x"]
VALUES = [2**63, -(2**63), 1.5, -1, 0, True, None, [], {}, "0-32766", "32767", "-1+", "none", "[]" * 3000 + "int32",
          "int 32", "Foo;Bar", "Foo/\u0000", "\ud800", "x" * 100_000, [[[[[]]]]], {"fields": []}, "2147483648",
          "0x10", " 1 ", "int32 ", "[]", "[][]int8"]
# Numbers as JSON text (placed raw) and as strings: thousands of digits, signs, exponents, fractions.
DIGITS = "9" * 5000
RAW_NUMBERS = [DIGITS, "-" + DIGITS, "1" + "0" * 4301, "1e99999", "-1e-99999", "1E+400", "0." + "0" * 5000 + "1",
               "123456789012345678901234567890", "-0", "-1", "32768", "-32769", "2147483648", "9223372036854775808",
               "-9223372036854775809", "1.0", "1e3", "4.9e-324", "1.7976931348623157e309"]
NUMBER_STRINGS = ["0-" + DIGITS, DIGITS + "+", DIGITS, "-" + DIGITS, DIGITS + "-0", "0-1e3", "1e3+", "-1-2", "1e400",
                  "0x" + "f" * 5000, "1_000", "١٢", "+1", " 9" * 2000, "0-" + DIGITS + "+", "NaN", "Infinity", "-0"]
NUMBER_KEYS = ["apiKey", "tag", "default", "validVersions", "versions", "flexibleVersions", "nullableVersions",
               "taggedVersions", "deprecatedVersions", "latestVersionUnstable"]
DEPTHS = [150, 199, 200, 201, 202, 1000, 5000, 100_000]
STRUCT_LEVELS = [3, 63, 64, 65, 300, 5000]
CONFIG_KEYS = ["profile", "select", "ignore", "severity", "exclude", "include", "per-path", "kafka-version",
               "baseline", "fail-on"]


class Hang(BaseException):
    """An item ran past its alarm (a BaseException: no ``except Exception`` in the linter swallows it)."""


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang


def corpus() -> list[tuple[str, str]]:
    source = CORPUS if CORPUS.is_dir() else ROOT / "fixtures" / "valid"
    return [(path.name, path.read_text(encoding="utf-8")) for path in sorted(source.rglob("*.json"))]


def encoded(text: str) -> bytes:
    """The bytes a text stands for; a lone surrogate becomes bytes that are not UTF-8 (as on disk)."""
    return text.encode("utf-8", "surrogatepass")


# --- mutations ---------------------------------------------------------------------------------------------


def mutate_text(text: str, rng: random.Random) -> str:
    operation = rng.randrange(6)
    at = rng.randrange(len(text) + 1)
    if operation == 0 and text:
        position = rng.randrange(len(text))
        return text[:position] + chr(rng.randrange(0x20, 0x7F)) + text[position + 1:]
    if operation == 1:
        return text[:at]
    if operation == 2:
        return text[:at] + text[at + rng.randrange(1, 200):]
    if operation == 3:
        span = text[at:at + rng.randrange(1, 500)]
        return text[:at] + span * rng.randrange(2, 50) + text[at:]
    return text[:at] + rng.choice(SNIPPETS) + text[at:]


def nodes_of(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (itself first), without recursion."""
    nodes, stack = [], [value]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(child for child in (node.values() if isinstance(node, dict) else node)
                     if isinstance(child, (dict, list)))
    return nodes


def loaded(text: str) -> Any:
    from linter.parse.jsonc import fast_load

    value = fast_load(text)
    return copy.deepcopy(value) if isinstance(value, dict) else None


def mutate_json(text: str, rng: random.Random) -> str:
    value = loaded(text)
    if value is None:
        return mutate_text(text, rng)
    node = rng.choice(nodes_of(value))
    operation = rng.randrange(4)
    if isinstance(node, dict) and node:
        key = rng.choice(sorted(node))
        if operation == 0:
            del node[key]
        elif operation == 1 and isinstance(node.get("fields"), list) and node["fields"]:
            inner = node["fields"][0]
            for level in range(rng.randrange(10, 120)):
                inner = {"name": f"S{level}", "type": f"S{level}T", "versions": "0+", "fields": [inner]}
            node["fields"] = [inner]
        else:
            node[key] = rng.choice(VALUES)
    elif isinstance(node, list) and node:
        node[rng.randrange(len(node))] = rng.choice(VALUES)
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


def with_number(spec: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], str | None]:
    """One number-bearing key of the spec or a field given a hostile number: a raw JSON number (returned, to be
    placed where the marker string is) or a string."""
    target = rng.choice([spec, *fields_of(spec)])
    key = rng.choice(NUMBER_KEYS)
    if rng.random() < 0.5:
        target[key] = "\x00NUMBER\x00"
        return spec, rng.choice(RAW_NUMBERS)
    target[key] = rng.choice(NUMBER_STRINGS)
    return spec, None


def dumped(value: Any, rng: random.Random, raw: str | None = None) -> bytes:
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
    if raw is not None:
        text = text.replace('"\\u0000NUMBER\\u0000"', raw)
    return encoded(text)


def nested(depth: int, rng: random.Random, innermost: str = "1") -> str:
    """Arrays and objects mixed (or all one kind) ``depth`` deep around ``innermost``."""
    kinds = rng.choice(["[", "{", "mixed"])
    opened, closed = [], []
    for _ in range(depth):
        kind = kinds if kinds != "mixed" else rng.choice("[{")
        opened.append('{"a": ' if kind == "{" else "[")
        closed.append("}" if kind == "{" else "]")
    return "".join(opened) + innermost + "".join(reversed(closed))


# --- the campaign ------------------------------------------------------------------------------------------


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


def family_specs(runner: Runner, campaign: Campaign, specs: list[tuple[str, str]], rng: random.Random,
                 count: int, seed: int) -> None:
    for index in range(count):
        name, text = rng.choice(specs)
        mutant = encoded((mutate_json if rng.random() < 0.5 else mutate_text)(text, rng))
        campaign.run(f"spec #{index} ({name}, seed {seed})", lambda n=name, m=mutant: runner.lint({n: m}),
                     {name: mutant})


def family_pairs(runner: Runner, campaign: Campaign, specs: list[tuple[str, str]], rng: random.Random,
                 count: int, seed: int) -> None:
    from linter.compat.revision import Revision

    for index in range(count):
        name, text = rng.choice(specs)
        mutant = mutate_json(text, rng) if rng.random() < 0.8 else mutate_text(text, rng)
        old, new = (encoded(text), encoded(mutant)) if rng.random() < 0.5 else (encoded(mutant), encoded(text))
        campaign.run(f"pair #{index} ({name}, seed {seed})",
                     lambda n=name, o=old, w=new: runner.compat(Revision("old", {n: o}), Revision("new", {n: w})),
                     {"old " + name: old, "new " + name: new})


def parsed_specs(specs: list[tuple[str, str]], rng: random.Random,
                 count: int) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """``count`` specs of the corpus drawn by ``rng``, each with its text parsed (a copy to edit)."""
    for index in range(count):
        name, text = rng.choice(specs)
        spec = loaded(text)
        if spec is not None:
            yield index, name, text, spec


def family_names(runner: Runner, campaign: Campaign, specs: list[tuple[str, str]], rng: random.Random,
                 count: int, seed: int) -> None:
    """Hostile names inside specs and as their paths: lint of the new side, compat of old -> new."""
    for index, name, text, spec in parsed_specs(specs, rng, count):
        hostile = copy.deepcopy(spec)
        with_hostile_names(hostile, rng)
        changed = copy.deepcopy(hostile)
        if rng.random() < 0.7:
            breaking_edit(changed, rng)
        path = hostile_path(rng, name) if rng.random() < 0.6 else name
        old_spec = hostile if rng.random() < 0.6 else spec
        old = {path: dumped(old_spec, rng)}
        new = {path: dumped(changed, rng)}
        if rng.random() < 0.3:  # a second file: the runner's per-file work and the summary's table grow
            other, other_text = rng.choice(specs)
            new[hostile_path(rng, other)] = encoded(other_text)
        campaign.run(f"names #{index} ({name}, seed {seed})", lambda o=old, n=new: runner.lint_and_compat(o, n),
                     {**{"old " + k: v for k, v in old.items()}, **{"new " + k: v for k, v in new.items()}})


def family_numbers(runner: Runner, campaign: Campaign, specs: list[tuple[str, str]], rng: random.Random,
                   count: int, seed: int) -> None:
    for index, name, text, spec in parsed_specs(specs, rng, count):
        mutant, raw = with_number(spec, rng)
        data = dumped(mutant, rng, raw)
        old, new = ({name: encoded(text)}, {name: data}) if rng.random() < 0.5 else ({name: data}, {name: encoded(text)})
        campaign.run(f"numbers #{index} ({name}, seed {seed})", lambda o=old, n=new: runner.lint_and_compat(o, n),
                     {"old " + name: old[name], "new " + name: new[name]})


def family_paths(runner: Runner, campaign: Campaign, specs: list[tuple[str, str]], rng: random.Random,
                 count: int, seed: int) -> None:
    """Specs on disk under hostile, nested and long names: lint of the directory, compat of two directories."""
    from linter.compat.sources import read_revision
    from linter.engine.runner import lint

    base = runner.scratch / "paths"
    for index, name, _, spec in parsed_specs(specs, rng, count):
        parts = [disk_name(rng, "dir") if rng.random() < 0.5 else "a" * rng.randrange(100, 250)
                 for _ in range(rng.choice([0, 1, 2, 8]))]
        relative = "/".join([*parts, disk_name(rng, name.removesuffix(".json")) + ".json"])
        if rng.random() < 0.5:
            with_hostile_names(spec, rng)
        changed = copy.deepcopy(spec)
        breaking_edit(changed, rng)
        case = base / f"case-{index}"
        old_files, new_files = {relative: dumped(spec, rng)}, {relative: dumped(changed, rng)}

        def run(case: Path = case, old_files: dict[str, bytes] = old_files,
                new_files: dict[str, bytes] = new_files) -> Checked:
            try:
                write_tree(case / "old", old_files)
                write_tree(case / "new", new_files)
            except OSError as exc:  # a path the file system refuses (too long): not the linter's
                return Checked(internal=[] if exc.errno in (36, 63) else [f"cannot write: {exc}"])
            lint_report = lint([str(case / "new")], runner.config)
            checked = runner.compat(read_revision(str(case / "old")), read_revision(str(case / "new")),
                                    lint_report=lint_report)
            checked.outputs.update({f"lint {fmt}": labels for fmt, labels in
                                    runner.outputs(lint_report, runner.lint_rules, []).items()})
            shutil.rmtree(os.fsencode(case))
            return checked

        campaign.run(f"paths #{index} ({name}, seed {seed})", run,
                     {"old " + relative: old_files[relative], "new " + relative: new_files[relative]})


def family_nesting(runner: Runner, campaign: Campaign, specs: list[tuple[str, str]], rng: random.Random,
                   count: int, seed: int) -> None:
    """Specs, baselines and configs nested deep: a value, findings, or the documented error (one line)."""
    base = runner.scratch / "nesting"
    base.mkdir(exist_ok=True)
    for index in range(count):
        depth = rng.choice(DEPTHS)
        what = rng.choice(["spec", "spec", "struct chain", "baseline", "config yaml", "config toml", "config json"])
        name, text = rng.choice(specs)
        case = base / f"case-{index}"
        if what == "struct chain":  # common structs naming one another: deep in types, flat in JSON
            levels = rng.choice(STRUCT_LEVELS)
            spec = loaded(text) or {}
            if isinstance(spec.get("fields"), list):
                spec["fields"].append({"name": "Chain", "type": rng.choice(["C1", "[]C1"]), "versions": "0+",
                                       "about": "x"})
            spec["commonStructs"] = [*(spec.get("commonStructs") or [])[:3], *(
                {"name": f"C{i}", "versions": "0+", "fields": [{"name": "Next", "type": f"C{i + 1}" if i < levels
                                                                else "int32", "versions": "0+", "about": "x"}]}
                for i in range(1, levels + 1))]
            data = json.dumps(spec).encode("utf-8", "surrogatepass")
            campaign.run(f"nesting #{index} (a chain of {levels} struct types, seed {seed})",
                         lambda n=name, t=text, d=data: runner.lint_and_compat({n: t.encode("utf-8", "surrogatepass")},
                                                                               {n: d}), {name: data})
            continue
        if what == "spec":
            spec = loaded(text) or {}
            target = rng.choice([spec, *fields_of(spec)])
            target[rng.choice(["fields", "type", "versions", "default", "about", "commonStructs"])] = "\x00NUMBER\x00"
            data = dumped(spec, rng, nested(depth, rng, rng.choice(["1", '"int32"', "[]", "{}"])))
            campaign.run(f"nesting #{index} (spec {depth} deep, seed {seed})",
                         lambda n=name, d=data: runner.lint({n: d}), {name: data})
            continue
        if what == "baseline":
            data = encoded(rng.choice(['{"version": 1, "findings": ' + nested(depth, rng) + "}", nested(depth, rng),
                                       '{"version": 1, "findings": [{"path": "x", "rule": "KL001", "message": '
                                       + nested(depth, rng) + "}]}"]))
        elif what == "config yaml":
            data = encoded(f"{rng.choice(CONFIG_KEYS)}: " + nested(depth, rng, '"x"').replace('"a"', "a") + "\n")
        elif what == "config toml":
            inner = nested(depth, rng, '"x"').replace('{"a": ', "{a = ")
            data = encoded(f"[tool.krpc-lint]\n{rng.choice(CONFIG_KEYS)} = {inner}\n")
        else:
            data = encoded(f"{rng.choice(CONFIG_KEYS)}: " + nested(depth, rng, '"x"') + "\n")
        file_name = {"baseline": "baseline.json", "config toml": "pyproject.toml"}.get(what, ".krpc-lint.yaml")

        def run(case: Path = case, file_name: str = file_name, data: bytes = data, what: str = what,
                name: str = name, spec_text: str = text) -> Checked:
            from linter.engine.config import ConfigError, load_config
            from linter.engine.runner import lint_texts
            from linter.engine.suppress import (
                BaselineError,
                apply_baseline,
                read_baseline,
            )

            case.mkdir()
            (case / file_name).write_bytes(data)
            checked = Checked()
            try:
                if what == "baseline":
                    report = lint_texts({name: spec_text}, runner.config, ruleset=runner.ruleset)
                    apply_baseline(report.findings, read_baseline(str(case / file_name)))
                else:
                    config = load_config(case / file_name)
                    report = lint_texts({name: spec_text}, config)
                    checked.findings = report.findings
            except (ConfigError, BaselineError) as exc:
                if "\n" in str(exc) or str(case) not in str(exc):
                    checked.internal.append(f"{type(exc).__name__} not one line naming the file")
            shutil.rmtree(case)
            return checked

        campaign.run(f"nesting #{index} ({what} {depth} deep, seed {seed})", run, {file_name: data})


FAMILIES = {"specs": (family_specs, 20_000), "pairs": (family_pairs, 2_000), "names": (family_names, 4_000),
            "paths": (family_paths, 500), "numbers": (family_numbers, 2_000), "nesting": (family_nesting, 600)}


def replay(folder: Path) -> int:
    """Run one dumped item of the in-memory families again (specs, pairs, names, numbers) and show what failed:
    the traceback, or each output's problems and the lines that have them."""
    from linter.compat.revision import Revision

    inputs = {}
    for data_file in sorted(folder.glob("*.bin"), key=lambda p: int(p.stem)):
        name = os.fsdecode(data_file.with_suffix(".name").read_bytes()).encode("utf-8", "surrogateescape")
        inputs[name.decode("utf-8", "surrogatepass")] = data_file.read_bytes()
    print((folder / "FAILED.txt").read_text(encoding="utf-8"))
    old = {k.removeprefix("old "): v for k, v in inputs.items() if k.startswith("old ")}
    new = {k.removeprefix("new "): v for k, v in inputs.items() if k.startswith("new ")}
    scratch = Path(tempfile.mkdtemp(prefix="krpc-fuzz-"))
    try:
        runner = Runner(scratch, 1)
        if not old:
            checked = runner.lint(inputs)
        elif folder.name.startswith("pairs"):
            checked = runner.compat(Revision("old", old), Revision("new", new))
        else:
            checked = runner.lint_and_compat(old, new)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for output, labels in checked.outputs.items():
        print(f"{output}: {', '.join(labels)}")
    print(f"internal: {checked.internal}; findings: {len(checked.findings)}")
    return 1 if checked.outputs or checked.internal else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for family, (_, default) in FAMILIES.items():
        parser.add_argument(f"--{family}", type=int, default=default, help=f"inputs of the {family} family")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--colour-every", type=int, default=10, help="render the colour text format every Nth report")
    parser.add_argument("--dump", type=Path, help="write the inputs of failing items below this directory")
    parser.add_argument("--replay", type=Path, help="run one item written by --dump again, with its traceback")
    args = parser.parse_args()
    if args.replay:
        return replay(args.replay)
    signal.signal(signal.SIGALRM, _alarm)
    specs = corpus()
    scratch = Path(tempfile.mkdtemp(prefix="krpc-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    failed = False
    try:
        runner = Runner(scratch, args.colour_every)
        for family, (function, _) in FAMILIES.items():
            campaign = Campaign(family, args.dump)
            function(runner, campaign, specs, random.Random(f"{args.seed}-{family}"), getattr(args, family), args.seed)
            campaign.print()
            failed |= campaign.failed
            sys.stdout.flush()
    finally:
        shutil.rmtree(os.fsencode(scratch), ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")
    return 1 if failed or peak > 500 else 0


if __name__ == "__main__":
    sys.exit(main())
