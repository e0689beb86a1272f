# Grove: `make run` starts it, `make test` runs the whole suite. Both set themselves up first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# The first Python >= 3.12 found: python3.13, python3.12, pyenv's, then python3.
PYTHON ?= $(shell for p in python3.13 python3.12 $$HOME/.pyenv/versions/3.13*/bin/python3 $$HOME/.pyenv/versions/3.12*/bin/python3 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { command -v $$p; break; }; done)
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
CHROMIUM ?= $(shell command -v chromium || command -v chromium-browser || command -v google-chrome)

.PHONY: help setup run test test-pg bench lint format chromium mutate

help:
	@echo "make run    set up, migrate, load the demo memory if empty, serve on 127.0.0.1:8000 with the worker"
	@echo "make test   set up (Chromium included) and run the whole test suite"
	@echo "make test-pg  the same suite on a throwaway PostgreSQL cluster (15 or later)"
	@echo "make bench  run the benchmarks and write docs/benchmarks.md"
	@echo "make lint   ruff check + format check + mypy"
	@echo "make mutate mutation testing of the custody and visibility modules (slow; MUTANTS='memory.trust*' narrows)"

# uv comes from PyPI through any Python 3 that has venv (Debian: python3-venv); without one,
# from uv's own installer (curl). With no Python >= 3.12 on PATH, uv then installs one.
BOOT_PYTHON := $(or $(PYTHON),$(shell command -v python3))
UV_INSTALLER := https://astral.sh/uv/install.sh

$(UV):
	@rm -rf $(TOOLS)
	@if [ -n "$(BOOT_PYTHON)" ] && $(BOOT_PYTHON) -m venv $(TOOLS) 2>/dev/null; then \
		$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv; \
	else \
		rm -rf $(TOOLS); \
		echo "No Python with venv to bootstrap uv: installing uv with its installer ($(UV_INSTALLER), needs curl)"; \
		mkdir -p $(TOOLS) && curl -LsSf $(UV_INSTALLER) -o $(TOOLS)/install-uv.sh \
			&& env UV_INSTALL_DIR=$(CURDIR)/$(TOOLS)/bin UV_NO_MODIFY_PATH=1 sh $(TOOLS)/install-uv.sh; \
	fi

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	@if [ -z "$(PYTHON)" ]; then \
		echo "No Python >= 3.12 on PATH (python3.13, python3.12, pyenv's or python3): uv installs one: $(UV) python install 3.12"; \
		$(UV) python install 3.12 || { echo "uv could not install Python 3.12 (no network to its downloads?): install python3.12, or set PYTHON=/path/to/python3.12"; exit 1; }; \
	fi
	UV_PYTHON=$(or $(PYTHON),3.12) $(UV) sync --frozen --quiet --extra semantic
	@touch $@

setup: $(VENV)/.synced

run: setup
	$(PY) manage.py migrate --verbosity 0
	$(PY) manage.py demo
	$(PY) manage.py sleep --install-schedule
	$(PY) manage.py watch --install-schedule
	$(PY) manage.py serve

chromium:
	@if [ -z "$(CHROMIUM)" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing Chromium from Debian's packages..."; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else \
			echo "The browser tests need Chromium: run 'sudo apt-get install chromium' (or set CHROMIUM=/path)."; exit 1; \
		fi; \
	fi

test: setup chromium
	GROVE_DATA_DIR=$(CURDIR)/var/test CHROMIUM=$${CHROMIUM:-$$(command -v chromium || command -v chromium-browser)} \
		$(PY) -m pytest -p no:cacheprovider $(PYTEST_ARGS)

bench: setup
	GROVE_DATA_DIR=$(CURDIR)/var/bench-data $(PY) -m bench $(BENCH_ARGS)

TEMPLATES = $(shell find templates -name '*.html')
PY_SOURCES = $(shell git ls-files '*.py' 2>/dev/null | grep -v '/migrations/' || find . -name '*.py' -not -path './.venv/*' -not -path '*/migrations/*')

# The checks .pre-commit-config.yaml runs before each commit, as checks that change nothing.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/django-upgrade --target-version 6.1 --check $(PY_SOURCES)
	$(VENV)/bin/djade --target-version 6.1 --check $(TEMPLATES)
	$(VENV)/bin/mypy memory/ review/ agents/ dashboard/ web/

format: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/django-upgrade --target-version 6.1 $(PY_SOURCES) || true
	$(VENV)/bin/djade --target-version 6.1 $(TEMPLATES) || true

# The whole suite on a throwaway PostgreSQL cluster, 15 or later (.ci/postgres.sh installs the
# release's server when missing, starts the cluster and removes it).
test-pg: setup chromium
	.ci/postgres.sh $(MAKE) --no-print-directory test

# Not in CI: run before closing an issue that touches the custody or visibility modules.
mutate: setup
	rm -rf mutants
	GROVE_DATA_DIR=$(CURDIR)/var/mutate $(VENV)/bin/mutmut run --max-children 1 $(MUTANTS) || true
	$(PY) scripts/mutation_report.py
