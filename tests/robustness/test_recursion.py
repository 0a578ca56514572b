"""No recursion over input depth (issue 25, class 2).

Two halves. The hunt: an AST pass over ``linter/`` finds every function that calls itself, directly or
through a cycle of calls within its module (``self.method`` and nested functions included), and fails unless
the cycle is in ``ALLOWED`` with the bound on its depth and what enforces it. The reproducers: a baseline of
100,000 nested ``[`` and directory chains 1,100 deep (a rule pack, a frames corpus, a spec tree) run through
the command line, each one line and exit 2, costing no more at the larger size than the smaller allows.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import networkx as nx
import pytest
from conftest import REPO_ROOT
from test_hostile import Outcome, run_bounded

from linter.parse.bounded_json import MAX_DEPTH, NestingError, load_json
from linter.parse.discovery import MAX_DIR_DEPTH, TooDeep, files_below

PACKAGE = REPO_ROOT / "linter"

# The bounds every allowed cycle relies on.
SPEC = "depth <= the spec's JSON nesting, at most 200 (parse.bounded_json.MAX_DEPTH, both readers)"
STRUCTS = ("depth <= the struct levels below the message, at most 64 (model.registry.MAX_STRUCT_NESTING, counted "
           "without recursion through inline and common structs alike, which can name one another with no JSON "
           "nesting), refused before any walk: the codec's compiler (SpecError), compat (KL1091), lint (KL654); "
           "a struct that contains itself is refused first (KL654; the codec's compiler, compat's layout)")
PACK = "depth <= 200: a rule pack's YAML nesting (parse.yamlfile.load_yaml, parse.bounded_json.MAX_DEPTH)"

ALLOWED: dict[tuple[str, frozenset[str]], str] = {
    ("linter.parse.jsonc", frozenset({"PositionalParser._array", "PositionalParser._object",
                                      "PositionalParser._value"})): "depth <= 200: _value raises past MAX_DEPTH",
    ("linter.model._spec_validator", frozenset({
        "validate_https___krpc_lint_dev_schema_kafka_message_spec_json___defs_field",
        "validate_https___krpc_lint_dev_schema_kafka_message_spec_json___defs_fieldlist"})): SPEC,
    ("linter.model.spec", frozenset({"_Builder.field", "_Builder.fields", "_Builder.struct_fields"})): SPEC,
    ("linter.model.spec", frozenset({"_inline_structs"})): SPEC,
    ("linter.model.registry", frozenset({"StructRegistry._register_inline"})): SPEC,
    ("linter.model.registry", frozenset({"StructRegistry._link_common"})): SPEC + " (walks one struct's own fields)",
    ("linter.model.registry", frozenset({"StructRegistry._named_by_unparsed_types.names"})): SPEC,
    ("linter.model.schema", frozenset({"_leaf_errors"})): "depth <= the anyOf nesting of the built-in spec.schema.json",
    ("linter.engine.checks.versions", frozenset({"_overlap"})): SPEC + " (inline structs only)",
    ("linter.engine.checks.structs", frozenset({"_byte_versions"})):
        "depth <= 64: it stops at MAX_STRUCT_NESTING structs on its path (KL654 reports a chain deeper)",
    ("linter.engine.checks.versions", frozenset({"_never_present"})): SPEC,
    ("linter.engine.checks.versions", frozenset({"_version_strings"})): SPEC,
    ("linter.engine.declarative", frozenset({"needed_facts.walk"})): PACK,
    ("linter.engine.patterns", frozenset({"linear_patterns.rewrite"})): PACK,
    ("linter.codec.arrays", frozenset({"_bulk_array_codec", "array_codec"})):
        "depth <= 1: Kafka has no arrays of arrays (KL303 refuses them before the codec)",
    ("linter.codec.compiler", frozenset({"MessageCompiler._field", "MessageCompiler._struct"})): STRUCTS,
    ("linter.server.analysis", frozenset({"symbols.of"})): SPEC + " (the outline follows the fields' nesting)",
    ("linter.server.lsp", frozenset({"_symbol"})): SPEC + " (the outline's symbols, as analysis.symbols built them)",
    ("linter.wirecheck.reader", frozenset({"KafkaReader.array", "KafkaReader.field", "KafkaReader.field_value",
                                           "KafkaReader.nested", "KafkaReader.struct", "KafkaReader.tagged",
                                           "KafkaReader.tagged_value"})):
        STRUCTS + "; the walk follows a compiled plan (the bytes choose no depth)",
    ("linter.codec.compiler", frozenset({"MessageCompiler._default_test"})): STRUCTS,
    ("linter.codec.compiler", frozenset({"MessageCompiler._json_reader"})): STRUCTS,
    ("linter.codec.native", frozenset({"_native_field", "native_tuple"})): STRUCTS,
    ("linter.size.measure", frozenset({"_field", "_struct"})): STRUCTS,
    ("linter.size.measure", frozenset({"_order"})): STRUCTS,
    ("linter.size.measure", frozenset({"_walk_with_siblings"})): SPEC,
    ("linter.codec.values", frozenset({"_slot", "_struct"})): STRUCTS,
    ("linter.codec.values", frozenset({"_Strategies.shape", "_Strategies.slot", "_Strategies.struct"})): STRUCTS,
    ("linter.codec.values", frozenset({"_Random.shape", "_Random.slot", "_Random.struct"})): STRUCTS,
    ("linter.codec.values", frozenset({"identical"})): STRUCTS + " (values shaped by the plan)",
    ("linter.compat.layout", frozenset({"LayoutBuilder._collect", "LayoutBuilder._slot", "LayoutBuilder._struct"})):
        STRUCTS + "; deeper than the layout's limit is KL1091",
    ("linter.compat.layout", frozenset({"_same_fields"})): STRUCTS,
    ("linter.compat.struct_diff", frozenset({
        "StructDiff._aligned", "StructDiff._pair", "StructDiff._regular", "StructDiff._renamed_in_place",
        "StructDiff._retyped", "StructDiff._same_tag", "StructDiff._struct", "StructDiff._tagged"})): STRUCTS,
    ("linter.compat.suggest_edits", frozenset({"_kept", "_nested", "_struct"})): STRUCTS,
    ("linter.compat.witness", frozenset({"_leaf", "flatten"})): STRUCTS,
    ("linter.compat.witness", frozenset({"Comparison._values", "Comparison.divergence"})): STRUCTS,
    ("linter.compat.witness_excerpt", frozenset({"_trim"})): "depth <= compat.layout.MAX_DEPTH: _trim cuts there",
    ("linter.frames.values", frozenset({"Traffic.array", "Traffic.shape", "Traffic.slot",
                                                "Traffic.struct"})): STRUCTS,
    ("linter.frames.decode", frozenset({"_types.tree"})): STRUCTS,
    ("linter.replay.frame", frozenset({"first_difference"})): STRUCTS + " (decoded values)",
    ("linter.spark.schema", frozenset({"_arrow_type"})): "depth <= 2: the ARRAY<...> types of krpc-lint's own "
                                                            "output schemas (constants)",
    ("linter.report.html_parts", frozenset({"format_fact"})): "depth <= 2: run facts krpc-lint writes itself",
}


# --- the hunt ------------------------------------------------------------------------------------------------


def _definitions(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[tuple[str, str]]]]:
    """Every function of a module by qualified name (``Class.method``, ``outer.inner``), with its enclosing
    scopes as (``class`` or ``def``, name)."""
    found: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[tuple[str, str]]]] = {}
    pending: list[tuple[ast.AST, list[tuple[str, str]]]] = [(tree, [])]
    while pending:
        node, scope = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[".".join(name for _, name in [*scope, ("def", child.name)])] = (child, scope)
                pending.append((child, [*scope, ("def", child.name)]))
            elif isinstance(child, ast.ClassDef):
                pending.append((child, [*scope, ("class", child.name)]))
            else:
                pending.append((child, scope))
    return found


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a function binds itself (parameters, assignments, imports, nested definitions)."""
    arguments = function.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            names.add(node.name)
    return names


