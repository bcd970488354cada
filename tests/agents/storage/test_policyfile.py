"""A policy saved as a MaskablePPO zip without a MaskablePPO model (``save_policy``) is the zip
MaskablePPO would save, loads with ``MaskablePPO.load`` and the project's loaders, and reads back
alone (``load_policy``) with its weights, its optimizer state and what the zip says; the shipped
models read back alone give MaskablePPO's logits."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

import torch
from tiny_policy import adam_step, model_of, observations, outputs, rewrite_data, run_spaces, same_state, tiny_config

from agents.players.shipped import MODELS_DIR
from agents.storage.files import DamagedFileError
from agents.storage.modelfile import check_model, load_model, save_model
from agents.storage.policyfile import StoredPolicy, load_policy
from agents.training.networks.policies import build_policy, save_policy

ENV_ID = "FortyThieves-Streets-v0"  # the alternate build rule: the scorer's options must survive the trip


def data_of(path: Path | io.BytesIO) -> dict[str, Any]:
    """A zip's ``data`` as JSON (its pickles still base64: compared byte for byte)."""
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("data"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any, Any]:
    """A small lookup_scorer policy after one optimizer step, saved at step 1234: ``(zip, policy, obs, masks)``."""
    torch.set_num_threads(1)
    config = tiny_config("lookup_scorer", learning_rate="lin_1e-3", clip_range="lin_0.2_0.1", clip_range_vf=0.3)
    variant, obs_space, action_space = run_spaces(ENV_ID, config.env_kwargs)
    policy = build_policy(config, obs_space, action_space, seed=config.seed, variant=variant)
    obs, masks = observations(ENV_ID, 12)
    adam_step(policy, obs, masks)
    path = save_policy(tmp_path_factory.mktemp("policy") / "m.zip", policy, config, num_timesteps=1234, variant=variant)
    return path, policy, obs, masks


@pytest.mark.parametrize(
    ("network", "updates"),
    [
        ("lookup_scorer", {"learning_rate": "lin_1e-3", "clip_range_vf": 0.3}),
        ("card_embedding", {"clip_range": "lin_0.2_0.1", "target_kl": 0.02}),
        ("mlp", {"normalize_advantage": False}),
    ],
)
def test_the_zip_is_the_one_maskable_ppo_saves(network: str, updates: dict, tmp_path: Path) -> None:
    """Every ``data`` entry (the pickles byte for byte) is what a fresh MaskablePPO of the config saves."""
    config = tiny_config(network, **updates)
    model = model_of(config, ENV_ID)
    model.n_envs = config.num_envs  # built on one game for its spaces, as TorchPPO's container was
    expected = data_of(save_model(model, tmp_path / "sb3.zip"))

    variant, obs_space, action_space = run_spaces(ENV_ID, config.env_kwargs)
    policy = build_policy(config, obs_space, action_space, seed=config.seed, variant=variant)
    path = save_policy(tmp_path / "ours.zip", policy, config, num_timesteps=0, variant=variant)
    assert data_of(path) == expected
    with zipfile.ZipFile(path) as ours, zipfile.ZipFile(tmp_path / "sb3.zip") as theirs:
        assert sorted(ours.namelist()) == sorted(theirs.namelist())


def test_maskable_ppo_loads_it_with_the_same_outputs_and_optimizer(trained: tuple) -> None:
    from sb3_contrib import MaskablePPO

    path, policy, obs, masks = trained
    check_model(path)  # whole, every entry SB3 needs
    for model in (MaskablePPO.load(path, device="cpu"), load_model(path, device="cpu")):
        assert (model.num_timesteps, model.n_envs, model.batch_size, model.n_steps) == (1234, 4, 16, 8)
        assert model.lr_schedule(0.5) == pytest.approx(5e-4) and model.clip_range(0.5) == pytest.approx(0.15)
        assert model.clip_range_vf(0.0) == pytest.approx(0.3)
        assert type(model.policy) is type(policy)
        for a, b in zip(outputs(model.policy, obs, masks), outputs(policy, obs, masks), strict=True):
            assert torch.equal(a, b)
        assert same_state(model.policy.optimizer.state_dict(), policy.optimizer.state_dict())
    assert policy.optimizer.state_dict()["state"], "the step should have left Adam's moments"


def test_load_policy_gives_the_policy_back_alone(trained: tuple) -> None:
    path, policy, obs, masks = trained
    stored = load_policy(path)
    assert isinstance(stored, StoredPolicy)
    assert type(stored.policy) is type(policy) and stored.num_timesteps == 1234
    assert (stored.observation_space, stored.action_space) == (policy.observation_space, policy.action_space)
    assert stored.data["n_envs"] == 4 and stored.data["policy_kwargs"]["features_extractor_kwargs"]["alternate"]
    assert same_state(stored.policy.state_dict(), policy.state_dict())
    assert same_state(stored.policy.optimizer.state_dict(), policy.optimizer.state_dict())
    for a, b in zip(outputs(stored.policy, obs, masks), outputs(policy, obs, masks), strict=True):
        assert torch.equal(a, b)
    # It trains on: a step from the stored state is the step from the original state.
    adam_step(stored.policy, obs, masks)
    adam_step(policy, obs, masks)
    assert same_state(stored.policy.state_dict(), policy.state_dict())


