#!/usr/bin/env bash
# The GPU machine's check of the CUDA engine and TorchPPO, in one run (about 6 minutes; docs/cuda.md).
#
# Here first (a machine with PyPI), the wheels the GPU machine lacks, for its Python 3.12:
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl gymnasium==1.4.0 farama-notifications stable-baselines3 sb3-contrib pydantic==2.14.4 \
#     pydantic-core==2.50.5 annotated-types typing-inspection
# Then there, with .whl carried: bash benchmarks/device_check.sh   (results under $OUT)
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
S=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --no-compile --target "$S" .whl/*.whl
export PYTHONPATH=$S:$PWD NUMBA_CACHE_DIR=$(mktemp -d) PYTHONUNBUFFERED=1
{ nvidia-smi; python3 -c "import numba, numpy, torch; print(numba.__version__, numpy.__version__, torch.__version__)";
  python3 -m pip list 2>/dev/null | grep -i -E "numba|cuda"; } > "$OUT/machine.txt" 2>&1
# 1. Parity: CUDA and CPU kernels, every array after every step (10,000 games x 300 steps on four presets),
#    then TorchGames and TorchPPO on the GPU.
timeout 300 python3 -m pytest -q -p no:cacheprovider -m cuda -x \
  tests/envs/test_cuda.py tests/envs/test_torch_games.py tests/agents/training/test_torch_ppo.py 2>&1 | tee "$OUT/parity.txt"
# 2. Env steps/s on the device, every preset, actions from outside the step.
timeout 150 python3 -m benchmarks.cuda_bench --out "$OUT/cuda_bench.json" 2>&1 | tee "$OUT/cuda_bench.txt"
# 3. Training end to end: TorchPPO (65,536 games) with the MLP and the default network, MaskablePPO beside.
timeout 240 python3 -m benchmarks.train_bench --device cuda --sb3 --out "$OUT/train_bench.json" 2>&1 \
  | tee "$OUT/train_bench.txt"
echo "results in $OUT"
