"""Training configs: YAML files in the style of rl-baselines3-zoo, checked by pydantic models.

A config file is keyed by Gymnasium env id; a ``default`` section is merged (deeply) under
every env's section, and YAML anchors (``&name`` / ``<<: *name``) work as usual::

    default: &default
      algo: MaskablePPO
      n_timesteps: 1_000_000
      learning_rate: lin_3e-4      # linear decay from 3e-4 to 0
    FortyThieves-v0: {}            # the default as it is
    FortyThieves-Relaxed-v0:
      n_timesteps: 500_000

Every key is checked: an unknown key, a value of the wrong type or out of range is rejected
with a :class:`ConfigError` that names the file, the section and the key (``lerning_rate``:
"unknown key; did you mean learning_rate?"). Numbers are not coerced from strings, except
schedule strings where a schedule is allowed: ``lin_3e-4`` (linear from 3e-4 at the start to
0 at the end), ``lin_3e-4_1e-5`` (linear between the two) or a plain number.

:class:`TrainConfig` lists every key with its default and meaning; :func:`load_config` reads a
file and applies command-line overrides (``--set key=value``, dotted keys for nested ones).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import Field, ValidationError, field_validator, model_validator

from .messages import format_errors
from .policy_config import PolicyKwargs, Strict

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SCHEDULE = re.compile(rf"^(?:lin_({_NUMBER})(?:_({_NUMBER}))?|({_NUMBER}))$")


class ConfigError(ValueError):
    """A config that cannot be used; the message names the key."""


def parse_schedule(value: float | str) -> float | Callable[[float], float]:
    """A number, or SB3's schedule callable for ``lin_<start>`` / ``lin_<start>_<end>``.

    SB3 calls a schedule with ``progress_remaining`` going from 1 (start) to 0 (end).
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = _SCHEDULE.match(str(value).strip())
    if m is None:
        raise ValueError(f"{value!r} is not a number or a schedule like lin_3e-4 or lin_3e-4_1e-5")
    if m.group(3) is not None:
        return float(m.group(3))
    start = float(m.group(1))
    end = float(m.group(2)) if m.group(2) is not None else 0.0
    return LinearSchedule(start, end)


class LinearSchedule:
    """``progress_remaining -> end + (start - end) * progress_remaining`` (picklable)."""

    def __init__(self, start: float, end: float = 0.0) -> None:
        self.start, self.end = float(start), float(end)

    def __call__(self, progress_remaining: float) -> float:
        return self.end + (self.start - self.end) * float(progress_remaining)

    def __repr__(self) -> str:
        return f"LinearSchedule({self.start!r}, {self.end!r})"


Schedule = float | str


class Imitation(Strict):
    """A warm start by imitation before PPO (:mod:`agents.training.imitation`)."""

    teacher: str = "heuristic"  # a registered agent that reads the Dict observation (heuristic, lookahead)
    teacher_kwargs: dict[str, Any] = Field(default_factory=dict)  # the teacher's options (samples=8, ...)
    games: int = Field(4000, ge=1)  # training deals the teacher plays
    epochs: int = Field(4, ge=1)  # passes over the positions
    batch_size: int = Field(512, ge=2)
    learning_rate: float = Field(2e-3, gt=0)  # Adam, cosine decay over the epochs
    vf_coef: float = Field(0.5, ge=0)  # weight of the value's error on the teacher's returns
    dagger_rounds: int = Field(0, ge=0)  # rounds of the student playing, the teacher labelling
    dagger_games: int = Field(1000, ge=1)  # games per round
    dagger_epochs: int = Field(2, ge=1)  # passes over all positions so far after each round
    beta: float = Field(0.0, ge=0, le=1)  # share of moves the teacher plays in a DAgger round
    idle_cut: int = Field(100, ge=1)  # end a game after this many moves without a card home or stock turn
    workers: int = Field(2, ge=1)  # processes playing the games
    # A data set folder (forty-thieves dataset collect) whose first `games` games are the teacher's (null: play them).
    dataset: str | None = None
    targets: Literal["move", "votes"] = "move"  # votes: the vote shares where a search teacher's votes split
    decisive_weight: float = Field(1.0, ge=0)  # loss weight of the positions where a sampled line won