def test_a_saved_policy_saves_again_the_same(trained: tuple, tmp_path: Path) -> None:
    path, _, _, _ = trained
    stored = load_policy(path)
    config = tiny_config("lookup_scorer", learning_rate="lin_1e-3", clip_range="lin_0.2_0.1", clip_range_vf=0.3)
    again = save_policy(
        tmp_path / "again.zip",
        stored.policy,
        config,
        num_timesteps=stored.num_timesteps,
        policy_kwargs=stored.data["policy_kwargs"],
    )
    ours, first = data_of(again), data_of(path)
    # The action space's pickle holds its sampler's generator, which pickles differently once unpickled.
    assert {k: v for k, v in ours.items() if k != "action_space"} == {
        k: v for k, v in first.items() if k != "action_space"
    }
    assert load_policy(again).action_space == stored.action_space


def test_save_policy_refuses_what_it_cannot_write(trained: tuple, tmp_path: Path) -> None:
    _, policy, _, _ = trained
    config = tiny_config("lookup_scorer")
    with pytest.raises(ValueError, match=r"ends in \.zip"):
        save_policy(tmp_path / "m.model", policy, config, num_timesteps=0)
    with pytest.raises(ValueError, match="the config names MoveScorerPolicy, the policy is a LookupScorerPolicy"):
        save_policy(tmp_path / "m.zip", policy, tiny_config("move_scorer"), num_timesteps=0)
    assert not any(tmp_path.iterdir())


def test_a_damaged_zip_is_one_line_naming_it(trained: tuple, tmp_path: Path) -> None:
    path, _, _, _ = trained
    cut = tmp_path / "cut.zip"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(DamagedFileError, match=f"^{re.escape(str(cut))} is damaged") as err:
        load_policy(cut)
    assert "\n" not in str(err.value)

    # Whole, but its data has no policy class.
    blank = rewrite_data(path, tmp_path / "blank.zip", lambda doc: doc.pop("policy_class"))
    with pytest.raises(
        DamagedFileError, match=f"^{re.escape(str(blank))} is damaged \\(its data has no 'policy_class'\\)"
    ):
        load_policy(blank)

    # Whole, but its weights are another network's.
    other = tmp_path / "other.zip"
    move = build_policy(tiny_config("move_scorer"), *run_spaces(ENV_ID)[1:])
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(other, "w") as zout:
        for name in zin.namelist():
            entry = zin.read(name)
            if name == "policy.pth":
                buffer = io.BytesIO()
                torch.save(move.state_dict(), buffer)
                entry = buffer.getvalue()
            zout.writestr(name, entry)
    with pytest.raises(DamagedFileError, match=f"^{re.escape(str(other))} cannot be loaded as a model \\(RuntimeError"):
        load_policy(other)


@pytest.mark.parametrize("name", ["classic", "relaxed", "streets"])
def test_a_shipped_model_read_alone_gives_maskable_ppos_logits(name: str) -> None:
    torch.set_num_threads(1)
    info = json.loads((MODELS_DIR / f"{name}.json").read_text())
    path = MODELS_DIR / f"{name}.zip"
    model = load_model(path, device="cpu")
    stored = load_policy(path)
    assert type(stored.policy) is type(model.policy) and stored.num_timesteps == model.num_timesteps
    assert same_state(stored.policy.state_dict(), model.policy.state_dict())
    obs, masks = observations(info["env_id"], 16, seed=3, observation=info["observation"])
    logits, values = outputs(stored.policy, obs, masks)
    expected_logits, expected_values = outputs(model.policy, obs, masks)
    assert torch.equal(logits, expected_logits) and torch.equal(values, expected_values)
    assert torch.isfinite(logits).sum() > len(masks)  # real choices: more than one legal move somewhere


@pytest.mark.cuda
def test_a_policy_saved_on_the_gpu_loads_on_the_cpu(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    config = tiny_config("lookup_scorer")
    variant, obs_space, action_space = run_spaces(ENV_ID)
    policy = build_policy(config, obs_space, action_space, device="cuda", seed=1, variant=variant)
    obs, masks = observations(ENV_ID, 8)
    adam_step(policy, obs, masks)
    path = save_policy(tmp_path / "gpu.zip", policy, config, num_timesteps=8, variant=variant)
    stored = load_policy(path, device="cpu")
    model = MaskablePPO.load(path, device="cpu")
    assert all(p.device.type == "cpu" for p in stored.policy.parameters())
    assert same_state(stored.policy.state_dict(), policy.state_dict())
    assert same_state(model.policy.optimizer.state_dict(), policy.optimizer.state_dict())
    for a, b in zip(outputs(stored.policy, obs, masks), outputs(policy, obs, masks), strict=True):
        torch.testing.assert_close(a, b)
