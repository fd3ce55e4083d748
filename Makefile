# tinygrad_like -- the two commands that matter:
#
#   make lab     open JupyterLab on the tour notebook (the main job)
#   make test    everything CI runs: ruff, pytest (tests/), nbval over notebooks/
#
# Both bootstrap the virtual environment $(VENV) themselves on first use (and again whenever
# pyproject.toml or setup.py changes), so a fresh clone needs nothing but Python 3.11.
# Override on the command line, e.g. `make test VENV=/tmp/venv PY=python3.11`.

VENV ?= .venv
PY   ?= python3.11

BIN   := $(VENV)/bin
STAMP := $(VENV)/.stamp

# nbval over every tutorial, deterministic on a CPU-only machine (see notebooks/nbval_sanitize.cfg)
NBVAL_FLAGS := --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg \
               --nbval-cell-timeout=120

# JupyterLab refuses to run as root unless told to; add the flag only when we are root
LAB_FLAGS := $(if $(filter 0,$(shell id -u)),--allow-root)
# extra arguments for JupyterLab, e.g. `make lab LAB_ARGS="--no-browser --port=8890"`
LAB_ARGS  ?=

.DEFAULT_GOAL := help
.PHONY: help lab test clean distclean

help:  ## list the targets
	@echo "make lab        JupyterLab on notebooks/00_tour.ipynb (bootstraps $(VENV))"
	@echo "make test       ruff + pytest + nbval, as CI runs it (bootstraps $(VENV))"
	@echo "make clean      remove build outputs and caches (keeps $(VENV))"
	@echo "make distclean  clean, and remove $(VENV) too"

# --- the environment ------------------------------------------------------------------------------
# Create the venv if it is missing, bring pip/setuptools/wheel up to date, install this project in
# editable mode with the test and notebook extras, then touch the stamp so this runs only when the
# packaging files change.
$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip setuptools wheel
	$(BIN)/python -m pip install -e '.[dev,notebook]'
	touch $@

# --- the two commands -----------------------------------------------------------------------------
lab: $(STAMP)  ## JupyterLab, opened on the tour notebook
	$(BIN)/jupyter lab $(LAB_FLAGS) $(LAB_ARGS) notebooks/00_tour.ipynb

test: $(STAMP)  ## lint, unit tests, notebooks: stops at the first step that fails
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q
	$(BIN)/python -m pytest -q $(NBVAL_FLAGS) notebooks/

# --- housekeeping ---------------------------------------------------------------------------------
clean:  ## build outputs and caches; the venv stays
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache test-artifacts
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d \
	    -prune -exec rm -rf {} +

distclean: clean  ## and the venv
	rm -rf $(VENV)