class RunConfig(Strict):
    """What every trainer's settings share: the family's base model.

    :class:`MaskablePPOConfig`, :class:`TorchPPOConfig` (both a :class:`TrainConfig`) and
    :class:`RLlibConfig` derive from it, so that the keys that mean the same are declared,
    checked and loaded (:func:`~agents.configs.config_file.load_config`) once. A section's
    ``algo`` says which model checks it (:data:`CONFIG_MODELS`, the discriminator of the union
    :data:`AnyConfig`) and which trainer trains it (:mod:`agents.training.trainers`).
    """

    #: ``env_kwargs`` keys the trainer sets itself, and why (for the message naming one).
    TRAINER_SETS: ClassVar[tuple[str, ...]] = ("render_mode", "variant")
    TRAINER_SETS_WHY: ClassVar[str] = "the env id fixes the variant"

    algo: str
    env_kwargs: dict[str, Any] = Field(default_factory=dict)  # gym.make keyword arguments
    n_epochs: int = Field(4, ge=1)  # passes over each rollout
    gae_lambda: float = Field(0.95, ge=0, le=1)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    max_minutes: float | None = Field(None, gt=0)  # stop after this many minutes (null: no limit)
    seed: int = Field(0, ge=0)

    @field_validator("env_kwargs")
    @classmethod
    def _env_kwargs(cls, v: dict[str, Any]) -> dict[str, Any]:
        for key in cls.TRAINER_SETS:
            if key in v:
                raise ValueError(f"{key!r} is set by the trainer ({cls.TRAINER_SETS_WHY})")
        return v

    def problems(self) -> list[tuple[str, str]]:
        """Rules between keys, as ``(key, message)`` pairs (empty when the config is consistent);
        each message ends with the fix."""
        return []

    def env_options(self) -> dict[str, Any]:
        """The env options the trainer adds to ``env_kwargs`` (RLlib's flat observation, say)."""
        return {}

    def smoke(self) -> dict[str, Any]:
        """The overrides of ``forty-thieves train --smoke``: this config at a size that trains,
        evaluates and saves in about a minute on one core (batch and rollout scaled together)."""
        return {}


#: The ``algo`` of the PPO trainers on an SB3 policy, and of RLlib's PPO.
MASKABLE_ALGO, TORCH_ALGO, RLLIB_ALGO = "MaskablePPO", "TorchPPO", "RLlibPPO"
#: The networks whose logits read only a player's fields of the oracle observation (their
#: value may read the stock: an asymmetric critic); every other network would read hidden cards.
ORACLE_SAFE_NETWORKS = ("lookup_scorer",)


