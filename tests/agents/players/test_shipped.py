"""Shipped models: shipping a run, resolving ``--model NAME`` or a path, refusing models that do not fit.

Nothing trains here beyond 16 steps: tiny MaskablePPO models are built on the envs and saved
into a fake run folder, then shipped into a temporary models folder (``FORTY_THIEVES_MODELS``).
"""

from __future__ import annotations

import ast
import io
import json
import shutil
import zipfile
from pathlib import Path

import gymnasium as gym
import pytest
import torch
from sb3_contrib import MaskablePPO

import forty_thieves_env  # noqa: F401  (registers the ids)
from agents.cli import main
from agents.configs.config_file import dump_config
from agents.configs.train_config import TrainConfig
from agents.players.base import make_agent
from agents.players.ppo import PPOAgent, load_model
from agents.players.shipped import MODELS_ENV_VAR, ModelInfo, check_fit, resolve_model, shipped_models
from agents.training.shipping import ship_run
from forty_thieves_env.engine.variants import get_variant
from forty_thieves_env.envs.env import FortyThievesEnv
from forty_thieves_env.envs.observation import observation_space

ROOT = Path(__file__).resolve().parents[3]


def tiny_model(observation: str = "dict", learn: int = 0) -> MaskablePPO:
    env = gym.make("FortyThieves-v0", observation=observation)
    policy = "MlpPolicy" if observation == "flat" else "MultiInputPolicy"
    model = MaskablePPO(policy, env, n_steps=16, batch_size=16, n_epochs=1, policy_kwargs={"net_arch": [8]}, seed=0)
    if learn:
        model.learn(learn)
    return model


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder as ``forty-thieves train`` leaves it (the parts shipping reads)."""
    torch.set_num_threads(1)
    run_dir = tmp_path_factory.mktemp("runs") / "tiny_run"
    run_dir.mkdir()
    config = TrainConfig.model_validate(
        {"seed": 7, "num_envs": 1, "n_steps": 16, "batch_size": 16, "policy_kwargs": {"features_extractor": "mlp"}}
    )
    (run_dir / "config.yaml").write_text(dump_config("FortyThieves-v0", config), encoding="utf-8")
    (run_dir / "command.txt").write_text("forty-thieves train configs/ppo.yaml --seed 7\n", encoding="utf-8")
    (run_dir / "versions.json").write_text(json.dumps({"git_commit": "abc123", "git_dirty": True}), encoding="utf-8")
    final = {"model": "best_model.zip", "settings": {"agent": "ppo", "variant": "classic"}, "summary": {"games": 2}}
    (run_dir / "final_eval.json").write_text(json.dumps(final), encoding="utf-8")
    tiny_model(learn=16).save(run_dir / "best_model.zip")  # 16 steps: the optimizer has a state
    return run_dir


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setenv(MODELS_ENV_VAR, str(folder))
    return folder


@pytest.fixture
def shipped(run: Path, models: Path) -> Path:
    ship_run(run, "tiny", log=lambda _: None)
    return models / "tiny.zip"


def optimizer_state(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return torch.load(io.BytesIO(z.read("policy.optimizer.pth")), map_location="cpu", weights_only=True)


def play(agent: PPOAgent, observation: str = "dict", moves: int = 10) -> int:
    env = FortyThievesEnv(agent.variant, observation=observation)
    obs, info = env.reset(options={"deal": 3})
    agent.reset(seed=0)
    for n in range(moves):
        action = agent.act(obs, info["action_mask"])
        assert info["action_mask"][action]
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return n + 1
    return moves


# ------------------------------------------------------------------------ shipping


def test_ship_writes_the_zip_and_its_metadata(run: Path, models: Path, shipped: Path) -> None:
    info = ModelInfo.read(models / "tiny.json")
    assert shipped.is_file() and shipped_models() == {"tiny": info}
    assert (info.name, info.env_id, info.variant, info.observation) == ("tiny", "FortyThieves-v0", "classic", "dict")
    assert (info.seed, info.num_timesteps, info.commit) == (7, 16, "abc123-dirty")
    assert info.training_command == "forty-thieves train configs/ppo.yaml --seed 7"
    assert info.config["n_steps"] == 16 and info.config["policy_kwargs"]["features_extractor"] == "mlp"
    assert info.policy.startswith("MaskablePPO MultiInputPolicy: mlp features")
    assert info.test_results == {"source": "final_eval.json", "settings": {"agent": "ppo", "variant": "classic"},
                                 "summary": {"games": 2}}  # fmt: skip
    assert info.source == str(run / "best_model.zip") and info.created


def test_the_run_config_ships_beside_the_model(run: Path, shipped: Path) -> None:
    """``NAME.yaml`` is the run's resolved config, loadable as a training config (the run repeats)."""
    from agents.configs.config_file import load_config

    config = shipped.with_suffix(".yaml")
    assert config.read_text(encoding="utf-8") == (run / "config.yaml").read_text(encoding="utf-8")
    env_id, cfg = load_config(config)
    assert env_id == "FortyThieves-v0" and cfg.seed == 7


