"""The wheel holds every package of linter/: setuptools installs only the packages pyproject.toml lists, so a new
room missing there would work from a checkout (an editable install) and fail from PyPI with an ImportError."""

from __future__ import annotations

import tomllib

from conftest import REPO_ROOT


def test_every_package_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
                 ["packages"])
    present = {".".join(path.parent.relative_to(REPO_ROOT).parts) for path in (REPO_ROOT / "linter").rglob("__init__.py")}
    assert present - listed == set(), "packages the wheel would leave out"
    assert listed - present <= {"linter._rules"}, "listed packages that do not exist"