class TrainConfig(RunConfig):
    """The keys of the PPO trainers on an SB3 maskable policy: :class:`MaskablePPOConfig`
    (sb3-contrib's MaskablePPO) and :class:`TorchPPOConfig` (the project's device-resident
    PPO). The same network, imitation, evaluation and model files; a section's ``algo`` picks
    one (MaskablePPO when it names none)."""

    TRAINER_SETS = ("render_mode", "deals", "variant")
    TRAINER_SETS_WHY = "the env id fixes the variant, evaluation the deals"

    algo: Literal["MaskablePPO", "TorchPPO"] = MASKABLE_ALGO
    policy: Literal["MultiInputPolicy", "MlpPolicy"] = "MultiInputPolicy"
    n_timesteps: int = Field(1_000_000, ge=0)  # PPO steps after any imitation (0: the imitation alone)
    num_envs: int = Field(8, ge=1, le=1_048_576)  # games stepped together (called n_envs before)
    vec_env: Literal["auto", "native", "dummy", "subproc"] = "auto"
    learning_rate: Schedule = "lin_3e-4"
    n_steps: int = Field(128, ge=1)
    batch_size: int = Field(256, ge=2)
    gamma: float = Field(0.99, gt=0, le=1)
    clip_range: Schedule = 0.2
    clip_range_vf: Schedule | None = None  # clip value updates around the rollout's values (null: no clipping)
    ent_coef: Schedule = 0.01  # entropy bonus; a schedule (lin_1e-2_1e-3) needs TorchPPO
    target_kl: float | None = None
    normalize_advantage: bool = True
    policy_kwargs: PolicyKwargs = Field(default_factory=PolicyKwargs)
    imitation: Imitation | None = None  # a warm start by imitation before PPO (null: none)
    init_model: str | None = None  # start from this model's weights (a .zip, run folder or shipped name); null: fresh
    eval_freq: int = Field(50_000, ge=0)
    n_eval_episodes: int = Field(100, ge=1, le=1000)
    eval_deterministic: bool = True
    save_freq: int = Field(100_000, ge=0)
    final_eval_episodes: int = Field(200, ge=0, le=1000)
    torch_threads: int = Field(2, ge=0)
    device: Literal["cpu", "cuda", "auto"] = "cpu"

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        # Run folders and shipped models written before the rename say n_envs.
        if isinstance(data, Mapping) and "n_envs" in data:
            if "num_envs" in data:
                raise ValueError("give num_envs only (n_envs is its old name)")
            data = {("num_envs" if k == "n_envs" else k): v for k, v in data.items()}
        return data

    @field_validator("learning_rate", "clip_range", "clip_range_vf")
    @classmethod
    def _schedule(cls, v: Schedule | None) -> Schedule | None:
        if v is not None:
            parse_schedule(v)
        return v

    @field_validator("ent_coef")
    @classmethod
    def _ent_coef(cls, v: Schedule) -> Schedule:
        parsed = parse_schedule(v)
        ends = (parsed.start, parsed.end) if isinstance(parsed, LinearSchedule) else (parsed,)
        if min(ends) < 0:
            raise ValueError(f"{v!r} goes below 0 (the entropy bonus would punish exploring)")
        return v

    def problems(self) -> list[tuple[str, str]]:
        out = list(self.policy_kwargs.problems())
        rollout = self.n_steps * self.num_envs
        if self.batch_size > rollout:
            out.append(
                (
                    "batch_size",
                    f"{self.batch_size} is larger than a rollout (n_steps * num_envs = {rollout}): "
                    f"--set batch_size={rollout} or less (--smoke: a tiny run of this config)",
                )
            )
        observation = self.env_kwargs.get("observation", "dict")
        if self.policy == "MlpPolicy" and observation != "flat":
            out.append(("policy", "MlpPolicy reads the flat observation: --set env_kwargs.observation=flat"))
        if self.policy == "MultiInputPolicy" and observation == "flat":
            out.append(("policy", "the flat observation needs MlpPolicy: --set policy=MlpPolicy"))
        name = self.policy_kwargs.features_extractor
        if name != "mlp" and self.policy != "MultiInputPolicy":
            out.append(
                (
                    "policy_kwargs.features_extractor",
                    f"{name} reads the dict observation: --set policy=MultiInputPolicy",
                )
            )
        if observation == "oracle" and name not in ORACLE_SAFE_NETWORKS:
            # The policy's input would hold the hidden cards (stock, tableau_revealed): a player
            # never sees them. Only a network whose logits read a player's fields may train on it.
            out.append(
                (
                    "env_kwargs.observation",
                    f"oracle holds the hidden cards, which the {name} network's logits would read: "
                    "--set env_kwargs.observation=dict (only lookup_scorer's logits read a player's fields of it, "
                    "its value the stock: critic_stock)",
                )
            )
        critic_stock = getattr(self.policy_kwargs.features_extractor_kwargs, "critic_stock", 0)
        if critic_stock and observation != "oracle":
            out.append(
                (
                    "policy_kwargs.features_extractor_kwargs.critic_stock",
                    f"{critic_stock} reads the stock from the oracle observation: "
                    "--set env_kwargs.observation=oracle, or critic_stock: 0",
                )
            )
        return out

    def smoke(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "n_timesteps": 2048,
            "num_envs": 16,
            "n_steps": 32,
            "batch_size": 256,
            "eval_freq": 1024,
            "n_eval_episodes": 10,
            "save_freq": 1024,
            "final_eval_episodes": 10,
            "torch_threads": 1,
        }
        if self.imitation is not None:
            out["imitation"] = {
                **self.imitation.model_dump(),
                **dict(games=4, epochs=1, dagger_rounds=min(self.imitation.dagger_rounds, 1), dagger_games=4),
                **dict(dagger_epochs=1, workers=1),
            }
        return out


class MaskablePPOConfig(TrainConfig):
    """sb3-contrib's MaskablePPO (``algo: MaskablePPO``, the default): :class:`TrainConfig`'s keys."""

    algo: Literal["MaskablePPO"] = MASKABLE_ALGO

    def problems(self) -> list[tuple[str, str]]:
        out = super().problems()
        if callable(parse_schedule(self.ent_coef)):
            out.append(
                (
                    "ent_coef",
                    f"a schedule ({self.ent_coef}) needs algo TorchPPO (--set algo=TorchPPO); "
                    "MaskablePPO takes a number",
                )
            )
        return out


class TorchPPOConfig(TrainConfig):
    """The project's PPO with games, rollouts and updates on one torch device (``algo: TorchPPO``,
    :mod:`agents.training.torch_ppo`): :class:`TrainConfig`'s keys; ``ent_coef`` may be a schedule."""

    algo: Literal["TorchPPO"] = TORCH_ALGO

    def problems(self) -> list[tuple[str, str]]:
        out = super().problems()
        if self.vec_env in ("dummy", "subproc"):
            out.append(
                (
                    "vec_env",
                    f"{self.vec_env} is an SB3 VecEnv; TorchPPO steps its own batch of games: --set vec_env=auto",
                )
            )
        return out


