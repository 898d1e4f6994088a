# Two commands do everything on a fresh Debian machine (as root):
#   make demo   - set up, build the lab, run the lab matrix headless, print the grid
#                 (on a cold lab the native arch answers while the emulated one builds)
#   make test   - set up, build the lab, run lint, types and the whole test suite
# Every step is idempotent: a warm run only checks and reuses what exists.

VENV     := .venv
BIN      := $(VENV)/bin
ECOREADY := $(BIN)/ecoready
PYTHON   ?= python3

.PHONY: setup host test-host venv lab demo test lint unit clean

setup: host venv

host:
	@./scripts/setup-host.sh

test-host:
	@./scripts/setup-host.sh --test

$(BIN)/.installed: pyproject.toml
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install -q --disable-pip-version-check --upgrade 'pip>=24'
	@$(BIN)/pip install -q --disable-pip-version-check -e '.[test]'
	@touch $@

# Bytecode written ahead: with PYTHONDONTWRITEBYTECODE set (as on these machines) an
# editable install would compile every module from source at each start (bench/registry.py)
venv: host $(BIN)/.installed
	@$(BIN)/python -m compileall -q app probes >/dev/null

lab: setup
	@$(ECOREADY) lab build

demo: setup
	@# a cold lab answers early: the native arch builds and runs while the emulated one builds
	@./scripts/demo.sh

lint: venv
	$(BIN)/ruff check app probes tests bench scripts
	$(BIN)/ruff format --check app probes tests bench scripts
	$(BIN)/python scripts/typecheck.py

unit: venv
	$(BIN)/pytest -q tests/unit

# The suite on TEST_WORKERS pytest-xdist workers: most tests wait on containers, so a
# second worker keeps both cores busy; a third oversubscribes them (docs/performance.md).
# tests/conftest.py groups what must share a worker. Then the tests marked `alone`, which
# must have the engine to themselves, one at a time.
TEST_WORKERS ?= 2

test: lab lint test-host
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder -m 'not alone'
	$(BIN)/pytest -m alone

clean:
	-$(ECOREADY) cleanup
	-$(ECOREADY) lab down
	rm -rf $(VENV) reports
