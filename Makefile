# Two commands: `make run` (set up and lint the bundled fixtures) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORE   := $(VENV)/.installed-core
TESTS  := $(VENV)/.installed-test

.PHONY: run test install install-test bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# pip's own warnings and setuptools' editable-install notice are noise here; errors still print.
PIP    := PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check

# The core (what `make run` needs: ~65 MB, seconds); the test extras (PySpark, pyarrow, pytest...) only
# for `make test`.
$(CORE): $(BIN)/python pyproject.toml setup.py linter/codec/_speedups.h linter/codec/_speedups.c linter/codec/_speedups_decode.c linter/codec/_speedups_encode.c
	$(PIP) -e .
	$(BIN)/python -m compileall -q linter  # an editable install leaves no bytecode: every start would compile
	touch $(CORE)

$(TESTS): $(CORE)
	$(PIP) -e '.[test]'
	touch $(TESTS)

install: $(CORE)
	@$(BIN)/python -m compileall -q linter  # cheap when up to date; new or edited modules get their bytecode

install-test: install $(TESTS)

## Lint the bundled fixtures (the valid ones pass, the invalid ones show every rule at work), then compare
## two revisions of the demo specs.
run: install
	$(BIN)/krpc-lint lint fixtures/valid
	@echo "--- fixtures/invalid: one spec per rule; every finding below is expected (exit 1) ---"
	@$(BIN)/krpc-lint lint --profile strict --ignore file-name-matches fixtures/invalid; test $$? -eq 1
	@echo "--- compat fixtures/compat/demo: old -> new; one wire break with its witness is expected (exit 1) ---"
	@$(BIN)/krpc-lint compat --profile strict fixtures/compat/demo/old fixtures/compat/demo/new; test $$? -eq 1

## The whole test suite (uses ../shared when present; CI=true makes its absence a failure).
test: install-test
	$(BIN)/ruff check linter tests bench
	$(BIN)/mypy  # strict on linter/ (pyproject.toml [tool.mypy])
	$(BIN)/lint-imports --no-cache --no-logo  # the rooms' layers (pyproject.toml [tool.importlinter])
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python bench/lint.py
	$(BIN)/python bench/compat.py

docs: install
	$(BIN)/python -m linter.model.schema
	$(BIN)/python -m linter.engine.config
	$(BIN)/python -m linter.report.rules_doc > docs/rules.md

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
