"""Rules: one YAML unit each (id, title, docs, examples, and a check), loaded into ``Rule``s.

A rule's check is either a named function of ``linter.engine.checks`` with options, or a
declarative JSON Schema condition on a node (``on: message | field | struct``) with a
message template. Users write their own packs in the same format.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from linter.engine import header_checks, record_checks  # noqa: F401 - they register their checks
from linter.engine.checks import CHECKS
from linter.engine.levels import PROFILES, SEVERITIES
from linter.engine.templates import RuleError, render, template_fields  # noqa: F401 - the rule API
from linter.parse.files import read_regular

NODE_KINDS = ("message", "field", "struct")
_REQUIRED = ("id", "name", "title", "severity", "category", "profiles", "rationale", "check")
_OPTIONAL = ("hint", "references", "examples", "kafka")


@dataclass(frozen=True)
class Example:
    """A spec text (or a directory of spec texts) a rule must flag (bad) or accept (good)."""

    kind: str  # "bad" | "good"
    files: dict[str, str | bytes]  # file name -> content; one entry for single-file examples


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    title: str
    severity: str
    category: str
    profiles: tuple[str, ...]
    rationale: str
    hint: str
    references: tuple[str, ...]
    check: dict[str, Any]
    examples: tuple[Example, ...] = ()
    kafka_messages: tuple[str, ...] = ()
    source: str = ""
    kafka_since: str | None = None  # the first release whose generator enforces it; examples are linted so

    @property
    def scope(self) -> str:
        if "compat" in self.check:
            return "compat"  # decided by ``linter.compat`` when two revisions are compared
        function = self.check.get("function")
        return CHECKS[function].scope if function else "file"

    @cached_property
    def run(self) -> Callable[[Any], Iterable[Any]]:
        """The check as one call on a file or directory context, worked out once per rule (a lint makes
        one call per rule and file): the check function with its options bound, or the declarative
        check with its schema compiled."""
        function = self.check.get("function")
        if function is not None:
            fn, options = CHECKS[function].fn, self.check.get("options") or {}
            return lambda target: fn(target, options)
        from linter.engine.declarative import (
            declarative_runner,  # it imports this module
        )

        return declarative_runner(self.check)

    def matches(self, selector: str) -> bool:
        """Selectors: ALL, an id or id prefix (KL3), a name, a category or a profile."""
        return (selector == "ALL" or self.id.startswith(selector) or selector in (self.name, self.category)
                or selector in self.profiles)


def builtin_pack_dir() -> Path:
    """The built-in pack: ``linter/_rules`` in an installed wheel, ``rules/`` in a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_rules", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise RuleError("the built-in rule pack is missing (expected rules/ next to the linter package)")


def builtin_compat_rules() -> list[Rule]:
    """The built-in rules that describe a kind of change (``check: {compat: KIND}``): what compat reports."""
    return [rule for rule in load_pack(builtin_pack_dir()) if rule.scope == "compat"]


def _pack_files(location: Path) -> list[str]:
    """The YAML files of a pack, sorted (as strings: a lint lists the built-in pack every run)."""
    if location.is_file():
        return [str(location)]
    if not location.is_dir():
        raise RuleError(f"{location}: rule pack not found")
    return sorted(os.path.join(directory, name) for directory, _, names in os.walk(location)
                  for name in names if name.endswith(".yaml") and os.path.isfile(os.path.join(directory, name)))


def load_pack(location: Path | str) -> list[Rule]:
    """Load every rule of a pack (a directory of YAML files, or one file), cached by content."""
    files = _pack_files(Path(location))
    digest = hashlib.sha256(_CHECKS_KEY)  # a new check library invalidates the cache
    for path in files:
        stat = os.stat(path)
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return _load_cached(tuple(files), digest.hexdigest())


_CHECKS_KEY = ",".join(sorted(CHECKS)).encode()


