# Two commands matter on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow lint package-check bench bench-scale screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,bench,dev]'
	touch $(STAMP)

demo: $(STAMP)  ## Run the demo on a local SQLite file
	$(BIN)/monque-tui --demo

# Most tests wait on subprocesses, timers and SQLite rather than the CPU, so four pytest-xdist
# workers roughly halve the wall time even on two cores. `make test PYTEST_ARGS=-n0` runs serially.
# --dist loadgroup: tests marked @pytest.mark.xdist_group("name") all run on one worker, one
# after another (for tests that must not run beside each other); the rest go to any worker.
PYTEST_WORKERS ?= 4
PYTEST_ARGS ?=

test: $(STAMP)  ## Run the whole test suite (in parallel: PYTEST_WORKERS, default 4)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

test-slow: $(STAMP)  ## Run the long stress variants as well
	$(BIN)/python -m pytest -m "slow or not slow" $(PYTEST_ARGS)

lint: $(STAMP)  ## House rules: ruff check, ruff format --check, mypy, import-linter, workflow structure (all run; any failure fails)
	@status=0; \
	echo "== ruff check"; $(BIN)/ruff check . || status=1; \
	echo "== ruff format --check"; $(BIN)/ruff format --check . || status=1; \
	echo "== mypy"; $(BIN)/mypy || status=1; \
	echo "== lint-imports"; $(BIN)/lint-imports || status=1; \
	echo "== workflows (parsed and checked: they cannot run here)"; $(BIN)/python .ci/check_workflows.py || status=1; \
	exit $$status

package-check: $(STAMP)  ## Build sdist + wheel, install the wheel in a fresh venv, smoke-test it from outside the tree
	$(BIN)/python .ci/package-smoke

bench: $(STAMP)  ## Measure throughput and latency against huey and raw SQLite
	$(BIN)/python -m bench.run

# Not part of `make test`: builds stores of 100k, 1M and 10M jobs (cached in SCALE_CACHE, several GB
# for 10M) and writes its tables into docs/benchmarks.md. SCALE_ARGS=--sizes 100k,1m for a shorter run.
SCALE_CACHE ?= /work/scale-cache
SCALE_ARGS ?=

bench-scale: $(STAMP)  ## Measure the console and the engine on 100k / 1M / 10M-job stores (issue 26 goals)
	$(BIN)/python -m bench.scale --cache $(SCALE_CACHE) $(SCALE_ARGS)

screenshots: $(STAMP)  ## Regenerate the console's SVG screenshots (seeded data, frozen clock)
	$(BIN)/python -m monque_tui.demo.screenshots screenshots

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache *.egg-info build dist