def test_the_shipped_zip_has_no_optimizer_state_and_plays_the_same(run: Path, shipped: Path) -> None:
    source = run / "best_model.zip"
    assert optimizer_state(source)["state"], "the source model should carry Adam's moments"
    assert optimizer_state(shipped)["state"] == {}
    assert shipped.stat().st_size < 0.6 * source.stat().st_size
    a, b = MaskablePPO.load(source, device="cpu"), MaskablePPO.load(shipped, device="cpu")
    for (key, x), y in zip(a.policy.state_dict().items(), b.policy.state_dict().values(), strict=True):
        assert torch.equal(x, y), key


def test_keep_optimizer_keeps_it(run: Path, models: Path) -> None:
    zip_path, _ = ship_run(run, "kept", keep_optimizer=True, log=lambda _: None)
    assert optimizer_state(zip_path)["state"]


def test_shipping_refuses_to_overwrite_without_force(run: Path, models: Path, shipped: Path) -> None:
    (models / "tiny.json").write_text((models / "tiny.json").read_text().replace('"seed": 7', '"seed": 8'))
    with pytest.raises(ValueError, match=r"tiny\.zip exists: --force"):
        ship_run(run, "tiny", log=lambda _: None)
    assert ModelInfo.read(models / "tiny.json").seed == 8  # untouched
    ship_run(run, "tiny", force=True, log=lambda _: None)
    assert ModelInfo.read(models / "tiny.json").seed == 7


@pytest.mark.parametrize("name", ["../evil", "a.zip", "with space", ""])
def test_shipping_refuses_a_name_that_reads_as_a_path(run: Path, models: Path, name: str) -> None:
    with pytest.raises(ValueError, match="letters, digits"):
        ship_run(run, name, log=lambda _: None)
    assert not any(models.iterdir())


def test_shipping_needs_a_run_folder(tmp_path: Path, models: Path) -> None:
    with pytest.raises(ValueError, match="not a run folder"):
        ship_run(tmp_path, "x", log=lambda _: None)