def call_graph(source: str) -> nx.DiGraph[str]:
    """Function -> function it refers to (calls, or passes on) within one module: a bare name resolved through
    the enclosing functions to the module, ``self.x``/``cls.x`` to the enclosing class, ``Class.x`` to it."""
    definitions = _definitions(ast.parse(source))
    graph: nx.DiGraph[str] = nx.DiGraph()
    for name, (function, scope) in definitions.items():
        graph.add_node(name)
        own = [*scope, ("def", function.name)]
        bound = _locals(function)
        owner = [part for _, part in scope] if scope and scope[-1][0] == "class" else None
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id in bound and f"{name}.{node.id}" not in definitions:
                    continue  # a local variable, not a function
                for depth in range(len(own), -1, -1):
                    if depth and own[depth - 1][0] != "def":
                        continue  # a class body's names are not visible in its methods
                    candidate = ".".join([part for _, part in own[:depth]] + [node.id])
                    if candidate in definitions:
                        graph.add_edge(name, candidate)
                        break
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = node.value.id
                if base in ("self", "cls") and owner is not None:
                    candidate = ".".join([*owner, node.attr])
                else:
                    candidate = f"{base}.{node.attr}"
                if candidate in definitions:
                    graph.add_edge(name, candidate)
    return graph


def recursive_cycles(source: str) -> list[frozenset[str]]:
    """The sets of functions that call one another in a cycle (a function calling itself is a set of one)."""
    graph = call_graph(source)
    return [frozenset(component) for component in nx.strongly_connected_components(graph)
            if len(component) > 1 or any(graph.has_edge(node, node) for node in component)]


