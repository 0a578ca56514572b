"""Configuration: ``[tool.krpc-lint]`` in pyproject.toml or ``.krpc-lint.yaml``; CLI flags win.

Keys (yamllint/ruff/buf users will recognise them)::

    profile = "recommended"          # kafka | recommended | strict
    select = ["KL8"]                 # add rules: ids, id prefixes, names, categories, profiles
    ignore = ["missing-about"]       # remove rules (same selectors)
    severity = { KL651 = "error" }   # per-rule severity override (id or name)
    fail-on = "error"                # error | warning | info
    kafka-version = "4.3"            # the generator whose rules apply (default: any supported release)
    exclude = ["**/test/**"]         # paths never linted
    include = ["schemas/**"]         # JSON in directories read as specs even when it does not look like one
    rule-packs = ["my-rules/"]       # extra YAML rule packs, relative to the config file
    preview = true                   # also run the rules in preview (else only those named in select)
    baseline = "krpc-lint-baseline.json"
    file-naming = "snake_case"       # KL752: kafka | snake_case | any (default: inferred per directory)
    entity-types = ["streamId"]      # entityType values a fork's generator adds (KL103)
    listeners = ["proxy"]            # listeners values a fork's generator adds (KL103)
    conformance = { Fetch = { supported = "4-17" }, Produce = "passthrough" }  # krpc-lint conformance's manifest
    [[tool.krpc-lint.per-path]]
    paths = ["metadata/**"]
    ignore = ["KL801"]
    severity = { KL251 = "error" }
    file-naming = "kafka"            # per directory too
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from linter.errors import KrpcLintError
from linter.parse.bounded_json import MAX_DEPTH, conversion_refusal, within_depth
from linter.parse.files import InputError, read_regular
from linter.parse.globs import glob_matcher
from linter.parse.linear import NotLinearError
from linter.vocabulary import KAFKA_VERSIONS, PROFILES, SEVERITIES

CONFIG_BYTES = 1024 * 1024  # a config file is a few lines; more is not a config

CONFIG_FILES = (".krpc-lint.yaml", ".krpc-lint.yml", "pyproject.toml")
_KEYS = {"conformance", "profile", "kafka-version", "include", "select", "ignore", "severity", "fail-on", "exclude", "rule-packs",
         "baseline", "per-path", "preview", "file-naming", "entity-types", "listeners"}
_PER_PATH_KEYS = {"paths", "ignore", "severity", "file-naming"}
# How spec files are named (KL752): "infer" (the default) expects the convention every file of a directory
# follows, Kafka's where they follow none or disagree.
FILE_NAMINGS = ("kafka", "snake_case", "any", "infer")


class ConfigError(KrpcLintError, ValueError):
    """A configuration problem; the message names the file and the key.

    >>> try:
    ...     load_config("no-such-config.yaml")
    ... except ConfigError as exc:
    ...     print(exc)
    no-such-config.yaml: config file not found
    """


@dataclass(frozen=True)
class PathOverride:
    """One ``per-path`` entry: rules to ignore and severities to change for files matching ``paths``."""

    paths: tuple[str, ...]
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    file_naming: str | None = None  # one of FILE_NAMINGS; None: the top-level one

    def applies(self, path: str) -> bool:
        """Whether ``path`` matches one of the glob patterns, anchored anywhere in the path."""
        return _matches(path, self.paths)


@dataclass(frozen=True)
class Config:
    """Everything that decides which rules run and how findings count.

    The fields are the config file's keys with ``_`` for ``-``; selectors in ``select``,
    ``ignore`` and ``severity`` are rule ids, id prefixes (``KL8``), names, categories or
    profiles. Paths in a loaded config are already resolved against the config file's folder.
    ``Config()`` is what the CLI uses without a config file.

    >>> Config().profile, Config().fail_on
    ('recommended', 'error')
    >>> from linter import lint
    >>> config = Config(profile="strict", ignore=("file-name-matches",), severity={"missing-about": "error"})
    >>> [(f.rule, f.severity) for f in lint("fixtures/invalid/KL801-missing-about.json", config).findings]
    [('KL801', 'error')]
    """

    profile: str = "recommended"
    kafka_version: str | None = None  # a key of ``linter.model.targets.TARGETS``; None: any release
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    fail_on: str = "error"
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    rule_packs: tuple[str, ...] = ()
    baseline: str | None = None
    per_path: tuple[PathOverride, ...] = ()
    source: str | None = None
    cache_dir: str | None = None  # reuse findings of unchanged files (the CLI sets it; the API does not)
    allow_empty: bool = False  # a directory without specs is fine (``--allow-empty``), not a usage error
    siblings: bool = True  # a file named alone is checked with the other specs of its directory as context
    preview: bool = False  # rules in preview run too, not only those ``select`` names by id or name
    file_naming: str = "infer"  # KL752's convention (one of FILE_NAMINGS); per-path tables may set their own
    entity_types: tuple[str, ...] = ()  # entityType values allowed besides Kafka's (a fork's generator)
    listeners: tuple[str, ...] = ()  # listeners values allowed besides Kafka's
    conformance: dict[str, Any] | None = None  # ``krpc-lint conformance``'s manifest, read there (docs/conformance.md)
    # The selectors written in ``source`` (not those the command line added), so an unknown one names the file.
    configured: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def with_overrides(self, **changes: Any) -> Config:
        """CLI flags: only the ones given (not None) replace the configured values.

        >>> config = Config(profile="strict").with_overrides(profile=None, fail_on="warning")
        >>> config.profile, config.fail_on
        ('strict', 'warning')
        """
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def excluded(self, path: str) -> bool:
        """Whether ``path`` matches an ``exclude`` glob (anchored anywhere in the path).

        >>> Config(exclude=("**/test/**",)).excluded("specs/test/FooRequest.json")
        True
        """
        return _matches(path, self.exclude)

    def included(self, path: str) -> bool:
        """Whether ``path`` matches an ``include`` glob: a JSON file read as a spec whatever it holds.

        >>> Config(include=("schemas/*.json",)).included("vendor/schemas/odd.json")
        True
        """
        return _matches(path, self.include)

    def file_naming_of(self, path: str) -> str:
        """KL752's naming convention for ``path``: the last ``per-path`` table matching it that sets one, else
        ``file_naming``.

        >>> config = Config(per_path=(PathOverride(("vendor/**",), file_naming="snake_case"),))
        >>> config.file_naming_of("vendor/specs/fetch_request.json"), config.file_naming_of("FetchRequest.json")
        ('snake_case', 'infer')
        """
        naming = self.file_naming
        for override in self.per_path:
            if override.file_naming is not None and override.applies(path):
                naming = override.file_naming
        return naming


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    """A glob anchored anywhere in the path (``**/test/**`` and ``test/**`` alike): fnmatch's meaning, in time
    linear in the path whatever the globs (``parse.globs``, RE2)."""
    if not patterns:
        return False
    try:
        matches = glob_matcher(patterns, anywhere=True)
    except NotLinearError as exc:  # a Config built without load_config, which checks its globs
        raise ConfigError(f"glob patterns {_shown(patterns)} cannot be matched: {exc}") from None
    return matches(Path(path).as_posix())


def _globs(value: Any, key: str, file: Path) -> tuple[str, ...]:
    """Glob patterns (``exclude``, ``include``, ``per-path.paths``), refused now when they cannot be matched."""
    globs = _strings(value, key, file)
    try:
        glob_matcher(globs, anywhere=True)
    except NotLinearError as exc:
        raise ConfigError(f"{file}: {key}: globs that cannot be matched ({exc})") from None
    return globs


def _shown(patterns: tuple[str, ...]) -> str:
    text = ", ".join(patterns)
    return repr(text if len(text) <= 60 else text[:57] + "...")


def find_config(start: Path) -> Path | None:
    """The nearest config file at or above ``start`` (pyproject.toml only if it has our table)."""
    start = start.resolve()
    for directory in (start, *start.parents):
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file() and (name != "pyproject.toml" or _has_tool_table(candidate)):
                return candidate
    return None


def _has_tool_table(path: Path) -> bool:
    """Whether a pyproject.toml configures krpc-lint; one that does not parse but names krpc-lint counts, so that
    loading it reports the syntax error instead of silently running without the config."""
    try:
        text = read_regular(path, CONFIG_BYTES).decode("utf-8")
    except (InputError, UnicodeDecodeError):
        return False
    try:
        tool = tomllib.loads(text).get("tool")
    except (ValueError, RecursionError):  # TOMLDecodeError, or a number too long to convert
        return "krpc-lint" in text
    return not isinstance(tool, dict) or "krpc-lint" in tool


def load_config(path: Path | str | None = None, start: Path | None = None) -> Config:
    """Load an explicit config file, or discover one from ``start`` (default: the working directory).

    Discovery takes the nearest ``.krpc-lint.yaml``, ``.krpc-lint.yml`` or ``pyproject.toml``
    with a ``[tool.krpc-lint]`` table at or above ``start``; without one it is ``Config()``.
    A bad file raises ``ConfigError``.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = pathlib.Path(folder, ".krpc-lint.yaml").write_text("profile: strict\\nignore: [KL801]\\n")
    ...     config = load_config(start=pathlib.Path(folder))
    >>> config.profile, config.ignore
    ('strict', ('KL801',))
    """
    file = Path(path) if path is not None else find_config(start or Path.cwd())
    if file is None:
        return Config()
    if not file.exists():
        raise ConfigError(f"{file}: config file not found")
    data = _read(file)
    return _from_mapping(data, file)


def _read(file: Path) -> dict[str, Any]:
    try:
        text = read_regular(file, CONFIG_BYTES).decode("utf-8")
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: cannot read: {exc}") from None
    if file.name == "pyproject.toml" or file.suffix == ".toml":
        try:
            tool = tomllib.loads(text).get("tool", {})
        except ValueError as exc:  # TOMLDecodeError, or Python refusing to convert a number thousands of digits long
            raise ConfigError(f"{file}: invalid TOML: {conversion_refusal(exc)}") from None
        except RecursionError:  # tomllib recurses once per nesting level
            raise ConfigError(f"{file}: invalid TOML: nested too deeply") from None
        if not within_depth(tool):  # the one nesting limit of every reader, as YAML configs have
            raise ConfigError(f"{file}: invalid TOML: values nested more than {MAX_DEPTH} deep")
        table = tool.get("krpc-lint", {}) if isinstance(tool, dict) else None
        if not isinstance(table, dict):
            raise ConfigError(f"{file}: [tool.krpc-lint] must be a table")
        return table
    # A YAML config only: ruamel costs a cold start.
    from ruamel.yaml.error import YAMLError

    from linter.parse.yamlfile import load_yaml

    try:
        data = load_yaml(text)
    except (YAMLError, ValueError) as exc:
        raise ConfigError(f"{file}: invalid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: the config must be a mapping")
    return data


def _strings(value: Any, key: str, file: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{file}: {key} must be a list of strings")


def _file_naming(value: Any, key: str, file: Path) -> str:
    if not isinstance(value, str) or value not in FILE_NAMINGS:
        raise ConfigError(f"{file}: {key} must be one of {', '.join(FILE_NAMINGS)}")
    return value


def _names(value: Any, key: str, file: Path) -> tuple[str, ...]:
    """A list of enum names (``entity-types``, ``listeners``): strings of letters, digits, ``_`` and ``-``."""
    if not isinstance(value, list) or any(
            not isinstance(name, str) or not name or not all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
            for name in value):
        raise ConfigError(f"{file}: {key} must be a list of names such as \"streamId\"")
    return tuple(value)


def _severities(value: Any, key: str, file: Path) -> dict[str, str]:
    if not isinstance(value, dict) or any(not isinstance(v, str) or v not in SEVERITIES for v in value.values()):
        raise ConfigError(f"{file}: {key} maps rule ids or names to one of {', '.join(SEVERITIES)}")
    return {str(k): v for k, v in value.items()}


def _from_mapping(data: dict[str, Any], file: Path) -> Config:
    unknown = sorted(str(key) for key in data if key not in _KEYS)  # a YAML key may be a number or null
    if unknown:
        raise ConfigError(f"{file}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    profile = data.get("profile", "recommended")
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ConfigError(f"{file}: profile must be one of {', '.join(PROFILES)}")
    fail_on = data.get("fail-on", "error")
    if not isinstance(fail_on, str) or fail_on not in SEVERITIES:
        raise ConfigError(f"{file}: fail-on must be one of {', '.join(SEVERITIES)}")
    kafka_version = data.get("kafka-version")
    if isinstance(kafka_version, (dict, list, bool)):
        raise ConfigError(f"{file}: kafka-version must be one of {', '.join(KAFKA_VERSIONS)}")
    if kafka_version is not None:
        kafka_version = str(kafka_version)
        if kafka_version not in KAFKA_VERSIONS:
            raise ConfigError(f"{file}: kafka-version must be one of {', '.join(KAFKA_VERSIONS)}")
    base = file.parent
    overrides = []
    per_path = data.get("per-path") or []
    if not isinstance(per_path, list):
        raise ConfigError(f"{file}: per-path must be a list of tables, each with paths")
    for index, item in enumerate(per_path):
        if not isinstance(item, dict) or "paths" not in item:
            raise ConfigError(f"{file}: per-path[{index}] needs paths")
        extra = sorted(str(key) for key in item if key not in _PER_PATH_KEYS)
        if extra:
            raise ConfigError(f"{file}: per-path[{index}]: unknown key(s) {', '.join(extra)} "
                              f"(known: {', '.join(sorted(_PER_PATH_KEYS))})")
        naming = item.get("file-naming")
        overrides.append(PathOverride(_globs(item["paths"], "per-path.paths", file),
                                      _strings(item.get("ignore", []), "per-path.ignore", file),
                                      _severities(item.get("severity", {}), "per-path.severity", file),
                                      None if naming is None else _file_naming(naming, "per-path.file-naming", file)))
    baseline = data.get("baseline")
    if baseline is not None and not isinstance(baseline, str):
        raise ConfigError(f"{file}: baseline must be a file name")
    preview = data.get("preview", False)
    if not isinstance(preview, bool):
        raise ConfigError(f"{file}: preview must be true or false")
    select = _strings(data.get("select", []), "select", file)
    ignore = _strings(data.get("ignore", []), "ignore", file)
    severity = _severities(data.get("severity", {}), "severity", file)
    return Config(
        profile=profile,
        kafka_version=kafka_version,
        select=select,
        ignore=ignore,
        severity=severity,
        configured=frozenset((*select, *ignore, *severity)),
        fail_on=fail_on,
        exclude=_globs(data.get("exclude", []), "exclude", file),
        include=_globs(data.get("include", []), "include", file),
        rule_packs=tuple(str(base / p) for p in _strings(data.get("rule-packs", []), "rule-packs", file)),
        baseline=str(base / baseline) if isinstance(baseline, str) else None,
        per_path=tuple(overrides),
        source=str(file),
        preview=preview,
        file_naming=_file_naming(data.get("file-naming", "infer"), "file-naming", file),
        entity_types=_names(data.get("entity-types", []), "entity-types", file),
        listeners=_names(data.get("listeners", []), "listeners", file),
        conformance=_mapping(data.get("conformance"), "conformance", file),
    )


def _mapping(value: Any, key: str, file: Path) -> dict[str, Any] | None:
    """A table the config holds for a command that reads it (which says what is wrong inside it)."""
    if value is not None and not isinstance(value, dict):
        raise ConfigError(f"{file}: {key} must be a table (per API: supported versions, passthrough, unsupported)")
    return value
