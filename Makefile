# Set-up and checks. `make test` builds .venv when missing and runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
# The CPU build keeps a fresh set-up small; override e.g. TORCH_SPEC="torch" for CUDA.
TORCH_SPEC ?= torch==2.13.0
# A local folder of wheels (this machine keeps the CPU torch wheel there) is used when present.
WHEELS ?= /opt/wheels
# rl-baselines3-zoo for its recipe's test, without its requirements (the [zoo] extra holds what its
# train.py imports; pyproject.toml and docs/recipes.md say why).
ZOO_SPEC ?= rl_zoo3==2.9.2 sb3-team-hf-integration==3.2
PIP_LINKS := $(if $(wildcard $(WHEELS)),--find-links $(WHEELS),)
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test test-slow lint bench-engine browser clean

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(PIP_LINKS) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q $(PIP_LINKS) -e ".[dev]"
	$(BIN)/python -m pip install -q --no-deps $(ZOO_SPEC)
	# Compile the numba kernels now, so that the first run does not (see forty_thieves_env/warmup.py),
	# and the solver's (the first solve in each worker process would otherwise compile them).
	$(BIN)/python -m forty_thieves_env.warmup
	$(BIN)/python -c "from agents.search.solver import warm_up; warm_up('portfolio')"
	touch $@

# TorchPPO learning Relaxed from random weights for 2.5 minutes (its win rate and cards home on
# 200 validation deals as it goes), then the run's network and the shipped models beside random
# and heuristic on 200 test deals (agents/training/demo.py; about 3 minutes on 2 cores).
demo: $(BIN)/.installed
	$(BIN)/python -m agents.training.demo

test: $(BIN)/.installed
	$(BIN)/python -m pytest -q -n 2 $(PYTEST_ARGS)

test-slow: $(BIN)/.installed
	$(BIN)/python -m pytest -q -n 2 -m slow $(PYTEST_ARGS)

# Headless Chromium and its driver (Debian packages) for the replay page's browser test; needs root.
# The test skips without them, but fails under CI (CI set), which runs this target first.
browser:
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; }

lint: $(BIN)/.installed
	$(BIN)/ruff check .

bench-engine: $(BIN)/.installed
	$(BIN)/python benchmarks/engine_bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
