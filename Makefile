# linattn: the two commands of the README.
#   make run   - set up .venv, regenerate the seed figures (quick settings) and the validation report in figures/
#   make test  - set up .venv, run the test suite
# Either works alone from a fresh clone. PYTHON may be overridden (default: python3).
# The optional extra [dask] (xarray, zarr, dask.distributed; ~25 s to install) is installed so that
# the sweep tests run in CI; the core imports and tests without it (those tests are then skipped).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
OUT    ?= figures

.PHONY: run test bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dask]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/linattn info --D 10 --N 100
	$(VENV)/bin/linattn figures all --quick --jobs 2 --out $(OUT)
	$(VENV)/bin/linattn validate --quick --out $(OUT)

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
