"""A ``TorchPPO`` run (``algo: TorchPPO``): :mod:`.torch_ppo` driven through a run folder.

:func:`agents.training.train.train` makes or reopens the run folder and checks the config, then
hands a TorchPPO config to :func:`train_torch`, which writes what a MaskablePPO run writes
(``checkpoints/``, ``best_model.zip``, ``final_model.zip``, ``eval_state.json``, ``logs/``,
``train_info.json``, ``final_eval*``) in the same formats: the models are MaskablePPO ``.zip``
files, so ``forty-thieves evaluate --agent ppo``, ``forty-thieves ship``, ``init_model`` and
``--resume`` treat both alike, and a model trained on a GPU plays on a CPU-only machine.

The loop: collect a rollout of ``n_steps`` steps of ``n_envs`` games, update, log
(``rollout/*``, ``train/*``, ``time/fps`` to CSV and TensorBoard), then evaluate on the
validation deals before the first rollout and every ``eval_freq`` steps (keeping the best
model by mean reward) and
checkpoint every ``save_freq`` steps, both at rollout boundaries. ``max_minutes`` stops
after the rollout that passes it; Ctrl-C stops at once and saves a checkpoint first. Every
model and record is written atomically and read back checked (:mod:`agents.storage.files`,
:mod:`agents.storage.modelfile`), as in a MaskablePPO run.
"""

from __future__ import annotations

import io
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.configs.train_config import TrainConfig, parse_schedule
from agents.storage.files import damaged, read_json, write_bytes, write_json
from agents.storage.modelfile import load_model, save_model

from .runs import EVAL_STATE_ADVICE, checkpoint_path, checkpoint_steps, make_logger, update_train_info


def schedule(value: float | str | None) -> Callable[[float], float] | None:
    """A config schedule as a callable of ``progress_remaining`` (None stays None)."""
    if value is None:
        return None
    parsed = parse_schedule(value)
    if callable(parsed):
        return parsed
    return lambda _progress, v=float(parsed): v


def settings_of(config: TrainConfig) -> Any:
    """The :class:`~.torch_ppo.PPOSettings` of a config."""
    from .torch_ppo import PPOSettings

    learning_rate, clip_range = schedule(config.learning_rate), schedule(config.clip_range)
    ent_coef = schedule(config.ent_coef)
    assert learning_rate is not None and clip_range is not None and ent_coef is not None
    return PPOSettings(
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        learning_rate=learning_rate,
        clip_range=clip_range,
        clip_range_vf=schedule(config.clip_range_vf),
        ent_coef=ent_coef,
        vf_coef=config.vf_coef,
        max_grad_norm=config.max_grad_norm,
        target_kl=config.target_kl,
        normalize_advantage=config.normalize_advantage,
    )


def training_device(device: str) -> str:
    """The config's ``device`` as a torch device name: ``auto`` is ``cuda`` when a GPU can run the games."""
    if device != "auto":
        return device
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    try:
        import numba.cuda  # noqa: F401
    except ImportError:
        return "cpu"
    return "cuda"


