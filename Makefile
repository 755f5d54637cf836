# Two commands: `make run` and `make test`. Everything else is set up by them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
## Test processes: each has its own database; a file's tests run in one of them. Four on
## two cores: the tests wait on Postgres and on their servers more than they compute
## (a fresh clone: 5 m 17 s with four, 6 m 10 s with two).
TEST_WORKERS ?= 4
TSC := node_modules/.bin/tsc

.PHONY: run test system-packages image-check chaos lint typecheck openapi bench bench-ab bench-profile bench-context bench-dbos clean

$(STAMP): pyproject.toml clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[embedded,test]' -e ./clients/python
	touch $(STAMP)

# The TypeScript compiler that checks the console's JSDoc types (package-lock.json pins it).
$(TSC): package.json package-lock.json clients/typescript/package.json clients/typescript-codegen/package.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(TSC)

## Installs into .venv, starts an embedded Postgres when TOOLGATE_DATABASE_URL is unset,
## migrates, loads the demo tenant and key, and serves on :8000.
run: $(STAMP)
	$(BIN)/python -m app quickstart --port 8000

## The system packages the tests drive (Chromium, PgBouncer), the console's type check,
## then the whole suite against a real Postgres (see tests/support/dbserver.py for where it
## comes from).
test: system-packages $(STAMP) $(TSC)
	$(TSC) --noEmit --allowJs --checkJs --project tsconfig.json
	$(BIN)/ruff check app tests migrations bench clients/python
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

## Installs Debian's chromium and pgbouncer when missing, or says in one line what to run.
system-packages:
	scripts/system-packages

## The image built and run: podman builds the Dockerfile (no Docker engine needed), runs it
## against a fresh database on the local Postgres, finishes one run, stops it with SIGTERM
## (scripts/image-check says what it checks; CI runs it after `make test`).
image-check:
	scripts/image-check

## The console's plain ES modules, type-checked from their JSDoc (nothing is emitted).
typecheck: $(TSC)
	$(TSC) --noEmit --allowJs --checkJs --project tsconfig.json

lint: $(STAMP)
	$(BIN)/ruff check app tests migrations bench clients/python
	$(BIN)/lint-imports
	$(BIN)/ruff format --check app tests migrations bench clients/python

## The OpenAPI document, and what is generated from it: the console's schema.js, the Python
## client's models, operations and sync half, the TypeScript client's types and build.
openapi: $(STAMP) $(TSC)
	$(BIN)/python -m app openapi > openapi/openapi.json
	$(BIN)/python -m app console-schema > app/static/console/schema.js
	scripts/generate-python-client
	scripts/generate-typescript-client

## Throughput, latency and memory against a real server process (figures, not pass/fail).
## `make bench ARGS="--only 1,4 --quick"` passes flags on; `make bench-profile` (or
## ARGS=--profile) samples the server with py-spy under the 16-client workload and prints
## its CPU by layer (bench/profile.txt keeps the collapsed stacks, for a flame graph).
bench: $(STAMP)
	$(BIN)/python bench/bench_runs.py $(ARGS)

## Alternating A/B pairs against an earlier commit: make bench-ab BEFORE=3f54fae [PAIRS=5]
bench-ab: $(STAMP)
	$(BIN)/python bench/ab_pairs.py --before $(BEFORE) --pairs $(or $(PAIRS),5) $(if $(ARGS),-- $(ARGS))

bench-profile: $(STAMP)
	$(BIN)/python bench/bench_runs.py --only 4 --no-pgbench --no-one-worker --profile $(ARGS)

## A long run's model input under a context budget, step by step (figures; pure Python):
## the CPU a step spends building it, and what the last view keeps (docs/performance.md).
bench-context: $(STAMP)
	$(BIN)/python bench/bench_context.py $(ARGS)

## The chaos trials against real processes (figures, not pass/fail; docs/reliability.md):
## a SIGKILLed replica taken over, a crash loop of 1,000 runs, a database failover under
## load. `make chaos ARGS="--only failover --pooler"` passes flags on.
chaos: $(STAMP)
	$(BIN)/python bench/chaos.py $(ARGS)

## A reference: DBOS Transact running the same loop in-process (bench/bench_dbos.py). DBOS
## gets a virtualenv of its own, so that its pinned dependencies never meet ours.
DBOS_VENV := .venv-dbos
DBOS_STAMP := $(DBOS_VENV)/.installed

$(DBOS_STAMP): bench/requirements-dbos.txt
	$(PYTHON) -m venv $(DBOS_VENV)
	$(DBOS_VENV)/bin/pip install --quiet --upgrade pip
	$(DBOS_VENV)/bin/pip install --quiet -r bench/requirements-dbos.txt
	touch $(DBOS_STAMP)

bench-dbos: $(DBOS_STAMP)
	$(DBOS_VENV)/bin/python bench/bench_dbos.py $(ARGS)

clean:
	rm -rf $(VENV) $(DBOS_VENV) .pytest_cache .ruff_cache node_modules
