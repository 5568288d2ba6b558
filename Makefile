# Podium: `make serve` starts the server on the embedded default, `make test` runs the whole suite.
# Both set up what they need on a fresh machine first.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
export PODIUM_SHARED_DIR ?= $(abspath ../shared)

.PHONY: serve serve-full test lint check install install-serve lock bench clean runtimes screenshots

# Installation per tier, every version pinned by constraints.txt (the image and CI use it too):
# `make serve` takes what the server and the fast hosted baselines need, no torch, so that it is up
# quickly on a fresh machine; `make install` (and so `make test`, `make serve-full`) takes everything:
# the test tools and every hosted baseline, the MiniLM ones with torch.
# The serve tier installs with uv (pinned too): pip took 147 s for it on a fresh clone, uv 19 s with
# an empty cache (bench/RESULTS.md, "Installation per tier"). The full tier keeps pip, which takes the
# CPU build of torch where the machine's pip configuration offers one.
PIP := $(PY) -m pip install --quiet --constraint constraints.txt
UV := $(VENV)/bin/uv pip install --quiet --python $(PY) --constraint constraints.txt

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/bin/uv: | $(VENV)/bin/python
	$(PIP) uv

$(VENV)/.installed-serve: pyproject.toml constraints.txt | $(VENV)/bin/uv
	$(UV) -e '.[baselines-light]'
	touch $@

$(VENV)/.installed: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) --upgrade pip
	$(PIP) -e '.[test,baselines]'
	touch $@ $(VENV)/.installed-serve

install: $(VENV)/.installed
install-serve: $(VENV)/.installed-serve

# Pin the newest releases that pyproject.toml admits: a full installation in a scratch environment,
# frozen into constraints.txt (local version labels such as torch's +cpu dropped, so that a GPU image
# takes the CUDA build of the same release). Run it deliberately, then run the tests.
LOCK_VENV := $(VENV)-lock
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install --quiet '.[test,baselines,installer]'
	{ echo "# Every package of a full installation, pinned (make lock writes this file; pip uses it through"; \
	  echo "# --constraint in the Makefile, the Dockerfile and so CI). pyproject.toml keeps the ranges."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --all --exclude podium | sed -E 's/\+[A-Za-z0-9.]+$$//'; \
	} > constraints.txt
	@# The CUDA build of torch (the GPU image's) adds packages that a CPU installation lacks: pin them too.
	$(LOCK_VENV)/bin/python docker/gpu_constraints.py
	rm -rf $(LOCK_VENV)
	@# Every pin must install on every Python 3.11 (some releases need a later 3.11.x): hold those back by hand.
	{ $(PYTHON) docker/requirements.py; $(PYTHON) docker/requirements.py --extras test,baselines; } > $(VENV)-lock.txt
	$(PYTHON) -m pip install --quiet --dry-run --ignore-installed --python-version 3.11 --only-binary=:all: \
		--target $(VENV)-lock.dry --constraint constraints.txt -r $(VENV)-lock.txt
	rm -rf $(VENV)-lock.txt $(VENV)-lock.dry

