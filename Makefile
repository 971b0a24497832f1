# simserver developer entry points. Every target sets itself up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help demo test docker-test lint lint-workflows typecheck compiled bench soak docs docs-check traces clean

help:  ## List targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

PLUGINS := $(wildcard plugins/*/pyproject.toml)

$(STAMP): pyproject.toml $(PLUGINS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# The distribution was called simserver before 0.1.0 (now frc-simserver): two would
	@# register every built-in model type twice.
	$(BIN)/python -m pip uninstall --quiet --yes simserver 2>/dev/null || true
	rm -rf simserver.egg-info
	$(BIN)/python -m pip install --quiet -e '.[test,robot,sweep]' $(foreach p,$(PLUGINS),-e $(dir $(p)))
	touch $(STAMP)

demo: $(STAMP)  ## Drive the kitbot through a scripted S-curve; print a summary, write build/demo.png
	$(BIN)/simserver run --inputs simserver/data/s_curve.csv --fast --progress --summary \
		--plot build/demo.png

WORKFLOWS := $(wildcard .github/workflows/*.yml examples/ci/*.yml)

test: $(STAMP)  ## Lint, type-check and run the whole test suite (what CI runs)
	$(BIN)/ruff check simserver tests benchmarks examples plugins tools
	$(BIN)/mypy
	$(MAKE) --no-print-directory lint-workflows
	$(BIN)/python -m pytest -q tests $(foreach p,$(PLUGINS),$(dir $(p))tests)

docker-test: $(STAMP)  ## Run docs/ci.md's docker and compose commands as written, health and failure checks
	ROBOT_PYTHON=$(BIN)/python bash docker/test.sh

lint: $(STAMP)  ## ruff check, and the GitHub workflows
	$(BIN)/ruff check simserver tests benchmarks examples plugins tools
	$(MAKE) --no-print-directory lint-workflows

lint-workflows: $(STAMP)  ## GitHub workflows (ours and the recipe for teams): schema and zizmor
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows $(WORKFLOWS)
	$(BIN)/zizmor --offline --strict-collection --no-progress $(WORKFLOWS)

typecheck: $(STAMP)  ## mypy on simserver/
	$(BIN)/mypy

compiled: $(STAMP)  ## Build a copy of simserver with its hot modules compiled (mypyc) in build/compiled
	$(BIN)/python tools/compile.py --out build/compiled

bench: compiled  ## Print speed and latency figures next to references measured in the same run
	$(BIN)/python benchmarks/run_all.py --output benchmarks/RESULTS.md

soak: $(STAMP)  ## Run in real time for an hour (SIMSERVER_SOAK_SECONDS): clock drift, memory growth
	$(BIN)/python -m pytest -q -s -m soak tests/reliability

docs: $(STAMP)  ## Regenerate docs/config.md and docs/protocol.md from the code
	$(BIN)/simserver docs config > docs/config.md
	$(BIN)/simserver docs protocol > docs/protocol.md

BASE ?= HEAD
traces: $(STAMP)  ## Traces vs commit BASE (default HEAD): identical, or the first differing record
	$(BIN)/python tools/traces.py compare --base $(BASE)

clean:  ## Remove the virtualenv and build outputs
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache
