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
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .messages import MODELS, format_errors

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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)


class NetArch(_Strict):
    """Separate hidden layers for the policy (``pi``) and the value function (``vf``)."""

    pi: list[int] = Field(default_factory=lambda: [256, 256])
    vf: list[int] = Field(default_factory=lambda: [256, 256])


class EmbeddingKwargs(_Strict):
    """Options of :class:`agents.training.networks.card_embedding.CardEmbeddingExtractor` (ignored by ``mlp``)."""

    embed_dim: int = Field(16, ge=1, le=256)  # size of a card code's embedding (one table for all slots)
    column_dim: int = Field(64, ge=1, le=1024)  # features per column, one network shared by all columns
    waste_cards: int = Field(8, ge=1, le=64)  # top waste cards seen one by one (the rest as a bag)
    features_dim: int = Field(256, ge=1, le=4096)  # output size of the extractor


class ScorerKwargs(_Strict):
    """Options of :class:`agents.training.networks.move_scorer.MoveScorer` (``features_extractor: move_scorer``)."""

    embed_dim: int = Field(16, ge=1, le=256)  # size of a card's embedding and of its distance-from-home one
    top_cards: int = Field(4, ge=1, le=64)  # slots from the top of a column read one by one
    waste_cards: int = Field(3, ge=1, le=64)  # top waste cards read one by one
    hidden: int = Field(64, ge=1, le=1024)  # width of the column, waste, table vectors and the move scorers
    rank: int = Field(16, ge=1, le=256)  # source and destination vectors whose dot product scores a column pair
    value_dim: int = Field(64, ge=1, le=1024)  # value features under SB3's value layer


class LookupKwargs(_Strict):
    """Options of :class:`.networks.lookup_scorer.LookupScorer` (``features_extractor: lookup_scorer``)."""

    top_cards: int = Field(3, ge=1, le=64)  # slots from the top of a column whose facts are read
    waste_cards: int = Field(2, ge=1, le=64)  # top waste cards whose facts are read
    hidden: int = Field(48, ge=1, le=1024)  # width of the column and table vectors
    rank: int = Field(8, ge=1, le=256)  # source and destination vectors whose dot product scores a column pair
    value_dim: int = Field(64, ge=1, le=1024)  # value features under SB3's value layer
    critic_stock: int = Field(0, ge=0, le=1024)  # next stock cards the value reads (asymmetric critic, oracle obs)


#: The options model of each network that takes options.
EXTRACTOR_KWARGS: dict[str, type[_Strict]] = {
    "card_embedding": EmbeddingKwargs,
    "move_scorer": ScorerKwargs,
    "lookup_scorer": LookupKwargs,
}


class PolicyKwargs(_Strict):
    """The policy network."""

    features_extractor: Literal["card_embedding", "mlp", "move_scorer", "lookup_scorer"] = "card_embedding"
    features_extractor_kwargs: EmbeddingKwargs | ScorerKwargs | LookupKwargs = Field(default_factory=EmbeddingKwargs)
    net_arch: list[int] | NetArch = Field(default_factory=lambda: [256, 256])
    activation_fn: Literal["tanh", "relu"] = "tanh"
    ortho_init: bool = True

    @model_validator(mode="before")
    @classmethod
    def _kwargs_default(cls, data: Any) -> Any:
        # null: the chosen extractor's defaults; mlp has no options, so whatever is given is unused.
        if isinstance(data, Mapping) and (
            data.get("features_extractor_kwargs", 0) is None or data.get("features_extractor") == "mlp"
        ):
            data = {k: v for k, v in data.items() if k != "features_extractor_kwargs"}
        return data

    @model_validator(mode="after")
    def _kwargs_of_extractor(self) -> PolicyKwargs:
        # The union takes the first options model that fits; the extractor says which it must be.
        kwargs = self.features_extractor_kwargs
        want = EXTRACTOR_KWARGS.get(self.features_extractor, EmbeddingKwargs)
        if not isinstance(kwargs, want):
            given = kwargs.model_dump(include=kwargs.model_fields_set)
            try:
                self.features_extractor_kwargs = want(**given)
            except ValidationError as e:
                names = ", ".join(want.model_fields)
                bad = ", ".join(str(err["loc"][0]) for err in e.errors())
                raise ValueError(
                    f"features_extractor_kwargs {bad} do not apply to {self.features_extractor} (its options: "
                    f"{names}; policy_kwargs.features_extractor_kwargs=null gives its defaults)"
                ) from None
        return self

    @field_validator("net_arch")
    @classmethod
    def _positive_layers(cls, v: list[int] | NetArch) -> list[int] | NetArch:
        layers = v if isinstance(v, list) else [*v.pi, *v.vf]
        if any(n < 1 for n in layers):
            raise ValueError("layer sizes must be at least 1")
        return v


class Imitation(_Strict):
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


class RunConfig(_Strict):
    """What every trainer's settings share: the family's base model.

    :class:`TrainConfig` (MaskablePPO and TorchPPO) and
    :class:`RLlibConfig` (RLlib PPO, trained by :mod:`agents.training.rllib`) derive from it, so that the keys
    that mean the same are declared, checked and loaded (:func:`load_config`) once.
    """

    #: ``env_kwargs`` keys the trainer sets itself, and why (for the message naming one).
    TRAINER_SETS: ClassVar[tuple[str, ...]] = ("render_mode", "variant")
    TRAINER_SETS_WHY: ClassVar[str] = "the env id fixes the variant"

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
        """Rules between keys, as ``(key, message)`` pairs (empty when the config is consistent)."""
        return []


class TrainConfig(RunConfig):
    """One training run's settings (one section of a config file after merging ``default``)."""

    TRAINER_SETS = ("render_mode", "deals", "variant")
    TRAINER_SETS_WHY = "the env id fixes the variant, evaluation the deals"

    algo: Literal["MaskablePPO", "TorchPPO"] = "MaskablePPO"  # TorchPPO: games, rollouts, updates on the device
    policy: Literal["MultiInputPolicy", "MlpPolicy"] = "MultiInputPolicy"
    n_timesteps: int = Field(1_000_000, ge=1)
    n_envs: int = Field(8, ge=1, le=1_048_576)
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
        return cross_checks(self)


#: The ``algo`` of an RLlib PPO config (:mod:`agents.training.rllib` trains it).
RLLIB_ALGO = "RLlibPPO"


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
            return [("batch_size", f"{self.batch_size} is larger than train_batch_size")]
        return []


def cross_checks(config: TrainConfig) -> list[tuple[str, str]]:
    """Rules between keys, as ``(key, message)`` pairs (empty when the config is consistent)."""
    out = []
    rollout = config.n_steps * config.n_envs
    if config.batch_size > rollout:
        out.append(("batch_size", f"{config.batch_size} is larger than a rollout (n_steps * n_envs = {rollout})"))
    observation = config.env_kwargs.get("observation", "dict")
    if config.policy == "MlpPolicy" and observation != "flat":
        out.append(("policy", "MlpPolicy needs env_kwargs.observation: flat (dict observations need MultiInputPolicy)"))
    if config.policy == "MultiInputPolicy" and observation == "flat":
        out.append(("policy", "env_kwargs.observation flat needs policy MlpPolicy"))
    if config.algo != "TorchPPO" and callable(parse_schedule(config.ent_coef)):
        out.append(("ent_coef", f"a schedule ({config.ent_coef}) needs algo TorchPPO; MaskablePPO takes a number"))
    if config.algo == "TorchPPO" and config.vec_env in ("dummy", "subproc"):
        out.append(("vec_env", f"{config.vec_env} is an SB3 VecEnv; TorchPPO steps its own batch of games (auto)"))
    name = config.policy_kwargs.features_extractor
    # The lookup_scorer's logits read a player's fields only, so it may train on the oracle
    # observation (its value then reads the stock: critic_stock); the other networks would
    # read the hidden cards in their logits.
    oracle_ok = name == "lookup_scorer"
    wrong_obs = config.policy != "MultiInputPolicy" or (observation == "oracle" and not oracle_ok)
    if name in EXTRACTOR_KWARGS and wrong_obs:
        out.append(("policy_kwargs.features_extractor", f"{name} reads the dict observation (MultiInputPolicy)"))

    return out


#: Keys a config may hold (for messages and ``--set``).
TRAIN_KEYS = tuple(TrainConfig.model_fields)
MODELS["NetArch"] = NetArch  # a union member whose keys messages may list


# ----------------------------------------------------------------------------- loading


Config = TypeVar("Config", bound=RunConfig)


def validate_section(data: Mapping[str, Any], where: str = "config", model: type[Config] = TrainConfig) -> Config:  # type: ignore[assignment]
    """A ``model`` (:class:`TrainConfig` unless told) from a merged section, or
    :class:`ConfigError` naming the key."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: a section must be a mapping of keys to values, got {type(data).__name__}")
    try:
        config = model.model_validate(dict(data))
    except ValidationError as err:
        raise ConfigError(format_errors(err, where, dict(data), model)) from None
    problems = config.problems()
    if problems:
        raise ConfigError(f"{where}: " + "; ".join(f"{k}: {m}" for k, m in problems))
    return config