def test_ship_command_with_results(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agents.training.shipping import main as shipping_main

    folder = tmp_path / "elsewhere"
    evaluation = {"settings": {"agent": "ppo", "variant": "classic", "deals": "test"}, "summary": {"win_rate": 0.5},
                  "results": [{"deal": 1}]}  # fmt: skip
    results = tmp_path / "results.json"
    results.write_text(json.dumps(evaluation))
    args = [str(run), "--name", "cli", "--models-dir", str(folder), "--results", str(results)]
    assert main(["ship", *args]) == 0
    info = ModelInfo.read(folder / "cli.json")
    assert info.test_results == {"source": "results.json", **{k: evaluation[k] for k in ("settings", "summary")}}
    assert main(["ship", *args]) == 2 and "exists: --force" in capsys.readouterr().err
    evaluation["settings"]["variant"] = "relaxed"
    results.write_text(json.dumps(evaluation))
    assert shipping_main([*args, "--force"]) == 2
    assert "an evaluation of 'ppo' on 'relaxed', not of ppo on 'classic'" in capsys.readouterr().err


# ------------------------------------------------------------------------ resolving


def test_resolve_a_shipped_name_and_paths(run: Path, shipped: Path, tmp_path: Path) -> None:
    path, info = resolve_model("tiny")
    assert path == shipped and info is not None and info.name == "tiny"
    for given in (run, run / "best_model.zip", str(run)):
        path, info = resolve_model(given)
        assert path == run / "best_model.zip"
        assert info is not None and info.name == "tiny_run" and info.seed == 7  # from the run folder
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(run / "best_model.zip", lone / "m.zip")
    assert resolve_model(lone / "m.zip") == (lone / "m.zip", None)
    ModelInfo(name="m", env_id="FortyThieves-v0", variant="classic", seed=11).write(lone / "m.json")
    path, info = resolve_model(lone / "m.zip")  # a sidecar m.json
    assert path == lone / "m.zip" and info is not None and info.seed == 11
    assert load_model("tiny") is load_model(shipped)  # one cached model per file


def test_an_unknown_name_lists_the_shipped_ones(shipped: Path) -> None:
    with pytest.raises(ValueError, match=r"no shipped model 'nope'.*shipped models: tiny\. --model also takes a path"):
        resolve_model("nope")
    with pytest.raises(ValueError, match="shipped models: tiny"):
        make_agent("ppo", "classic", model="runs/nope/best_model.zip")


def test_with_nothing_shipped_the_message_says_so(models: Path) -> None:
    assert shipped_models() == {}
    with pytest.raises(ValueError, match="no model is shipped yet"):
        resolve_model("classic")


def test_broken_metadata_is_named(models: Path) -> None:
    (models / "bad.zip").write_bytes(b"")
    (models / "bad.json").write_text(json.dumps({"name": "bad", "env_id": "FortyThieves-v0", "variant": "relaxed"}))
    with pytest.raises(
        ValueError,
        match=r"bad\.json: not valid model metadata: env_id FortyThieves-v0 plays variant 'classic', not 'relaxed'$",
    ):
        shipped_models()


# ------------------------------------------------------------------------ playing and refusing


def test_the_ppo_agent_plays_a_shipped_model_by_name(shipped: Path) -> None:
    agent = make_agent("ppo", "classic", model="tiny")
    assert agent.info is not None and agent.info.name == "tiny" and agent.observation == "dict"
    assert play(agent) > 0


def test_the_metadata_says_greedy_or_sampled(shipped: Path) -> None:
    """The config's ``eval_deterministic`` travels with the model; an explicit option still wins."""
    info = json.loads(shipped.with_suffix(".json").read_text(encoding="utf-8"))
    assert info["deterministic"] is True  # TrainConfig's default
    assert make_agent("ppo", "classic", model="tiny").deterministic is True
    info["deterministic"] = False
    shipped.with_suffix(".json").write_text(json.dumps(info), encoding="utf-8")
    assert make_agent("ppo", "classic", model="tiny").deterministic is False
    assert make_agent("ppo", "classic", model="tiny", deterministic=True).deterministic is True


def test_evaluate_plays_a_shipped_name(shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    args = ["evaluate", "--agent", "ppo", "--model", "tiny", "--deals", "1-2", "--workers=1", "--max-moves=20"]
    assert main([*args, "--quiet", "--out", str(out)]) == 0
    assert "ppo on FortyThieves-v0, 2 deals" in capsys.readouterr().out  # the model's own env
    assert json.loads((out / "results.json").read_text())["settings"]["agent_options"] == {"model": "tiny"}
    args[args.index("tiny")] = "nope"
    assert main([*args, "--quiet", "--out", str(tmp_path / "ev2")]) == 2
    assert "shipped models: tiny" in capsys.readouterr().err


def test_a_variant_mismatch_is_refused_naming_both(run: Path, shipped: Path) -> None:
    with pytest.raises(
        ValueError, match=r"model 'tiny' was trained on variant 'classic' \(FortyThieves-v0\), not 'relaxed'"
    ):
        make_agent("ppo", "relaxed", model="tiny")
    # Streets has classic's spaces: only the metadata tells them apart.
    with pytest.raises(ValueError, match=r"variant 'classic' \(FortyThieves-v0\), not 'streets'"):
        make_agent("ppo", "streets", model="tiny")
    with pytest.raises(
        ValueError, match=r"best_model\.zip was trained on variant 'classic' .*not 'classic' with redeals=1"
    ):
        PPOAgent(get_variant("classic", redeals=1), model=run)


def test_without_metadata_the_spaces_are_compared(run: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.zip"
    shutil.copy(run / "best_model.zip", bare)
    assert play(PPOAgent("classic", model=bare)) > 0
    assert PPOAgent("streets", model=bare).info is None  # same spaces, nothing to refuse it by
    with pytest.raises(ValueError, match=r"has Discrete\(112\) actions but 'relaxed' has Discrete\(1192\)"):
        PPOAgent("relaxed", model=bare)
    deeper = get_variant("classic", cards_per_column=5)  # 112 actions too, but deeper columns
    with pytest.raises(
        ValueError, match=r"tableau \(10, 16\).*but 'classic' with cards_per_column=5 gives .*tableau \(10, 17\)"
    ):
        PPOAgent(deeper, model=bare)


def test_a_flat_model_is_fed_the_dict_fields_flattened(tmp_path: Path) -> None:
    model = tiny_model("flat")
    model.save(tmp_path / "flat.zip")
    agent = PPOAgent("classic", model=tmp_path / "flat.zip")
    assert agent.observation == "dict"
    env, flat_env = FortyThievesEnv("classic"), FortyThievesEnv("classic", observation="flat")
    (obs, info), (flat, _) = env.reset(options={"deal": 4}), flat_env.reset(options={"deal": 4})
    for _ in range(15):
        expected, _ = agent.model.predict(flat, action_masks=info["action_mask"], deterministic=True)
        action = agent.act(obs, info["action_mask"])
        assert action == int(expected)
        (obs, _, done, _, info), (flat, *_) = env.step(action), flat_env.step(action)
        if done:
            break
    # Metadata that contradicts the zip is refused, naming both modes.
    ModelInfo(name="flat", env_id="FortyThieves-v0", variant="classic", observation="dict").write(
        tmp_path / "flat.json"
    )
    with pytest.raises(
        ValueError, match=r"trained on the 'dict' observation, but its zip reads the 'flat' observation \(234,\)"
    ):
        PPOAgent("classic", model=tmp_path / "flat.zip")


def test_an_oracle_model_asks_for_the_oracle_observation(tmp_path: Path) -> None:
    tiny_model("oracle").save(tmp_path / "oracle.zip")
    agent = PPOAgent("classic", model=tmp_path / "oracle.zip")
    assert agent.observation == "oracle"
    assert play(agent, "oracle") > 0
    with pytest.raises(ValueError, match=r"reads the 'oracle' observation; this one has no 'stock'"):
        play(agent, "dict")


def test_check_fit_compares_rules_not_names() -> None:
    relaxed = get_variant("relaxed")
    spaces = observation_space(relaxed, "dict"), gym.spaces.Discrete(1192)
    same_rules = ModelInfo(
        name="x", env_id="FortyThieves-v0", variant="classic", env_kwargs={"run_moves": "free", "redeals": 1}
    )
    assert check_fit(*spaces, same_rules, relaxed, "x") == "dict"
    other_rules = ModelInfo(name="x", env_id="FortyThieves-v0", variant="classic", env_kwargs={"run_moves": "free"})
    with pytest.raises(ValueError, match=r"variant 'classic' with run_moves='free' \(FortyThieves-v0\), not 'relaxed'"):
        check_fit(*spaces, other_rules, relaxed, "x")


def test_the_models_folder_is_package_data() -> None:
    # (tomllib is Python 3.11+; the package supports 3.10)
    pyproject = (ROOT / "pyproject.toml").read_text()
    section = pyproject.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    line = next(x for x in section.splitlines() if x.startswith("agents = ["))
    globs = ast.literal_eval(line.split("=", 1)[1].strip())  # other package data may sit beside it
    assert {"models/*.zip", "models/*.json", "models/*.yaml"} <= set(globs)
    assert (ROOT / "agents" / "models").is_dir()
