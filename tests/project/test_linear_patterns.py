"""Every regular expression in ``linter/`` runs in time linear in the text it reads (issue 25).

Python's ``re`` backtracks: ``^\\s*([+-]?[0-9]+)?\\s*$`` took 19 s on 30,000 spaces. So every pattern is either
compiled by RE2 (``linter.parse.linear.linear``, no backtracking: nothing to prove) or listed in DOCUMENTED with
the linear form it has, and that form is checked on ``re``'s own parse tree (``re._parser``):

- ``one-position``: the pattern is tried at one position only (``match``/``fullmatch``, or a ``^``/``\\A`` anchor
  without MULTILINE) and is deterministic: at every choice (an alternative, a repeat going on or stopping, an
  optional part) the next character decides, because the first characters of the ways on are disjoint; so when
  the way taken fails, each way not taken fails at its first character, and the work stays linear. A possessive
  repeat or an atomic group never gives back, so it needs no disjointness with what follows it; its inside must
  be deterministic all the same (``(?:a*+b|a)*+`` is quadratic).
- ``bounded``: used to scan (``search``, ``sub``, ``findall``...), with no unbounded repeat anywhere (look-arounds
  included): each position costs at most a constant.
- ``run``: scanning for one repeated character set (``\\d+``): a position outside the set fails at once, one
  inside consumes its maximal run, and runs do not overlap.
- ``guarded-run``: scanning for a bounded prefix ending in a character ``c``, one repeated set ``S`` that excludes
  ``c``, and a bounded suffix (``\\[\\d+\\]``): the run after each ``c`` stops before the next ``c``, so the runs of
  all attempts are disjoint.

The scan finds every call of ``re.compile/search/match/fullmatch/sub/subn/findall/finditer/split`` (whatever the
pattern: a literal, an f-string, a module constant) and how each compiled pattern is used; a pattern it cannot
evaluate, or that is not listed, fails the test. The reproducers are also timed at two sizes (a ratio, never a
wall-clock limit).
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import re
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
LINTER = ROOT / "linter"
_CTRL = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f"  # parse/jsonc.py's control characters, as a class's source
RE_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}
ONE_POSITION_METHODS = {"match", "fullmatch"}

# (file, pattern) -> (form, why it is there). A new regular expression goes through linear() or gets a line here.
DOCUMENTED: dict[tuple[str, str | bytes], tuple[str, str]] = {
    # the JSON-with-comments reader (parse/jsonc.py, parse/scanner.py): possessive scanners at the reader's position
    ("linter/parse/scanner.py", r'["/]'): ("bounded", "the next quote or slash"),
    ("linter/parse/scanner.py", r'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+'): ("one-position", "a string's body"),
    ("linter/parse/scanner.py", r"[\r\n]"): ("bounded", "line ends"),
    ("linter/parse/jsonc.py", f"[{_CTRL}]"): ("bounded", "control characters"),
    ("linter/parse/jsonc.py", rf"//[^\r\n{_CTRL}]*+"): ("one-position", "a line comment"),
    ("linter/parse/jsonc.py", rf"[^{_CTRL}]*+"): ("one-position", "a block comment's body"),
    ("linter/parse/jsonc.py", r"\r(?!\n)"): ("bounded", "a lone CR"),
    ("linter/parse/scanner.py", r'[\[\]{}"/]'): ("bounded", "structural characters"),
    ("linter/parse/scanner.py", r'[^,\]}\s/]*+'): ("one-position", "a scalar's end"),
    ("linter/parse/jsonc.py", r"[ \t\r\n]*+"): ("one-position", "blanks"),
    ("linter/parse/jsonc.py", r'"([^"\\\x00-\x1f]*+(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*+)*+)"'):
        ("one-position", "a strict JSON string"),
    ("linter/parse/jsonc.py", r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"): ("one-position", "a JSON number"),
    ("linter/parse/jsonc.py", r"[0-9a-fA-F]{4}"): ("one-position", "a \\u escape's digits"),
    ("linter/parse/linear.py", "[\ud800-\udfff]"): ("bounded", "lone surrogates, replaced before RE2 runs"),
    # the spec model: Java's number syntaxes, fullmatched
    ("linter/model/defaults.py", r"[+-]?[0-9]+"): ("one-position", "Integer.valueOf(s, 10)"),
    ("linter/model/defaults.py", r"[+-]?[0-9a-fA-F]+"): ("one-position", "Integer.valueOf(s, 16)"),
    ("linter/model/defaults.py", r"[A-Za-z0-9_-]*={0,2}"): ("one-position", "URL-safe base64"),
    ("linter/model/defaults.py",
     r"[+-]?(?:NaN|Infinity|(?:0(?:[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
     r"|[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)|[1-9][0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"
     r"|\.[0-9]+(?:[eE][+-]?[0-9]+)?)[fFdD]?)"): ("one-position", "Double.parseDouble (was 20 s on 12,000 digits)"),
    ("linter/model/versions.py", r"[+-]?[0-9]+"): ("one-position", "a version number"),
    ("linter/model/jackson.py", r"[+-]?[0-9]+"): ("one-position", "an integer Jackson coerces"),
    ("linter/model/_spec_validator.py", "^\\s*(?:[+-]?[0-9]+\\s*)?\\Z"): ("one-position", "the schema's integer"),
    ("linter/model/schema.py", r', \(name_prefix or "data"\) \+ "[^"\n]*"(?:\.format\(\*\*locals\(\)\))?\)'):
        ("guarded-run", "fastjsonschema's own code, at generation"),
    # checks
    ("linter/engine/checks/messages.py", r"(?<=[a-z0-9])(?=[A-Z])"): ("bounded", "a camelCase boundary"),
    ("linter/engine/checks/versions.py", r"^\s*\+?(\d+)\s*-\s*\+?(\d+)\s*$"): ("one-position", "a reversed range"),
    ("linter/engine/checks/versions.py", r"none|(?:0|[1-9][0-9]*)(?:\+|-(?:0|[1-9][0-9]*))?"):
        ("one-position", "Kafka's version syntax"),
    ("linter/engine/checks/tagged.py", r"0[xX][0-9a-fA-F]{1,8}"): ("one-position", "a hexadecimal tag"),
    ("linter/model/generator.py", r'@JsonProperty\("([^"\\\n]*)"\)'): ("guarded-run", "a generator's enum names"),
    ("linter/model/generator.py", r"[A-Za-z0-9_-]+"): ("one-position", "a sane enum name"),
    ("linter/engine/fixes.py", r'"(?:[^"\\\x00-\x1f]|\\.)*"[ \t\r\n]*:[ \t\r\n]*'): ("one-position", "a key's head"),
    ("linter/engine/fixes.py", r"[ \t\r\n]*"): ("one-position", "blanks"),
    # outputs and the rest
    ("linter/report/formats.py", "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"):
        ("bounded", "characters XML cannot hold"),
    ("linter/audit/html_wire.py", r"(?<=[a-z0-9])(?=[A-Z])"): ("bounded", "a camelCase boundary"),
    ("linter/report/html_parts.py", "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef"
     + "".join(chr(plane + 0xFFFE) + chr(plane + 0xFFFF) for plane in range(0, 0x110000, 0x10000)) + "]"):
        ("bounded", "characters HTML cannot show"),
    ("linter/escape.py", r"[\\`\*_<\&\|\~]"): ("bounded", "Markdown's active characters"),
    ("linter/escape.py", importlib.import_module("linter.escape")._UNSAFE.pattern):
        ("bounded", "what printable() escapes"),
    ("linter/escape.py", importlib.import_module("linter.escape")._JSON_UNSAFE.pattern):
        ("bounded", "what JSON leaves raw"),
    ("linter/parse/yamlfile.py", importlib.import_module("linter.parse.yamlfile")._FLOW_SIGNIFICANT.pattern):
        ("bounded", "YAML's flow and quoting indicators"),
    ("linter/compat/witness_cause.py", r"\[\d+\]"): ("guarded-run", "array indices in a path"),
    ("linter/compat/witness_cause.py", r" \([^()]*\)$"): ("guarded-run", "a closing parenthesis"),
    ("linter/compat/sources.py", rb"([0-9a-f]{40,64}) ([a-z]{1,16}) ([0-9]{1,20})\n?"): ("one-position", "git cat-file"),
}


# ---------------------------------------------------------------------------------------------------------------
# Finding every regular expression


@dataclass
class Site:
    file: str  # relative to the repository
    line: int
    pattern: str | bytes | None  # None: not a value the scan can work out
    flags: int
    uses: frozenset[str]  # the methods run with it ("?" for a use the scan cannot follow)
    rre2: bool = False  # compiled by linear(): RE2

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _python_files() -> list[Path]:
    return sorted(p for p in LINTER.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _enclosing_functions(tree: ast.AST) -> dict[ast.AST, str | None]:
    """Each node -> the module-level function it lies in ("" inside a lambda or a method; None: at module level).
    Names there may be locals the scan cannot evaluate."""
    inside: dict[ast.AST, str | None] = {}

    def visit(node: ast.AST, function: str | None) -> None:
        inside[node] = function
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            function = node.name if function is None and not isinstance(node, ast.Lambda) else ""
        elif isinstance(node, ast.ClassDef):
            function = ""
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return inside


def _made_by(function: str, tree: ast.Module) -> list[str]:
    """The module-level names assigned a call of ``function`` (``_UNSAFE = _class(...)``)."""
    return [statement.targets[0].id for statement in tree.body
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name) and statement.value.func.id == function]


def _evaluate(node: ast.expr, module: Any, in_function: bool) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if in_function:  # names may be locals: only constants are known
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if any(name not in vars(module) for name in names) or _has_call(node):
            raise LookupError
    return eval(compile(ast.Expression(node), "<pattern>", "eval"), vars(module))


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _is_re_call(node: ast.AST) -> str | None:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re" and node.func.attr in RE_FUNCTIONS):
        return node.func.attr
    return None


def _is_linear_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "linear")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "linear"))


def _compiled_names(tree: ast.Module) -> dict[int, str]:
    """id(re.compile call) -> the module-level name it is stored under (directly or as a dict's value)."""
    names: dict[int, str] = {}
    for statement in tree.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        value = getattr(statement, "value", None)
        if value is None or len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        for node in ast.walk(value):
            if _is_re_call(node) == "compile":
                names[id(node)] = targets[0].id
    return names


@dataclass
class _Index:
    """One module's names: where each is loaded, what holds each node, what it imports from where."""

    loads: dict[str, list[ast.Name]]
    parents: dict[ast.AST, ast.AST]
    imports: dict[tuple[str, str], str]  # (module, name) -> the local name


def _index(tree: ast.Module) -> _Index:
    loads: dict[str, list[ast.Name]] = {}
    parents: dict[ast.AST, ast.AST] = {}
    imports: dict[tuple[str, str], str] = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
        if isinstance(parent, ast.Name) and isinstance(parent.ctx, ast.Load):
            loads.setdefault(parent.id, []).append(parent)
        elif isinstance(parent, ast.ImportFrom) and parent.module:
            for alias in parent.names:
                imports[(parent.module, alias.name)] = alias.asname or alias.name
    return _Index(loads, parents, imports)


def _uses(name: str, indexes: dict[Path, _Index], home: Path) -> frozenset[str]:
    """The methods run on the compiled pattern(s) stored under ``name`` in ``home`` (and where it is imported)."""
    found: set[str] = set()
    home_module = _module_name(home)
    for path, index in indexes.items():
        local = name if path == home else index.imports.get((home_module, name))
        for node in index.loads.get(local, []) if local else []:
            parents = index.parents
            holder: ast.AST | None = parents.get(node)
            here: ast.AST = node
            if isinstance(holder, ast.Subscript) and holder.value is here:  # NAME[key].method(...)
                here, holder = holder, parents.get(holder)
            if isinstance(holder, ast.Attribute) and isinstance(parents.get(holder), ast.Call):
                found.add(holder.attr)
            else:
                found.add("?")
    return frozenset(found)


@lru_cache(maxsize=1)
def regex_sites() -> tuple[Site, ...]:
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in _python_files()}
    indexes = {path: _index(tree) for path, tree in trees.items()}
    sites: list[Site] = []
    for path, tree in trees.items():
        relative = path.relative_to(ROOT).as_posix()
        inside = _enclosing_functions(tree)
        module: Any = None
        stored = _compiled_names(tree)
        for node in ast.walk(tree):
            function = _is_re_call(node)
            linear_call = _is_linear_call(node)
            if function is None and not linear_call:
                continue
            assert isinstance(node, ast.Call)
            if module is None:
                module = importlib.import_module(_module_name(path))
            in_function = inside[node] is not None
            function_name = inside[node]
            if function == "compile" and function_name:  # a helper that compiles: the patterns it made
                for name in _made_by(function_name, tree):
                    made = getattr(module, name)
                    sites.append(Site(relative, node.lineno, made.pattern, made.flags, _uses(name, indexes, path)))
                continue
            try:
                pattern = _evaluate(node.args[0], module, in_function) if node.args else None
                flag_node = node.args[1] if function == "compile" and len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "flags"), None)
                flags = 0 if flag_node is None else int(_evaluate(flag_node, module, in_function))
            except LookupError:
                pattern, flags = None, 0
            if linear_call:
                sites.append(Site(relative, node.lineno, pattern, 0, frozenset(), rre2=True))
                continue
            if function == "compile":
                stored_as = stored.get(id(node))
                uses = _uses(stored_as, indexes, path) if stored_as and not in_function else frozenset({"?"})
            else:
                uses = frozenset({str(function)})
            if not isinstance(pattern, (str, bytes)):
                pattern = None
            sites.append(Site(relative, node.lineno, pattern, flags, uses))
    return tuple(sites)


