"""The imitation from a data set of a search teacher: its games replace the teacher's, the fit aims at the
vote shares where the votes split and weighs the decisive positions, and a data set of other rules is
refused before any run folder is made."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_training import network, schedule, train_quietly

from agents.datasets import collect, load_dataset
from agents.datasets.demonstrations import Demonstrations
from agents.players.policy import masked_log_probs, policy_forward
from agents.training.imitation import clone

#: A sampling_solver small enough for a test whose games (seed 4) still split their votes.
SOLVER_OPTIONS = {"samples": 4, "nodes_per_solve": 5000, "game_nodes": 400_000}


@pytest.fixture(scope="module")
def solver_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("s") / "data"
    collect(out, "sampling_solver", "classic", 3, teacher_options=SOLVER_OPTIONS, seed=4, workers=1, chunk=2,
            progress=False, log=lambda _: None)  # fmt: skip
    return out


def test_the_demonstrations_carry_what_the_search_knew(solver_set: Path) -> None:
    ds = load_dataset(solver_set, log=None)
    demos = ds.to_demonstrations(0.99, games=2)
    assert len(demos.games) == 2 and len(demos) == int(ds.games["length"][:2].sum())
    assert demos.decisive is not None and demos.decisive.any() and not demos.decisive.all()
    assert demos.soft_rows is not None and demos.soft_targets is not None and len(demos.soft_rows) > 0
    np.testing.assert_allclose(demos.soft_targets.sum(1), 1.0, rtol=1e-6)
    assert ((demos.soft_targets > 0).sum(1) > 1).all()  # only the rows whose votes split
    assert demos.decisive[demos.soft_rows].all()
    both = Demonstrations.concat([demos, demos])
    assert both.soft_rows is not None
    assert list(both.soft_rows[len(demos.soft_rows) :]) == list(demos.soft_rows + len(demos))
    with pytest.raises(ValueError, match="holds 3 games, not 4"):
        ds.to_demonstrations(0.99, games=4)


def test_soft_targets_and_weights_are_the_loss(solver_set: Path) -> None:
    """One step on the vote shares, the decisive positions weighted, moves the policy as that loss's
    gradient does (recomputed here by hand)."""
    from tiny_policy import run_spaces, tiny_config

    from agents.training.networks.policies import build_policy

    demos = load_dataset(solver_set, log=None).to_demonstrations(0.99)
    config = tiny_config("lookup_scorer")
    variant, obs_space, action_space = run_spaces("FortyThieves-v0")
    policy = build_policy(config, obs_space, action_space, seed=3, variant=variant)
    twin = build_policy(config, obs_space, action_space, seed=3, variant=variant)
    n = len(demos)
    clone(policy, demos, epochs=1, batch_size=n, learning_rate=1e-3, vf_coef=0.0, holdout=0.0, targets="votes",
          decisive_weight=3.0, log=None)  # fmt: skip
    # The same step by hand: one batch of every position, in the permutation the fit draws.
    obs = {k: torch.as_tensor(v) for k, v in demos.obs.items()}
    logits, _ = policy_forward(twin, obs)
    log_probs, _ = masked_log_probs(logits, torch.as_tensor(demos.masks))
    target = torch.nn.functional.one_hot(torch.as_tensor(demos.actions), log_probs.shape[1]).float()
    target[torch.as_tensor(demos.soft_rows)] = torch.as_tensor(demos.soft_targets)
    w = torch.as_tensor(np.where(demos.decisive, 3.0, 1.0), dtype=torch.float32)
    loss = (w * -(target * log_probs).sum(1)).sum() / w.sum()
    opt = torch.optim.Adam(twin.parameters(), lr=1e-3, eps=1e-5)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(twin.parameters(), 1.0)
    opt.step()
    for (name, a), b in zip(policy.state_dict().items(), twin.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=name)
    # Held-out games: the agreement on their decisive positions is reported apart.
    stats = clone(policy, demos, epochs=1, holdout=0.5, seed=1, log=None)
    held = np.random.default_rng(1).random(len(demos.games)) < 0.5
    rows = np.repeat(held, demos.lengths)
    assert ("holdout_decisive_accuracy" in stats) == bool((rows & demos.decisive).any())
    assert 0 <= stats.get("holdout_decisive_accuracy", 0) <= 1


def test_a_run_imitates_the_data_set(solver_set: Path, tmp_path: Path) -> None:
    overrides = [
        "num_envs=2", "n_steps=32", "batch_size=32", "n_epochs=1", network(), *schedule(64, 2, 2),
        "imitation.games=3", "imitation.epochs=1", "imitation.dagger_rounds=0", "imitation.workers=1",
        f"imitation.dataset={solver_set}", "imitation.teacher=sampling_solver", "imitation.targets=votes",
        "imitation.decisive_weight=2.0",
    ]  # fmt: skip
    run = train_quietly(overrides, tmp_path, "ds", 64, seed=0, env_id="FortyThieves-v0")
    info = json.loads((run / "imitation.json").read_text())
    first = info["rounds"][0]
    assert first["dataset"] == str(solver_set) and first["games"] == 3
    assert first["positions"] == len(load_dataset(solver_set, log=None))
    assert 0 <= first["train_accuracy"] <= 1
    assert (run / "final_eval.json").is_file()


def test_a_data_set_of_other_rules_is_refused_before_the_run_folder(solver_set: Path, tmp_path: Path) -> None:
    from agents.configs.train_config import ConfigError

    overrides = ["imitation.games=2", f"imitation.dataset={solver_set}", "imitation.workers=1"]
    with pytest.raises(ValueError, match=r"was played on 'classic', this run plays 'relaxed'"):
        train_quietly(overrides, tmp_path, "other", 64, seed=0, env_id="FortyThieves-Relaxed-v0")
    with pytest.raises(ValueError, match=r"holds 3 games, imitation\.games asks for 5"):
        train_quietly([*overrides[1:], "imitation.games=5"], tmp_path, "more", 64, seed=0, env_id="FortyThieves-v0")
    with pytest.raises((ValueError, ConfigError), match="not a data set"):
        train_quietly(["imitation.dataset=/nowhere"], tmp_path, "none", 64, seed=0, env_id="FortyThieves-v0")
    assert not any(tmp_path.iterdir())
