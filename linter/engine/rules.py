"""Rules: one YAML unit each (id, title, docs, examples, a check and a lifecycle status), loaded into
``Rule``s.

A rule's check is either a named function of ``linter.engine.checks`` with options (validated against
the check's options schema), or a declarative JSON Schema condition on a node (``on: message | field |
struct``) with a message template. Users write their own packs in the same format.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.engine.cache import default_cache_dir, read_json, write_json
from linter.engine.checks import ALIASES, CHECKS, CheckDef, lookup, options_problem
from linter.engine.declarative import compiled, declarative_runner
from linter.engine.patterns import LITERAL_KEYWORDS, compile_linear
from linter.engine.templates import RuleError, render, template_fields
from linter.model.targets import DEFAULT_TARGET, TARGETS, release_order
from linter.parse.discovery import files_below
from linter.parse.files import InputError, read_regular
from linter.vocabulary import PROFILES, SEVERITIES, STATUSES, in_profile

if TYPE_CHECKING:
    from linter.engine.config import Config

__all__ = ["NODE_KINDS", "Example", "Rule", "RuleError", "RuleSet", "builtin_compat_rules", "builtin_pack_dir",
           "in_force", "load_pack", "render", "template_fields", "unsafe_schema"]  # render: fills rules' messages

NODE_KINDS = ("message", "field", "struct")
_REQUIRED = ("id", "name", "title", "severity", "category", "profiles", "rationale", "check")
_OPTIONAL = ("hint", "references", "examples", "kafka", "status", "replaced-by", "fixable", "fix")
PACK_FORMAT = 5  # what a rule file may hold and how it is checked: a new format invalidates cached packs


@dataclass(frozen=True)
class Example:
    """A spec text (or a directory of spec texts) a rule must flag (bad) or accept (good)."""

    kind: str  # "bad" | "good"
    files: dict[str, str | bytes]  # file name -> content; one entry for single-file examples

    @property
    def texts(self) -> dict[str, str]:
        """The files as docs show them: bytes (an example that is no UTF-8 text) as "(bytes) <hex>"."""
        return {name: text if isinstance(text, str) else f"(bytes) {text.hex()}" for name, text in self.files.items()}


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
    kafka_until: str | None = None  # the last release it applies to (a test Kafka dropped, a listener it removed)
    status: str = "stable"  # one of STATUSES
    replaced_by: str | None = None  # the rule (id or name) to use instead of a deprecated or removed one
    fixable: bool = False  # its findings carry the edit that fixes them (``lint --fix``, ``--diff``)
    fix_note: str = ""  # a fixable rule's ``fix``: what its edit does and why it keeps every version's bytes

    @property
    def check_def(self) -> CheckDef | None:
        """The named check the rule calls, or ``None`` for a declarative, compat or wire check."""
        function = self.check.get("function")
        return CHECKS[function] if function is not None else None

    @property
    def scope(self) -> str:
        if "compat" in self.check:
            return "compat"  # decided by ``linter.compat`` when two revisions are compared
        if "wire" in self.check:
            return "wire"  # decided by ``linter.wirecheck`` on the bytes of captured frames
        definition = self.check_def
        return definition.scope if definition is not None else "file"

    @cached_property
    def run(self) -> Callable[[Any], Iterable[Any]]:
        """The check as one call on a file or directory context, worked out once per rule (a lint makes
        one call per rule and file): the check function with its options bound, or the declarative
        check with its schema compiled."""
        definition = self.check_def
        if definition is not None:
            fn, options = definition.fn, self.check.get("options") or {}
            return lambda target: fn(target, options)
        return declarative_runner(self.check)

    def applies_to(self, release: str | None) -> bool:
        """Whether the rule holds for ``--kafka-version release``: within ``kafka.since`` .. ``kafka.until``, in the
        order of ``TARGETS``. Without a release (``any``), a rule holds unless Kafka dropped it (``until``): a
        rule of old releases only would flag today's specs."""
        if release is None or release == DEFAULT_TARGET or release not in TARGETS:
            return self.kafka_until is None
        return (self.kafka_since is None or release_order(self.kafka_since) <= release_order(release)) and \
            (self.kafka_until is None or release_order(release) <= release_order(self.kafka_until))

    @property
    def example_release(self) -> str | None:
        """The ``--kafka-version`` its examples and fixture are linted under: the first or last release it holds
        for (``None``: any)."""
        return self.kafka_since or self.kafka_until

    @property
    def releases_text(self) -> str:
        """Which releases it stands for, as docs and ``rules explain`` say it ("" for every release)."""
        span = " and ".join(part for part in (f"since {self.kafka_since}" if self.kafka_since else "",
                                              f"up to {self.kafka_until}" if self.kafka_until else "") if part)
        who = "Kafka's tests assert" if self.category == "kafka-tests" else "Kafka's generator enforces"
        return f"{who} it {span}" if span else ""

    def matches(self, selector: str) -> bool:
        """Selectors: ALL, an id or id prefix (KL3), a name, a category or a profile."""
        return (selector == "ALL" or self.id.startswith(selector) or selector in (self.name, self.category)
                or in_profile(selector, self.profiles))

    def named_by(self, selectors: Iterable[str]) -> bool:
        """Whether one of ``selectors`` is this rule's id or name (not a prefix, category or profile)."""
        return any(selector in (self.id, self.name) for selector in selectors)

    @property
    def replacement(self) -> str:
        """What to use instead, as the end of a sentence: "; use X instead", or "" when nothing replaces it."""
        return f"; use {self.replaced_by} instead" if self.replaced_by else ""

    @property
    def status_text(self) -> str:
        """The status as listings and docs show it: "stable", "preview", "deprecated; use X instead"..."""
        return self.status + self.replacement

    @property
    def listed_title(self) -> str:
        """The title as tables of rules show it: followed by the status unless the rule is stable."""
        return self.title if self.status == "stable" else f"{self.title} ({self.status_text})"


