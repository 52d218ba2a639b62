# Two commands do everything (see README):  make lab   |   make test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CI pins the CPU build that lies on its disk; elsewhere pip picks the build for your machine.
TORCH_SPEC ?= torch>=2.6
# Optional wheel index for torch, e.g. https://download.pytorch.org/whl/cpu for a small CPU build.
TORCH_INDEX ?=
STAMP := $(VENV)/.installed-stamp
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
         --nbval-cell-timeout 600
# JupyterLab refuses to start as root (containers, CI) unless told to.
LAB_ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
# Browser-test screenshots that the README shows.
SCREENSHOTS := allocator_explorer copy_on_write

.PHONY: setup lab test lint notebooks figures screenshots bench clean

$(STAMP): pyproject.toml
	@echo ">> Setting up $(VENV) (first run only; later runs reuse it)."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo ">> [1/3] Upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo ">> [2/3] Installing PyTorch ($(TORCH_SPEC)): the largest download, several minutes on a slow link."
	@if [ "$$(uname -s)" = Linux ] && [ "$(origin TORCH_SPEC)$(TORCH_INDEX)" = file ] \
	    && ! command -v nvidia-smi >/dev/null; then echo ">>       No NVIDIA GPU found. For the \
	small CPU build instead of CUDA (GBs), stop and run: make clean && \
	make TORCH_INDEX=https://download.pytorch.org/whl/cpu test"; fi
	$(BIN)/python -m pip install "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	@echo ">> [3/3] Installing the course with JupyterLab, Triton, matplotlib and the test tools"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@
	@echo ">> $(VENV) is ready."

setup: $(STAMP)

lab: setup
	$(BIN)/jupyter lab $(LAB_ROOT_FLAG) notebooks/00_start_here.ipynb

lint: setup
	$(BIN)/ruff check paged tests notebooks

# -rs prints why a test skipped (no GPU; no Chromium for the browser test).
test: lint
	$(BIN)/python -m pytest tests notebooks $(NBVAL) -p no:cacheprovider -rs

# Re-execute every notebook top to bottom in a fresh kernel and store its outputs.
notebooks: setup
	$(BIN)/python -m paged.notebook_runner notebooks/*.ipynb

figures: setup
	$(BIN)/python -m paged.figures

# Run the browser test and keep the README's widget screenshots (needs Chromium).
screenshots: setup
	PAGED_REQUIRE_BROWSER=1 $(BIN)/python -m pytest tests/test_browser.py -p no:cacheprovider
	for name in $(SCREENSHOTS); do cp test-output/browser/$${name}_after.png figures/lab_$$name.png; done

bench: setup
	$(BIN)/python -m paged.sim_bench

# On a CUDA machine, in one go (<= 7 min): GPU tests, registers/spills, benchmark sweep (MEASURED).
.PHONY: gpu-check
gpu-check: setup
	$(BIN)/python -m paged.attention.gpu_check --out test-output/gpu-check

clean:
	rm -rf $(VENV) test-output .pytest_cache