@lru_cache(maxsize=16)
def _load_cached(files: tuple[str, ...], key: str) -> list[Rule]:
    cache = _cache_file(key)
    raw_rules = _read_cache(cache)
    if raw_rules is None:
        raw_rules = [(path, _read_yaml(Path(path))) for path in files]
        rules = [_rule_from(data, path) for path, data in raw_rules]  # full validation, then cache
        _write_cache(cache, raw_rules)
    else:
        rules = [_rule_from(data, path, validated=True) for path, data in raw_rules]
    _check_unique(rules)
    return rules


def _cache_file(key: str) -> Path | None:
    from linter.engine.cache import default_cache_dir

    return default_cache_dir() / f"rules-{key[:32]}.json"


def _read_cache(cache: Path | None) -> list | None:
    if cache is None:
        return None
    try:
        return json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_cache(cache: Path | None, data: list) -> None:
    if cache is None:
        return
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(cache)
    except OSError:
        pass  # a read-only home is fine: we just parse the YAML every time


def _read_yaml(path: Path) -> Any:
    from ruamel.yaml import YAMLError

    from linter.parse.yamlfile import load_yaml

    try:
        return load_yaml(read_regular(path).decode("utf-8"))
    except (YAMLError, OSError, ValueError) as exc:
        raise RuleError(f"{path}: cannot read rule: {exc}") from None


def _rule_from(data: Any, source: str, validated: bool = False) -> Rule:
    if not isinstance(data, dict):
        raise RuleError(f"{source}: a rule file must be a mapping")
    missing = [key for key in _REQUIRED if key not in data]
    unknown = [key for key in data if key not in _REQUIRED + _OPTIONAL]
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(unknown)}"] if unknown else [])
        raise RuleError(f"{source}: {'; '.join(parts)}")
    if data["severity"] not in SEVERITIES:
        raise RuleError(f"{source}: severity must be one of {', '.join(SEVERITIES)}")
    profiles = tuple(data["profiles"] or ())
    if any(p not in PROFILES for p in profiles):
        raise RuleError(f"{source}: profiles must be among {', '.join(PROFILES)}")
    check = data["check"]
    if not validated:  # checked once when the YAML was read; the cache holds only valid packs
        _validate_check(check, source)
    examples = data.get("examples") or {}
    return Rule(
        id=str(data["id"]),
        name=str(data["name"]),
        title=str(data["title"]).strip(),
        severity=data["severity"],
        category=str(data["category"]),
        profiles=profiles,
        rationale=str(data["rationale"]).strip(),
        hint=str(data.get("hint") or "").strip(),
        references=tuple(str(r) for r in data.get("references") or ()),
        check=check,
        examples=tuple(_examples(examples, source)),
        kafka_messages=tuple((data.get("kafka") or {}).get("messages") or ()),
        source=source,
        kafka_since=_kafka_since(data.get("kafka"), source),
    )


def _kafka_since(kafka: Any, source: str) -> str | None:
    since = (kafka or {}).get("since") if isinstance(kafka, dict) else None
    if since is None:
        return None
    from linter.model.targets import TARGETS

    if str(since) not in TARGETS:
        raise RuleError(f"{source}: kafka.since must be one of {', '.join(TARGETS)}")
    return str(since)


def _examples(examples: dict[str, Any], source: str):
    if not isinstance(examples, dict):
        raise RuleError(f"{source}: examples must map bad/good to lists")
    for kind in ("bad", "good"):
        for item in examples.get(kind) or ():
            if isinstance(item, str):
                yield Example(kind, {"Example.json": item})
            elif isinstance(item, dict) and isinstance(item.get("hex"), str):
                try:
                    yield Example(kind, {"Example.json": bytes.fromhex(item["hex"])})
                except ValueError:
                    raise RuleError(f"{source}: {kind} example hex is not valid hex") from None
            elif isinstance(item, dict) and isinstance(item.get("files"), dict):
                yield Example(kind, {str(k): str(v) for k, v in item["files"].items()})
            else:
                raise RuleError(f"{source}: each {kind} example is a spec text, {{hex: ...}} or {{files: {{name: text}}}}")


