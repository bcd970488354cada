"""``forty-thieves train`` with ``algo: TorchPPO``: the run folder, resume, interruption, the
model playing through ``evaluate``, and the inputs refused before anything is written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch
from tiny_training import IMITATION, PPO_YAML, RUN_FILES, TORCH, network, schedule, train_quietly

from agents.cli import main
from agents.configs.config_file import load_config
from agents.configs.train_config import ConfigError
from agents.training.runs import checkpoints
from agents.training.train import train

# 4 games x 16 steps per rollout, a stock critic, the warm start (it runs before TorchPPO too).
TINY = [
    *TORCH,
    "batch_size=32",
    network("{hidden: 8, rank: 2, value_dim: 8, critic_stock: 4}"),
    *IMITATION,
    *schedule(128, 3, 2),
]


def quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_quietly(TINY, tmp_path_factory.mktemp("runs"), "torch", 256, seed=2, env_id="FortyThieves-v0")


def test_run_folder_is_a_maskable_ppo_run_folder(run: Path) -> None:
    from sb3_contrib import MaskablePPO

    for name in (*RUN_FILES, "imitation_model.zip"):
        assert (run / name).is_file(), name
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "rl_model_128_steps.zip",
        "rl_model_256_steps.zip",
    ]
    model = MaskablePPO.load(run / "final_model.zip", device="cpu")
    assert model.num_timesteps == 256
    assert load_config(run / "config.yaml")[1].algo == "TorchPPO"
    state = json.loads((run / "eval_state.json").read_text())
    assert [e["timesteps"] for e in state["evaluations"]] == [0, 128, 256]  # the start, then every eval_freq
    assert all(e["episodes"] == 3 and 0 <= e["win_rate"] <= 1 for e in state["evaluations"])
    with (run / "logs" / "progress-0.csv").open() as f:
        rows = list(csv.DictReader(f))
    # The start's evaluation has a row of its own (step 0, no training figures), then one per rollout.
    assert [int(float(r["time/total_timesteps"])) for r in rows] == [0, 64, 128, 192, 256]
    assert rows[0]["eval/success_rate"] and not rows[0]["train/value_loss"]
    assert all(r["train/value_loss"] and int(r["time/fps"]) > 0 for r in rows[1:])
    final = json.loads((run / "final_eval.json").read_text())
    assert final["summary"]["games"] == 2


def test_the_model_plays_through_evaluate(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "evaluate",
            "--agent",
            "ppo",
            "--model",
            str(run),
            "--n",
            "3",
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(tmp_path / "ev"),
        ]
    )
    assert code == 0
    assert "ppo on FortyThieves-v0, 3 deals" in capsys.readouterr().out  # the model's own env


def test_resume_continues_the_count_and_the_evaluations(run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "torch"
    shutil.copytree(run, copy)
    train(resume=copy, total_timesteps=384, progress=False, log=quiet)
    assert checkpoints(copy)[0].name == "rl_model_384_steps.zip"
    state = json.loads((copy / "eval_state.json").read_text())
    assert [e["timesteps"] for e in state["evaluations"]] == [0, 128, 256, 384]  # no second start
    with (copy / "logs" / "progress-1.csv").open() as f:
        steps = [int(float(r["time/total_timesteps"])) for r in csv.DictReader(f)]
    assert steps == [320, 384]


def test_an_interrupted_run_saves_a_checkpoint_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.training import torch_ppo

    calls = {"n": 0}
    real = torch_ppo.TorchPPO.update

    def interrupted(self, progress):  # the second update is cut by Ctrl-C
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(self, progress)

    monkeypatch.setattr(torch_ppo.TorchPPO, "update", interrupted)
    overrides = [*TINY, "imitation=null", "eval_freq=0", "save_freq=0", "final_eval_episodes=0"]
    with pytest.raises(KeyboardInterrupt):
        train(
            PPO_YAML, overrides=overrides, total_timesteps=256, runs_dir=tmp_path, name="cut", progress=False, log=quiet
        )
    run = tmp_path / "cut"
    assert checkpoints(run)[0].name == "rl_model_128_steps.zip"  # the rollout it was updating on counts
    monkeypatch.setattr(torch_ppo.TorchPPO, "update", real)
    train(resume=run, progress=False, log=quiet)
    assert checkpoints(run)[0].name == "rl_model_256_steps.zip"


def test_inputs_refused_before_anything_is_written(run: Path, tmp_path: Path) -> None:
    base = [*TINY, "imitation=null"]
    cases = [
        (["vec_env=dummy"], ConfigError, "TorchPPO steps its own"),
        (
            [f"init_model={checkpoints(run)[0]}", "policy_kwargs.features_extractor_kwargs.hidden=12"],
            ValueError,
            r"init_model .* has shape .* there and .* here",
        ),
        (
            [
                f"init_model={checkpoints(run)[0]}",
                "policy_kwargs.features_extractor=mlp",
                "policy=MlpPolicy",
                "env_kwargs.observation=flat",
            ],
            ValueError,
            "another network|shape",
        ),
    ]
    if not torch.cuda.is_available():
        cases.append((["device=cuda"], ValueError, "no CUDA GPU"))
    for k, (extra, error, message) in enumerate(cases):
        with pytest.raises(error, match=message):
            train(PPO_YAML, overrides=[*base, *extra], runs_dir=tmp_path, name=f"bad{k}", progress=False, log=quiet)
        assert not (tmp_path / f"bad{k}").exists(), extra
