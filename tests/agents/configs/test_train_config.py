"""Training configs: zoo-style sections, schedules, and bad configs refused by key name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agents.cli import main
from agents.configs.config_file import dump_config, load_config
from agents.configs.train_config import ConfigError, LinearSchedule, TrainConfig, parse_schedule

ROOT = Path(__file__).resolve().parents[3]
PPO_YAML = ROOT / "configs" / "ppo.yaml"


def write(tmp_path: Path, data: dict | str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def test_shipped_config_has_classic_and_an_easier_variant() -> None:
    env_id, classic = load_config(PPO_YAML)
    assert env_id == "FortyThieves-v0"
    assert classic.algo == "MaskablePPO"
    _, relaxed = load_config(PPO_YAML, "FortyThieves-Relaxed-v0")
    # The section changes a few keys; the rest comes from `default`.
    assert relaxed.n_timesteps == 2_000_000 != classic.n_timesteps
    assert relaxed.imitation is not None and classic.imitation is not None
    assert relaxed.imitation.games == 3000 != classic.imitation.games
    assert relaxed.imitation.workers == classic.imitation.workers  # a nested section merges key by key
    # Classic trains with the asymmetric critic (deep merge: only critic_stock differs), Relaxed without.
    assert (relaxed.learning_rate, classic.learning_rate) == (1e-4, 2e-3)
    assert classic.env_kwargs == {"reward": "foundation", "observation": "oracle"}
    assert relaxed.env_kwargs == {"reward": "foundation"}
    assert classic.policy_kwargs.features_extractor_kwargs.critic_stock == 24
    assert relaxed.policy_kwargs.features_extractor_kwargs.critic_stock == 0
    assert relaxed.policy_kwargs.model_copy(update={"features_extractor_kwargs": None}) == (
        classic.policy_kwargs.model_copy(update={"features_extractor_kwargs": None})
    )


def test_every_key_of_the_shipped_config_has_a_comment() -> None:
    for line in PPO_YAML.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or not stripped or line.startswith(("Forty", "default", "  <<")):
            continue
        if stripped.endswith(":") and not line.startswith("    "):  # a nested mapping's own line
            continue
        assert "#" in line, f"no comment on {line!r}"


def test_default_is_merged_deeply_without_anchors(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "default": {"n_steps": 64, "policy_kwargs": {"net_arch": [32], "activation_fn": "relu"}},
            "FortyThieves-Maria-v0": {"policy_kwargs": {"net_arch": [16, 16]}},
        },
    )
    env_id, cfg = load_config(path)
    assert env_id == "FortyThieves-Maria-v0"  # the file's only section
    assert cfg.n_steps == 64
    assert cfg.policy_kwargs.net_arch == [16, 16]
    assert cfg.policy_kwargs.activation_fn == "relu"  # kept from default


def test_overrides_reach_nested_keys() -> None:
    mlp = ["policy_kwargs.features_extractor=mlp", "env_kwargs.observation=dict"]
    _, cfg = load_config(PPO_YAML, None, [*mlp, "num_envs=128", "learning_rate=1e-3"])
    assert cfg.policy_kwargs.features_extractor == "mlp"
    assert cfg.num_envs == 128
    assert parse_schedule(cfg.learning_rate) == pytest.approx(1e-3)


def test_schedules() -> None:
    lin = parse_schedule("lin_3e-4")
    assert isinstance(lin, LinearSchedule)
    assert lin(1.0) == pytest.approx(3e-4) and lin(0.5) == pytest.approx(1.5e-4) and lin(0.0) == 0.0
    two = parse_schedule("lin_1e-3_1e-4")
    assert two(1.0) == pytest.approx(1e-3) and two(0.0) == pytest.approx(1e-4)
    assert parse_schedule(0.2) == 0.2
    assert parse_schedule("2.5e-4") == pytest.approx(2.5e-4)
    for bad in ("lin_", "exp_3e-4", "fast", "lin_3e-4_"):
        with pytest.raises(ValueError, match="schedule"):
            parse_schedule(bad)


def test_resolved_config_round_trips(tmp_path: Path) -> None:
    env_id, cfg = load_config(PPO_YAML, "FortyThieves-Relaxed-v0", ["seed=7"])
    path = write(tmp_path, dump_config(env_id, cfg), "resolved.yaml")
    env2, cfg2 = load_config(path)
    assert (env2, cfg2) == (env_id, cfg)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("lerning_rate=1e-3", r"lerning_rate: unknown key; did you mean learning_rate\?"),
        ("policy_kwargs.net_arc=[64]", r"policy_kwargs\.net_arc: unknown key; did you mean net_arch\?"),
        ("policy_kwargs.features_extractor_kwargs.embd=4", r"features_extractor_kwargs\.embd: unknown key"),
        ("policy_kwargs.net_arch={pi: [8], vff: [8]}", r"policy_kwargs\.net_arch\.vff: unknown key; did you mean vf\?"),
        ("n_steps=abc", r"n_steps: Input should be a valid integer \(got 'abc'\)"),
        ("num_envs=true", r"num_envs: Input should be a valid integer"),
        ("gamma=high", r"gamma: Input should be a valid number"),
        ("gamma=1.5", r"gamma: Input should be less than or equal to 1"),
        ("policy_kwargs.net_arch=[64, x]", r"policy_kwargs\.net_arch\.1: Input should be a valid integer"),
        ("policy_kwargs.net_arch=7", r"policy_kwargs\.net_arch: expected a list of integers or a mapping"),
        ("policy_kwargs.activation_fn=gelu", r"policy_kwargs\.activation_fn: Input should be 'tanh' or 'relu'"),
        ("learning_rate=lin_x", r"learning_rate: 'lin_x' is not a number or a schedule"),
        ("learning_rate=[1]", r"learning_rate: expected a number or a string"),
        ("ent_coef=-0.1", r"ent_coef: -0.1 goes below 0"),
        ("ent_coef=lin_1e-2_-1e-3", r"ent_coef: 'lin_1e-2_-1e-3' goes below 0"),
        ("ent_coef=lin_x", r"ent_coef: 'lin_x' is not a number or a schedule"),
        ("ent_coef=lin_1e-2_1e-3", r"ent_coef: a schedule \(lin_1e-2_1e-3\) needs algo TorchPPO"),
        ("batch_size=100000", r"batch_size: 100000 is larger than a rollout"),
        ("env_kwargs.reward=nope", r"env_kwargs: unknown reward 'nope'"),
        ("env_kwargs={deals: test}", r"env_kwargs: 'deals' is set by the trainer"),
        ("env_kwargs.redeals=-3", r"env_kwargs: .*redeals"),
        ("algo=PPO", r"algo: unknown 'PPO'; algos are MaskablePPO, TorchPPO, RLlibPPO"),
    ],
)
def test_bad_values_are_refused_naming_the_key(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        load_config(PPO_YAML, None, [override])
    assert str(err.value).startswith(f"{PPO_YAML} [FortyThieves-v0]: ")


def test_a_typo_in_another_section_is_found(tmp_path: Path) -> None:
    path = write(tmp_path, {"FortyThieves-v0": {"n_steps": 64}, "FortyThieves-Relaxed-v0": {"n_stpes": 64}})
    with pytest.raises(ConfigError, match=r"\[FortyThieves-Relaxed-v0\]: n_stpes: unknown key; did you mean n_steps"):
        load_config(path, "FortyThieves-v0")


def test_sections_must_be_env_ids(tmp_path: Path) -> None:
    path = write(tmp_path, {"FortyThieves-v1": {}})
    with pytest.raises(ConfigError, match=r"section 'FortyThieves-v1' is not an env id; did you mean FortyThieves-v0"):
        load_config(path)
    path = write(tmp_path, {"default": {}, "FortyThieves-v0": {}})
    with pytest.raises(ConfigError, match=r"no section for FortyThieves-Maria-v0; sections are FortyThieves-v0"):
        load_config(path, "FortyThieves-Maria-v0")


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "a: [1,\n"))
    with pytest.raises(ConfigError, match="mapping of env ids"):
        load_config(write(tmp_path, "- 1\n- 2\n"))
    with pytest.raises(ConfigError, match=r"\[FortyThieves-v0\]: a section must be a mapping"):
        load_config(write(tmp_path, "FortyThieves-v0: 3\n"))


def test_mlp_policy_needs_flat_observations() -> None:
    flat = r"policy: MlpPolicy reads the flat observation: --set env_kwargs\.observation=flat"
    with pytest.raises(ConfigError, match=flat):
        load_config(PPO_YAML, None, ["policy=MlpPolicy", "policy_kwargs.features_extractor=mlp"])
    _, cfg = load_config(
        PPO_YAML, None, ["policy=MlpPolicy", "policy_kwargs.features_extractor=mlp", "env_kwargs={observation: flat}"]
    )
    assert cfg.policy == "MlpPolicy"


def test_every_key_has_a_default() -> None:
    cfg = TrainConfig()
    assert cfg.algo == "MaskablePPO" and cfg.policy_kwargs.features_extractor == "card_embedding"
    # Run folders written before the key existed were evaluated greedily: the default keeps that.
    assert cfg.eval_deterministic is True
    assert load_config(PPO_YAML)[1].eval_deterministic is False


def test_cli_reports_a_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"FortyThieves-v0": {"n_epochs": "four"}})
    assert main(["train", str(path), "--runs-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "forty-thieves train: error:" in err and "n_epochs: Input should be a valid integer" in err
    assert not (tmp_path / "runs").exists()  # nothing trained, no folder left behind


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("a: [1,\nb: 2\n", ":3:1:", "but got '<stream end>' (while parsing a flow sequence from line 1)"),
        ("FortyThieves-v0:\n  num_envs: 8\n   seed: 1\n", ":3:8:", "mapping values are not allowed here"),
        ('a: "unclosed\n', ":2:1:", "found unexpected end of stream"),
        ("\tx: 1\n", ":1:1:", "found character '\\t' that cannot start any token"),
    ],
)
def test_a_yaml_syntax_error_is_one_line_naming_the_file_line_and_column(tmp_path: Path, text, where, problem) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert "\n" not in message and "<unicode string>" not in message, message
    assert message.startswith(f"{path}{where} not valid YAML: "), message
    assert problem in message, message


@pytest.mark.parametrize("env_id", ["FortyThieves-Easy-v0", "FortyThieves-Normal-v0", "FortyThieves-Hard-v0"])
def test_the_level_ids_have_a_section_of_the_recipe(env_id: str) -> None:
    got, config = load_config(PPO_YAML, env_id)
    assert got == env_id
    _, classic = load_config(PPO_YAML, "FortyThieves-v0")
    assert (config == classic) is (env_id == "FortyThieves-Hard-v0")