def _validate_check(check: Any, source: str) -> None:
    if not isinstance(check, dict):
        raise RuleError(f"{source}: check must be a mapping")
    if "compat" in check:
        if not isinstance(check["compat"], str) or set(check) != {"compat"}:
            raise RuleError(f"{source}: a compat check is {{compat: <change name>}}")
        return
    if "function" in check:
        if check["function"] not in CHECKS:
            raise RuleError(f"{source}: unknown check function {check['function']!r} "
                            f"(available: {', '.join(sorted(CHECKS))})")
        if not isinstance(check.get("options", {}), dict):
            raise RuleError(f"{source}: check options must be a mapping")
        return
    if "schema" not in check or check.get("on") not in NODE_KINDS or "message" not in check:
        raise RuleError(f"{source}: a check is either {{function, options}} or {{on: message|field|struct, "
                        "schema, message}")
    from jsonschema import Draft202012Validator, SchemaError

    try:
        Draft202012Validator.check_schema(check["schema"])
    except SchemaError as exc:
        raise RuleError(f"{source}: invalid schema: {exc.message}") from None
    except RecursionError:
        raise RuleError(f"{source}: invalid schema: nested too deeply") from None
    problem = unsafe_schema(check["schema"])
    if problem is not None:
        raise RuleError(f"{source}: {problem}")
    template_fields(str(check["message"]), source)
    _compiles(check["schema"], source)


def _compiles(schema: Any, source: str) -> None:
    """Compile the schema now, as the lint will: what the compiler cannot take (a schema nested past what
    the generated code may nest) is the pack's error, not an internal error on every spec."""
    from linter.engine.declarative import _compiled  # it imports this module

    try:
        _compiled(json.dumps(schema, sort_keys=True))
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise RuleError(f"{source}: the schema cannot be compiled ({type(exc).__name__}: nested too deeply?)"
                        ) from None
    except Exception as exc:  # noqa: BLE001 - fastjsonschema's own errors vary
        raise RuleError(f"{source}: the schema cannot be compiled: {exc}") from None


def unsafe_schema(schema: Any) -> str | None:
    """Why a pack's schema may not run on untrusted specs, or ``None``: a ``$ref`` or ``$id`` that leaves the
    schema (no network, no file), ``patternProperties`` (facts have fixed names), or a ``pattern`` that a
    linear-time engine (RE2) cannot run, such as a back-reference."""
    from linter.engine.patterns import LITERAL_KEYWORDS, compile_linear

    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and not (isinstance(value, str) and value.startswith("#")):
                return f"{key} {value!r} points outside the schema; only local references (#/...) are allowed"
            if key in ("$id", "id") and isinstance(value, str) and ":" in value:
                return f"{key} {value!r}: a rule's schema may not name a base URI"
            if key == "patternProperties":
                return "patternProperties is not supported: facts have fixed names"
            if key == "pattern" and isinstance(value, str):
                problem = compile_linear(value)[1]
                if problem is not None:
                    return f"pattern {value!r} cannot run in linear time: {problem}"
            if key not in LITERAL_KEYWORDS:
                stack.append(value)
    return None


def _check_unique(rules: list[Rule]) -> None:
    seen: dict[str, str] = {}
    for rule in rules:
        for key in (rule.id, rule.name):
            if key in seen:
                raise RuleError(f"{rule.source}: {key} is already used by {seen[key]}")
            seen[key] = rule.source


@dataclass
class RuleSet:
    """The rules in force for a run, with their effective severities."""

    rules: list[Rule] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)

    def severity_of(self, rule: Rule) -> str:
        return self.severity.get(rule.id, rule.severity)

    def effective(self, scope: str | None = None) -> dict[str, Rule]:
        """id -> rule with its effective severity (all rules, or one scope): what SARIF describes."""
        rules = self.rules if scope is None else self.of_scope(scope)
        return {rule.id: replace(rule, severity=self.severity_of(rule)) for rule in rules}

    def of_scope(self, scope: str) -> list[Rule]:
        """The rules that run per file, per directory or on the run itself ("meta"), worked out once."""
        by_scope = self.__dict__.get("_by_scope")
        if by_scope is None:
            by_scope = self.__dict__["_by_scope"] = {}
            for rule in self.rules:
                by_scope.setdefault(rule.scope, []).append(rule)
        return by_scope.get(scope, [])
