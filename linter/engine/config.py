"""Configuration: ``[tool.krpc-lint]`` in pyproject.toml or ``.krpc-lint.yaml``; CLI flags win.

Keys (yamllint/ruff/buf users will recognise them)::

    profile = "recommended"          # kafka | kafka-ci | recommended | strict
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

import json
import tomllib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter.errors import KrpcLintError
from linter.parse.bounded_json import MAX_DEPTH, conversion_refusal, within_depth
from linter.parse.files import InputError, read_regular
from linter.parse.globs import glob_matcher
from linter.parse.linear import NotLinearError

if TYPE_CHECKING:
    from jsonschema import ValidationError

CONFIG_BYTES = 1024 * 1024  # a config file is a few lines; more is not a config

CONFIG_FILES = (".krpc-lint.yaml", ".krpc-lint.yml", "pyproject.toml")
# How spec files are named (KL752): "infer" (the default) expects the convention every file of a directory
# follows, Kafka's where they follow none or disagree. The schema's enums say the same (a test holds them equal).
FILE_NAMINGS = ("kafka", "snake_case", "any", "infer")
SCHEMA_RESOURCE = "config.schema.json"  # every key's shape, and the words of its error (x-message)


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


def _schema_text() -> str:
    return Path(__file__).with_name(SCHEMA_RESOURCE).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def config_schema() -> dict[str, Any]:
    """The JSON Schema of a config mapping (``linter/engine/config.schema.json``), its properties in the order
    they are checked."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


def schema_digest() -> str:
    import hashlib

    return hashlib.sha256(_schema_text().encode("utf-8")).hexdigest()


def generate_validator_source() -> str:
    """Python source of the compiled validator (fastjsonschema, its patterns RE2 formats), tagged with the
    schema's digest. Shipping it saves every process that reads a config the ~9 ms compile;
    ``python -m linter.engine.config`` rewrites it, and a test fails when it no longer matches the schema."""
    import fastjsonschema

    from linter.engine.patterns import linear_patterns

    schema, formats = linear_patterns(config_schema())
    code = fastjsonschema.compile_to_code(schema, formats=formats)
    return (f'"""Generated by `python -m linter.engine.config` from {SCHEMA_RESOURCE}. Do not edit."""\n'
            f"# fmt: off\n# ruff: noqa\n# mypy: ignore-errors\nSCHEMA_SHA256 = {schema_digest()!r}\n{code}")


class _Formats(dict[str, Callable[[str], bool]]):
    """The RE2 checks the generated validator calls by name (its ``custom_formats``), compiled when one is
    first called: most configs hold no value a pattern judges, and RE2 takes 2 ms to import."""

    def __missing__(self, name: str) -> Callable[[str], bool]:
        from linter.engine.patterns import linear_patterns

        formats = linear_patterns(config_schema())[1]
        self.update(formats)
        return formats[name]


@lru_cache(maxsize=1)
def _validator() -> Callable[[Any], Any]:
    """The generated validator while it is the schema's, else the schema compiled now (a schema being edited)."""
    from linter.engine import _config_validator as generated

    if generated.SCHEMA_SHA256 == schema_digest():
        validate: Callable[..., Any] = generated.validate
        return partial(validate, custom_formats=_Formats())
    from linter.engine.declarative import compiled

    return compiled(json.dumps(config_schema()))


def _as_read(data: dict[str, Any]) -> dict[str, Any]:
    """YAML and TOML read ``kafka-version: 3.7`` as a number: the config means the release named so."""
    version = data.get("kafka-version")
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        return {**data, "kafka-version": str(version)}
    return data


def _validated(data: dict[str, Any], file: Path) -> dict[str, Any]:
    """``data`` when the schema accepts it, else ``ConfigError`` naming the first problem. The compiled schema
    answers (RE2 patterns, as declarative rules'); jsonschema, slower to import, explains a refusal only."""
    import fastjsonschema

    try:
        _validator()(data)
    except fastjsonschema.JsonSchemaException:
        raise ConfigError(f"{file}: {_first_problem(data)}") from None
    return data


def _first_problem(data: dict[str, Any]) -> str:
    """The problem a reader meets first: a table's own (its kind, a missing or unknown key) before its values',
    values in the schema's order of keys, list items by index."""
    from jsonschema import Draft202012Validator

    return min(_placed(error) for error in Draft202012Validator(config_schema()).iter_errors(data))[1]


