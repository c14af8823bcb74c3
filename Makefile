# The two quickstart targets each create .venv when it is missing.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
UV_VERSION := 0.13.9
# a DuckDB 1.x client, as analysts' CLIs and BI drivers often are: tests/test_analytics.py reads the warehouse with it
DUCKDB1_VENV := .venv-duckdb1
DUCKDB1_STAMP := $(DUCKDB1_VENV)/.installed

.PHONY: run test test-slow test-all bench mutate fuzz lock clean

# Installs exactly the versions in uv.lock (`--locked` fails if pyproject.toml changed without `uv lock`);
# `--inexact` keeps uv itself, which the lockfile does not list.
$(STAMP): pyproject.toml uv.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(VENV)/bin/uv sync --quiet --locked --inexact --extra dev --compile-bytecode \
		--python $(PY)
	touch $(STAMP)

$(DUCKDB1_STAMP): $(STAMP)
	test -x $(DUCKDB1_VENV)/bin/python || python3 -m venv --without-pip $(DUCKDB1_VENV)
	$(VENV)/bin/uv pip install --quiet --python $(DUCKDB1_VENV)/bin/python duckdb==1.1.3
	touch $(DUCKDB1_STAMP)

run: $(STAMP)
	$(VENV)/bin/hweval run

# The tests' scratch files (pytest's tmp_path folders and TMPDIR: about 2 GB of warehouse copies a run, where each
# DuckDB commit is an fsync) go to a folder made for the run and removed after it, on a memory file system where there
# is one with room (/dev/shm with 4 GiB free), else in $TMPDIR or /tmp. Measured on 2 cores in one sitting: make test
# 2 min 48 s on /dev/shm against 3 min 32 s on disk. TEST_TMP=<folder> puts it elsewhere.
TEST_TMP ?= $(shell df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 >= 4194304 { print "/dev/shm" }')
#
# The tests' processes also write bytecode where the shell says not to (PYTHONDONTWRITEBYTECODE, set on this project's
# machines): pytest keeps each test module with its asserts rewritten in tests/__pycache__ only where Python may write
# bytecode, and otherwise rewrites and compiles all of them in each worker at every run. Measured on 2 cores: a
# collection of the suite took 8.8 s without that cache and 3.7 s with it (each worker collects the whole suite).
SCRATCH = tmp="$$(mktemp -d "$(or $(TEST_TMP),$${TMPDIR:-/tmp})/hweval-test-XXXXXX")" && \
	trap 'rm -rf "$$tmp"' EXIT INT TERM && export TMPDIR="$$tmp" && unset PYTHONDONTWRITEBYTECODE &&

# two workers: this project's machines have two cores; the tests that need Prefect's test server go to one of them
# (tests/conftest.py), which starts it and runs the whole flow once. Each worker's DuckDB connections run on one thread
# (HWEVAL_DUCKDB_THREADS; DuckDB's default is a thread a core): two workers of two threads each made four on two cores.
# Measured on 2 cores: 3 min 4-35 s with DuckDB's default, 2 min 40 s-3 min 10 s with 1 (alternated: 197 s against
# 172 s, 217 s against 184 s). make test-slow leaves DuckDB its default, so that CI still runs whole runs on every
# core. TEST_DUCKDB_THREADS=<n> make test sets another.
TEST_DUCKDB_THREADS ?= 1
test: $(STAMP) $(DUCKDB1_STAMP)
	@$(SCRATCH) export HWEVAL_DUCKDB_THREADS="$(TEST_DUCKDB_THREADS)" && set -x && \
		$(VENV)/bin/pytest -q -n 2 --dist loadgroup --basetemp="$$tmp/pytest"

# the tests marked slow (whole runs in their own processes: killed runs, overlapping runs, crash recovery)
test-slow: $(STAMP) $(DUCKDB1_STAMP)
	@$(SCRATCH) set -x && $(VENV)/bin/pytest -q -n 2 -m slow --basetemp="$$tmp/pytest"

# everything CI runs
test-all: test test-slow

# upgrade the locked versions on purpose, within pyproject.toml's bounds; review the diff of uv.lock and run make test
lock: $(STAMP)
	$(VENV)/bin/uv lock --upgrade

clean:
	rm -rf $(VENV) $(DUCKDB1_VENV) warehouse .pytest_cache

# the source parsers' fuzz tests at length (make test runs a few examples of each)
fuzz: $(STAMP)
	@$(SCRATCH) set -x && $(VENV)/bin/pytest -q -n 2 -m fuzz tests/test_fuzz_sources.py --basetemp="$$tmp/pytest"

bench: $(STAMP)
	$(PY) tests/bench_pipeline.py
	$(PY) tests/bench_goals.py

mutate: $(STAMP)
	$(PY) tests/mutate.py