# ---------------------------------------------------------------------------------------------------------------
# The structural checks, on re's parse tree


ALL_TEXT = "".join(map(chr, range(0x110000)))
ALL_BYTES = bytes(range(256))
BOUNDED_MAX = 64  # a repeat of at most this many is a constant, not a loop


@dataclass(frozen=True)
class First:
    """What a part of a pattern can start with: character atoms (regex sources), and ``end`` when it can match
    nothing at all and let what follows it (the pattern's end included) decide."""

    atoms: frozenset[str]
    end: bool

    def __or__(self, other: First) -> First:
        return First(self.atoms | other.atoms, self.end or other.end)


END = First(frozenset(), True)
CATEGORIES = {sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s",
              sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W"}
REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


class Checker:
    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.binary = isinstance(pattern, bytes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.tree = sre_parse.parse(pattern, flags)
        self.flags = self.tree.state.flags & (re.IGNORECASE | re.DOTALL | re.ASCII | re.UNICODE)
        self.problems: list[str] = []

    # -- character atoms and their overlap
    def _char(self, code: int) -> str:
        return f"\\x{code:02x}" if self.binary else f"\\U{code:08x}"

    def atom(self, op: Any, av: Any) -> str:
        if op is sre.LITERAL:
            return self._char(av)
        if op is sre.NOT_LITERAL:
            return f"[^{self._char(av)}]"
        if op is sre.ANY:
            return "."
        parts, negate = [], ""
        for item_op, item in av:
            if item_op is sre.NEGATE:
                negate = "^"
            elif item_op is sre.LITERAL:
                parts.append(self._char(item))
            elif item_op in (sre.RANGE, sre.RANGE_UNI_IGNORE):
                parts.append(f"{self._char(item[0])}-{self._char(item[1])}")
            elif item_op is sre.CATEGORY:
                parts.append(CATEGORIES[item])
            else:
                raise AssertionError(f"unknown class item {item_op}")
        return f"[{negate}{''.join(parts)}]"

    def disjoint(self, a: First, b: First) -> bool:
        if a.end and b.end:
            return False
        if not a.atoms or not b.atoms:
            return True
        return _overlap(tuple(sorted(a.atoms)), tuple(sorted(b.atoms)), self.flags, self.binary) is None

    # -- one-position: deterministic
    def deterministic(self) -> list[str]:
        self.sequence(list(self.tree), END)
        return self.problems

    def sequence(self, items: list[Any], follow: First) -> First:
        for op, av in reversed(items):
            follow = self.node(op, av, follow)
        return follow

    def node(self, op: Any, av: Any, follow: First) -> First:
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
            return First(frozenset({self.atom(op, av)}), False)
        if op is sre.AT:
            return follow  # zero width: what follows decides (a superset of the truth: stricter)
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            if not self.bounded_items(list(av[1])):
                self.problems.append("a look-around with an unbounded repeat")
            return follow
        if op is sre.SUBPATTERN:
            return self.sequence(list(av[3]), follow)
        if op is sre.ATOMIC_GROUP:
            inner = self.sequence(list(av), END)  # nothing inside is retried once it matched
            return First(inner.atoms, False) | follow if inner.end else inner
        if op is sre.BRANCH:
            firsts = [self.sequence(list(branch), follow) for branch in av[1]]
            for i, one in enumerate(firsts):
                for other in firsts[i + 1:]:
                    if not self.disjoint(one, other):
                        self.problems.append(f"alternatives that can start alike: {sorted(one.atoms | other.atoms)}")
            result = firsts[0]
            for one in firsts[1:]:
                result = result | one
            return result
        if op in REPEATS:
            low, high, body = av[0], av[1], list(av[2])
            alone = Checker.__new__(Checker)
            alone.__dict__.update(self.__dict__, problems=[])
            start = alone.sequence(body, END)
            if start.end:
                self.problems.append("a repeat whose body can match nothing")
            start = First(start.atoms, False)
            if op is sre.POSSESSIVE_REPEAT:
                self.sequence(body, start | END)  # never gives back: only its inside must be deterministic
            else:
                self.sequence(body, start | follow if high > 1 else follow)  # at most once: no next round
                if low != high and not self.disjoint(start, follow):
                    self.problems.append(f"a repeat of {sorted(start.atoms)} followed by what it can match itself")
            return start | follow if low == 0 else start
        self.problems.append(f"{op} (no linear form)")
        return follow

    # -- scans
    def bounded_items(self, items: list[Any]) -> bool:
        for op, av in items:
            if op in REPEATS and (av[1] == sre.MAXREPEAT or av[1] > BOUNDED_MAX or not self.bounded_items(list(av[2]))):
                return False
            if op is sre.SUBPATTERN and not self.bounded_items(list(av[3])):
                return False
            if op in (sre.ASSERT, sre.ASSERT_NOT) and not self.bounded_items(list(av[1])):
                return False
            if op is sre.ATOMIC_GROUP and not self.bounded_items(list(av)):
                return False
            if op is sre.BRANCH and not all(self.bounded_items(list(b)) for b in av[1]):
                return False
            if op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
                return False
        return True

    def _single_atom(self, items: list[Any]) -> str | None:
        while len(items) == 1 and items[0][0] is sre.SUBPATTERN:
            items = list(items[0][1][3])
        if len(items) == 1 and items[0][0] in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
            return self.atom(*items[0])
        return None

    def _run(self, op: Any, av: Any) -> str | None:
        """The set a repeat of one character atom repeats (unwrapping groups), or None."""
        while op is sre.SUBPATTERN and len(av[3]) == 1:
            op, av = av[3][0]
        if op in (sre.MAX_REPEAT, sre.POSSESSIVE_REPEAT):
            return self._single_atom(list(av[2]))
        return None

    def run(self) -> list[str]:
        items = list(self.tree)
        if len(items) == 1 and self._run(*items[0]) is not None:
            op, av = items[0]
            while op is sre.SUBPATTERN:
                op, av = av[3][0]
            return [] if av[0] <= 1 else ["a run that must be longer than one character"]
        return ["not one repeated character set"]

    def guarded_run(self) -> list[str]:
        items = list(self.tree)
        runs = [i for i, (op, av) in enumerate(items) if self._run(op, av) is not None]
        if len(runs) != 1 or runs[0] == 0:
            return ["not a prefix, one repeated character set and a suffix"]
        at = runs[0]
        guard = self._single_atom([items[at - 1]])
        repeated = self._run(*items[at])
        problems = []
        if not (self.bounded_items(items[:at]) and self.bounded_items(items[at + 1:])):
            problems.append("an unbounded repeat outside the run")
        if guard is None or repeated is None:
            problems.append("the run does not follow one character")
        elif not self.disjoint(First(frozenset({guard}), False), First(frozenset({repeated}), False)):
            problems.append(f"the run {repeated} can hold the character before it, {guard}")
        return problems

    def anchored(self) -> bool:
        first = self.tree[0] if len(self.tree) else None
        return first is not None and first[0] is sre.AT and (
            first[1] is sre.AT_BEGINNING_STRING or (first[1] is sre.AT_BEGINNING and not self.tree.state.flags & re.MULTILINE))


@cache
def _overlap(a: tuple[str, ...], b: tuple[str, ...], flags: int, binary: bool) -> Any:
    """A character both sets of atoms match, or None: tried on every code point (every byte), by re itself."""
    union_a, union_b = "|".join(a), "|".join(b)
    probe = f"(?=(?:{union_a}))(?:{union_b})"
    if binary:
        return re.search(probe.encode("latin-1"), ALL_BYTES, flags)
    return re.search(probe, ALL_TEXT, flags)


def problems_of(form: str, pattern: str | bytes, flags: int = 0, uses: frozenset[str] = frozenset()) -> list[str]:
    checker = Checker(pattern, flags)
    if form == "one-position":
        if uses - ONE_POSITION_METHODS and not checker.anchored():
            return [f"used with {sorted(uses - ONE_POSITION_METHODS)}, which try every position"]
        return checker.deterministic()
    if form == "bounded":
        return [] if checker.bounded_items(list(checker.tree)) else ["an unbounded repeat in a scan"]
    if form == "run":
        return checker.run()
    if form == "guarded-run":
        return checker.guarded_run()
    return [f"unknown form {form}"]


# ---------------------------------------------------------------------------------------------------------------
# The tests


def test_the_scan_finds_the_patterns_it_should() -> None:
    """The scan itself can fail: it sees re.compile stored in a dict, imported uses, direct calls and linear()."""
    by_file: dict[str, list[Site]] = {}
    for site in regex_sites():
        by_file.setdefault(site.file, []).append(site)
    defaults = {site.pattern: site.uses for site in by_file["linter/model/defaults.py"]}
    assert defaults[r"[+-]?[0-9a-fA-F]+"] == {"fullmatch"}  # _JAVA_DIGITS[radix].fullmatch(...)
    validator = [s for s in by_file["linter/model/_spec_validator.py"] if not s.rre2]
    assert validator and all(s.uses == {"search"} for s in validator)  # REGEX_PATTERNS[...].search(data)
    assert any(s.rre2 for s in by_file["linter/engine/suppress.py"])
    assert len(regex_sites()) >= 40


def test_every_regular_expression_is_re2_or_a_proven_linear_form() -> None:
    failures = []
    for site in regex_sites():
        if site.rre2:
            continue
        if site.pattern is None:
            failures.append(f"{site.where()}: a pattern the scan cannot work out: compile it with linear()")
            continue
        entry = DOCUMENTED.get((site.file, site.pattern))
        if entry is None:
            failures.append(f"{site.where()}: {site.pattern!r} is neither RE2 (linear()) nor in DOCUMENTED")
            continue
        if "?" in site.uses and entry[0] == "one-position":  # the scan forms are linear whatever runs them
            failures.append(f"{site.where()}: {site.pattern!r} is used in a way the scan cannot follow")
            continue
        for problem in problems_of(entry[0], site.pattern, site.flags, site.uses):
            failures.append(f"{site.where()}: {site.pattern!r} ({entry[0]}): {problem}")
    assert not failures, "\n".join(failures)


def test_documented_entries_are_all_still_there() -> None:
    found = {(site.file, site.pattern) for site in regex_sites() if not site.rre2}
    stale = [key for key in DOCUMENTED if key not in found]
    assert not stale, f"DOCUMENTED entries no longer in linter/: {stale}"


def test_patterns_given_to_linear_as_constants_compile_in_re2() -> None:
    from linter.parse.linear import linear

    constants = [site for site in regex_sites() if site.rre2 and isinstance(site.pattern, str)]
    assert len(constants) >= 5
    for site in constants:
        assert isinstance(site.pattern, str)
        linear(site.pattern)  # NotLinearError names RE2's reason


@pytest.mark.parametrize(("form", "pattern"), [
    ("one-position", r"^\s*([+-]?[0-9]+)?\s*$"),  # the schema's old integer pattern: 19 s on 30,000 spaces
    ("one-position", r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?)"),  # old double
    ("one-position", r"(a|a)*"),
    ("one-position", r"(?:a*+b|a)*+"),  # possessive, but quadratic: each try of a*+b scans every a
    ("one-position", r"(a*)*"),
    ("one-position", r"(a)\1"),
    ("one-position", r"\d+\s*\w"),  # \w holds the digits
    ("bounded", r"\n\s*\n"),  # the old rules-explain split: quadratic on newlines
    ("bounded", r"(?=a*b)x"),
    ("run", r"\d{2,}"),
    ("guarded-run", r"krpc-lint:\s*+(ignore|ignore-file)\[([^\]]*+)\]"),  # the old suppression pattern
    ("guarded-run", r"\[[^x]*\]"),  # [^x] holds the [
])
def test_the_checks_refuse_patterns_that_backtrack(form: str, pattern: str) -> None:
    assert problems_of(form, pattern, uses=frozenset({"fullmatch"})), pattern


def test_the_checks_refuse_a_scan_of_a_one_position_form() -> None:
    assert problems_of("one-position", r"[0-9]+x", uses=frozenset({"search"}))
    assert not problems_of("one-position", r"^[0-9]+x", uses=frozenset({"search"}))
    assert problems_of("one-position", r"^[0-9]+x", re.MULTILINE, uses=frozenset({"search"}))


@pytest.mark.parametrize(("form", "pattern"), [
    ("one-position", r"^\s*(?:[+-]?[0-9]+\s*)?$"),
    ("one-position", r"(?:ab|c)*d"),
    ("one-position", r"a*+a"),
    ("bounded", r"(?<=[a-z])(?=[A-Z])"),
    ("run", r"\d+"),
    ("guarded-run", r"\[\d+\]"),
])
def test_the_checks_accept_linear_forms(form: str, pattern: str) -> None:
    assert problems_of(form, pattern, uses=frozenset({"fullmatch"})) == []


# -- the reproducers, timed at two sizes: a ratio, never a limit in seconds


def _seconds(run: Callable[[], object], repeat: int = 7) -> float:
    """The least CPU time of a few runs (this process's own: the other jobs on a shared machine do not count)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def _ratio(make: Callable[[int], Callable[[], object]], n: int) -> tuple[float, float, float]:
    small, large = _seconds(make(n)), _seconds(make(4 * n))
    return large / max(small, 1e-9), small, large


LINEAR = 8.0  # 4x the input: linear about 4, quadratic 16 (8 is their geometric middle)


def test_the_schemas_integer_pattern_is_linear() -> None:
    """apiKey of spaces and a letter: both validators (the generated one, jsonschema's when it fails)."""
    from linter.model.schema import is_well_formed, structure_issues

    def make(n: int) -> Callable[[], object]:
        document = {"name": "X", "type": "request", "apiKey": " " * n + "x", "validVersions": "0"}
        return lambda: (is_well_formed(document), structure_issues(document))

    assert structure_issues({"name": "X", "type": "request", "apiKey": " " * 30 + "x", "validVersions": "0"})
    ratio, small, large = _ratio(make, 100_000)
    assert ratio < LINEAR, (ratio, small, large)


def test_java_double_defaults_are_linear() -> None:
    from linter.model.defaults import DefaultError, parse_float_default

    cases = ("{}x", "0x{}", ".{}e", "1.{}x", "0x1.{}pq")

    def make(n: int) -> Callable[[], object]:
        texts = [case.format("1" * n) for case in cases]

        def run() -> None:
            for text in texts:
                with pytest.raises(DefaultError):
                    parse_float_default(text)
        return run

    ratio, small, large = _ratio(make, 10_000)
    assert ratio < LINEAR, (ratio, small, large)


@pytest.mark.parametrize("shape", ["[", "[!", "*a", "[z-a", "*?"])
def test_config_globs_are_linear_in_the_glob(shape: str) -> None:
    from linter.engine.config import Config
    from linter.parse.globs import glob_matcher

    paths = ["specs/" + "a" * 500 + "/FooRequest.json", "x/" * 300]

    def make(n: int) -> Callable[[], object]:
        glob = shape * (n // len(shape))

        def run() -> None:
            glob_matcher.cache_clear()
            config = Config(exclude=(glob,))
            for path in paths:
                config.excluded(path)
        return run

    ratio, small, large = _ratio(make, 8_000)
    assert ratio < LINEAR, (ratio, small, large)


def test_config_globs_are_linear_in_the_path() -> None:
    from linter.engine.config import Config

    config = Config(exclude=("*a*a*a*a*b", "**/test/**", "[!x]*[a-c]?*.json"))

    def make(n: int) -> Callable[[], object]:
        paths = ["a" * n, "a/" * (n // 2), "test" * (n // 4)]
        return lambda: [config.excluded(path) for path in paths]

    ratio, small, large = _ratio(make, 200_000)
    assert ratio < LINEAR, (ratio, small, large)


def test_suppression_comments_are_linear() -> None:
    from linter.engine.suppress import parse_suppressions

    def make(n: int) -> Callable[[], object]:
        text = "{} /* " + "krpc-lint:ignore[" * n + " */\n"
        return lambda: parse_suppressions(text, lambda offset: (1, offset))

    ratio, small, large = _ratio(make, 20_000)
    assert ratio < LINEAR, (ratio, small, large)


def test_rule_prose_paragraphs_are_linear() -> None:
    from linter.cli.main import _paragraphs

    def make(n: int) -> Callable[[], object]:
        text = "a" + "\n" * n + " b" + "\n \t" * n + "c"
        return lambda: _paragraphs(text)

    ratio, small, large = _ratio(make, 50_000)
    assert ratio < LINEAR, (ratio, small, large)


# -- globs mean what fnmatch means


GLOB_TABLE = [
    ("**/test/**", "specs/test/FooRequest.json", True),
    ("**/test/**", "test/FooRequest.json", False),  # fnmatch's meaning: "**/" needs a "/" before test
    ("test/**", "vendor/test/Foo.json", True),
    ("schemas/*.json", "vendor/schemas/odd.json", True),
    ("schemas/*.json", "schemas/deep/odd.json", True),  # * crosses "/" as in fnmatch
    ("*.json", "a/b.json", True),
    ("Foo?.json", "Foo1.json", True),
    ("Foo?.json", "Foo12.json", False),
    ("[!a]*.json", "bFoo.json", True),
    ("[!a]*.json", "aFoo.json", False),
    ("[a-c]x", "bx", True),
    ("[c-a]x", "bx", False),  # a reversed range is dropped
    ("[]]x", "]x", True),
    ("[x", "[x", True),  # never closed: a plain "["
    ("a\\b", "a\\b", True),  # no escapes
    ("metadata/**", "metadata", False),
    ("", "", True),
]


@pytest.mark.parametrize(("glob", "path", "expected"), GLOB_TABLE)
def test_glob_table(glob: str, path: str, expected: bool) -> None:
    from linter.parse.globs import glob_matcher

    assert glob_matcher((glob,), anywhere=True)(path) is expected
    assert expected is (fnmatch.fnmatch(path, glob) or fnmatch.fnmatch(path, f"*/{glob}"))


_GLOB_ALPHABET = "ab/.-!^]\\[*?xé"


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(st.text(_GLOB_ALPHABET, max_size=9), st.lists(st.text("ab/.-!^]\\[xé\n", max_size=8), max_size=6))
def test_globs_match_as_fnmatch_does(glob: str, paths: list[str]) -> None:
    from linter.parse.globs import glob_matcher

    plain, anywhere = glob_matcher((glob,)), glob_matcher((glob,), anywhere=True)
    for path in [*paths, *_paths_like(glob)]:
        assert plain(path) is fnmatch.fnmatchcase(path, glob), (glob, path)
        assert anywhere(path) is (fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, f"*/{glob}"))


def _paths_like(glob: str) -> Iterator[str]:
    """Paths built from the glob (stars and marks filled in), so that matches are common, not rare."""
    for fill in ("", "a", "b/"):
        yield glob.replace("*", fill).replace("?", "a")
        yield "x/" + glob.replace("*", fill).replace("?", "/")


def test_globs_beyond_what_re2_holds_are_a_config_error(tmp_path: Path) -> None:
    from linter.engine.config import ConfigError, load_config
    from linter.parse.globs import MAX_GLOB_CHARS

    config = tmp_path / ".krpc-lint.yaml"
    config.write_text(f"exclude: ['{'?' * (MAX_GLOB_CHARS + 1)}']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="exclude"):
        load_config(str(config))
