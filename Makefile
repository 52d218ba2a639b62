# Two commands do everything (see README):  make lab   |   make test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CI pins the CPU build that lies on its disk; elsewhere pip picks the build for your machine.
TORCH_SPEC ?= torch>=2.6
STAMP := $(VENV)/.installed-stamp
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
         --nbval-cell-timeout 600

.PHONY: setup lab test lint notebooks figures bench clean

$(STAMP): pyproject.toml
	@echo ">> Setting up $(VENV): the first run downloads PyTorch, Triton and JupyterLab (minutes)."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@
	@echo ">> $(VENV) is ready."

setup: $(STAMP)

lab: setup
	$(BIN)/jupyter lab notebooks/00_start_here.ipynb

lint: setup
	$(BIN)/ruff check paged tests notebooks

test: lint
	$(BIN)/python -m pytest tests notebooks $(NBVAL) -p no:cacheprovider

# Re-execute every notebook top to bottom in a fresh kernel and store its outputs.
notebooks: setup
	$(BIN)/python -m paged.notebook_runner notebooks/*.ipynb

figures: setup
	$(BIN)/python -m paged.figures

bench: setup
	$(BIN)/python -m paged.sim_bench

clean:
	rm -rf $(VENV) test-output .pytest_cache