def model_container(config: TrainConfig, env_id: str, device: str) -> Any:
    """A fresh MaskablePPO model of the config's network on ``device``: its policy is what TorchPPO
    trains, and ``save`` writes it as an ordinary MaskablePPO ``.zip``.

    It is built on a one-game SB3 environment of the run's variant and options (for its spaces;
    it never steps).
    """
    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    from .networks.policies import build_model

    venv = make_sb3_vec_env(env_id, n_envs=1, num_threads=1, **config.env_kwargs)
    # The container is an SB3 model, whose ent_coef is a number: it keeps the schedule's start
    # (TorchPPO reads the schedule itself, from the config: settings_of).
    ent_coef = schedule(config.ent_coef)
    assert ent_coef is not None
    shell = config.model_copy(
        update={"device": device, "batch_size": min(config.batch_size, config.n_steps), "ent_coef": ent_coef(1.0)}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's remark that its one-game buffer is smaller than a minibatch
        model = build_model(shell, venv, config.seed, env_id)
    venv.close()
    model.env = None
    model.n_envs = config.n_envs
    model.batch_size = config.batch_size
    return model


def load_container(checkpoint: Path, device: str) -> Any:
    """A TorchPPO (or MaskablePPO) checkpoint as a MaskablePPO model on ``device``, its optimizer state included.

    Raises:
        DamagedFileError: the checkpoint is damaged (naming it).
    """
    return load_model(checkpoint, device=device)


class Evaluations:
    """``eval_state.json`` and ``evaluations.npz`` (the formats of a MaskablePPO run) and the best model."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / "eval_state.json"
        self.state: dict[str, Any] = {"best_mean_reward": None, "best_timesteps": None, "evaluations": []}
        if self.path.exists():
            self.state = read_json(self.path, EVAL_STATE_ADVICE)
            if not isinstance(self.state.get("evaluations"), list):
                raise damaged(self.path, "no list of evaluations", EVAL_STATE_ADVICE)

    def add(self, steps: int, result: dict[str, float], seconds: float, model: Any) -> bool:
        """Record an evaluation; save ``best_model.zip`` when its mean reward is the best so far."""
        entry = {
            "timesteps": int(steps),
            "mean_reward": result["mean_reward"],
            "win_rate": result["win_rate"],
            "mean_cards": result["mean_cards"],
            "episodes": int(result["episodes"]),
            "seconds": round(seconds, 2),
        }
        self.state["evaluations"].append(entry)
        best = self.state.get("best_mean_reward")
        better = best is None or result["mean_reward"] > best
        if better:
            save_model(model, self.run_dir / "best_model.zip")
            self.state.update(
                best_mean_reward=result["mean_reward"], best_timesteps=int(steps), best_win_rate=result["win_rate"]
            )
        write_json(self.path, self.state)
        evals = self.state["evaluations"]
        buffer = io.BytesIO()
        np.savez(
            buffer,
            timesteps=np.array([e["timesteps"] for e in evals]),
            results=np.array([[e["mean_reward"]] for e in evals]),
            successes=np.array([[e["win_rate"]] for e in evals]),
        )
        write_bytes(self.run_dir / "evaluations.npz", buffer.getvalue())
        return better


def train_torch(
    run_dir: Path,
    env_id: str,
    config: TrainConfig,
    checkpoint: Path | None,
    *,
    progress: bool = True,
    verbose: bool = False,
    log: Callable[[str], None] = print,
    prepare: Callable[[Any], None] | None = None,
) -> tuple[int, float, str]:
    """Train (or resume) a TorchPPO run in ``run_dir``; returns ``(steps, seconds this session, why it stopped)``.

    Args:
        run_dir: The run folder (config, command and versions already written).
        env_id: The registered env id trained.
        config: The run's config (``algo: TorchPPO``).
        checkpoint: The checkpoint to resume from, or None for a fresh model.
        progress: Show a progress bar.
        verbose: Print the log table after each rollout.
        log: Where messages go.
        prepare: Called with a fresh model before training (``init_model``, imitation).

    Raises:
        KeyboardInterrupt: after saving a checkpoint, when training was interrupted.
    """
    import torch

    from forty_thieves_env.envs.torch_games import TorchGames

    from .batch_eval import ValidationGames
    from .torch_ppo import TorchPPO

    device = training_device(config.device)
    done = (checkpoint_steps(checkpoint) or 0) if checkpoint is not None else 0
    games = TorchGames(
        config.n_envs, env_id, device=device, seed=config.seed + done, num_threads=1, **config.env_kwargs
    )  # checks the device (a clear error without a GPU) before a model is built
    if checkpoint is None:
        model = model_container(config, env_id, device)
        if prepare is not None:
            prepare(model)
        log(f"training TorchPPO on {env_id} for {config.n_timesteps:,} steps on {device} -> {run_dir}")
    else:
        model = load_container(checkpoint, device)
        done = int(model.num_timesteps)
        log(f"resuming {run_dir} from {checkpoint.name} ({done:,} of {config.n_timesteps:,} steps) on {device}")
    # torch.distributions re-checks arguments in every call SB3's policy makes (not on this path,
    # but in the imitation before it).
    torch.distributions.Distribution.set_default_validate_args(False)
    logger = make_logger(run_dir, verbose)
    model.set_logger(logger)
    games.reset()
    ppo = TorchPPO(model.policy, games, settings_of(config), seed=config.seed + done)
    evaluations = Evaluations(run_dir)
    validation = None
    if config.eval_freq > 0:
        validation = ValidationGames(env_id, config.n_eval_episodes, config.env_kwargs, games.device)

    def evaluate(steps: int) -> None:
        assert validation is not None
        t0 = time.monotonic()
        model.policy.set_training_mode(False)
        result = validation.play(ppo.inputs.logits, config.eval_deterministic, config.seed)
        better = evaluations.add(steps, result, time.monotonic() - t0, model)
        logger.record("eval/mean_reward", result["mean_reward"])
        logger.record("eval/success_rate", result["win_rate"])
        logger.record("eval/mean_cards", result["mean_cards"])
        if progress is False or verbose:
            log(
                f"eval at {steps:,}: win {100 * result['win_rate']:.1f} %, mean reward {result['mean_reward']:.3f}"
                + (" (best)" if better else "")
            )

    def save(steps: int) -> None:
        model.num_timesteps = steps
        save_model(model, checkpoint_path(run_dir, steps))

    steps, total = done, config.n_timesteps
    if validation is not None and steps == 0:
        evaluate(0)  # the start (fresh, imitated or init_model weights): where the curve begins
        logger.record("time/total_timesteps", 0)  # so the start's row in progress.csv says where it is
        logger.dump(0)
    next_eval = _next(steps, config.eval_freq)
    next_save = _next(steps, config.save_freq)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=steps, unit="step", smoothing=0.1)
    t_start = time.monotonic()
    why = "done"
    try:
        while steps < total:
            t0 = time.monotonic()
            steps += ppo.collect()
            t1 = time.monotonic()
            stats = ppo.update(max(0.0, 1.0 - steps / total))
            t2 = time.monotonic()
            model.num_timesteps = steps
            _log_rollout(logger, ppo, stats, steps, t2 - t0, t1 - t0, bar)
            if next_eval is not None and steps >= next_eval:
                evaluate(steps)
                next_eval = _next(steps, config.eval_freq)
            logger.dump(steps)
            if next_save is not None and steps >= next_save:
                save(steps)
                next_save = _next(steps, config.save_freq)
            if config.max_minutes is not None and time.monotonic() - t_start > 60.0 * config.max_minutes:
                why = "time limit"
                break
    except KeyboardInterrupt:
        why = "interrupted"
        log("interrupted: saving a checkpoint")
    finally:
        if bar is not None:
            bar.close()
    seconds = time.monotonic() - t_start
    if steps == done and why == "done":
        log(f"{run_dir} has already trained {steps:,} steps (n_timesteps {total:,})")
    save(steps)
    save_model(model, run_dir / "final_model.zip")
    logger.close()
    rate = (steps - done) / max(seconds, 1e-9)
    log(f"{why}: {steps:,} steps, {seconds:.0f} s this session ({rate:.0f} steps/s)")
    update_train_info(run_dir, steps, seconds, why, log)
    if why == "interrupted":
        raise KeyboardInterrupt
    return steps, seconds, why


def _next(steps: int, every: int) -> int | None:
    """The first multiple of ``every`` after ``steps`` (None when ``every`` is 0: never)."""
    return None if every <= 0 else (steps // every + 1) * every


def _log_rollout(
    logger: Any, ppo: Any, stats: dict[str, float], steps: int, seconds: float, collect_s: float, bar: Any
) -> None:
    """Record one rollout's figures under SB3's names, and move the progress bar."""
    ep = ppo.episodes.means()
    if ep["episodes"]:
        logger.record("rollout/win_rate", ep["won"])
        logger.record("rollout/success_rate", ep["won"])
        logger.record("rollout/cards_on_foundations", ep["cards"])
        logger.record("rollout/ep_len_mean", ep["length"])
        logger.record("rollout/ep_rew_mean", ep["return"])
    logger.record("rollout/episodes", int(ep["episodes"]))
    names = {"pg": "policy_gradient_loss", "value": "value_loss", "entropy": "entropy_loss", "kl": "approx_kl"}
    names.update(clip="clip_fraction", loss="loss")
    for key, value in stats.items():
        logger.record(f"train/{names.get(key, key)}", value)
    size = ppo.rollout.size
    logger.record("time/fps", int(size / max(seconds, 1e-9)))
    logger.record("time/collect_fps", int(size / max(collect_s, 1e-9)))
    logger.record("time/total_timesteps", steps)
    if bar is not None:
        bar.update(steps - bar.n)
        if ep["episodes"]:
            bar.set_postfix(win=f"{100 * ep['won']:.1f}%", refresh=False)
    ppo.episodes.clear()
