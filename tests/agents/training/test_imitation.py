"""Imitation: a teacher's games recorded faithfully, cloned into a policy, DAgger rounds, the config hook."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import forty_thieves_env  # noqa: F401
from agents.datasets.demonstrations import Demonstrations, training_deals
from agents.evaluation.evaluate import agent_seed
from agents.players.base import make_agent
from agents.training.imitation import clone, collect
from forty_thieves_env.engine.deals import SPLITS

ENV = "FortyThieves-Relaxed-v0"  # the heuristic wins nearly every deal: short, complete games


@pytest.fixture(scope="module")
def demos() -> Demonstrations:
    return collect(ENV, training_deals(6, seed=3), "heuristic", seed=3, workers=1, log=None)


def test_training_deals_are_reproducible_and_never_evaluation_deals() -> None:
    a, b = training_deals(50, seed=1), training_deals(50, seed=1)
    assert np.array_equal(a, b) and len(set(a.tolist())) == 50
    assert not np.array_equal(a, training_deals(50, seed=2))
    held_out = set(SPLITS["test"]) | set(SPLITS["validation"])
    assert not held_out & set(a.tolist())


def test_collect_records_the_teachers_game(demos: Demonstrations) -> None:
    """Row for row: the positions, masks and moves of the heuristic's own game on the first deal."""
    assert demos.lengths.sum() == len(demos) and len(demos.games) == 6
    deal, n = int(demos.games[0]), int(demos.lengths[0])
    env = gym.make(ENV)
    agent = make_agent("heuristic", "relaxed")
    obs, info = env.reset(options={"deal": deal})
    agent.reset(seed=agent_seed(3, deal))
    for t in range(n):
        for k, v in obs.items():
            assert np.array_equal(demos.obs[k][t], v), (t, k)
        assert np.array_equal(demos.masks[t], info["action_mask"])
        action = agent.act(obs, info["action_mask"])
        assert demos.actions[t] == action
        obs, _, _, _, info = env.step(action)
    assert bool(info["won"]) == bool(demos.won[0])
    assert demos.masks[np.arange(len(demos)), demos.actions].all()  # every label is a legal move


def test_returns_are_discounted_rewards(demos: Demonstrations) -> None:
    n = int(demos.lengths[0])
    r = demos.returns[:n]
    rewards = r[:-1] - 0.995 * r[1:]
    assert np.all(rewards > -1e-5)  # the foundation reward is never negative
    assert abs(rewards.sum() + r[-1] - demos.home[0] / 104 - demos.won[0]) < 1e-3


def test_clone_fits_the_teacher(demos: Demonstrations) -> None:
    from sb3_contrib import MaskablePPO

    from agents.training.networks.move_scorer import MoveScorerPolicy

    torch.manual_seed(0)
    model = MaskablePPO(MoveScorerPolicy, gym.make(ENV), seed=0)
    first = clone(model.policy, demos, epochs=1, batch_size=256, learning_rate=1e-4, holdout=0.0, log=None)
    last = clone(model.policy, demos, epochs=6, batch_size=256, learning_rate=3e-3, holdout=0.0, log=None)
    assert last["nll"] < first["nll"]
    assert last["train_accuracy"] > 0.8


def test_dagger_round_plays_the_student(tmp_path, demos: Demonstrations) -> None:
    """With a student, its moves are played (the game differs), the teacher's are the labels."""
    from sb3_contrib import MaskablePPO

    from agents.training.networks.move_scorer import MoveScorerPolicy

    model = MaskablePPO(MoveScorerPolicy, gym.make(ENV), seed=0)  # untrained: plays about at random
    path = tmp_path / "student.zip"
    model.save(str(path))
    deals = demos.games[:2]
    new = collect(ENV, deals, "heuristic", student=str(path), seed=3, workers=1, log=None)
    assert new.masks[np.arange(len(new)), new.actions].all()
    assert new.won.sum() < 2  # a random student does not win the relaxed deals the heuristic wins
    n = int(new.lengths[0])
    same = n == demos.lengths[0] and np.array_equal(new.obs["tableau"][:n], demos.obs["tableau"][:n])
    assert not same


def test_train_warm_starts_from_the_config(tmp_path) -> None:
    """``imitation:`` in a config: the teacher's games, a DAgger round, the cloned model, then PPO."""
    import json

    import yaml

    from agents.training.train import train

    config = {
        "default": {
            "n_timesteps": 64,
            "num_envs": 2,
            "n_steps": 32,
            "batch_size": 32,
            "n_epochs": 1,
            "eval_freq": 0,
            "save_freq": 0,
            "final_eval_episodes": 0,
            "torch_threads": 1,
            "policy_kwargs": {"features_extractor": "move_scorer", "features_extractor_kwargs": {"hidden": 8}},
            "imitation": {"games": 3, "epochs": 1, "dagger_rounds": 1, "dagger_games": 2, "workers": 1},
        },
        ENV: {},
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run = train(path, ENV, runs_dir=tmp_path / "runs", name="im", progress=False, final_eval=False, log=lambda _: None)
    info = json.loads((run / "imitation.json").read_text(encoding="utf-8"))
    assert info["teacher"] == "heuristic" and len(info["rounds"]) == 2
    assert info["rounds"][0]["games"] == 3 and info["rounds"][1]["games"] == 2
    assert 0.0 <= info["rounds"][1]["train_accuracy"] <= 1.0
    assert (run / "imitation_model.zip").exists() and (run / "final_model.zip").exists()


def test_a_student_in_this_process_leaves_the_torch_threads(tmp_path, demos: Demonstrations) -> None:
    """``workers=1`` plays the student here; the trainer's torch threads must survive it."""
    from sb3_contrib import MaskablePPO

    from agents.training.networks.move_scorer import MoveScorerPolicy

    path = tmp_path / "student.zip"
    MaskablePPO(MoveScorerPolicy, gym.make(ENV), seed=0).save(str(path))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        collect(ENV, demos.games[:1], "heuristic", student=str(path), seed=3, workers=1, log=None)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