def _found() -> dict[tuple[str, frozenset[str]], Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        for cycle in recursive_cycles(path.read_text(encoding="utf-8")):
            found[(module, cycle)] = path
    return found


def test_every_recursive_function_has_a_bound() -> None:
    """A new recursive function (or a new member of a cycle) fails here until it is made iterative or
    given a bound in ALLOWED; an entry whose cycle is gone fails too, so the list stays true."""
    found = _found()
    unbounded = [f"{module}: {', '.join(sorted(cycle))}" for module, cycle in found if (module, cycle) not in ALLOWED]
    stale = [f"{module}: {', '.join(sorted(cycle))}" for module, cycle in ALLOWED if (module, cycle) not in found]
    assert not unbounded, "recursion with no stated bound (make it iterative or add it to ALLOWED):\n" + \
        "\n".join(unbounded)
    assert not stale, "ALLOWED lists cycles that no longer exist:\n" + "\n".join(stale)


@pytest.mark.parametrize("source, expected", [
    ("def f(n):\n    return f(n - 1)\n", [{"f"}]),
    ("def f():\n    g()\ndef g():\n    f()\n", [{"f", "g"}]),
    ("class A:\n    def f(self):\n        return self.g()\n    def g(self):\n        return [self.f]\n", [{"A.f", "A.g"}]),
    ("def outer():\n    def inner(x):\n        return map(inner, x)\n    return inner\n", [{"outer.inner"}]),
    ("def f(f):\n    return f()\n", []),  # a parameter named like the function is no recursion
    ("class A:\n    def f(self):\n        return f()\ndef f():\n    return 1\n", []),
    ("def walk(node):\n    stack = [node]\n    while stack:\n        stack.extend(stack.pop())\n", []),
])
def test_the_hunt_finds_direct_mutual_method_and_nested_recursion(source: str, expected: list[set[str]]) -> None:
    assert sorted(map(sorted, recursive_cycles(source))) == sorted(map(sorted, expected))


# --- JSON nesting: the one limit before json.loads ------------------------------------------------------------


def test_load_json_gives_the_positional_parsers_verdict_at_the_limit() -> None:
    from linter.parse.jsonc import PositionalParser, fast_load

    for depth in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2):
        for inner in ("", "1"):
            text = "[" * depth + inner + "]" * depth
            try:
                load_json(text)
                verdict = True
            except NestingError:
                verdict = False
            assert verdict == (fast_load(text) is not None), (depth, inner)
            if verdict:
                PositionalParser(text).parse()


def test_load_json_skips_brackets_in_strings_and_names_where() -> None:
    text = '{"a": "' + "[" * 5000 + '",\n "b": ' + "[" * 300 + "]" * 300 + "}"
    with pytest.raises(NestingError, match=r"^F: JSON nested deeper than 200 levels \(line 2, column 207\)$"):
        load_json(text, "F: ")
    assert load_json('{"a": "' + "[" * 5000 + '"}') == {"a": "[" * 5000}