# Browser tests drive Debian's chromium through Playwright (no browser downloads).
/usr/bin/chromium:
	@if [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
		echo "chromium is missing: run 'sudo apt-get install chromium' for the browser tests"; \
	fi

# axe-core for the accessibility checks of the browser tests (tests/app/web/accessibility.py), from the
# npm registry at the version package-lock.json pins; the tests inject it into the pages.
AXE_DIR := tests/app/web/axe
$(AXE_DIR)/node_modules/axe-core/axe.min.js: $(AXE_DIR)/package.json $(AXE_DIR)/package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --prefix $(AXE_DIR) --no-audit --no-fund --silent && touch $@; \
	else \
		echo "npm is missing: run 'sudo apt-get install npm' for the accessibility checks of the browser tests"; \
	fi

# Scoring programs of CodaLab and Codabench competitions run under bubblewrap (Debian's bubblewrap).
/usr/bin/bwrap:
	@if [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
	else \
		echo "bubblewrap is missing: run 'sudo apt-get install bubblewrap' to run scoring programs"; \
	fi

# Several web processes behind one address are tested behind Debian's haproxy (tests/app/distributed/).
/usr/sbin/haproxy:
	@if [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy; \
	else \
		echo "haproxy is missing: run 'sudo apt-get install haproxy' for the test of several web processes"; \
	fi

# A runtime like CodaLab's legacy images (old numpy and PyYAML), for programs written for them; the tests run
# the reference bundles' programs with it. How operators build such runtimes: examples/README.md.
LEGACY_RUNTIME := .runtimes/codalab-legacy
$(LEGACY_RUNTIME)/.installed: Makefile
	rm -rf $(LEGACY_RUNTIME)
	$(PYTHON) -m venv $(LEGACY_RUNTIME)
	$(LEGACY_RUNTIME)/bin/pip install --quiet "numpy>=1.26,<2" "scipy<1.16" "scikit-learn<1.8" "pandas<2.3" \
		"setuptools<81" psutil "cython<3" wheel
	$(LEGACY_RUNTIME)/bin/pip install --quiet --no-build-isolation "pyyaml==5.4.1"
	touch $@

runtimes: $(LEGACY_RUNTIME)/.installed

# The port checked first (a busy one stops here, before anything changes), the example competitions (on
# the real releases when ../shared/data is there, else on the small example data) and two demo accounts
# (made once, never changed again), then the server; every step is safe to run again. The fast
# baselines' runs are only queued: the server runs them once it answers (their rows appear seconds later).
SERVE_DATA := $(if $(wildcard $(PODIUM_SHARED_DIR)/data),--data-dir $(PODIUM_SHARED_DIR)/data)
serve: $(VENV)/.installed-serve
	$(VENV)/bin/podium serve --check-port --host $(HOST) --port $(PORT)
	$(VENV)/bin/podium demo --no-wait $(SERVE_DATA)
	$(VENV)/bin/podium serve --host $(HOST) --port $(PORT)

# The same with every hosted baseline available (torch and the MiniLM model: about 1.5 GB more).
serve-full: $(VENV)/.installed
	$(VENV)/bin/podium serve --check-port --host $(HOST) --port $(PORT)
	$(VENV)/bin/podium demo --no-wait $(SERVE_DATA)
	$(VENV)/bin/podium serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy scorers leaderboard baselines sandbox codalab

# The tests in parallel (pytest-xdist): many of them wait on servers, browsers, workers and leases, so one
# worker more than the cores pays off; more than that costs CPU (each worker's own set-up, and every process of
# the tests slower with more of them sharing the cores: bench/RESULTS.md, "The test suite"). Tests sharing a
# module's fixture stay on one worker (tests/conftest.py). TEST_WORKERS=0 runs them in this one process.
# The S3 store's tests (and the distributed ones, whose files go to object storage) use one S3-protocol
# server for the whole run: moto's (`moto[server]`, a test tool), started here on a free port and stopped after.
# The sources are byte-compiled first: where PYTHONDONTWRITEBYTECODE is set, every server, worker and command a
# test starts would otherwise compile each module it imports again (about 0.15 s of CPU for a server's start).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: lint /usr/bin/chromium /usr/bin/bwrap /usr/sbin/haproxy runtimes $(AXE_DIR)/node_modules/axe-core/axe.min.js
	@$(PY) -m compileall -q -j 0 app scorers leaderboard baselines sandbox codalab tests bench > /dev/null
	@port=$$($(PY) -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	$(VENV)/bin/moto_server -H 127.0.0.1 -p $$port >/dev/null 2>&1 & moto=$$!; \
	trap 'kill $$moto' EXIT; \
	PODIUM_TEST_S3_ENDPOINT=http://127.0.0.1:$$port $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

# The screenshots of the main pages in docs/screenshots/ (1400 px and 400 px), from a real seeded server.
screenshots: $(VENV)/.installed /usr/bin/chromium
	$(PY) docs/screenshots/take.py

bench: $(VENV)/.installed
	$(PY) bench/score_bench.py

clean:
	rm -rf $(VENV) $(LOCK_VENV) .runtimes .pytest_cache .mypy_cache .ruff_cache
