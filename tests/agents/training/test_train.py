"""``forty-thieves train`` end to end: a few hundred steps, the run folder, resume, the ppo agent."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from tiny_training import IMITATION, PPO_YAML, ROLLOUT, RUN_FILES, network, schedule, train_quietly

from agents.cli import main
from agents.configs.config_file import load_config
from agents.training.runs import checkpoints
from agents.training.train import train

# Small enough to train in seconds on one core: 2 games x 32 steps per rollout, the warm start on two deals.
TINY = [*ROLLOUT, network(), *IMITATION, *schedule(128, 2, 2)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    argv = ["train", str(PPO_YAML), "--total-timesteps", "256"]
    return train_quietly(TINY, runs, "tiny", 256, seed=3, env_id="FortyThieves-v0", argv=argv)


def test_run_folder_holds_everything(run: Path) -> None:
    for name in RUN_FILES:
        assert (run / name).is_file(), name
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ckpts == ["rl_model_128_steps.zip", "rl_model_256_steps.zip"]
    assert (run / "command.txt").read_text().strip() == f"forty-thieves train {PPO_YAML} --total-timesteps 256"
    versions = json.loads((run / "versions.json").read_text())
    assert versions["torch"] == torch.__version__ and versions["sb3-contrib"]
    assert list((run / "logs").glob("events.out.tfevents.*")), "no TensorBoard event file"


def test_resolved_config_is_what_trained(run: Path) -> None:
    env_id, cfg = load_config(run / "config.yaml")
    assert env_id == "FortyThieves-v0"
    assert (cfg.n_timesteps, cfg.seed, cfg.num_envs, cfg.n_steps) == (256, 3, 2, 32)
    raw = yaml.safe_load((run / "config.yaml").read_text())
    assert list(raw) == ["FortyThieves-v0"] and raw["FortyThieves-v0"]["learning_rate"] == 2e-3
    assert raw["FortyThieves-v0"]["imitation"]["games"] == 2


def test_logs_and_evaluations(run: Path) -> None:
    with (run / "logs" / "progress-0.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows, "no rows in progress-0.csv"
    steps = [int(float(r["time/total_timesteps"])) for r in rows if r.get("time/total_timesteps")]
    assert steps[-1] == 256 and steps == sorted(steps)
    assert "train/value_loss" in rows[-1]
    state = json.loads((run / "eval_state.json").read_text())
    # The start (the imitated network) begins the curve; the best is one PPO trained.
    assert [e["timesteps"] for e in state["evaluations"]] == [0, 128, 256]
    assert [e.get("start", False) for e in state["evaluations"]] == [True, False, False]
    assert all(e["episodes"] == 2 and e["win_rate"] is not None for e in state["evaluations"])
    assert state["best_timesteps"] in (128, 256)
    final = json.loads((run / "final_eval.json").read_text())
    assert final["model"] == "best_model.zip"
    assert final["settings"]["agent"] == "ppo" and final["settings"]["deals"] == "test"
    assert final["settings"]["agent_options"]["deterministic"] is False  # eval_deterministic: false
    assert final["summary"]["games"] == 2 and 0 <= final["summary"]["win_rate"] <= 1


def test_resume_continues_from_the_last_checkpoint(run: Path, tmp_path: Path) -> None:
    # Resume in a copy so the other tests keep their run as it was.
    import shutil

    from sb3_contrib import MaskablePPO

    copy = tmp_path / "tiny"
    shutil.copytree(run, copy)
    before = json.loads((copy / "eval_state.json").read_text())
    out = train(resume=copy, total_timesteps=384, progress=False, argv=["train", "--resume", str(copy)], log=print)
    assert out == copy
    assert checkpoints(copy)[0].name == "rl_model_384_steps.zip"
    # The step count went on from 256 (a fresh start would stop at 128 new steps).
    assert MaskablePPO.load(copy / "final_model.zip", device="cpu").num_timesteps == 384
    lines = (copy / "command.txt").read_text().splitlines()
    assert lines[1] == f"forty-thieves train --resume {copy}"
    with (copy / "logs" / "progress-1.csv").open() as f:
        steps = [int(float(r["time/total_timesteps"])) for r in csv.DictReader(f)]
    assert min(steps) > 256 and max(steps) == 384
    after = json.loads((copy / "eval_state.json").read_text())
    assert [e["timesteps"] for e in after["evaluations"]] == [0, 128, 256, 384]
    # The best model only changes for a better mean reward than the best before the resume.
    assert after["best_mean_reward"] >= before["best_mean_reward"]
    info = json.loads((copy / "train_info.json").read_text())
    assert [s["num_timesteps"] for s in info["sessions"]] == [256, 384]
    assert load_config(copy / "config.yaml")[1].n_timesteps == 384


def test_resume_needs_a_run_folder_with_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such run folder"):
        train(resume=tmp_path / "nope", progress=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="not a run folder"):
        train(resume=tmp_path / "empty", progress=False)


def test_a_named_run_folder_is_not_overwritten(run: Path) -> None:
    with pytest.raises(ValueError, match="--resume"):
        train(PPO_YAML, overrides=TINY, total_timesteps=64, runs_dir=run.parent, name="tiny", progress=False)


def test_trained_model_plugs_into_evaluate(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = run / "best_model.zip"
    out = tmp_path / "ev"
    args = ["evaluate", "--agent", "ppo", "--model", str(model), "--deals", "1-3", "--workers=1", "--max-moves=60"]
    assert main([*args, "--quiet", "--out", str(out)]) == 0
    assert "ppo on FortyThieves-v0, 3 deals" in capsys.readouterr().out  # the model's own env
    rows = json.loads((out / "results.json").read_text())["results"]
    assert [r["deal"] for r in rows] == [1, 2, 3]


def test_ppo_agent_plays_legal_moves_and_checks_the_variant(run: Path) -> None:
    from agents.players.base import make_agent
    from forty_thieves_env.envs.env import FortyThievesEnv

    agent = make_agent("ppo", "classic", model=str(run / "best_model.zip"))
    env = FortyThievesEnv("classic")
    obs, info = env.reset(options={"deal": 5})
    agent.reset(seed=1)
    for _ in range(30):
        action = agent.act(obs, info["action_mask"])
        assert info["action_mask"][action]
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            break
    # The run folder's config names the variant it trained on.
    with pytest.raises(ValueError, match=r"trained on variant 'classic' \(FortyThieves-v0\), not 'josephine'"):
        make_agent("ppo", "josephine", model=str(run / "best_model.zip"))
    with pytest.raises(ValueError, match="needs a model"):
        make_agent("ppo", "classic")
    # A run folder stands for its best model.
    assert make_agent("ppo", "classic", model=str(run)).model is agent.model


def test_demo_trains_then_compares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.training.demo import run_demo

    monkeypatch.setenv("FORTY_THIEVES_MODELS", str(tmp_path / "models"))  # nothing shipped: those rows skip
    (tmp_path / "models").mkdir()
    tiny = ["num_envs=2", "n_steps=32", "batch_size=32", "torch_threads=1", "eval_freq=32", "n_eval_episodes=3"]
    tiny.append("policy_kwargs.features_extractor_kwargs={hidden: 8, rank: 2, value_dim: 8}")
    result = run_demo(minutes=0.5, timesteps=64, n=2, workers=1, runs_dir=tmp_path, progress=False, overrides=tiny)
    out = capsys.readouterr().out
    # The learning curve: the start (random weights, 0 steps) and the evaluation after the one rollout.
    assert [e["timesteps"] for e in result["evaluations"]] == [0, 64]
    assert all(e["episodes"] == 3 for e in result["evaluations"])
    assert re.search(r"^ +64 +[0-3]/3 +\d+\.\d % +\d+\.\d +\d\.\d{3}$", result["curve"], re.M)
    env_id, config = load_config(Path(result["run_dir"]) / "config.yaml")
    assert (env_id, config.algo, config.imitation) == ("FortyThieves-Relaxed-v0", "TorchPPO", None)
    stages = [r["agent"] for r in result["stages"]]
    assert stages[0] == "untrained (random legal moves)" and stages[1].startswith("after PPO (64 steps")
    assert result["stages"][1]["settings"]["agent_options"]["deterministic"] is False
    assert [(r["agent"], r["variant"]) for r in result["rows"]] == [
        ("random", "classic"), ("heuristic", "classic"), ("random", "relaxed"), ("heuristic", "relaxed"),
        ("random", "streets"), ("heuristic", "streets"),
    ]  # fmt: skip
    assert all(r["summary"]["games"] == 2 and r["settings"]["first_deal"] == 1 for r in result["rows"])
    assert "no shipped model 'classic'" in out
    assert re.search(r"^after PPO \(64 steps, best_model\) +[0-2]/2 ", out, re.M)
    assert re.search(r"^heuristic +[0-2]/2 ", out, re.M)
    assert Path(result["run_dir"], "comparison.json").is_file()
    assert result["trained"]["num_timesteps"] >= 64


def test_ppo_agent_moves_are_the_models(run: Path) -> None:
    from agents.players.base import make_agent
    from forty_thieves_env.envs.env import FortyThievesEnv

    greedy = make_agent("ppo", "classic", model=str(run / "best_model.zip"), deterministic=True)
    sampler = make_agent("ppo", "classic", model=str(run / "best_model.zip"), deterministic=False)
    env = FortyThievesEnv("classic")
    rng = np.random.default_rng(0)
    obs, info = env.reset(options={"deal": 9})
    draws = []
    for _ in range(40):
        mask = info["action_mask"]
        expected, _ = greedy.model.predict(obs, action_masks=mask, deterministic=True)
        assert greedy.act(obs, mask) == int(expected)
        sampler.reset(seed=5)
        first = sampler.act(obs, mask)
        sampler.reset(seed=5)
        assert sampler.act(obs, mask) == first and mask[first]  # seeded: the same draw again
        draws.append(first)
        obs, _, term, trunc, info = env.step(rng.choice(np.flatnonzero(mask)))
        if term or trunc:
            obs, info = env.reset(options={"deal": 10})
    assert len(set(draws)) > 1


def test_a_trained_run_ships_and_plays_by_name(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agents.players.shipped import MODELS_ENV_VAR, shipped_models

    monkeypatch.setenv(MODELS_ENV_VAR, str(tmp_path / "models"))
    assert main(["ship", str(run), "--name", "tiny"]) == 0
    info = shipped_models()["tiny"]
    assert (info.env_id, info.variant, info.observation, info.seed) == ("FortyThieves-v0", "classic", "oracle", 3)
    assert info.training_command == f"forty-thieves train {PPO_YAML} --total-timesteps 256"
    assert info.test_results["source"] == "final_eval.json" and info.test_results["summary"]["games"] == 2
    assert info.num_timesteps in (128, 256) and info.config["n_steps"] == 32
    out = tmp_path / "ev"
    args = ["evaluate", "--agent", "ppo", "--model", "tiny", "--deals", "1-2", "--workers=1", "--max-moves=30"]
    assert main([*args, "--quiet", "--out", str(out)]) == 0
    assert "ppo on FortyThieves-v0, 2 deals" in capsys.readouterr().out  # the model's own env


ASYMMETRIC = [
    "env_kwargs.observation=oracle",
    "policy_kwargs.features_extractor_kwargs={hidden: 8, rank: 2, value_dim: 8, critic_stock: 6}",
]


def test_asymmetric_critic_trains_from_init_model_and_plays_as_a_player(run: Path, tmp_path: Path) -> None:
    """``init_model`` copies a run's weights into a network with an asymmetric critic (the stock
    table starts fresh); the trained model plays as a ``dict`` player, batched and game by game."""
    from agents.evaluation.evaluate import evaluate
    from agents.players.base import make_agent

    lines: list[str] = []
    src = checkpoints(run)[0]
    asym = train(
        PPO_YAML,
        "FortyThieves-v0",
        overrides=[*TINY, *ASYMMETRIC, "imitation=null", f"init_model={src}", "eval_freq=0", "final_eval_episodes=0"],
        total_timesteps=64,
        runs_dir=tmp_path,
        name="asym",
        progress=False,
        log=lines.append,
    )
    assert any("init_model:" in line and "stock_table" in line for line in lines)
    from sb3_contrib import MaskablePPO

    src_params = MaskablePPO.load(src).policy.state_dict()
    start = MaskablePPO.load(checkpoints(asym)[0]).policy.state_dict()
    assert set(start) - set(src_params) == {k for k in start if "stock_table" in k}
    agent = make_agent("ppo", "classic", model=str(asym / "final_model.zip"), deterministic=False, seed=0)
    assert agent.observation == "dict"  # fair: it plays from a player's observation
    rows = {}
    for batched in (True, False):
        ev = evaluate(
            "ppo",
            "classic",
            deals="1-3",
            seed=0,
            workers=1,
            max_moves=30,
            agent_kwargs={"model": str(asym / "final_model.zip"), "deterministic": False, "batched": batched},
            progress=False,
        )
        rows[batched] = [(r.deal, r.moves, r.cards_on_foundations) for r in ev.results]
    assert rows[True] == rows[False]


def test_init_model_of_another_shape_is_refused(run: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"init_model .* shape"):
        train(
            PPO_YAML,
            "FortyThieves-v0",
            overrides=[
                *TINY,
                "imitation=null",
                f"init_model={checkpoints(run)[0]}",
                "num_envs=2",
                "policy_kwargs.features_extractor_kwargs={hidden: 12, rank: 2, value_dim: 8}",
            ],
            total_timesteps=64,
            runs_dir=tmp_path,
            name="bad",
            progress=False,
            log=lambda _: None,
        )


def test_critic_stock_without_the_oracle_observation_is_refused(tmp_path: Path) -> None:
    """Refused before anything is written: the run folder is not made."""
    from agents.configs.train_config import ConfigError

    refused = r"critic_stock: 8 reads the stock from the oracle observation: --set env_kwargs.observation=oracle"
    with pytest.raises(ConfigError, match=refused):
        train(
            PPO_YAML,
            "FortyThieves-v0",
            overrides=[*TINY, "env_kwargs.observation=dict", "policy_kwargs.features_extractor_kwargs.critic_stock=8"],
            runs_dir=tmp_path,
            name="refused",
            progress=False,
            log=lambda _: None,
        )
    assert not (tmp_path / "refused").exists()


def test_init_model_that_does_not_exist_is_refused_before_the_run_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"init_model: no shipped model .*nope\.zip"):
        train(
            PPO_YAML,
            "FortyThieves-v0",
            overrides=[*TINY, "imitation=null", f"init_model={tmp_path / 'nope.zip'}"],
            runs_dir=tmp_path / "runs",
            name="refused",
            progress=False,
            log=lambda _: None,
        )
    assert not (tmp_path / "runs" / "refused").exists()
