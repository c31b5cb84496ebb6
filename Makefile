# Everything installs into .venv in the repo root; a fresh machine needs only Python 3.11 and pip.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# axe-core, the accessibility checker the HTML tests run in headless Chromium (tests/browser.py),
# from the npm registry into .venv/node_modules; without npm those tests skip and say why.
AXE_VERSION := 4.14.1
AXE := $(VENV)/node_modules/axe-core/axe.min.js

.PHONY: install axe test check validate compat demo bench bench-otter clean

install: $(STAMP)

# The exact versions of constraints.txt (JAX among them): every test, and every figure in the
# docs, ran on these. pyproject.toml declares the range of JAX jaxgrade supports.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

# Everything (CI runs this): the catalogue validated under one seed among the rest.
test: install axe
	$(BIN)/python -m pytest -q

# The fast tier, between two edits: what is marked slow (catalogue validation, pip builds, the
# Dask cluster, Chromium, containers, anything over ~10 s) is left for `make test`.
check: install
	$(BIN)/python -m pytest -q -m "not slow"

# The catalogue under all five seeds (a property may fail only for some): before a release, or
# after changing an exercise, the check library or the strategies.
validate: install
	JAXGRADE_VALIDATE_SEEDS=5 $(BIN)/python -m pytest -q tests/test_validate.py

# The oldest and the newest JAX of pyproject.toml's range, each in a venv of its own
# (.venv-compat/VERSION: jaxgrade from this checkout, everything but JAX at constraints.txt's
# versions), the catalogue validated under each (one seed: COMPAT_SEEDS=5 for all), and forgery
# graded there (compat/tamper.py). JAX 0.11 and later need Python 3.12 or newer (found
# on PATH or with pyenv: compat/python.sh). docs/compatibility.md.
COMPAT_OLDEST := 0.9.2
COMPAT_NEWEST := 0.12.0.1
COMPAT_OLDEST_PYTHON ?= $(PYTHON)
COMPAT_NEWEST_PYTHON ?= python3.12
COMPAT_SEEDS ?= 1
# Which of the two to validate: CI without Python 3.12 asks for the oldest alone (.ci/run).
COMPAT_VERSIONS ?= $(COMPAT_OLDEST) $(COMPAT_NEWEST)
compat:
	$(if $(filter $(COMPAT_OLDEST),$(COMPAT_VERSIONS)),compat/venv.sh $(COMPAT_OLDEST) $(COMPAT_OLDEST_PYTHON))
	$(if $(filter $(COMPAT_NEWEST),$(COMPAT_VERSIONS)),compat/venv.sh $(COMPAT_NEWEST) $(COMPAT_NEWEST_PYTHON))
	passed=0; failed=0; for v in $(COMPAT_VERSIONS); do \
	  if compat/validate.sh $$v $(COMPAT_SEEDS); then passed=$$((passed + 1)); else failed=$$((failed + 1)); fi; done; \
	echo "compat: $$passed passed, $$failed failed"; test $$failed -eq 0

axe: install
	@if [ -f $(AXE) ] && grep -q '"version": "$(AXE_VERSION)"' $(VENV)/node_modules/axe-core/package.json; then :; \
	elif command -v npm >/dev/null 2>&1; then \
	  npm install --prefix $(VENV) --no-save --no-audit --no-fund --loglevel=error axe-core@$(AXE_VERSION); \
	else echo "npm not found: the axe-core tests will skip (apt-get install npm; .ci/run does)"; fi

# What a student sees for the mistake value-only graders miss (examples/no_placement.py: the
# right number, nothing placed), then the sample class (examples/class): right, wrong of each
# category, a crash, a hang, an empty file. A second run reuses every unchanged result.
demo: install
	@$(BIN)/jaxgrade check examples/no_placement.py; test $$? -le 1
	@echo
	@$(BIN)/jaxgrade grade examples/class -e named_sharding_replicated -o out/demo; test $$? -le 1

bench: install
	$(BIN)/python bench/bench.py
	$(BIN)/python bench/warm_bench.py --memory 1000

# jaxgrade against Otter-Grader 7.0 on the same class, side by side (#43): not part of `make
# bench`, never run by CI; Otter installs on first use into .venv-otter, never into .venv.
bench-otter: install
	$(BIN)/python bench/otter_bench.py

clean:
	rm -rf $(VENV) .venv-compat .venv-otter build *.egg-info out
