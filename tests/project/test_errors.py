"""One base for krpc-lint's input errors and one translator to exit codes (issue 16): every public error
class of the library derives from ``KrpcLintError`` (keeping its built-in base), and the CLI turns exactly
those into one line with exit 2, anything else into an internal error."""

from __future__ import annotations

import ast
import importlib

import pytest
from conftest import REPO_ROOT

from linter.cli.common import CliError, InternalError, translate
from linter.errors import KrpcLintError

# Not about the user's input: the codec commands' bad data is caught inside each command (exit 1), and a
# change kind no rule describes is a bug of krpc-lint (an internal error).
INTERNAL = {"linter.cli.codec_io.BadInput", "linter.compat.report.UnknownChange",
            "linter.wirecheck.reader.Refused"}  # control flow of the walk: caught by the frame checker


def _error_classes() -> list[str]:
    """Every public class of linter/ whose name ends in Error or that is raised as one (by its bases' names)."""
    found = []
    for path in sorted((REPO_ROOT / "linter").rglob("*.py")):
        if path.name == "_spec_validator.py":
            continue
        module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            bases = {getattr(base, "id", getattr(base, "attr", "")) for base in getattr(node, "bases", [])}
            if (isinstance(node, ast.ClassDef) and not node.name.startswith("_")
                    and any(base.endswith(("Error", "Exception", "Exists", "Unavailable")) for base in bases)):
                found.append(f"{module}.{node.name}")
    return found


def _load(qualified: str) -> type:
    module, name = qualified.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def test_every_public_error_of_the_library_is_a_krpc_lint_error() -> None:
    classes = _error_classes()
    assert len(classes) > 20  # the reading found them
    outside = [name for name in classes if name not in INTERNAL and not issubclass(_load(name), KrpcLintError)
               and not issubclass(_load(name), CliError)]
    assert outside == []


def test_errors_keep_their_historical_base() -> None:
    assert issubclass(_load("linter.compat.sources.SourceError"), ValueError)
    assert issubclass(_load("linter.parse.files.InputError"), OSError)
    assert issubclass(_load("linter.spark.output.OutputExists"), FileExistsError)


@pytest.mark.parametrize("qualified", ["linter.compat.sources.SourceError", "linter.engine.config.ConfigError",
                                       "linter.frames.errors.FramesInputError", "linter.codec.errors.SpecError"])
def test_an_input_error_is_one_line_exit_2(qualified: str) -> None:
    shown = translate(_load(qualified)("specs/Foo.json: what is wrong"))
    assert type(shown) is CliError and shown.exit_code == 2
    assert shown.message == "specs/Foo.json: what is wrong"


def test_anything_else_is_an_internal_error() -> None:
    shown = translate(ValueError("a bug"))
    assert isinstance(shown, InternalError) and shown.message == "ValueError: a bug"
