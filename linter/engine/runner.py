"""Run the rules over files and directories: ``lint(paths, config) -> Report``."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from linter.engine.cache import ResultCache
from linter.engine.config import Config
from linter.engine.context import DirectoryContext, FileContext, Hit
from linter.engine.finalize import finish, suppress_inline
from linter.engine.findings import Finding, Report
from linter.engine.rules import (
    Rule,
    RuleSet,
    builtin_pack_dir,
    in_force,
    load_pack,
)
from linter.errors import KrpcLintError
from linter.memory import collector_paused
from linter.model.generator import GeneratorFinder
from linter.model.spec import ENTITY_TYPES, LISTENERS
from linter.model.targets import TARGETS, KafkaTarget, target
from linter.parse.discovery import siblings, walk
from linter.parse.document import load_document, read_document
from linter.vocabulary import in_profile, plural


class UsageError(KrpcLintError, ValueError):
    """Bad input to the linter itself (a path that does not exist, an unknown selector).

    Problems in the specs are findings, never exceptions; this is what the CLI exits 2 for.

    >>> try:
    ...     lint(["fixtures/valid"], Config(select=("no-such-rule",)))
    ... except UsageError as exc:
    ...     print(str(exc)[:36])
    unknown rule selector 'no-such-rule'
    """


def all_rules(config: Config | None = None) -> list[Rule]:
    """The built-in pack plus the configured packs, in id order (every profile, not just the config's).

    A rule pack may not reuse an id or name of another rule: that is a ``UsageError``.

    >>> rules = all_rules()
    >>> rules[0].id, rules[0].name
    ('KL001', 'json-syntax')
    >>> rule = next(r for r in rules if r.id == "KL1001")
    >>> rule.name, rule.severity, rule.category, rule.profiles
    ('field-inserted', 'error', 'WIRE_BREAKING', ('kafka', 'recommended', 'strict'))
    """
    rules = list(load_pack(builtin_pack_dir()))
    for pack in (config.rule_packs if config else ()):
        rules.extend(load_pack(pack))
    seen: dict[str, Rule] = {}
    for rule in rules:
        for key in (rule.id, rule.name):
            if key in seen and seen[key] is not rule:
                raise UsageError(f"{rule.source}: rule {key} is already defined in {seen[key].source}")
            seen[key] = rule
    return sorted(rules, key=lambda r: rule_order(r.id))


def rule_order(rule_id: str) -> tuple[str, int, str]:
    """KL005 < KL101 < KL1001: ids compare by their prefix, then by their number."""
    prefix = rule_id.rstrip("0123456789")
    number = rule_id[len(prefix):]
    return (prefix, int(number) if number else -1, rule_id)


def select_rules(config: Config) -> RuleSet:
    """Profile rules, plus ``select``, minus ``ignore``, those in force (status, and the releases they hold for:
    ``kafka.since``/``until``); severities from the config."""
    rules = all_rules(config)
    for selector in (*config.select, *config.ignore, *config.severity):
        if not any(rule.matches(selector) for rule in rules):
            where = f"{config.source}: " if config.source and selector in config.configured else ""
            raise UsageError(f"{where}unknown rule selector {selector!r} (a rule id such as KL301, an id prefix, "
                             "a rule name, a category or a profile)")
    chosen = [r for r in rules if in_profile(config.profile, r.profiles) or any(r.matches(s) for s in config.select)]
    chosen = in_force([r for r in chosen if not any(r.matches(s) for s in config.ignore)], config)
    severity = {}
    for rule in chosen:
        for key, level in config.severity.items():
            if rule.matches(key):
                severity[rule.id] = level
    return RuleSet(chosen, severity)


def kafka_target(config: Config) -> KafkaTarget:
    """The release whose generator the checks stand for; an unknown ``kafka_version`` is a ``UsageError``."""
    try:
        return target(config.kafka_version)
    except KeyError:
        raise UsageError(f"unknown kafka version {config.kafka_version!r} (known: {', '.join(TARGETS)})") from None


def configured_target(config: Config) -> KafkaTarget:
    """``kafka_target`` with the config's extra ``entity-types`` and ``listeners``."""
    base = kafka_target(config)
    return base.extended(config.entity_types, config.listeners) if config.entity_types or config.listeners else base


class TreeTargets:
    """The target of each linted file: the configured one, extended by the enums of the generator in the file's
    tree (``linter.model.generator``); ``notes`` says once per generator where its values came from."""

    def __init__(self, base: KafkaTarget) -> None:
        self.base = base
        self.finder = GeneratorFinder()
        self.by_package: dict[str, KafkaTarget] = {}
        self.notes: list[str] = []

    def of(self, path: str) -> KafkaTarget:
        enums = self.finder.enums_for(os.path.dirname(path) or ".")
        if enums is None:
            return self.base
        found = self.by_package.get(enums.package)
        if found is None:
            found = self.by_package[enums.package] = self.base.extended(enums.entity_types, enums.listeners,
                                                                        enums.types)
            added = [v for v in enums.entity_types if v not in ENTITY_TYPES]
            added += [v for v in enums.listeners if v not in LISTENERS and v not in added]
            added += [v for v in enums.types if v not in TARGETS["any"].message_types and v not in added]
            where = os.path.relpath(enums.package)
            where = enums.package if where.startswith("..") else where
            files = ", ".join(os.path.basename(f) for f in enums.files)
            self.notes.append(f"entity types and listeners from {where}/ ({files}; read as text, not run)"
                              + (f": adds {', '.join(added)}" if added else ""))
        return found


@dataclass
class Collected:
    """The spec files to lint, the directories given whole (so completeness checks may run), and the
    JSON files of those directories that are not specs (skipped, counted)."""

    files: list[Path]
    complete: set[Path]
    skipped: int = 0
    siblings: list[Path] = field(default_factory=list)  # context for files named alone, not linted themselves


def collect_files(paths: Sequence[str | os.PathLike[str]], config: Config) -> Collected:
    """Spec files to lint: files as given, directories by ``linter.parse.discovery``.

    A directory that holds no spec at all is a ``UsageError`` (nothing would be checked) unless
    ``config.allow_empty``."""
    files: list[Path] = []
    complete: set[Path] = set()
    skipped = 0
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = walk(str(path), include=config.included)
            files.extend(Path(spec) for spec in found.specs)
            complete.update(Path(directory).resolve() for directory in found.dirs)
            skipped += len(found.skipped)
            if not found.specs and not config.allow_empty:
                raise UsageError(f"{raw}: no spec files here ({plural(len(found.skipped), 'other JSON file')} "
                                 "skipped); give the spec directory, or --allow-empty to accept none")
        elif os.path.lexists(path):
            files.append(path)  # a FIFO or device named here is reported as unreadable, never read
        else:
            raise UsageError(f"{raw}: no such file or directory")
    unique = list(dict.fromkeys(f for f in files if not config.excluded(str(f))))
    context = _siblings(paths, unique, complete) if config.siblings else []
    return Collected(unique, complete, skipped, context)


def _siblings(paths: Sequence[str | os.PathLike[str]], files: list[Path], complete: set[Path]) -> list[Path]:
    """The other specs of each directory whose files were named one by one (as pre-commit passes them):
    the cross-file rules that compare files (a request bumped without its response, a duplicate apiKey)
    need them. Absence is still claimed only for directories given whole: a file named alone never
    makes its directory complete."""
    named = [Path(raw) for raw in paths if Path(raw).is_file()]
    if not named:
        return []  # directories only: nothing to add (and no file to resolve)
    seen = {f.resolve() for f in files}
    done: set[Path] = set(complete)
    found: list[Path] = []
    for path in named:
        directory = Path(os.path.dirname(path) or ".").resolve()
        if directory in done:
            continue
        done.add(directory)
        for sibling in siblings(str(path)):
            resolved = directory / os.path.basename(sibling)  # a sibling is a regular file there, never a link
            if resolved not in seen:
                seen.add(resolved)
                found.append(Path(sibling))
    return found


def display_paths(files: Sequence[Path]) -> list[str]:
    """How files are named in findings: as the user gave them (an absolute path stays absolute, as ruff and
    buf print it back), normalised (``./specs/../specs/A.json`` is ``specs/A.json``)."""
    return [os.path.normpath(file) for file in files]


def lint(paths: Sequence[str | os.PathLike[str]] | str, config: Config | None = None) -> Report:
    """Lint spec files and directories; every problem becomes a finding, nothing raises for bad specs.

    Directories are walked for ``*.json``; a directory given whole also gets the cross-file
    checks (a request without its response, duplicate apiKeys). ``config`` defaults to
    ``Config()``, the ``recommended`` profile; the API never reads a config file on its own
    (``load_config`` does). A path that does not exist raises ``UsageError``.

    >>> report = lint(["fixtures/valid"])
    >>> report.summary["errors"]
    0
    >>> report = lint("fixtures/invalid/KL301-field-name-pattern.json", Config(ignore=("file-name-matches",)))
    >>> [(f.rule, f.line, f.col, f.severity) for f in report.findings]
    [('KL301', 11, 15, 'error')]
    >>> report.findings[0].message
    'invalid field name "Max_Partitions": use a letter followed by letters and digits'
    """
    with collector_paused():  # until the contexts are freed (by reference counts), so no collection walks them
        return lint_with_contexts(paths, config)[0]


def lint_with_contexts(paths: Sequence[str | os.PathLike[str]] | str,
                       config: Config | None = None) -> tuple[Report, list[FileContext]]:
    """``lint``, also returning the parsed files, for callers that go on to use the model (the codec)."""
    config = config or Config()
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    ruleset = select_rules(config)
    collected = collect_files(paths, config)
    with collector_paused():
        targets = TreeTargets(configured_target(config))
        every = [*collected.files, *collected.siblings]
        contexts = [FileContext(load_document(f, name), targets.of(name), sibling=index >= len(collected.files),
                                file_naming=config.file_naming_of(name))
                    for index, (f, name) in enumerate(zip(every, display_paths(every), strict=True))]
        report = lint_contexts(contexts, ruleset, config, complete={str(d) for d in collected.complete})
        report.skipped = collected.skipped
        report.notes = targets.notes
        return report, [ctx for ctx in contexts if not ctx.sibling]


def lint_texts(texts: Mapping[str, str | bytes], config: Config | None = None, *, complete: bool = True,
               ruleset: RuleSet | None = None, context: Collection[str] = ()) -> Report:
    """Lint in-memory spec texts (name -> content) as one directory; used by examples and tests.

    ``complete=False`` treats the texts as part of a larger directory, so the cross-file checks
    that need every file (a request without its response) stay quiet. ``ruleset`` is
    ``select_rules(config)`` when the caller already has it (the audit lints a thousand blobs). The texts
    named in ``context`` are only context, as the siblings of a file named alone to ``lint``: their own
    findings are not reported, only what the other texts break in them (the language server lints one buffer
    so).

    >>> spec = '''{"name": "LedgerSummary", "type": "data", "validVersions": "0", "flexibleVersions": "0+",
    ...   "fields": [{"name": "SegmentCount", "type": "int32", "versions": "0+"}]}'''
    >>> report = lint_texts({"LedgerSummary.json": spec}, Config(profile="strict"))
    >>> [(f.rule, f.name, f.line, f.message) for f in report.findings]
    [('KL801', 'missing-about', 2, 'field SegmentCount has no "about" documentation')]
    """
    config = config or Config()
    whole = {str(Path.cwd())} if complete else set()
    contexts = _text_contexts(texts, config, frozenset(context))
    return lint_contexts(contexts, ruleset or select_rules(config), config, complete=whole)


def lint_files(files: Mapping[str, bytes], config: Config) -> tuple[Report, list[FileContext]]:
    """``lint_with_contexts`` of in-memory spec files (relative path -> bytes) as one complete directory tree
    (every directory of theirs given whole), with no disk: the codec builds a revision shipped as bytes (to a
    Spark worker) from what this returns. The Kafka target is the config's (no fork's generator is looked for).
    """
    with collector_paused():
        contexts = _text_contexts(files, config)
        complete = {_real(os.path.dirname(name) or ".") for name in files}
        return lint_contexts(contexts, select_rules(config), config, complete), contexts


def _text_contexts(texts: Mapping[str, str | bytes], config: Config,
                   context: frozenset[str] = frozenset()) -> list[FileContext]:
    """Each text parsed (those named in ``context`` as siblings); a str holding a lone surrogate becomes the bytes
    it stands for, which the reader reports as not UTF-8."""
    target = configured_target(config)
    return [FileContext(read_document(name, text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")),
                        target, sibling=name in context, file_naming=config.file_naming_of(name))
            for name, text in texts.items()]


def lint_contexts(contexts: list[FileContext], ruleset: RuleSet, config: Config, complete: set[str]) -> Report:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    cache = ResultCache(Path(config.cache_dir), ruleset, config.kafka_version or "") if config.cache_dir else None
    for ctx in contexts:
        if not ctx.sibling:
            by_file[ctx.path].extend(_file_findings(ctx, ruleset, cache))
    for directory in _directories(contexts, complete):
        for finding in _broken_by_named(directory, ruleset, cache):
            by_file[finding.path].append(finding)
    if cache is not None:
        cache.save()
    meta_rules = ruleset.of_scope("meta")
    report = Report(files=sum(not ctx.sibling for ctx in contexts))
    findings: list[Finding] = []
    for ctx in contexts:
        findings += suppress_inline(ctx, by_file[ctx.path], report)
        if not ctx.sibling:  # the meta rules read what the suppressions covered
            for rule in meta_rules:
                findings += _findings(ctx, rule, _run(rule, ctx), ruleset)
    return finish(report, findings, config)


def _file_findings(ctx: FileContext, ruleset: RuleSet, cache: ResultCache | None) -> list[Finding]:
    """Findings of the file-scope rules, from the cache when the file is unchanged."""
    digest = _cache_digest(ctx)
    if cache is not None:
        cached = cache.file_findings(ctx.path, digest)
        if cached is not None:
            return cached
    found: list[Finding] = []
    for rule in ruleset.of_scope("file"):
        hits = _run(rule, ctx)
        if hits:
            found.extend(_findings(ctx, rule, hits, ruleset))
    if cache is not None:
        cache.store_file(ctx.path, digest, found)
    return found


def _broken_by_named(directory: DirectoryContext, ruleset: RuleSet, cache: ResultCache | None) -> list[Finding]:
    """The cross-file findings of a directory. Where some files are only context (siblings of files named
    one by one), a finding on a sibling is kept only when the named files cause it: it is not there when
    the siblings are checked without them."""
    found = _directory_findings(directory, ruleset, cache)
    context = [ctx for ctx in directory.files if ctx.sibling]
    if not context or len(context) == len(directory.files):
        return found if not context else []
    alone = DirectoryContext(directory.directory, context, directory.complete)
    before = {(f.path, f.rule, f.message) for f in _directory_findings(alone, ruleset, cache)}
    named = {ctx.path for ctx in directory.files if not ctx.sibling}
    return [f for f in found if f.path in named or (f.path, f.rule, f.message) not in before]


def _directory_findings(directory: DirectoryContext, ruleset: RuleSet, cache: ResultCache | None) -> list[Finding]:
    """Findings of the cross-file rules, from the cache when no file of the directory changed."""
    key = ""
    if cache is not None:
        key = cache.directory_key([(c.path, _cache_digest(c)) for c in directory.files], directory.complete)
        cached = cache.dir_findings(key)
        if cached is not None:
            return cached
    by_path = {ctx.path: ctx for ctx in directory.files}
    found: list[Finding] = []
    for rule in ruleset.of_scope("directory"):
        for hit in _run(rule, directory):
            owner = by_path.get(hit.file or "")
            if owner is not None:
                found.extend(_findings(owner, rule, [hit], ruleset))
    if cache is not None:
        cache.store_dir(key, found)
    return found


def _cache_digest(ctx: FileContext) -> str:
    """What a file's cached findings depend on besides the rules: its content, and the settings that differ
    per file (a generator's extra enum values, KL752's naming convention)."""
    digest = ctx.document.digest
    if ctx.target.is_extended:
        digest += "|" + ctx.target.signature()
    if ctx.file_naming != "infer":
        digest += "|" + ctx.file_naming
    return digest


def _run(rule: Rule, target: FileContext | DirectoryContext) -> list[Hit]:
    """Run one rule's check; a crash inside a check becomes a hit naming the rule, never a traceback."""
    try:
        return list(rule.run(target))
    except (RecursionError, MemoryError) as exc:
        reason = f"{rule.name} could not check this file: {type(exc).__name__} (input too deeply nested)"
    except Exception as exc:  # noqa: BLE001 - a bug in one check must not hide the other findings
        reason = f"internal error in check {rule.name}: {type(exc).__name__}: {exc}"
    owner = getattr(target, "path", None) or next((ctx.path for ctx in getattr(target, "files", ())), None)
    return [Hit((), reason, file=owner)]


def _directories(contexts: list[FileContext], complete: set[str]) -> list[DirectoryContext]:
    groups: dict[str, DirectoryContext] = {}
    for ctx in contexts:
        parent = os.path.dirname(ctx.path) or "."
        group = groups.get(parent)
        if group is None:
            group = groups[parent] = DirectoryContext(Path(parent), complete=_real(parent) in complete)
        group.files.append(ctx)
    return list(groups.values())


def _real(path: str) -> str:
    """``os.path.realpath``; a name no file system holds (a NUL, a lone surrogate that stands for no byte: a name
    given to ``lint_texts``) is no directory on disk, so its absolute form (realpath raised ValueError)."""
    try:
        return os.path.realpath(path)
    except ValueError:
        return os.path.abspath(path)


def _findings(ctx: FileContext, rule: Rule, hits: Iterable[Hit], ruleset: RuleSet) -> list[Finding]:
    document = ctx.document
    out = []
    for hit in hits:
        if hit.position is not None:
            line, col = hit.position
        elif hit.offset is not None:
            line, col = document.line_col(hit.offset) if document.text else (1, 1)
        elif document.text:
            line, col = document.locate(hit.path, key=hit.at_key)
        else:
            line, col = 1, 1
        out.append(Finding(ctx.path, line, col, rule.id, rule.name, ruleset.severity_of(rule), rule.category,
                           hit.message, rule.hint, fix=hit.fix if rule.fixable else ()))
    return out