def _best_of(runs: int, work: object) -> float:
    """The least CPU time of ``runs`` calls (this process's own: another load on the machine does not count)."""
    assert callable(work)
    times = []
    for _ in range(runs):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def test_the_depth_scan_is_linear() -> None:
    """The whole text is scanned when the deep part comes last: n and 4n shallow arrays before it cost in
    proportion (quadratic would be 16 times)."""
    def text(n: int) -> str:
        return "[" + "[1, \"]]]\"]," * n + "[" * 300

    small, large = text(50_000), text(200_000)

    def scan(document: str) -> object:
        return lambda: pytest.raises(NestingError, load_json, document)

    ratio = _best_of(3, scan(large)) / _best_of(3, scan(small))
    assert ratio < 8, f"4x the input took {ratio:.1f}x the time"


# --- through the command line -------------------------------------------------------------------------------


def _one_line_error(outcome: Outcome, *expected: str) -> str:
    text = outcome.stdout + outcome.stderr
    assert outcome.code == 2, text
    assert "Traceback" not in text and "internal error" not in text, text
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) >= 1 and all(part in lines[-1] for part in expected), text
    assert len(lines[-1]) < 300, lines[-1]
    return lines[-1]


def _spec(tmp_path: Path) -> Path:
    """A request and its response in ``tmp_path/specs``; the request's path."""
    (tmp_path / "specs").mkdir()
    for kind in ("request", "response"):
        name = f"ApiVersions{kind.title()}"
        (tmp_path / "specs" / f"{name}.json").write_text(json.dumps({
            "apiKey": 18, "type": kind, "name": name, "validVersions": "0-3", "flexibleVersions": "3+", "fields": [],
            **({"listeners": ["broker"]} if kind == "request" else {})}))
    return tmp_path / "specs" / "ApiVersionsRequest.json"


def test_a_baseline_nested_100000_deep_is_one_line_at_the_cost_of_reading_it(tmp_path: Path) -> None:
    """Was a RecursionError (internal error). Exit 2 naming the file; 1,000 and 100,000 deep cost alike (the
    scan stops at the first bracket too deep), peak memory within a few MB of each other."""
    spec = _spec(tmp_path)
    outcomes = []
    for depth in (1_000, 100_000):
        baseline = tmp_path / f"baseline-{depth}.json"
        baseline.write_text("[" * depth)
        outcome = run_bounded("lint", str(spec), "--baseline", str(baseline))
        _one_line_error(outcome, str(baseline), "nested deeper than 200 levels")
        outcomes.append(outcome)
    small, large = outcomes
    assert large.megabytes - small.megabytes < 20, (small.megabytes, large.megabytes)
    assert large.cpu / max(small.cpu, 0.01) < 6, (small.cpu, large.cpu)


@pytest.mark.parametrize("depth", [250, 2_500])
def test_a_toml_config_past_the_nesting_limit_is_one_line(tmp_path: Path, depth: int) -> None:
    """tomllib reads 250 levels (and recurses past Python's limit at 2,500): both are refused at the one
    nesting limit of every reader, as a YAML config is."""
    spec = _spec(tmp_path)
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.krpc-lint]\nprofile = "strict"\nx = ' + "[" * depth + "]" * depth + "\n")
    outcome = run_bounded("lint", str(spec), "--config", str(config))
    _one_line_error(outcome, str(config), "nested")


def test_a_yaml_config_nested_deep_in_flow_style_costs_what_reading_it_costs(tmp_path: Path) -> None:
    """ruamel's scanner is quadratic in flow depth (1,600 deep took 7 s) before it recurses too deep: a linear
    scan of the flow brackets refuses past the limit first. 400 and 100,000 deep: one line each, and the CPU
    time of the deeper one (250x the input) within 8x of the shallower's."""
    spec = _spec(tmp_path)
    outcomes = []
    for depth in (400, 100_000):
        config = tmp_path / f"config-{depth}.yaml"
        config.write_text("profile: " + "[" * depth + "]" * depth + "\n")
        outcome = run_bounded("lint", str(spec), "--config", str(config))
        _one_line_error(outcome, str(config), "nests deeper than 200 levels")
        outcomes.append(outcome)
    small, large = outcomes
    assert large.cpu / max(small.cpu, 0.01) < 8, (small.cpu, large.cpu)


