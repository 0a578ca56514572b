"""A seeded fuzzing campaign against lint and compat, as an attacker's pull request would run them, and against
everything they print.

Inputs start from Kafka's trunk specs (../shared/kafka-specs/trunk-2024-10, else the bundled fixtures), in six
families (``--specs``, ``--pairs``, ``--names``, ``--paths``, ``--numbers``, ``--nesting``: how many of each):

- specs: byte-level mutations (flips, truncations, cut and repeated spans, hostile snippets such as unterminated
  comments, deep nesting, huge numbers, lone surrogates, NUL) and JSON-level ones (a value replaced by a hostile
  one: ``"0-32766"``, ``"[]"*3000 + "int32"``, ``"int 32"``, ``"Foo;Bar"``, wrong types, a key removed, structs
  nested deep), linted;
- pairs: the original and a mutant, compared (both directions);
- names: message, field, struct, about, default and file names holding hostile pieces (``tests/support/hostile_output``:
  a newline and ``::error file=README.md,line=1::pwned``, ESC sequences, ``\\r``, NUL, U+2028, U+202E, ``|``,
  backticks, lone surrogates, ``[bold]``...), linted and compared with a breaking edit beside them;
- paths: such names as directories and files on disk (nested, long components, undecodable bytes), linted and
  compared as directories;
- numbers: versions, tags, defaults and apiKey of thousands of digits, negative, with exponents, as JSON numbers
  and as strings, linted and compared;
- nesting: specs, baselines and configs nested 199 to 100,000 deep (arrays and objects), read and used.

Every report goes through every output format (text, colour text, json, sarif, github, junit) as ``-o`` writes
it, compat's also through the changelog (Markdown and JSON) and the Action's step log and job summary; each
output is checked (``tests/support/hostile_output.problems``): no C0 but the newline, no C1, no U+2028/2029, no bidi
override, no line a CI runner reads as a command (``::``, ``##[``) but ours, one annotation per finding, the
summary table intact, valid UTF-8. Each item runs in this process under a 5 s alarm.

Prints per family: inputs, tracebacks (exceptions that escaped), internal errors (a finding saying a check
crashed or could not run, or an error type that is not the documented one), unescaped outputs (items with at
least one output problem, and the most common (output, problem)), hangs (items over 5 s), the slowest item;
then the peak RSS. Exit 1 when any is found. Not part of ``make test`` (it takes minutes). The families and their inputs are in ``fuzz_families.py``, what
runs and counts an item in ``fuzz_runner.py``.

Usage: python bench/fuzz.py [--specs N] [--pairs N] [--names N] [--paths N] [--numbers N] [--nesting N]
                            [--seed S] [--dump DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from fuzz_families import FAMILIES, corpus
from fuzz_runner import Campaign, Runner, on_alarm


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
    signal.signal(signal.SIGALRM, on_alarm)
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