# --- lifecycle -------------------------------------------------------------------------------

_WARNED: set[str] = set()  # deprecated rules already warned about in this process


def in_force(chosen: list[Rule], config: Config) -> list[Rule]:
    """The rules of ``chosen`` (a selection by profile, ``select`` and ``ignore``) that run, by status: a
    removed rule never, a preview rule only when ``select`` names it (id or name) or ``preview`` is on, a
    stable or deprecated rule always; and by release, only where it holds for ``kafka_version``
    (``Rule.applies_to``). ``select`` naming a removed rule is a ``RuleError``; naming a deprecated one, or one
    that does not hold for the release, warns once (to the ``linter`` log, which prints the line on stderr when
    unconfigured)."""
    kept = []
    for rule in chosen:
        named = rule.named_by(config.select)
        if not rule.applies_to(config.kafka_version):
            if named and rule.id not in _WARNED:
                _WARNED.add(rule.id)
                release = f"--kafka-version {config.kafka_version}" if config.kafka_version else "no --kafka-version"
                _warn(f"krpc-lint: warning: {_where(rule, config)}rule {rule.id} ({rule.name}) does not run with "
                      f"{release}: {rule.releases_text} (--kafka-version {rule.example_release} runs it)")
            continue
        if rule.status == "removed":
            if named:
                raise RuleError(f"{_where(rule, config)}rule {rule.id} ({rule.name}) was removed{rule.replacement}")
            continue
        if rule.status == "preview" and not (named or config.preview):
            continue
        if rule.status == "deprecated" and named and rule.id not in _WARNED:
            _WARNED.add(rule.id)
            _warn(f"krpc-lint: warning: {_where(rule, config)}rule {rule.id} ({rule.name}) is deprecated"
                  f"{rule.replacement}")
        kept.append(rule)
    return kept


def _where(rule: Rule, config: Config) -> str:
    """The config file, as a message's prefix, when it is what selects the rule."""
    return f"{config.source}: " if config.source and rule.named_by(config.configured) else ""


def _warn(message: str) -> None:
    import logging  # only when a deprecated rule is named: logging costs a cold start milliseconds

    logging.getLogger("linter").warning(message)


# --- packs -----------------------------------------------------------------------------------


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
    try:
        return sorted(path for directory, regular, others in files_below(str(location))
                      for path in _yaml_files(directory, regular, others))
    except InputError as exc:  # a directory chain deeper than the walker goes
        raise RuleError(f"rule pack {exc}") from None


