"""The training spine: the env resolved once reaches every consumer, and every trainer keeps the same record.

A run with a variant option in ``env_kwargs`` (classic with one redeal) trains under MaskablePPO and
TorchPPO, its final evaluation plays that variant, and ``evaluate --model RUN`` plays it without
being told; each trainer's ``eval_state.json`` has the same keys; the start model is never the best.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_training import network, schedule, train_quietly

from agents.cli import main
from agents.training.evaluations import FIGURES
from agents.training.trainers import TRAINERS, trainer_class

#: classic with one redeal: a variant option the env id does not carry.
REDEAL = ["env_kwargs.redeals=1", "env_kwargs.observation=dict", network("{hidden: 8, rank: 2, value_dim: 8}")]
TINY = ["imitation=null", "num_envs=4", "n_steps=16", "batch_size=64", *schedule(64, 2, 2)]
#: What every entry of eval_state.json holds (the start's also says start: true), and the file's top level.
ENTRY_KEYS = {*FIGURES, "seconds"}
TOP_KEYS = {"best_mean_reward", "best_timesteps", "best_win_rate", "evaluations"}


@pytest.fixture(scope="module", params=["MaskablePPO", "TorchPPO"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    overrides = [*TINY, *REDEAL, f"algo={request.param}"]
    return train_quietly(overrides, runs, request.param, 128, seed=2, env_id="FortyThieves-v0")


def test_the_final_evaluation_plays_the_runs_variant(run: Path) -> None:
    final = json.loads((run / "final_eval.json").read_text())
    assert final["settings"]["env_id"] == "FortyThieves-v0"
    assert final["settings"]["env_kwargs"] == {"redeals": 1, "observation": "dict", "reward": "foundation"}
    assert final["summary"]["games"] == 2


def test_evaluate_model_run_plays_its_own_env(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    args = ["evaluate", "--agent", "ppo", "--model", str(run), "--deals", "1-2", "--max-moves", "50", "--quiet"]
    assert main([*args, "--out", str(out)]) == 0
    settings = json.loads((out / "results.json").read_text())["settings"]
    assert settings["env_id"] == "FortyThieves-v0" and settings["env_kwargs"] == {"redeals": 1}
    # Told another variant, it is refused naming what it was trained on and how to play it.
    assert main([*args, "--variant", "classic", "--out", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert "trained on variant 'classic' with redeals=1 (FortyThieves-v0), not 'classic'" in err
    assert "leave out --variant and --env" in err


def test_eval_state_has_the_same_keys_for_every_trainer(run: Path) -> None:
    state = json.loads((run / "eval_state.json").read_text())
    assert set(state) == TOP_KEYS
    first, *rest = state["evaluations"]
    assert set(first) == ENTRY_KEYS | {"start"} and first["start"] is True and first["timesteps"] == 0
    assert rest and all(set(e) == ENTRY_KEYS for e in rest)
    assert state["best_timesteps"] > 0  # the start is recorded, never kept as the best


def test_a_run_shorter_than_eval_freq_plays_its_final_model(tmp_path: Path) -> None:
    overrides = [*TINY, *REDEAL, "algo=TorchPPO", "eval_freq=10000"]
    run = train_quietly(overrides, tmp_path, "short", 64, seed=0, env_id="FortyThieves-v0")
    state = json.loads((run / "eval_state.json").read_text())
    assert [e["timesteps"] for e in state["evaluations"]] == [0] and state["best_timesteps"] is None
    assert not (run / "best_model.zip").exists()
    assert json.loads((run / "final_eval.json").read_text())["model"] == "final_model.zip"


def test_every_trainer_is_registered_with_its_config_model() -> None:
    from agents.configs.train_config import CONFIG_MODELS

    assert set(TRAINERS) == set(CONFIG_MODELS)
    for algo in TRAINERS:
        assert trainer_class(algo).algo == algo
    with pytest.raises(ValueError, match="algos are MaskablePPO, TorchPPO, RLlibPPO"):
        trainer_class("PPO")


@pytest.mark.parametrize("algo", ["MaskablePPO", "TorchPPO"])
def test_n_timesteps_0_is_the_imitation_alone(algo: str, tmp_path: Path) -> None:
    from tiny_training import IMITATION

    from agents.storage.modelfile import read_parameters

    overrides = [*TINY[1:], *REDEAL, *IMITATION, f"algo={algo}"]
    run = train_quietly(overrides, tmp_path, algo, 0, seed=1, env_id="FortyThieves-v0")
    final, imitated = (read_parameters(run / name)["policy"] for name in ("final_model.zip", "imitation_model.zip"))
    assert all(final[k].equal(imitated[k]) for k in imitated)
    assert json.loads((run / "final_eval.json").read_text())["model"] == "final_model.zip"
    assert json.loads((run / "train_info.json").read_text())["num_timesteps"] == 0
