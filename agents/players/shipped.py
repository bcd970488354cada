"""Shipped models: trained ``ppo`` models that come with the package, played by name.

``agents/models/`` holds, for each shipped model ``NAME``, ``NAME.zip`` (a MaskablePPO zip,
its optimizer state emptied) and ``NAME.json`` (its :class:`ModelInfo`: the variant and
observation it was trained on, the config, the command, the seed, the commit, test
results). ``forty-thieves evaluate --agent ppo --model NAME`` plays one;
``python -m agents.training.shipping RUN --name NAME`` ships a run
(:mod:`agents.training.shipping`). ``FORTY_THIEVES_MODELS=DIR`` reads (and ships into)
another folder instead.

:func:`resolve_model` turns what ``--model`` names into a zip and its metadata: a shipped
name, or a path to a ``.zip`` or a run folder (its best model, else its final one). A zip's
metadata comes from a sidecar ``X.json`` next to ``X.zip``, else from the run folder it lies
in (``config.yaml``, ``command.txt``, ``versions.json``), else there is none.
:func:`check_fit` refuses a model that cannot play a variant: trained on other rules
(from the metadata), or reading other observation or action spaces (from the zip).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from forty_thieves_env.engine.actions import n_actions
from forty_thieves_env.engine.variants import PRESETS, Variant, get_variant
from forty_thieves_env.envs.observation import observation_space
from forty_thieves_env.envs.registration import ALL_IDS, id_kwargs, id_variant, is_env_id
from forty_thieves_env.envs.resolved import VARIANT_OPTIONS, describe_variant

#: The package's folder of shipped models (``FORTY_THIEVES_MODELS`` overrides it).
MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
MODELS_ENV_VAR = "FORTY_THIEVES_MODELS"
#: What a shipped name may look like (no dot or slash, so it never reads as a path).
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
#: A run folder's models, in the order ``--model RUN`` prefers them.
RUN_MODELS = ("best_model.zip", "final_model.zip")


class ModelInfo(BaseModel):
    """The metadata of a trained model (``NAME.json`` of a shipped one).

    Attributes:
        name: The shipped name (or the run folder's name).
        env_id: The Gymnasium id it was trained on (``FortyThieves-v0``).
        variant: That id's preset name (``classic``).
        observation: The observation mode it reads: ``dict``, ``flat`` or ``oracle``.
        env_kwargs: The training config's ``env_kwargs`` (variant options change the rules).
        policy: The policy network, in words.
        training_command: The command line(s) that trained it, one per line.
        config: The resolved training config.
        seed: The training seed.
        num_timesteps: Environment steps trained when this model was saved.
        test_results: Free-form test results (evaluation settings and summary).
        deterministic: How the ``ppo`` agent plays it unless told: its most likely legal move
            (True) or a move drawn from its policy (False; a policy without memory of the game
            can go round in circles when greedy). From the config's ``eval_deterministic``.
        source: The file it was shipped from.
        commit: The git commit that trained it (``-dirty``: with uncommitted changes).
        created: When it was shipped (ISO 8601, UTC).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    env_id: str
    variant: str
    observation: Literal["dict", "flat", "oracle"] = "dict"
    env_kwargs: dict[str, Any] = {}
    policy: str = ""
    training_command: str = ""
    config: dict[str, Any] = {}
    seed: int | None = None
    num_timesteps: int | None = None
    test_results: dict[str, Any] = {}
    deterministic: bool | None = None
    source: str | None = None
    commit: str | None = None
    created: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ModelInfo:
        preset = id_kwargs(self.env_id)["variant"] if is_env_id(self.env_id) else self.variant
        if preset != self.variant:
            raise ValueError(f"env_id {self.env_id} plays variant {preset!r}, not {self.variant!r}")
        mode = self.env_kwargs.get("observation", self.observation)
        if mode != self.observation:
            raise ValueError(f"observation is {self.observation!r} but env_kwargs.observation is {mode!r}")
        self.game_variant()  # an unknown preset or a bad variant option fails here
        return self

    def game_variant(self) -> Variant:
        """The rules it was trained on: its id's (else its preset's), with the variant options of ``env_kwargs``."""
        options = {k: v for k, v in self.env_kwargs.items() if k in VARIANT_OPTIONS}
        base = id_variant(self.env_id)[0] if is_env_id(self.env_id) else self.variant
        return get_variant(base, **options)

    def describe(self) -> str:
        """``variant 'classic' (FortyThieves-v0)``, with any changed rule after it."""
        return f"variant {describe_variant(self.game_variant())} ({self.env_id})"

    @classmethod
    def read(cls, path: Path) -> ModelInfo:
        """The metadata in a JSON file; ``ValueError`` naming the file when it is not valid."""
        try:
            return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON: {err}") from None
        except ValidationError as err:
            problems = "; ".join(
                ".".join(str(p) for p in e["loc"]) + (": " if e["loc"] else "") + e["msg"].removeprefix("Value error, ")
                for e in err.errors()
            )
            raise ValueError(f"{path}: not valid model metadata: {problems}") from None

    def write(self, path: Path) -> None:
        """Write the metadata to ``path`` atomically."""
        from agents.storage.files import write_json

        write_json(path, self.model_dump(mode="json"))


# ------------------------------------------------------------------ finding models


def models_dir() -> Path:
    """The folder of shipped models: ``$FORTY_THIEVES_MODELS``, else the package's ``agents/models``."""
    override = os.environ.get(MODELS_ENV_VAR)
    return Path(override) if override else MODELS_DIR


def shipped_models(directory: Path | None = None) -> dict[str, ModelInfo]:
    """Every shipped model (a ``NAME.json`` with its ``NAME.zip``), by name, sorted."""
    directory = models_dir() if directory is None else Path(directory)
    out: dict[str, ModelInfo] = {}
    for path in sorted(directory.glob("*.json")):
        if not path.with_suffix(".zip").is_file():
            raise ValueError(f"{path} has no {path.stem}.zip next to it")
        info = ModelInfo.read(path)
        if info.name != path.stem:
            raise ValueError(f"{path}: its name is {info.name!r}, not {path.stem!r}")
        out[info.name] = info
    return out


def run_model(run_dir: Path) -> Path:
    """A run folder's best model, else its final one."""
    for name in RUN_MODELS:
        if (run_dir / name).is_file():
            return run_dir / name
    raise ValueError(f"{run_dir} holds no {' or '.join(RUN_MODELS)}")


def resolve_model(name_or_path: str | os.PathLike[str], directory: Path | None = None) -> tuple[Path, ModelInfo | None]:
    """The model ``--model`` names: ``(its .zip, its metadata or None)``.

    A shipped name gives its zip; a path to a ``.zip`` gives that zip, a run folder its best
    model (else its final one). A path's metadata is the sidecar ``X.json`` of ``X.zip``,
    else read from the run folder the zip lies in, else None. A name can also be a folder of
    the same name: write ``./NAME`` for the folder.

    Raises:
        ValueError: neither a shipped name nor an existing path (the message lists the
            shipped names), or a folder without a model.
    """
    text = os.fspath(name_or_path)
    directory = models_dir() if directory is None else Path(directory)
    if NAME_PATTERN.match(text):
        shipped = directory / f"{text}.zip"
        if shipped.is_file() and (directory / f"{text}.json").is_file():
            return shipped, ModelInfo.read(directory / f"{text}.json")
    path = Path(text)
    if path.is_dir():
        path = run_model(path)
    if not path.is_file():
        names = list(shipped_models(directory)) if directory.is_dir() else []
        shipped_text = f"shipped models: {', '.join(names)}" if names else f"no model is shipped yet (in {directory})"
        raise ValueError(
            f"no shipped model {text!r} and no file or folder at {text}; {shipped_text}. "
            "--model also takes a path: a .zip saved by forty-thieves train, or a run folder"
        )
    return path, model_info(path)


def model_info(zip_path: Path) -> ModelInfo | None:
    """A zip's metadata: its sidecar ``.json``, else its run folder's record, else None."""
    sidecar = zip_path.with_suffix(".json")
    if sidecar.is_file():
        return ModelInfo.read(sidecar)
    for folder in (zip_path.parent, zip_path.parent.parent):  # a model or a checkpoints/ file
        if (folder / "config.yaml").is_file():
            return info_from_run(folder, zip_path)
    return None


def info_from_run(run_dir: Path, zip_path: Path, name: str | None = None) -> ModelInfo:
    """A run folder's model described from what ``forty-thieves train`` wrote there.

    Raises:
        DamagedFileError: a damaged ``config.yaml``, ``versions.json`` or ``final_eval.json``
            (a config cut short would describe another model).
    """
    from agents.configs.run_file import check_run_config

    raw = check_run_config(run_dir / "config.yaml")
    env_id, config = next(iter(raw.items()))
    if not is_env_id(env_id):
        raise ValueError(f"{run_dir / 'config.yaml'}: unknown env id {env_id!r}; env ids are {', '.join(ALL_IDS)}")
    env_kwargs = dict(config.get("env_kwargs") or {})
    command = run_dir / "command.txt"
    versions = _read_json(run_dir / "versions.json") or {}
    commit = versions.get("git_commit")
    if commit and versions.get("git_dirty"):
        commit += "-dirty"
    final = _read_json(run_dir / "final_eval.json")
    results: dict[str, Any] = {}
    if final and final.get("model") == zip_path.name:
        results = {"source": "final_eval.json", "settings": final.get("settings"), "summary": final.get("summary")}
    return ModelInfo(
        name=name or run_dir.name,
        env_id=env_id,
        variant=id_kwargs(env_id)["variant"],
        observation=env_kwargs.get("observation", "dict"),
        env_kwargs=env_kwargs,
        policy=describe_policy(config),
        training_command=command.read_text(encoding="utf-8").strip() if command.is_file() else "",
        config=config,
        seed=config.get("seed"),
        num_timesteps=saved_timesteps(zip_path),
        test_results=results,
        deterministic=config.get("eval_deterministic"),
        source=str(zip_path),
        commit=commit,
    )


def describe_policy(config: dict[str, Any]) -> str:
    """The policy network of a training config, in words."""
    kwargs = config.get("policy_kwargs") or {}
    extractor = kwargs.get("features_extractor", "?")
    features = f"{extractor} features"
    if extractor in ("move_scorer", "lookup_scorer"):  # their own layers: net_arch and activation do not apply
        sizes = ", ".join(f"{k} {v}" for k, v in (kwargs.get("features_extractor_kwargs") or {}).items())
        return f"{config.get('algo', '?')} with the {extractor} network ({sizes or 'defaults'})"
    if extractor in ("card_embedding", "card_attention") and kwargs.get("features_extractor_kwargs"):
        sizes = ", ".join(f"{k} {v}" for k, v in kwargs["features_extractor_kwargs"].items())
        features += f" ({sizes})"
    heads = kwargs.get("net_arch", "?")
    return f"{config.get('algo', '?')} {config.get('policy', '?')}: {features}, net_arch {heads}, " + str(
        kwargs.get("activation_fn", "?")
    )


def saved_timesteps(zip_path: Path) -> int | None:
    """The step count SB3 saved in a model zip (its ``data`` entry), or None."""
    try:
        with zipfile.ZipFile(zip_path) as z:
            value = json.loads(z.read("data")).get("num_timesteps")
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    return int(value) if isinstance(value, int) else None


def _read_json(path: Path) -> dict[str, Any] | None:
    """A run's JSON record, None when missing; a damaged one is refused, naming it."""
    from agents.storage.files import read_json

    if not path.is_file():
        return None
    return read_json(path, "move it away (it only describes the run) or restore it from a copy")


# ------------------------------------------------------------------ fitting a variant


def space_mode(space: Any) -> str | None:
    """The observation mode a model's observation space belongs to, or None when none."""
    if not hasattr(space, "spaces"):
        return "flat" if len(getattr(space, "shape", None) or ()) == 1 else None
    keys = set(space.spaces)
    for mode in ("dict", "oracle"):
        if keys == set(observation_space(PRESETS["classic"], mode).spaces):
            return mode
    return None


def describe_space(space: Any) -> str:
    """``{tableau (10, 16), waste (64,), ...}`` of a Dict space, the shape of a Box."""
    if hasattr(space, "spaces"):
        return "{" + ", ".join(f"{k} {tuple(s.shape)}" for k, s in sorted(space.spaces.items())) + "}"
    return str(tuple(space.shape)) if getattr(space, "shape", None) is not None else str(space)


def check_fit(observation: Any, action: Any, info: ModelInfo | None, variant: Variant, label: str) -> str:
    """Refuse a model that cannot play ``variant``; return the observation mode it reads.

    With metadata, the rules it was trained on must be ``variant``'s (the preset name may
    differ) and its observation mode that of the zip. Then, with or without metadata, the
    zip's action and observation spaces must be the variant's.

    Args:
        observation: The model's observation space.
        action: The model's action space.
        info: The model's metadata, if any.
        variant: The variant it is asked to play.
        label: How messages name the model (``model 'classic'``).

    Raises:
        ValueError: naming what the model was trained on and what was asked of it.
    """
    mode = space_mode(observation)
    if info is not None:
        if dataclasses.replace(info.game_variant(), name="") != dataclasses.replace(variant, name=""):
            raise ValueError(
                f"{label} was trained on {info.describe()}, not {describe_variant(variant)}: "
                "leave out --variant and --env to play it on its own rules"
            )
        if mode != info.observation:
            raise ValueError(
                f"{label} was trained on the {info.observation!r} observation, but its zip reads "
                f"{'the ' + repr(mode) if mode else 'an unknown'} observation {describe_space(observation)}"
            )
    want_actions = n_actions(variant)
    if int(getattr(action, "n", -1)) != want_actions:
        raise ValueError(
            f"{label} has {action} actions but {describe_variant(variant)} has Discrete({want_actions}): "
            "it was trained on another variant"
        )
    if mode is None:
        raise ValueError(f"{label} reads an observation no env gives: {describe_space(observation)}")
    want = observation_space(variant, mode)
    if describe_space(observation) != describe_space(want):
        raise ValueError(
            f"{label} reads {mode!r} observations of shapes {describe_space(observation)}, but "
            f"{describe_variant(variant)} gives {describe_space(want)}: it was trained on another variant"
        )
    return mode