def _yaml_files(directory: str, regular: list[str], others: list[str]) -> Iterator[str]:
    """The ``*.yaml`` files of one directory of a pack: regular ones, and links to regular ones."""
    yield from (os.path.join(directory, name) for name in regular if name.endswith(".yaml"))
    yield from (path for path in (os.path.join(directory, name) for name in others if name.endswith(".yaml"))
                if os.path.isfile(path))


def load_pack(location: Path | str, cache_dir: Path | None = None) -> list[Rule]:
    """Load every rule of a pack (a directory of YAML files, or one file), cached by content in ``cache_dir``
    (default: the user's cache directory) once it has been validated."""
    files = _pack_files(Path(location))
    digest = hashlib.sha256(_checks_key())  # a new check library or rule format invalidates the cache
    for path in files:
        stat = os.stat(path)
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return _load_cached(tuple(files), (cache_dir or default_cache_dir()) / f"rules-{digest.hexdigest()[:32]}.json")


@lru_cache(maxsize=1)
def _checks_key() -> bytes:
    """The checks' names, scopes and options schemas, and the rule format: what a valid pack depends on."""
    checks = {name: [definition.scope, definition.options_schema] for name, definition in CHECKS.items()}
    return json.dumps([PACK_FORMAT, checks, ALIASES], sort_keys=True).encode()


@lru_cache(maxsize=16)
def _load_cached(files: tuple[str, ...], cache: Path) -> list[Rule]:
    raw_rules = read_json(cache)
    if raw_rules is None:
        raw_rules = [(path, _read_yaml(Path(path))) for path in files]
        rules = [_rule_from(data, path) for path, data in raw_rules]  # full validation, then cache
        write_json(cache, raw_rules)
    else:
        rules = [_rule_from(data, path, validated=True) for path, data in raw_rules]
    _check_unique(rules)
    return rules


def _read_yaml(path: Path) -> Any:
    # Only for a pack not cached yet: ruamel costs a cold start.
    from ruamel.yaml.error import YAMLError

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
    fixable, fix_note = _fixability(data, source)
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
        check=_canonical(check),
        examples=tuple(_examples(examples, source)),
        kafka_messages=tuple((data.get("kafka") or {}).get("messages") or ()),
        source=source,
        **_kafka_span(data.get("kafka"), source),
        fixable=fixable,
        fix_note=fix_note,
        **_lifecycle(data, source),
    )


def _canonical(check: dict[str, Any]) -> dict[str, Any]:
    """The check with a check's former name (``ALIASES``) replaced by its name."""
    function = check.get("function")
    return {**check, "function": ALIASES[function]} if function in ALIASES else check


def _fixability(data: dict[str, Any], source: str) -> tuple[bool, str]:
    """``fixable`` (default false) and ``fix``, the text saying what the fix does, which only a fixable rule has."""
    fixable, note = data.get("fixable", False), data.get("fix", "")
    if not isinstance(fixable, bool):
        raise RuleError(f"{source}: fixable must be true or false")
    if not isinstance(note, str) or (note.strip() and not fixable):
        raise RuleError(f"{source}: fix must be text, on a rule with fixable: true")
    return fixable, " ".join(note.split())


def _lifecycle(data: dict[str, Any], source: str) -> dict[str, Any]:
    """``status`` (default stable) and ``replaced-by`` (a rule id or name, for a deprecated or removed rule)."""
    status, replaced_by = data.get("status", "stable"), data.get("replaced-by")
    if status not in STATUSES:
        raise RuleError(f"{source}: status must be one of {', '.join(STATUSES)}")
    if replaced_by is not None and (not isinstance(replaced_by, str) or not replaced_by.strip()):
        raise RuleError(f"{source}: replaced-by must be a rule id or name")
    if replaced_by is not None and status not in ("deprecated", "removed"):
        raise RuleError(f"{source}: replaced-by is only for a deprecated or removed rule (status: {status})")
    return {"status": status, "replaced_by": replaced_by.strip() if replaced_by else None}


