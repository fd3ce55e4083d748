# tinygrad_like -- the two commands that matter:
#
#   make lab     open JupyterLab on the tour notebook (the main job)
#   make test    everything CI runs: ruff, pytest (tests/), the tests again as without PyTorch, nbval over
#                notebooks/, and the real-browser test (tests/browser: JupyterLab + Debian's Chromium)
#
# Both bootstrap the virtual environment $(VENV) themselves on first use (and again whenever
# pyproject.toml or setup.py changes), so a fresh clone needs nothing but Python 3.11 or newer.
# `make test` also installs Debian's Chromium with apt when /usr/bin/chromium is missing and we are root.
# Override on the command line, e.g. `make test VENV=/tmp/venv PY=python3.11`.

VENV ?= .venv
# the interpreter that creates $(VENV): empty means the newest Python >= 3.11 on the PATH (`make which-python`)
PY   ?=

BIN   := $(VENV)/bin
STAMP := $(VENV)/.stamp

# the tests run in this many pytest-xdist workers (CI has 2 cores; `make test TEST_JOBS=0` runs them in one
# process, `TEST_JOBS=auto` on every core)
TEST_JOBS ?= 2

# nbval over every tutorial, deterministic on a CPU-only machine (see notebooks/nbval_sanitize.cfg)
NBVAL_FLAGS := --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg \
               --nbval-cell-timeout=120

# the browser the real-browser test drives (Debian's package; Playwright never downloads one)
CHROMIUM ?= /usr/bin/chromium
# the real-browser test: its own pytest run (the main run deselects `-m browser`), under 10 minutes at
# most (about 4.5 minutes on 2 cores: three front-ends, two themes, a 100k-launch timeline, a 4,000-box graph
# and three learners' models); its modules run in TEST_JOBS workers, each module in one (its notebook is a
# module fixture), as they mostly wait on the browser; SIGTERM lets its fixtures stop JupyterLab and Chromium
BROWSER_TEST = TL_CHROMIUM=$(CHROMIUM) timeout --kill-after=30 600 $(BIN)/python -m pytest -q -m browser \
               -n $(TEST_JOBS) --dist loadfile tests/browser

# JupyterLab refuses to run as root unless told to; add the flag only when we are root
LAB_FLAGS  = $(if $(filter 0,$(shell id -u)),--allow-root)
# extra arguments for JupyterLab, e.g. `make lab LAB_ARGS="--no-browser --port=8890"`
LAB_ARGS  ?=

.DEFAULT_GOAL := help
.PHONY: help lab test test-browser fuzz notebooks chromium clean distclean which-python

# the long run of the differential fuzzer against PyTorch (make test runs seeds 0-1999);
# e.g. `make fuzz FUZZ_PROGRAMS=100000 FUZZ_SEED=123`
FUZZ_PROGRAMS ?= 50000
FUZZ_SEED     ?= 100000

help:  ## list the targets
	@echo "make lab        JupyterLab on notebooks/00_tour.ipynb (bootstraps $(VENV))"
	@echo "make test       ruff + pytest + nbval + browser test, as CI runs it (bootstraps $(VENV))"
	@echo "make test-browser  only the real-browser test (JupyterLab + Chromium, tests/browser)"
	@echo "make fuzz       the long differential fuzz against PyTorch (FUZZ_PROGRAMS, FUZZ_SEED)"
	@echo "make notebooks  re-run the tutorials and save their outputs (what nbval compares against)"
	@echo "make which-python  the interpreter a new $(VENV) would be made with (PY=... to choose)"
	@echo "make clean      remove build outputs and caches (keeps $(VENV))"
	@echo "make distclean  clean, and remove $(VENV) too"

