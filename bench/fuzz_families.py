"""The input families of bench/fuzz.py's campaign: Kafka's trunk specs (else the bundled fixtures) mutated byte by
byte and value by value, given hostile names, paths and numbers, or nested deep; each family runs its items
through a ``Runner`` and counts them in a ``Campaign``.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fuzz_runner import Campaign, Checked, Runner, encoded

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.hostile_output import (
    breaking_edit,
    disk_name,
    fields_of,
    hostile_path,
    with_hostile_names,
    write_tree,
)

CORPUS = ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10"

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

def corpus() -> list[tuple[str, str]]:
    source = CORPUS if CORPUS.is_dir() else ROOT / "fixtures" / "valid"
    return [(path.name, path.read_text(encoding="utf-8")) for path in sorted(source.rglob("*.json"))]



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



# --- the families -----------------------------------------------------------------------------------------


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
            data = encoded(json.dumps(spec))
            campaign.run(f"nesting #{index} (a chain of {levels} struct types, seed {seed})",
                         lambda n=name, t=text, d=data: runner.lint_and_compat({n: encoded(t)}, {n: d}),
                         {"old " + name: encoded(text), "new " + name: data})  # replayed as lint and compat
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

