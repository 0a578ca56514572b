"""The public library API: every exported name documented, every example run as a doctest."""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.resources
import inspect
import io
import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import linter

REPO_ROOT = Path(__file__).resolve().parents[2]

# Every module that defines a public name or a class the public functions return.
MODULES = [
    "linter",
    "linter.engine.runner",
    "linter.engine.config",
    "linter.engine.findings",
    "linter.compat.api",
    "linter.compat.changelog",
    "linter.compat.matrix",
    "linter.compat.suggest",
    "linter.compat.sources",
    "linter.codec",
    "linter.codec.codec",
    "linter.codec.errors",
]
# Names whose docstrings must show a runnable example, not just prose.
WITH_EXAMPLES = ["lint", "lint_texts", "compare", "compare_texts", "changelog", "matrix", "Codec", "Config",
                 "ConfigError", "load_config", "Finding", "Report", "UsageError", "all_rules", "SourceError",
                 "suggest"]
STABLE_NAMES = {"lint", "compare", "changelog", "matrix", "Codec", "Config", "Finding", "Report"}
MIN_MODULE_EXAMPLES = 110  # 117 when written: an emptied docstring drops below it
MIN_GUIDE_EXAMPLES = 38  # 40 when written


@pytest.fixture
def repo_cwd(monkeypatch, tmp_path):
    """Examples name fixtures relative to the repository root; rule packs cache in a temp dir."""
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.setenv("KRPC_LINT_CACHE_DIR", str(tmp_path / "cache"))


def module_tests(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    return [test for test in doctest.DocTestFinder(exclude_empty=True).find(module, name) if test.examples]


def _run_examples(name: str) -> None:
    tests = module_tests(name)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()
    assert result.attempted == sum(len(test.examples) for test in tests)


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_pass(name, repo_cwd):
    assert module_tests(name), f"{name} has no docstring examples"
    _run_examples(name)


def _modules_with_examples() -> list[str]:
    """Every module of ``linter`` whose docstrings hold examples (the generated validator aside): an example
    is documentation, so each one runs, not only the public API's."""
    names = [info.name for info in pkgutil.walk_packages(linter.__path__, "linter.")
             if not info.name.endswith("._spec_validator")]
    return [name for name in names if module_tests(name)]


@pytest.mark.parametrize("name", [name for name in _modules_with_examples() if name not in MODULES])
def test_every_modules_examples_run(name, repo_cwd):
    _run_examples(name)


def test_enough_examples_overall():
    total = sum(len(test.examples) for name in MODULES for test in module_tests(name))
    assert total >= MIN_MODULE_EXAMPLES, f"only {total} docstring examples in {MODULES}"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_key_names_show_an_example(name):
    doc = getattr(linter, name).__doc__ or ""
    assert ">>> " in doc, f"linter.{name}'s docstring has no example"


def test_guide_examples_pass(repo_cwd):
    result = doctest.testfile(str(REPO_ROOT / "docs" / "api.md"), module_relative=False, report=True,
                              optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted >= MIN_GUIDE_EXAMPLES


def test_guide_code_blocks_are_doctests_or_not_python():
    text = (REPO_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)
    assert blocks
    for language, body in blocks:
        if language == "python":
            assert body.startswith(">>> "), f"a python block of docs/api.md is not a doctest:\n{body}"
        else:
            assert language in ("", "yaml", "toml", "json"), f"unexpected block language {language!r}"
            assert ">>>" not in body and "import " not in body, f"Python outside a doctest block:\n{body}"


def test_guide_reference_lists_every_public_name():
    text = (REPO_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    reference = text.split("## Reference", 1)[1]
    listed = set(re.findall(r"^\| `(\w+)", reference, flags=re.MULTILINE))
    assert listed == set(linter.__all__)


# --- the exported names ---------------------------------------------------------------------------


def own_docstring(obj) -> str:
    """The object's own docstring: not a base class's, not a dataclass's generated signature."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
    doc = (doc or "").strip()
    return "" if doc.startswith(f"{obj.__name__}(") else doc


def test_stable_names_are_exported():
    assert STABLE_NAMES <= set(linter.__all__)
    assert sorted(dir(linter)) == sorted(linter.__all__)


@pytest.mark.parametrize("name", linter.__all__)
def test_exported_name_resolves_and_is_documented(name):
    obj = getattr(linter, name)
    assert obj.__module__ == linter._EXPORTS[name]
    assert own_docstring(obj), f"linter.{name} has no docstring"


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'lint_everything'"):
        linter.lint_everything  # noqa: B018


def test_type_checking_imports_match_the_exports():
    """Type checkers see the names through the ``if TYPE_CHECKING:`` imports: they must match."""
    tree = ast.parse((REPO_ROOT / "linter" / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {alias.name: node.module for node in block.body for alias in node.names}
    assert imported == linter._EXPORTS
    assert set(imported) == set(linter.__all__)


def test_importing_linter_loads_no_engine():
    code = ("import sys, linter\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('linter.'))\n"
            "assert not loaded, loaded\n"
            "linter.Codec\n"
            "assert 'linter.codec.codec' in sys.modules\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", ["lint", "lint_texts", "compare", "compare_texts", "changelog", "matrix",
                                  "load_config", "all_rules"])
def test_functions_are_annotated(name):
    signature = inspect.signature(getattr(linter, name))
    assert signature.return_annotation is not inspect.Signature.empty, f"linter.{name} has no return type"
    for parameter in signature.parameters.values():
        assert parameter.annotation is not inspect.Parameter.empty, f"linter.{name}({parameter.name}) has no type"


def test_changelog_and_matrix_return_their_annotated_types(repo_cwd):
    old, new = "fixtures/compat/demo/old", "fixtures/compat/demo/new"
    assert type(linter.changelog(old, new)).__name__ == inspect.signature(linter.changelog).return_annotation
    assert type(linter.matrix([old, new])).__name__ == inspect.signature(linter.matrix).return_annotation


def public_classes():
    from linter.compat.changelog import Changelog
    from linter.compat.matrix import Matrix

    return [linter.Codec, linter.Config, linter.Finding, linter.Report, Changelog, Matrix]


def public_methods(cls) -> dict[str, object]:
    """Methods, properties, class and static methods defined on the class itself, not starting with _."""
    found = {}
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (classmethod, staticmethod)):
            found[name] = member.__func__
        elif isinstance(member, property):
            found[name] = member.fget
        elif inspect.isfunction(member):
            found[name] = member
    return found


@pytest.mark.parametrize("cls", public_classes(), ids=lambda cls: cls.__name__)
def test_public_methods_are_documented(cls):
    assert own_docstring(cls), f"{cls.__name__} has no docstring"
    methods = public_methods(cls)
    assert methods, f"{cls.__name__} has no public methods?"
    undocumented = [name for name, fn in methods.items() if not (fn.__doc__ or "").strip()]
    assert not undocumented, f"{cls.__name__} methods without a docstring: {undocumented}"


def test_codec_methods_in_the_guide_table_exist():
    text = (REPO_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `Codec` |"))
    for method in re.findall(r"`(\w+)`", row.split("|")[2]):
        assert method in public_methods(linter.Codec), method


# --- packaging --------------------------------------------------------------------------------


def test_py_typed_ships():
    assert importlib.resources.files("linter").joinpath("py.typed").is_file()
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["linter"]
