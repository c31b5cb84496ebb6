# Everything installs into .venv in the repo root; a fresh machine needs only python3.11 and pip.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: install
	$(BIN)/python -m pytest -q

demo: install
	@for f in examples/*.py; do $(BIN)/jaxgrade check $$f; echo; done; true

bench: install
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) build *.egg-info out
