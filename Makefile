# The two quickstart targets each create .venv when it is missing.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench mutate clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check uv
	$(VENV)/bin/uv pip install --quiet --python $(PY) --compile-bytecode -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/hweval run

# two workers: this project's machines have two cores
test: $(STAMP)
	$(VENV)/bin/pytest -q -n 2

clean:
	rm -rf $(VENV) warehouse .pytest_cache

bench: $(STAMP)
	$(PY) tests/bench_pipeline.py

mutate: $(STAMP)
	$(PY) tests/mutate.py