# --- the environment ------------------------------------------------------------------------------
# The interpreter for a new venv, when PY is not given: every python3.N and python3 on the PATH is asked its
# version (a pyenv shim of a version that is not active fails to answer and is passed over) and the newest
# at or above 3.11 wins. With none, it names what it found and what to install, and fails.
PY_NAMES := python3 python3.11 python3.12 python3.13 python3.14 python3.15 python3.16
define FIND_PY
best=; best_minor=0; seen=; \
for name in $(PY_NAMES); do \
    command -v $$name >/dev/null 2>&1 || continue; \
    ver=$$($$name -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue; \
    seen="$$seen $$name ($$ver)"; \
    minor=$${ver#3.}; [ "$${ver%%.*}" = 3 ] || continue; \
    if [ "$$minor" -ge 11 ] && [ "$$minor" -gt "$$best_minor" ]; then best=$$name; best_minor=$$minor; fi; \
done; \
if [ -z "$$best" ]; then \
    echo "make: tinygrad_like needs Python 3.11 or newer, and the PATH has$${seen:+:}$${seen:- no python3 at all}." >&2; \
    echo "      Install one (python.org, 'apt install python3.12', 'brew install python@3.13', 'pyenv install 3.12')" \
         "or name it: make PY=/path/to/python3.12" >&2; \
    exit 1; \
fi; \
echo $$best
endef

which-python:  ## the interpreter a new $(VENV) would be made with
	@$(if $(PY),echo "$(PY)",$(FIND_PY))

# Create the venv if it is missing, bring pip/setuptools/wheel up to date, install this project in
# editable mode with the test and notebook extras, then touch the stamp so this runs only when the
# packaging files change.
$(STAMP): pyproject.toml setup.py
	@test -x $(BIN)/python || { py=$$($(if $(PY),echo "$(PY)",$(FIND_PY))) || exit 1; \
	    echo "creating $(VENV) with $$py ($$("$$py" --version 2>&1))"; "$$py" -m venv $(VENV); }
	$(BIN)/python -m pip install --upgrade pip setuptools wheel
	$(BIN)/python -m pip install -e '.[dev,notebook]'
	touch $@

# --- the two commands -----------------------------------------------------------------------------
lab: $(STAMP)  ## JupyterLab, opened on the tour notebook
	$(BIN)/jupyter lab $(LAB_FLAGS) $(LAB_ARGS) notebooks/00_tour.ipynb

# Each pytest step records what it skipped (tests/skip_policy.py: under CI a skip for want of a tool fails it), and
# the last line says, in one line, what every step skipped and why; the line before it is tools/sz.py's count of
# the learner's core (code lines of the six files that carry `x * y` to `loss.backward()`, against 1,500).
test: $(STAMP) chromium  ## lint, unit tests, notebooks, real browser: stops at the first step that fails
	rm -rf test-artifacts/skips
	$(BIN)/ruff check .
	TL_TEST_STEP=main $(BIN)/python -m pytest -q -n $(TEST_JOBS)
	TL_TEST_STEP=without-torch $(BIN)/python tests/run_without_torch.py -n $(TEST_JOBS)  # the tests that need no oracle pass without it
	$(BIN)/python -m pytest -q $(NBVAL_FLAGS) -n $(TEST_JOBS) --dist loadfile notebooks/  # (a notebook per worker)
	TL_TEST_STEP=browser $(BROWSER_TEST)
	@$(BIN)/python tools/sz.py --core  # a report, not a gate: the learner's core in code lines, against its budget
	@$(BIN)/python tests/skip_policy.py

fuzz: $(STAMP)  ## random op chains compared with PyTorch, values and gradients; prints any program that differs
	$(BIN)/python tests/fuzz_torch.py --programs $(FUZZ_PROGRAMS) --seed $(FUZZ_SEED)

test-browser: $(STAMP) chromium  ## the real-browser test alone; screenshots in test-artifacts/browser/
	$(BROWSER_TEST)

# nbval compares each tutorial's fresh outputs with the saved ones; this makes the saved ones from a clean,
# seeded run (every cell; the GPU cells of 05 and 08 fall back to the simulated device or a note) and prints
# each notebook's wall time
notebooks: $(STAMP)  ## re-run notebooks/NN_*.ipynb in place
	$(BIN)/python notebooks/execute.py

# Debian's Chromium for tests/browser, installed with apt when missing and we are root. If it cannot be
# installed, the browser test fails and says why (set TL_SKIP_BROWSER=1 to skip it, outside CI only).
chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the browser test"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
	    || echo "make: could not install chromium with apt; the browser test will fail"; \
	else echo "make: $(CHROMIUM) is missing and cannot be installed here (not root, or no apt);" \
	    "the browser test will fail"; fi

# --- housekeeping ---------------------------------------------------------------------------------
clean:  ## build outputs and caches; the venv stays
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache test-artifacts
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d \
	    -prune -exec rm -rf {} +

distclean: clean  ## and the venv
	rm -rf $(VENV)
