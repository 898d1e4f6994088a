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
	@# no bytecode from pip (one file at a time): compileall does it after, on every core
	@$(BIN)/pip install -q --disable-pip-version-check --no-compile -e '.[test]'
	@$(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null
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

LINT := $(BIN)/ruff check app probes tests bench scripts && \
	$(BIN)/ruff format --check app probes tests bench scripts && \
	$(BIN)/python scripts/typecheck.py

lint: venv
	$(LINT)

unit: venv
	$(BIN)/pytest -q tests/unit

# The suite in three phases. First the lab build, and beside it lint, types and the
# in-process tests (on TEST_WORKERS workers), which use no engine: their DOCKER_HOST leads
# nowhere, so one that reaches for the engine fails rather than disturb the others; on a
# fresh machine the build takes minutes of which they fill the gaps, on a warm one they
# go on beside the engine tests. Then the engine tests on TEST_WORKERS pytest-xdist
# workers: most wait on containers, so a second worker keeps both cores busy; a third
# oversubscribes them (docs/performance.md). tests/conftest.py groups what must share a
# worker. Then the tests marked `alone`, which must have the engine to themselves, one at
# a time. The in-process tests' output (and lint's) follows.
TEST_WORKERS ?= 2
IN_PROCESS_LOG := build/tests-in-process.log
NO_ENGINE := unix:///run/ecoready-tests-use-no-engine.sock

test: setup test-host
	@mkdir -p build
	@( $(LINT) && \
		DOCKER_HOST=$(NO_ENGINE) $(BIN)/pytest -n $(TEST_WORKERS) -p no:cacheprovider -m 'not docker and not alone' \
	) >$(IN_PROCESS_LOG) 2>&1 & in_process=$$!; \
	echo "lint, types and the in-process tests run beside the lab build and the engine tests: $(IN_PROCESS_LOG)"; \
	$(ECOREADY) lab build || { code=$$?; wait $$in_process; cat $(IN_PROCESS_LOG); exit $$code; }; \
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder -m 'docker and not alone'; engine=$$?; \
	$(BIN)/pytest -m alone; alone=$$?; \
	wait $$in_process; in_process=$$?; \
	echo "lint, types and pytest -m 'not docker and not alone' (in-process, beside the lab build):"; \
	cat $(IN_PROCESS_LOG); \
	[ $$engine -eq 0 ] && [ $$alone -eq 0 ] && [ $$in_process -eq 0 ]

clean:
	-$(ECOREADY) cleanup
	-$(ECOREADY) lab down
	rm -rf $(VENV) reports
