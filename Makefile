# Everything a newcomer needs: `make demo` opens the app on a demo store's guided tour,
# `make test` lints (ruff, mypy) and runs the tests. Both install into .venv first when needed (Python 3.11+ and
# network access to PyPI).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo lint test clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: install
	$(BIN)/lca-tui demo --tour

# ruff's rule set and its reasons are in pyproject.toml ([tool.ruff.lint]); mypy checks store/
# and its callers (lca_tui/, screens/, widgets/): a wrong call of a Store method is an error.
lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy store lca_tui screens widgets

# Both backends (SQLite and the embedded PostgreSQL, tests/pg_server.py), spread over one
# worker per CPU (pytest-xdist; a file's tests stay on one worker, in their order). Asked for by
# name, so a server that cannot start fails the run instead of skipping its half;
# `make test LCA_TEST_BACKENDS=sqlite` runs SQLite alone.
LCA_TEST_BACKENDS ?= sqlite,postgres
ifeq ($(strip $(LCA_TEST_BACKENDS)),)
override LCA_TEST_BACKENDS := sqlite,postgres
endif
export LCA_TEST_BACKENDS
test: lint
	$(BIN)/python -m pytest -q -n logical --dist loadfile

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