def _kafka_span(kafka: Any, source: str) -> dict[str, Any]:
    """``kafka.since`` and ``kafka.until`` (``kafka_since``, ``kafka_until``), the first no later than the second."""
    since, until = _kafka_release(kafka, "since", source), _kafka_release(kafka, "until", source)
    if since is not None and until is not None and release_order(since) > release_order(until):
        raise RuleError(f"{source}: kafka.since ({since}) is later than kafka.until ({until}): the rule would never run")
    return {"kafka_since": since, "kafka_until": until}


def _kafka_release(kafka: Any, key: str, source: str) -> str | None:
    """``kafka.since`` or ``kafka.until``: a release of ``TARGETS`` other than ``any``."""
    value = (kafka or {}).get(key) if isinstance(kafka, dict) else None
    if value is None:
        return None
    if str(value) not in TARGETS or str(value) == DEFAULT_TARGET:
        raise RuleError(f"{source}: kafka.{key} must be one of {', '.join(t for t in TARGETS if t != DEFAULT_TARGET)}")
    return str(value)


def _examples(examples: dict[str, Any], source: str) -> Iterator[Example]:
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
    for kind, what in (("compat", "change name"), ("wire", "deviation name")):
        if kind in check:
            if not isinstance(check[kind], str) or set(check) != {kind}:
                raise RuleError(f"{source}: a {kind} check is {{{kind}: <{what}>}}")
            return
    if "function" in check:
        _validate_function(check, source)
        return
    if "schema" not in check or check.get("on") not in NODE_KINDS or "message" not in check:
        raise RuleError(f"{source}: a check is either {{function, options}} or {{on: message|field|struct, "
                        "schema, message}")
    _validate_schema(check["schema"], source)
    template_fields(str(check["message"]), source)


def _validate_function(check: dict[str, Any], source: str) -> None:
    """A named check that exists, given options its schema accepts (a misspelt option is an error here,
    not a rule that silently finds nothing)."""
    function = check["function"]
    definition = lookup(function) if isinstance(function, str) else None
    if definition is None:
        raise RuleError(f"{source}: unknown check function {function!r} (available: {', '.join(sorted(CHECKS))})")
    extra = sorted(str(key) for key in check if key not in ("function", "options"))
    if extra:
        raise RuleError(f"{source}: a check is {{function, options}}; unknown {', '.join(extra)}")
    options = check.get("options", {})
    if not isinstance(options, dict):
        raise RuleError(f"{source}: check options must be a mapping")
    problem = options_problem(definition, options)
    if problem is not None:
        raise RuleError(f"{source}: {problem}")


def _validate_schema(schema: Any, source: str) -> None:
    from jsonschema import Draft202012Validator, SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise RuleError(f"{source}: invalid schema: {exc.message}") from None
    except RecursionError:
        raise RuleError(f"{source}: invalid schema: nested too deeply") from None
    problem = unsafe_schema(schema)
    if problem is not None:
        raise RuleError(f"{source}: {problem}")
    _compiles(schema, source)


def _compiles(schema: Any, source: str) -> None:
    """Compile the schema now, as the lint will: what the compiler cannot take (a schema nested past what
    the generated code may nest) is the pack's error, not an internal error on every spec."""
    try:
        compiled(json.dumps(schema, sort_keys=True))
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise RuleError(f"{source}: the schema cannot be compiled ({type(exc).__name__}: nested too deeply?)"
                        ) from None
    except Exception as exc:  # noqa: BLE001 - fastjsonschema's own errors vary
        raise RuleError(f"{source}: the schema cannot be compiled: {exc}") from None


def unsafe_schema(schema: Any) -> str | None:
    """Why a pack's schema may not run on untrusted specs, or ``None``: a ``$ref`` or ``$id`` that leaves the
    schema (no network, no file), ``patternProperties`` (facts have fixed names), or a ``pattern`` that a
    linear-time engine (RE2) cannot run, such as a back-reference."""
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
        by_scope: dict[str, list[Rule]] | None = self.__dict__.get("_by_scope")
        if by_scope is None:
            by_scope = self.__dict__["_by_scope"] = {}
            for rule in self.rules:
                by_scope.setdefault(rule.scope, []).append(rule)
        return by_scope.get(scope, [])