def _struct_chain(directory: Path, levels: int) -> Path:
    """A data spec whose field's struct names the next common struct, ``levels`` structs deep: no JSON nesting
    at all, so only the struct-level limit stops the walks that follow types."""
    structs = [{"name": f"S{i}", "versions": "0+", "fields": [{"name": "Next", "type": f"S{i + 1}", "versions": "0+",
                                                                 "about": "x"}]} for i in range(1, levels)]
    structs.append({"name": f"S{levels}", "versions": "0+", "fields": [{"name": "A", "type": "int32", "versions": "0+",
                                                                       "about": "x"}]})
    directory.mkdir(parents=True)
    (directory / "ChainData.json").write_text(json.dumps({
        "name": "ChainData", "type": "data", "validVersions": "0", "flexibleVersions": "none",
        "fields": [{"name": "Items", "type": "[]S1", "versions": "0+", "about": "x"}], "commonStructs": structs}))
    return directory


@pytest.mark.parametrize(("levels", "refused"), [(64, False), (65, True)])
def test_struct_levels_are_refused_past_64_by_lint_compat_and_the_codec(tmp_path: Path, levels: int,
                                                                          refused: bool) -> None:
    specs = _struct_chain(tmp_path / "specs", levels)
    linted = run_bounded("lint", "--no-cache", "--select", "KL654", str(specs))
    assert ("KL654" in linted.stdout) is refused, linted.stdout
    encoded = run_bounded("codec", "encode", "--specs", str(specs), "ChainData", "0", stdin=b'{"Items": []}')
    assert (encoded.code == 2) is refused, encoded.stderr
    compared = run_bounded("compat", str(specs), str(specs))
    assert ("KL1091" in compared.stdout) is refused, compared.stdout


def test_a_chain_of_5000_common_structs_is_one_finding_or_line_everywhere(tmp_path: Path) -> None:
    """5,000 common structs each naming the next: compat, codec and size were internal errors
    (RecursionError), lint passed. Each command now refuses it from a count made without recursion; 1,250 and
    5,000 levels cost CPU time within 8x of each other."""
    outcomes = []
    for levels in (1_250, 5_000):
        specs = _struct_chain(tmp_path / str(levels), levels)
        linted = run_bounded("lint", "--no-cache", "--profile", "strict", str(specs))
        assert linted.code == 1 and f"structs nest {levels} levels below the message" in linted.stdout, linted.stdout
        compared = run_bounded("compat", str(specs), str(specs))
        assert compared.code == 1 and f"its structs nest {levels} levels" in compared.stdout, compared.stdout
        for args in (["codec", "encode", "--specs", str(specs), "ChainData", "0"],
                     ["size", str(specs), "ChainData", "--count", "1"]):
            _one_line_error(run_bounded(*args, stdin=b"{}"), f"structs nest {levels} levels")
        outcomes.append(linted)
    small, large = outcomes
    assert large.cpu / max(small.cpu, 0.01) < 8, (small.cpu, large.cpu)


