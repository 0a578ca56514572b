"""Every command's output, to show that a restructuring changed no byte of what users see (issue 26).

    python bench/same_outputs.py record OUT [--checkout DIR] [--kafka CLONE]
    python bench/same_outputs.py compare BEFORE AFTER

``record`` runs each command below with the krpc-lint of DIR (default: this checkout; an older one is a
``git worktree``), in a scratch folder, and keeps per command its exit code, standard output, standard error
and the files it wrote. With ``--kafka`` (a clone of ../shared/kafka-history/kafka-json.bundle) the commands
that users run in Kafka's checkout run there too. ``compare`` prints every command whose record differs and
exits 1 if one does. Spark's commands are left out of the byte check where Spark itself varies (the names of
Parquet part files); their results are compared as sorted rows.

Before and after a change: ``git worktree add /tmp/before HEAD~N``, copy its compiled ``linter/codec/*.so``
in, then record both and compare.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SPECS_43 = SHARED / "kafka-specs" / "4.3"
SPECS_37 = SHARED / "kafka-specs" / "3.7.0"
DEMO = "fixtures/compat/demo"
VALID = "fixtures/valid"

# (name, arguments, standard input or None); {root} is the checkout, {shared} ../shared, {scratch} a folder
# the command may write into.
FIXTURE_COMMANDS: list[tuple[str, list[str], str | None]] = [
    ("lint-valid", ["lint", "--no-cache", VALID], None),
    *[(f"lint-invalid-{fmt}", ["lint", "--no-cache", "--profile", "strict", "--ignore", "file-name-matches",
                              "--format", fmt, "fixtures/invalid"], None)
      for fmt in ("text", "json", "sarif", "github", "junit")],
    ("lint-diff", ["lint", "--no-cache", "--diff", "fixtures/invalid"], None),
    *[(f"compat-demo-{fmt}", ["compat", "--profile", "strict", "--format", fmt, f"{DEMO}/old", f"{DEMO}/new"], None)
      for fmt in ("text", "json", "sarif", "github", "junit")],
    ("compat-suggest", ["compat", "--suggest", f"{DEMO}/old", f"{DEMO}/new"], None),
    ("changelog-demo", ["changelog", f"{DEMO}/old", f"{DEMO}/new"], None),
    ("changelog-demo-json", ["changelog", "--format", "json", f"{DEMO}/old", f"{DEMO}/new"], None),
    ("matrix-demo", ["matrix", f"{DEMO}/old", f"{DEMO}/new"], None),
    ("matrix-shared-md", ["matrix", "--format", "markdown", str(SPECS_37), str(SPECS_43)], None),
    ("rules", ["rules"], None),
    ("rules-explain", ["rules", "explain", "KL101"], None),
    ("schema", ["schema"], None),
    ("conformance-43", ["conformance", str(SPECS_43), "--upstream", str(SHARED / "kafka-specs" / "trunk-2024-10")],
     None),
    ("conformance-43-json", ["conformance", "--format", "json", str(SPECS_43), "--upstream",
                             str(SHARED / "kafka-specs" / "trunk-2024-10")], None),
    ("codec-encode", ["codec", "encode", "--specs", str(SPECS_43), "ApiVersionsRequest", "3"],
     '{"clientSoftwareName": "krpc", "clientSoftwareVersion": "1.0"}'),
    ("codec-decode", ["codec", "decode", "--specs", str(SPECS_43), "ApiVersionsRequest", "3"],
     "056b72706304312e3000"),
    ("codec-decode-bad", ["codec", "decode", "--specs", str(SPECS_43), "MetadataRequest", "12"], "0102"),
    ("size-text", ["size", "--count", "20", str(SPECS_43), "FetchResponse"], None),
    ("size-kip636", ["size", "--count", "20", "--kip636", "--format", "json", str(SPECS_43), "ProduceResponse"],
     None),
    ("size-html", ["size", "--count", "10", "--format", "html", str(SPECS_43), "MetadataResponse"], None),
    ("frames-generate", ["frames", "generate", "--specs", str(SPECS_43), "--count", "300", "--seed", "3",
                         "--out", "{scratch}/frames.jsonl"], None),
    ("size-frames", ["size", "--frames", "{scratch}/frames.jsonl", "--format", "json", str(SPECS_43)], None),
    ("size-frames-text", ["size", "--frames", "{scratch}/frames.jsonl", "--kip636", str(SPECS_43)], None),
    ("replay", ["replay", "{scratch}/frames.jsonl", "--specs", str(SPECS_43), "--against", str(SPECS_43),
                "--out", "{scratch}/replay"], None),
]

KAFKA_COMMANDS: list[tuple[str, list[str], str | None]] = [
    ("kafka-lint", ["lint", "--no-cache", "."], None),
    ("kafka-lint-json", ["lint", "--no-cache", "--format", "json", "."], None),
    ("kafka-compat-3.8", ["compat", "--against", "3.8.0"], None),
    ("kafka-compat-3.8-json", ["compat", "--format", "json", "--against", "3.8.0"], None),
    ("kafka-matrix", ["matrix", "3.7.0:clients/src/main/resources/common/message",
                      "clients/src/main/resources/common/message"], None),
    ("kafka-conformance", ["conformance", str(SPECS_43), "--upstream", "."], None),
    ("kafka-audit", ["audit", ".", "--since", "2024-06-01", "--out", "{scratch}/audit"], None),
]


# What varies from run to run whatever the code: durations and rates.
VARYING = re.compile(r'(\d+(?:\.\d+)? s\b|\d+(?:\.\d+)? frames/s|"(?:seconds|frames_per_second)": [0-9.]+'
                     r'|<dt>seconds</dt><dd>[0-9.]+</dd>)')


def _steady(text: str, scratch: Path) -> str:
    return VARYING.sub("<varies>", text.replace(str(scratch), "{scratch}"))


def _arguments(arguments: list[str], scratch: Path) -> list[str]:
    return [argument.replace("{scratch}", str(scratch)) for argument in arguments]


def _run(checkout: Path, cwd: Path, arguments: list[str], stdin: str | None) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1", "COLUMNS": "100",
                   "KRPC_LINT_PROGRESS": "0"}
    command = [sys.executable, "-c", "from linter.cli.main import main; main()", *arguments]
    return subprocess.run(command, cwd=cwd, env=environment, input=stdin.encode() if stdin else None,
                          capture_output=True, timeout=1800, check=False)


def _files(scratch: Path) -> dict[str, str]:
    """What a command wrote: text files whole, Parquet datasets as their sorted rows, other files hashed."""
    found = {}
    for path in sorted(scratch.rglob("*")):
        if not path.is_file() or path.name.startswith((".", "_")) or path.suffix == ".crc":
            continue
        relative = str(path.relative_to(scratch))
        if path.suffix == ".parquet":
            found[str(path.parent.relative_to(scratch)) + "/*.parquet"] = ""
            continue
        data = path.read_bytes()
        found[relative] = data.decode("utf-8", "replace") if len(data) < 2_000_000 else hashlib.sha256(data).hexdigest()
    for dataset in sorted({path.parent for path in scratch.rglob("*.parquet")}):
        import pyarrow.parquet as pq
        rows = pq.read_table(dataset).to_pylist()
        found[str(dataset.relative_to(scratch)) + "/*.parquet"] = "\n".join(
            sorted(json.dumps(row, sort_keys=True, default=repr) for row in rows))
    return found


def record(out: Path, checkout: Path, kafka: Path | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="same-outputs-"))
    runs = [(name, arguments, stdin, checkout) for name, arguments, stdin in FIXTURE_COMMANDS]
    runs += [(name, arguments, stdin, kafka) for name, arguments, stdin in KAFKA_COMMANDS if kafka]
    for name, arguments, stdin, cwd in runs:
        before = set(scratch.rglob("*"))
        result = _run(checkout, Path(cwd), _arguments(arguments, scratch), stdin)
        written = {key: value for key, value in _files(scratch).items()
                   if (scratch / key) not in before or key.endswith("*.parquet")}
        entry = {"arguments": arguments, "exit": result.returncode,
                 "stdout": _steady(result.stdout.decode("utf-8", "replace"), scratch),
                 "stderr": _steady(result.stderr.decode("utf-8", "replace"), scratch),
                 "files": {key: _steady(value, scratch) for key, value in written.items()}}
        (out / f"{name}.json").write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{name}: exit {result.returncode}", flush=True)
        for leftover in ("replay", "audit"):
            if name.endswith(leftover):
                shutil.rmtree(scratch / leftover, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)


def compare(before: Path, after: Path) -> int:
    names = sorted({path.name for path in before.glob("*.json")} | {path.name for path in after.glob("*.json")})
    differing = []
    for name in names:
        old, new = before / name, after / name
        if not (old.exists() and new.exists()) or old.read_bytes() != new.read_bytes():
            differing.append(name)
            print(f"DIFFERS: {name}")
    print(f"{len(names) - len(differing)} of {len(names)} commands byte-identical")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    recording = verbs.add_parser("record")
    recording.add_argument("out", type=Path)
    recording.add_argument("--checkout", type=Path, default=ROOT)
    recording.add_argument("--kafka", type=Path)
    comparing = verbs.add_parser("compare")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    options = parser.parse_args()
    if options.verb == "compare":
        return compare(options.before, options.after)
    record(options.out, options.checkout.resolve(), options.kafka.resolve() if options.kafka else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