def _placed(error: ValidationError) -> tuple[tuple[int, ...], str]:
    """Where ``error`` comes in the reading order, and its message: the ``x-message`` of the deepest schema node
    on the error's way that has one, after that node's key (``per-path.ignore``, ``per-path[1]``)."""
    path, steps = list(error.absolute_path), deque(error.absolute_schema_path)
    keyword = steps.pop()
    node, order, (message, depth, placed) = _walk(path, steps, (str(error.message), len(path), len(path)))
    if keyword == "additionalProperties" and node.get("additionalProperties") is False:
        known = sorted(node.get("properties", {}))
        instance: Any = error.instance  # the table
        unknown = sorted(str(key) for key in instance if key not in known)  # a YAML key may be a number or null
        where = _key_name(path)
        return (*order, -1), f"{where}{': ' if where else ''}unknown key(s) {', '.join(unknown)} (known: {', '.join(known)})"
    return (*order[:placed], -2), f"{_key_name(path[:depth])} {message}"


def _walk(path: list[Any], steps: deque[Any], said: tuple[str, int, int]) -> tuple[Any, list[int], tuple[str, int, int]]:
    """The schema node at the end of ``steps``, the position of each key or item on the way (its index among the
    node's properties, or in the list), and the last ``x-message`` met with the depth and position it was met at
    (``said`` when none is)."""
    node: Any = config_schema()  # a dict, reached through str and int steps
    depth, order = 0, []
    while steps:
        step = steps.popleft()
        if step == "properties":
            name = steps.popleft()
            order.append(list(node["properties"]).index(name))
            node, depth = node["properties"][name], depth + 1
        elif step in ("items", "additionalProperties"):
            index = path[depth] if depth < len(path) else None  # jsonschema leaves a None key out of the path
            order.append(index if isinstance(index, int) else 0)
            node, depth = node[step], depth + 1
        else:  # if, then, else, not; anyOf and allOf with their branch
            node = node[step][steps.popleft()] if step in ("anyOf", "allOf", "oneOf") else node[step]
        if "x-message" in node:
            said = (node["x-message"], depth, len(order))
    return node, order, said


def _key_name(path: list[Any]) -> str:
    """A key as messages name it: ``severity``, ``per-path[1]`` for a table of a list, ``per-path.ignore`` for a key
    inside one (the index of the table left out, as always)."""
    name = ".".join(str(part) for part in path if not isinstance(part, int))
    return f"{name}[{path[-1]}]" if path and isinstance(path[-1], int) else name


def _from_mapping(data: dict[str, Any], file: Path) -> Config:
    """A config mapping as ``Config``: its shape checked by ``config.schema.json`` first, so what follows only
    converts (and compiles the globs, which no schema can judge)."""
    data = _validated(_as_read(data), file)
    select, ignore, severity = _listed(data.get("select")), _listed(data.get("ignore")), data.get("severity", {})
    base = file.parent
    return Config(
        profile=data.get("profile", "recommended"),
        kafka_version=data.get("kafka-version"),
        select=select,
        ignore=ignore,
        severity={str(k): v for k, v in severity.items()},
        configured=frozenset((*select, *ignore, *map(str, severity))),
        fail_on=data.get("fail-on", "error"),
        per_path=tuple(_override(item, file) for item in data.get("per-path") or ()),
        exclude=_globs(data.get("exclude"), "exclude", file),
        include=_globs(data.get("include"), "include", file),
        rule_packs=tuple(str(base / p) for p in _listed(data.get("rule-packs"))),
        baseline=None if data.get("baseline") is None else str(base / data["baseline"]),
        source=str(file),
        preview=data.get("preview", False),
        file_naming=data.get("file-naming", "infer"),
        entity_types=tuple(data.get("entity-types", ())),
        listeners=tuple(data.get("listeners", ())),
        conformance=data.get("conformance"),
    )


def _override(item: dict[str, Any], file: Path) -> PathOverride:
    """One valid ``per-path`` table."""
    return PathOverride(_globs(item["paths"], "per-path.paths", file), _listed(item.get("ignore")),
                        {str(k): v for k, v in item.get("severity", {}).items()}, item.get("file-naming"))


def _listed(value: str | list[str] | None) -> tuple[str, ...]:
    """A valid list of strings, where one string alone is a list of one."""
    return () if value is None else (value,) if isinstance(value, str) else tuple(value)


def _globs(value: str | list[str] | None, key: str, file: Path) -> tuple[str, ...]:
    """Glob patterns (``exclude``, ``include``, ``per-path.paths``), refused now when they cannot be matched."""
    globs = _listed(value)
    try:
        glob_matcher(globs, anywhere=True)
    except NotLinearError as exc:
        raise ConfigError(f"{file}: {key}: globs that cannot be matched ({exc})") from None
    return globs


if __name__ == "__main__":
    target = Path(__file__).with_name("_config_validator.py")
    target.write_text(generate_validator_source(), encoding="utf-8")
    print(f"wrote {target}")