def _chain(top: Path, depth: int, leaf: tuple[str, bytes] | None = None) -> None:
    """``top/d/d/.../d`` ``depth`` levels deep, made through directory descriptors (no path grows past a name,
    whatever PATH_MAX), with ``leaf`` (name, bytes) written at the bottom."""
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        if leaf is not None:
            out = os.open(leaf[0], os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(out, leaf[1])
            os.close(out)
    finally:
        os.close(fd)


def _remove_chain(top: Path) -> None:
    """shutil.rmtree recurses once per level (Python 3.11): take the chain apart from the bottom, through one
    directory descriptor at a time."""
    fd = os.open(top, os.O_RDONLY)
    while "d" in os.listdir(fd):
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    while True:
        for name in os.listdir(fd):
            os.unlink(name, dir_fd=fd)
        parent = os.open("..", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = parent
        if os.path.samestat(os.fstat(fd), os.stat(top.parent)):
            break
        os.rmdir("d", dir_fd=fd)
    os.close(fd)
    shutil.rmtree(top)


Chains = Callable[..., Path]


@pytest.fixture
def chains(tmp_path: Path) -> Iterator[Chains]:
    """Makes directory chains (``_chain``) and takes them apart afterwards, which pytest's rmtree cannot."""
    made: list[Path] = []

    def make(name: str, depth: int, leaf: tuple[str, bytes] | None = None) -> Path:
        top = tmp_path / name
        _chain(top, depth, leaf)
        made.append(top)
        return top

    yield make
    for top in made:
        _remove_chain(top)


def _two_depths(outcomes: list[Outcome]) -> None:
    small, large = outcomes
    assert large.cpu / max(small.cpu, 0.01) < 6, (small.cpu, large.cpu)
    assert large.megabytes - small.megabytes < 20, (small.megabytes, large.megabytes)


RULE = b"""id: KL9901
name: deep-rule
severity: warning
category: naming
message: "deep rule"
check:
  function: field-convention
  options: {name: "^[A-Z]"}
"""


def test_a_rule_pack_1100_directories_deep_is_one_line(tmp_path: Path, chains: Chains) -> None:
    """Was a RecursionError in os.walk (internal error)."""
    spec = _spec(tmp_path)
    outcomes = []
    for depth in (300, 1_100):
        pack = chains(f"pack{depth}", depth, ("rule.yaml", RULE))
        config = tmp_path / f"krpc-lint-{depth}.yaml"
        config.write_text(f"rule-packs: [{pack.name}]\n")
        outcome = run_bounded("lint", str(spec), "--config", str(config))
        _one_line_error(outcome, "rule pack", f"more than {MAX_DIR_DEPTH} levels")
        outcomes.append(outcome)
    _two_depths(outcomes)


def test_a_frames_directory_1100_deep_is_one_line(tmp_path: Path, chains: Chains) -> None:
    """Was a RecursionError in Path.rglob (internal error), for size --frames and replay's input check."""
    spec = _spec(tmp_path)
    outcomes = []
    for depth in (300, 1_100):
        frames = chains(f"frames{depth}", depth, ("part-0.parquet", b"PAR1"))
        outcome = run_bounded("size", str(spec.parent), "--frames", str(frames))
        _one_line_error(outcome, "FRAMES", f"more than {MAX_DIR_DEPTH} levels")
        outcomes.append(outcome)
    _two_depths(outcomes)


@pytest.mark.parametrize("command", ["lint", "compat"])
def test_a_spec_tree_3000_deep_is_one_line(tmp_path: Path, chains: Chains, command: str) -> None:
    """Was a silent skip (lint: "no spec files here") or a 3,000-character error line (compat: File name too
    long) once the path outgrew PATH_MAX."""
    spec = _spec(tmp_path).read_bytes()
    outcomes = []
    for depth in (300, 3_000):
        top = chains(f"specs{depth}", depth, ("ApiVersionsRequest.json", spec))
        outcome = run_bounded(command, *([str(top)] * (1 if command == "lint" else 2)))
        _one_line_error(outcome, f"more than {MAX_DIR_DEPTH} levels")
        outcomes.append(outcome)
    _two_depths(outcomes)


def test_the_walker_goes_exactly_to_the_limit(tmp_path: Path) -> None:
    """A file MAX_DIR_DEPTH levels below the top is found; one level more is TooDeep."""
    _chain(tmp_path / "ok", MAX_DIR_DEPTH, ("x.json", b"{}"))
    found = [(directory, regular) for directory, regular, _ in files_below(str(tmp_path / "ok")) if regular]
    assert len(found) == 1 and found[0][1] == ["x.json"]
    assert len(Path(found[0][0]).relative_to(tmp_path / "ok").parts) == MAX_DIR_DEPTH
    _chain(tmp_path / "deep", MAX_DIR_DEPTH + 1)
    with pytest.raises(TooDeep, match=f"more than {MAX_DIR_DEPTH} levels"):
        list(files_below(str(tmp_path / "deep")))
    _remove_chain(tmp_path / "ok")
    _remove_chain(tmp_path / "deep")


def test_the_walker_never_follows_a_link_loop(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.yaml").write_text("x")
    os.symlink("..", tmp_path / "a" / "up")
    os.symlink(".", tmp_path / "a" / "self")
    walked = list(files_below(str(tmp_path)))
    assert [(Path(d).relative_to(tmp_path).as_posix(), r, o) for d, r, o in walked] == \
        [(".", [], []), ("a", ["x.yaml"], ["self", "up"])]
