# Podium: `make serve` starts the server on the embedded default, `make test` runs the whole suite.
# Both set up what they need on a fresh machine first.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
export PODIUM_SHARED_DIR ?= $(abspath ../shared)

.PHONY: serve test lint check install bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,baselines]'
	touch $@

install: $(VENV)/.installed

serve: $(VENV)/.installed
	@echo "The server comes with the evaluation service; for now, score files with: $(VENV)/bin/podium score --help"

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy scorers leaderboard baselines

test: lint
	$(PY) -m pytest

bench: $(VENV)/.installed
	$(PY) bench/score_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