class RLlibConfig(RunConfig):
    """One RLlib PPO run's settings (keys named as in :class:`TrainConfig` where they
    mean the same; those are declared once, in :class:`RunConfig`)."""

    TRAINER_SETS = ("observation", "render_mode", "variant")
    TRAINER_SETS_WHY = "the flat observation; the env id fixes the variant"

    algo: Literal["RLlibPPO"] = RLLIB_ALGO
    iterations: int = Field(100, ge=1)  # training iterations (each samples train_batch_size env steps)
    train_batch_size: int = Field(4000, ge=2)  # env steps per iteration (per learner)
    batch_size: int = Field(128, ge=2)  # minibatch size of each gradient step
    learning_rate: float = Field(3e-4, gt=0)
    gamma: float = Field(0.995, gt=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    fcnet_hiddens: list[int] = Field(default_factory=lambda: [256, 256])  # the MLP's hidden layers
    fcnet_activation: Literal["tanh", "relu"] = "tanh"
    num_env_runners: int = Field(1, ge=0)  # env runner actors (0: sample in the driver)
    num_envs_per_env_runner: int = Field(4, ge=1)
    checkpoint_freq: int = Field(0, ge=0)  # save a checkpoint every this many iterations (0: only at the end)
    eval_freq: int = Field(0, ge=0)  # evaluate on the validation deals every this many iterations (0: never)
    n_eval_episodes: int = Field(100, ge=1, le=1000)  # the first N validation deals, the same every evaluation
    ray_address: str | None = None  # null: a local Ray instance; auto, ray://HOST:PORT or HOST:PORT: a cluster
    num_cpus: int | None = Field(None, ge=1)  # the local instance's CPUs (null: every core)

    @model_validator(mode="before")
    @classmethod
    def _no_steps(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "n_timesteps" in data:  # --total-timesteps, say
            raise ValueError("an RLlib config counts iterations, not steps: --set iterations=N")
        return data

    @field_validator("fcnet_hiddens")
    @classmethod
    def _layers(cls, v: list[int]) -> list[int]:
        if not v or any(n < 1 for n in v):
            raise ValueError("give at least one layer, each of size 1 or more")
        return v

    def problems(self) -> list[tuple[str, str]]:
        if self.batch_size > self.train_batch_size:
            return [
                (
                    "batch_size",
                    f"{self.batch_size} is larger than train_batch_size: --set batch_size={self.train_batch_size}",
                )
            ]
        return []

    def env_options(self) -> dict[str, Any]:
        return {"observation": "flat"}  # what RLlib's MLP reads (agents/training/rllib_env.py)

    def smoke(self) -> dict[str, Any]:
        return {
            "iterations": 1,
            "train_batch_size": 256,
            "batch_size": 64,
            "num_env_runners": 0,
            "num_envs_per_env_runner": 2,
        }


#: The config model of each ``algo``: the discriminator of :data:`AnyConfig`. A new trainer's
#: config model is added here, and the trainer in :data:`agents.training.trainers.TRAINERS`.
CONFIG_MODELS: dict[str, type[RunConfig]] = {
    MASKABLE_ALGO: MaskablePPOConfig,
    TORCH_ALGO: TorchPPOConfig,
    RLLIB_ALGO: RLlibConfig,
}
#: Any section of a config file, told apart by its ``algo``.
AnyConfig = Annotated[MaskablePPOConfig | TorchPPOConfig | RLlibConfig, Field(discriminator="algo")]


def config_model(section: Mapping[str, Any]) -> type[RunConfig]:
    """The model that checks a merged section: the one its ``algo`` names (MaskablePPO when none).

    Raises:
        ConfigError: an ``algo`` no trainer has (naming the ones there are).
    """
    algo = section.get("algo", MASKABLE_ALGO) if isinstance(section, Mapping) else MASKABLE_ALGO
    if algo not in CONFIG_MODELS:
        raise ConfigError(f"algo: unknown {algo!r}; algos are {', '.join(CONFIG_MODELS)}")
    return CONFIG_MODELS[algo]


#: Keys a config may hold (for messages and ``--set``).
TRAIN_KEYS = tuple(TrainConfig.model_fields)


# ----------------------------------------------------------------------------- loading


Config = TypeVar("Config", bound=RunConfig)


def validate_section(data: Mapping[str, Any], where: str = "config", model: type[Config] | None = None) -> Config:
    """A ``model`` (else the one the section's ``algo`` names: :func:`config_model`) from a merged
    section, or :class:`ConfigError` naming the key and the fix."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: a section must be a mapping of keys to values, got {type(data).__name__}")
    if model is None:
        try:
            model = config_model(data)  # type: ignore[assignment]
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
    assert model is not None
    try:
        config = model.model_validate(dict(data))
    except ValidationError as err:
        raise ConfigError(format_errors(err, where, dict(data), model)) from None
    problems = config.problems()
    if problems:
        raise ConfigError(f"{where}: " + "; ".join(f"{k}: {m}" for k, m in problems))
    return config
