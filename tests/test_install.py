"""The core install: the envs play without torch or stable-baselines3, and a fresh venv gets a working env."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Runs in a fresh interpreter where importing torch, stable_baselines3 or sb3_contrib fails, as
# on a machine that installed the package without the [train] extra.
_BLOCKED_PLAY = textwrap.dedent(
    """
    import importlib.abc, sys

    BLOCKED = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard")

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"No module named {name!r} (blocked by the test)")
            return None

    sys.meta_path.insert(0, Block())
    import gymnasium as gym
    import numpy as np
    import forty_thieves_env  # noqa: F401

    env = gym.make("FortyThieves-v0")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        action = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset()
    envs = gym.make_vec("FortyThieves-v0", num_envs=4)
    obs, infos = envs.reset(seed=0)
    for _ in range(50):
        obs, rewards, terminated, truncated, infos = envs.step(envs.unwrapped.random_legal_actions())
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print("played", loaded)
    """
)


def test_envs_play_without_torch_or_sb3() -> None:
    out = subprocess.run([sys.executable, "-c", _BLOCKED_PLAY], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "played []"


def test_importing_the_package_imports_no_training_library() -> None:
    code = "import sys, forty_thieves_env; print(sorted(m for m in ('torch', 'stable_baselines3') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_fresh_venv_core_install_makes_envs(tmp_path: Path) -> None:
    """`pip install .` with no extras into a new venv gives a working gym.make and gym.make_vec."""
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", str(ROOT)], check=True, cwd=tmp_path)
    code = (
        "import sys, gymnasium as gym, forty_thieves_env;"
        "env = gym.make('FortyThieves-v0'); env.reset(seed=0); env.step(0);"
        "v = gym.make_vec('FortyThieves-v0', num_envs=2); v.reset(seed=0); v.step([0, 0]);"
        "print(sorted(m for m in ('torch', 'stable_baselines3', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.strip() == "[]"
