"""A seeded fuzzing campaign against lint and compat, as an attacker's pull request would run them.

Mutated specs come from Kafka's trunk specs (../shared/kafka-specs/trunk-2024-10, else the bundled
fixtures): byte-level mutations (flips, truncations, cut and repeated spans, hostile snippets such as
unterminated comments, deep nesting, huge numbers, lone surrogates, NUL) and JSON-level ones (a value
replaced by a hostile one: ``"0-32766"``, ``"[]"*3000 + "int32"``, ``"int 32"``, ``"Foo;Bar"``, wrong types,
a key removed, structs nested deep). Every spec goes through ``lint_texts``; every pair (the original
and a mutant) through ``compare`` and the compat report, in this process, each under a 5 s alarm.

Prints what the issue's acceptance asks for: tracebacks (exceptions that escaped), hangs (items over
5 s), the slowest item, findings where a check could not run ("could not check"), and the peak RSS.
Exit 1 when any traceback or hang was found. Not part of ``make test`` (it takes minutes).

Usage: python bench/fuzz.py [--specs N] [--pairs N] [--seed S]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import resource
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10"
ITEM_SECONDS = 5
DUMP: Path | None = None  # --dump: where the inputs of each failing item are written

SNIPPETS = ["/*", "*/", "//", '"', "\\", "\x00", "\r", "\ufeff", '"\\ud800"', "[" * 300, '{"a":' * 300, "9" * 5000,
            "1e999", "-0", "NaN", "/*" + "x/*" * 2000, '"' + "x" * 200_000 + '"', "\\u00", ",,", "}", "]", "\t\x01",
            '"\\' + "\\" * 1001 + '"', "// krpc-lint: ignore[KL301]" + " " * 50_000 + "x"]
VALUES = [2**63, -(2**63), 1.5, -1, 0, True, None, [], {}, "0-32766", "32767", "-1+", "none", "[]" * 3000 + "int32",
          "int 32", "Foo;Bar", "Foo/\u0000", "\ud800", "x" * 100_000, [[[[[]]]]], {"fields": []}, "2147483648",
          "0x10", " 1 ", "int32 ", "[]", "[][]int8"]


class Hang(Exception):
    """An item ran past its alarm."""


def _alarm(_signum, _frame):
    raise Hang


def corpus() -> list[tuple[str, str]]:
    source = CORPUS if CORPUS.is_dir() else ROOT / "fixtures" / "valid"
    return [(path.name, path.read_text(encoding="utf-8")) for path in sorted(source.rglob("*.json"))]


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


def mutate_json(text: str, rng: random.Random) -> str:
    from linter.parse.jsonc import fast_load

    value = fast_load(text)
    if not isinstance(value, dict):
        return mutate_text(text, rng)
    value = copy.deepcopy(value)
    nodes = []
    stack = [value]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(child for child in (node.values() if isinstance(node, dict) else node)
                     if isinstance(child, (dict, list)))
    node = rng.choice(nodes)
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


class Campaign:
    def __init__(self) -> None:
        self.tracebacks: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.hangs = 0
        self.slowest = (0.0, "")
        self.uncheckable = 0
        self.items = 0
        self.rules: Counter[str] = Counter()  # what the inputs triggered: the campaign reaches the checks

    def run(self, label: str, call, inputs: dict[str, str] | None = None) -> None:
        self.items += 1
        signal.alarm(ITEM_SECONDS)
        started = time.perf_counter()
        try:
            result = call()
            self.uncheckable += sum("could not check" in f.message for f in result.findings)
            self.rules.update(f.rule for f in result.findings)
        except Hang:
            self.hangs += 1
            self.examples.setdefault("hang", label)
        except Exception as exc:  # noqa: BLE001 - what the campaign counts
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            key = f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"
            self.tracebacks[key] += 1
            self.examples.setdefault(key, label)
            if DUMP is not None and inputs:
                folder = DUMP / label.split(" ")[1].lstrip("#")
                folder.mkdir(parents=True, exist_ok=True)
                for side, text in inputs.items():
                    (folder / side).write_bytes(text.encode("utf-8", "surrogatepass"))
        finally:
            signal.alarm(0)
        elapsed = time.perf_counter() - started
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, label)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--dump", type=Path, help="write the inputs of every failing item below this directory")
    args = parser.parse_args()
    global DUMP
    DUMP = args.dump
    sys.setrecursionlimit(10_000)  # as deep as a hostile input might push, to find what depends on the default
    from linter.compat.compare import compare
    from linter.compat.report import compat_ruleset, to_report
    from linter.compat.revision import Revision
    from linter.engine.config import Config
    from linter.engine.runner import lint_texts, select_rules

    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(args.seed)
    specs = corpus()
    config = Config(profile="strict")
    ruleset, compat_rules = select_rules(config), compat_ruleset(config)
    lint_campaign, compat_campaign = Campaign(), Campaign()
    started = time.perf_counter()
    for index in range(args.specs):
        name, text = rng.choice(specs)
        mutant = (mutate_json if rng.random() < 0.5 else mutate_text)(text, rng)
        label = f"spec #{index} ({name}, seed {args.seed})"
        lint_campaign.run(label, lambda name=name, mutant=mutant: lint_texts({name: mutant}, config, ruleset=ruleset),
                          {name: mutant})
    lint_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for index in range(args.pairs):
        name, text = rng.choice(specs)
        mutant = mutate_json(text, rng) if rng.random() < 0.8 else mutate_text(text, rng)
        old, new = (text, mutant) if rng.random() < 0.5 else (mutant, text)
        label = f"pair #{index} ({name}, seed {args.seed})"
        def check(name: str = name, old: str = old, new: str = new) -> object:
            return to_report(compare(Revision("old", {name: old.encode("utf-8", "surrogatepass")}),
                                     Revision("new", {name: new.encode("utf-8", "surrogatepass")})),
                             config, compat_rules)

        compat_campaign.run(label, check, {"old-" + name: old, "new-" + name: new})
    compat_seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for title, campaign, seconds in (("lint", lint_campaign, lint_seconds), ("compat", compat_campaign, compat_seconds)):
        print(f"{title}: {campaign.items} inputs in {seconds:.1f} s; tracebacks {sum(campaign.tracebacks.values())}, "
              f"hangs over {ITEM_SECONDS} s {campaign.hangs}, slowest {campaign.slowest[0]:.2f} s "
              f"({campaign.slowest[1]}), 'could not check' findings {campaign.uncheckable}")
        print(f"  {sum(campaign.rules.values())} findings of {len(campaign.rules)} rules; most: "
              + ", ".join(f"{rule} {count}" for rule, count in campaign.rules.most_common(8)))
        for key, count in campaign.tracebacks.most_common():
            print(f"  {count} x {key}  e.g. {campaign.examples[key]}")
    print(f"peak RSS {peak:.0f} MB")
    failed = any(c.tracebacks or c.hangs for c in (lint_campaign, compat_campaign)) or peak > 500
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
