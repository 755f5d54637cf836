# Two commands: `make run` and `make test`. Everything else is set up by them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint openapi bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[embedded,test]'
	touch $(STAMP)

## Installs into .venv, starts an embedded Postgres when TOOLGATE_DATABASE_URL is unset,
## migrates, loads the demo tenant and key, and serves on :8000.
run: $(STAMP)
	$(BIN)/python -m app quickstart --port 8000

## The whole suite against a real Postgres (see tests/support/dbserver.py for where it comes from).
test: $(STAMP)
	$(BIN)/ruff check app tests migrations bench
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check app tests migrations bench
	$(BIN)/ruff format --check app tests migrations bench

openapi: $(STAMP)
	$(BIN)/python -m app openapi > openapi/openapi.json

## Throughput, latency and memory against a real server process (figures, not pass/fail).
bench: $(STAMP)
	$(BIN)/python bench/bench_runs.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
