# linattn: the two commands of the README, and the setup alone.
#   make install - set up .venv with the extras [test,dask,docs] and nothing else (the setup of `make test`)
#   make run   - set up .venv, regenerate the seed figures (quick settings) and the validation report in figures/
#                (the figures in two single-threaded processes, the longest first — fig1's dense 10^4 x 10^4
#                eigenproblems on one core beside the others keep both cores busy: 6 min 36 s from a fresh clone on a
#                quiet 2-core machine, install included; then the validation report from the results the
#                figures kept: every section's experiment is drawn by a figure, so no number is computed twice)
#   make test  - set up .venv, run the test suite (two pytest-xdist workers with one BLAS thread each, work
#                stealing so that the long statistical tests do not leave one worker idle at the end;
#                on 2 cores that is 1.4x faster than one process with two BLAS threads)
# Either works alone from a fresh clone. PYTHON may be overridden (default: python3).
# The optional extras [dask] and [docs] (mkdocs + mkdocstrings, ~10 s; `make docs` builds the API reference into
# build/site with warnings as errors) are installed by every target but `run` so that their tests run in CI;
# `make run` installs the core only (its figures and report need nothing else).
# The optional extra [dask] (xarray, zarr, dask.distributed; ~25 s to install) is installed so that
# the sweep tests run in CI; the core imports and tests without it (those tests are then skipped).
# The optional extra [torch] (nonlinear transformer demos: figures icl_emergence, grokking and markov_transformer,
# examples/) is NOT installed by run/test: a CPU build of torch is ~0.9 GB and ~50 s to install, which would push a
# fresh `make test` past its budget, and its three figures take ~9 min of training on 2 cores, which would push
# `make run` past 10. `make torch` installs it and makes those figures into figures/ (gallery included);
# after it, `make test` also runs the torch tests. Without torch the figures are skipped with a message.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
CORE_STAMP := $(VENV)/.core-stamp
OUT    ?= figures
TORCH_FIGURES := icl_emergence grokking markov_transformer

.PHONY: run test test-matrix bench install clean torch docs lint

# `make run` needs the core only (~35 s less to install on a fresh clone); everything else installs the extras too
$(CORE_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(CORE_STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dask,docs]"
	touch $(STAMP) $(CORE_STAMP)

install: $(STAMP)

run: $(CORE_STAMP)
	$(VENV)/bin/linattn info --D 10 --N 100
	$(VENV)/bin/linattn figures all $(foreach f,$(TORCH_FIGURES),--exclude $(f)) --quick --jobs 2 --out $(OUT)
	$(VENV)/bin/linattn validate --quick --out $(OUT) --no-progress --reuse
	$(PY) -c "from validation.gallery import write_gallery; write_gallery('$(OUT)')"

test: $(STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist worksteal

# the test matrix (noxfile.py): Python 3.10-3.13 with the newest dependencies, the oldest declared dependencies,
# the core without extras, and two other OpenBLAS core types; each session installs the wheel into its own
# environment under .nox/. Under pyenv, PYENV_VERSION makes every installed 3.10-3.13 answer as python3.X.
# NOX_ARGS selects sessions (e.g. NOX_ARGS="-s core oldest").
test-matrix: $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,dask,docs,matrix]"
	if command -v pyenv >/dev/null 2>&1; then \
	  export PYENV_VERSION="$$(pyenv versions --bare | grep -E '^3\.(10|11|12|13)\.[0-9]+$$' | sort -rV | \
	    awk -F. '!seen[$$1"."$$2]++' | paste -sd: -)"; fi; \
	$(VENV)/bin/nox $(NOX_ARGS)

torch: $(STAMP)
	$(PY) -m pip install --quiet "torch==2.13.0" 2>/dev/null || \
	  $(PY) -m pip install --quiet torch --index-url https://download.pytorch.org/whl/cpu
	$(PY) -m pip install --quiet -e ".[test,dask,torch]"
	$(VENV)/bin/linattn figures $(TORCH_FIGURES) --quick --jobs 2 --out $(OUT)

docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
