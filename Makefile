# Two commands matter on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow bench screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

demo: $(STAMP)  ## Run the demo on a local SQLite file
	$(BIN)/monque-tui --demo

test: $(STAMP)  ## Run the whole test suite
	$(BIN)/python -m pytest

test-slow: $(STAMP)  ## Run the long stress variants as well
	$(BIN)/python -m pytest -m "slow or not slow"

bench: $(STAMP)  ## Measure throughput and latency against huey and raw SQLite
	$(BIN)/python -m bench.run

screenshots: $(STAMP)  ## Regenerate the console's SVG screenshots (seeded data, frozen clock)
	$(BIN)/python -m monque_tui.screenshots screenshots

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info
