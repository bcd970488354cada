"""RLlib PPO with action masks (agents/training/trainers/rllib.py, rllib_env.py): the env in RLlib's
action-masking convention, the config file, and a smoke run of two training iterations on a local
Ray of 2 CPUs that takes no masked-out action."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from agents.cli import main
from agents.configs.config_file import load_config, load_env_config
from agents.configs.train_config import ConfigError, RLlibConfig, TrainConfig
from agents.training.evaluations import FIGURES
from agents.training.rllib_env import ActionMaskObservation, make_env

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "configs" / "rllib_ppo.yaml"


def test_env_in_rllibs_masking_convention():
    env = make_env({"env_id": "FortyThieves-Relaxed-v0"})
    space = env.observation_space
    assert set(space.spaces) == {"action_mask", "observations"}
    assert space["action_mask"].shape == (env.action_space.n,) and space["action_mask"].dtype == np.float32
    obs, info = env.reset(seed=3)
    assert space.contains(obs)
    assert np.array_equal(obs["action_mask"], info["action_mask"].astype(np.float32))
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    obs, _, _, _, info = env.step(legal)
    assert not info["masked_action"] and env.masked_actions_taken == 0
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, _, _, _, info = env.step(illegal)  # the counter does count: an action the mask ruled out
    assert info["masked_action"] and info["illegal_action"] and env.masked_actions_taken == 1


def test_env_refuses_other_observations():
    with pytest.raises(ValueError, match="flat"):
        make_env({"observation": "dict"})
    import gymnasium as gym

    import forty_thieves_env  # noqa: F401

    with pytest.raises(ValueError, match="flat"):
        ActionMaskObservation(gym.make("FortyThieves-v0"))


def test_config_file():
    # One read of a file gives the model its algo asks for (the trainer follows from it).
    assert isinstance(load_config(CONFIG)[1], RLlibConfig)
    assert isinstance(load_config(ROOT / "configs" / "ppo.yaml", "FortyThieves-Relaxed-v0")[1], TrainConfig)
    with pytest.raises(ConfigError, match="counts iterations, not steps"):
        load_config(CONFIG, None, ["n_timesteps=1000"])
    env, config = load_env_config(CONFIG, "FortyThieves-Relaxed-v0", ["iterations=3"])
    assert env.env_id == "FortyThieves-Relaxed-v0" and config.iterations == 3 and config.algo == "RLlibPPO"
    assert env.observation == "flat"  # what RLlib's MLP reads: the trainer's option, not the config's
    with pytest.raises(ConfigError, match="lerning_rate: unknown key"):
        load_env_config(CONFIG, None, ["lerning_rate=0.1"])
    with pytest.raises(ConfigError, match="batch_size"):
        load_env_config(CONFIG, None, ["batch_size=100000"])
    with pytest.raises(ConfigError, match="observation"):
        load_env_config(CONFIG, None, ["env_kwargs.observation=dict"])


def test_two_iterations_learn_without_masked_actions(tmp_path, capsys):
    """``forty-thieves train configs/rllib_ppo.yaml`` for two small iterations: the learner
    updates, and not one action the mask ruled out is taken."""
    import ray

    small = ["iterations=2", "train_batch_size=512", "batch_size=128", "n_epochs=2", "num_env_runners=1"]
    small += ["num_envs_per_env_runner=2", "fcnet_hiddens=[64, 64]", "num_cpus=2", "checkpoint_freq=0"]
    small += ["eval_freq=1", "n_eval_episodes=2"]
    args = ["train", str(CONFIG), "--env", "FortyThieves-Relaxed-v0", "--runs-dir", str(tmp_path), "--name", "r"]
    for item in small:
        args += ["--set", item]
    was_running = ray.is_initialized()
    assert main(args) == 0
    assert ray.is_initialized() == was_running  # the run leaves Ray as it found it
    run = tmp_path / "r"
    lines = [json.loads(line) for line in (run / "progress.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in lines] == [1, 2]
    last = lines[-1]
    assert last["env_steps"] >= 1024
    assert last["actions_checked"] >= 1024  # every step's action was checked against its mask ...
    assert last["masked_actions_taken"] == 0  # ... and none was masked out
    assert last["total_loss"] is not None and np.isfinite(last["total_loss"])  # the learner updated
    assert (run / "checkpoint").is_dir() and (run / "config.yaml").exists() and (run / "versions.json").exists()
    assert "masked actions taken 0" in capsys.readouterr().out
    # The same record as every trainer's: the start, then each iteration, on the validation deals.
    state = json.loads((run / "eval_state.json").read_text())
    assert [e["timesteps"] for e in state["evaluations"]] == [0, 1, 2]
    assert set(state["evaluations"][1]) == {*FIGURES, "seconds"} and (run / "best_checkpoint").is_dir()
    info = json.loads((run / "train_info.json").read_text())
    assert info["num_timesteps"] == 2 and info["sessions"][0]["stopped"] == "done"
    # --resume restores checkpoint/ and goes on to the new total.
    assert main(["train", "--resume", str(run), "--set", "iterations=3"]) == 0
    lines = [json.loads(line) for line in (run / "progress.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in lines] == [1, 2, 3]
    assert lines[-1]["env_steps"] > last["env_steps"]  # the restored algorithm's count went on
    assert "resuming" in capsys.readouterr().out
