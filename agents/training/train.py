"""``forty-thieves train``: MaskablePPO from a config file, into a self-describing run folder.

    forty-thieves train configs/ppo.yaml [--env FortyThieves-v0] [--total-timesteps N] [--seed S]
    forty-thieves train --resume runs/FortyThieves-v0_MaskablePPO_20260101-120000

A run folder (``runs/<env>_<algo>_<time>`` or ``--name``) holds:

=====================  ==========================================================================
``config.yaml``        the resolved config (``default`` merged, overrides applied): train from it
``command.txt``        each command line that trained in this folder, one per line
``versions.json``      Python and library versions, the git commit
``checkpoints/``       ``rl_model_<steps>_steps.zip`` every ``save_freq`` steps and at the end
``best_model.zip``     the model with the best mean reward on the validation deals
``final_model.zip``    the model when training stopped
``eval_state.json``    every periodic evaluation (steps, mean reward, win rate) and the best one
``evaluations.npz``    the same, as SB3's EvalCallback writes it
``logs/``              ``progress-<k>.csv`` (one per session) and TensorBoard event files
``final_eval.json``    the best model on the first ``final_eval_episodes`` test deals (summary)
``final_eval/``        the same game by game (``results.csv``, ``results.json``)
=====================  ==========================================================================

Training runs on the native batched vector env when it is there (:func:`make_train_env`),
else on SB3's ``DummyVecEnv``. Periodic evaluation plays the *same* first ``n_eval_episodes``
validation deals each time (deals 1001.., one after the other), with action masks, the
policy's most likely move or (``eval_deterministic: false``) a move drawn from it; the best
is kept. The final test evaluation plays the best model the same way. ``--resume`` continues from the last checkpoint
with the folder's own config, keeping the step count, the schedules and the best model.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from .config import ConfigError, TrainConfig, dump_config, load_config, parse_schedule

RUNS_DIR = Path("runs")
CHECKPOINT_PREFIX = "rl_model"
#: Most envs an evaluation plays side by side.
EVAL_ENVS = 10
_CKPT = re.compile(rf"^{CHECKPOINT_PREFIX}_(\d+)_steps\.zip$")


# ------------------------------------------------------------------------- envs


class FixedDeals(gym.Wrapper):
    """Plays ``deals[0], deals[1], ...`` one per reset; :meth:`rewind` starts the list again.

    Sets ``info["is_success"]`` (= won) at the end of an episode, which SB3's EvalCallback
    turns into ``eval/success_rate``.
    """

    def __init__(self, env: gym.Env, deals: Sequence[int]) -> None:
        super().__init__(env)
        self.deals = [int(d) for d in deals]
        self.index = 0

    def rewind(self) -> None:
        self.index = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        deal = self.deals[self.index % len(self.deals)]
        self.index += 1
        return self.env.reset(seed=seed, options={"deal": deal})

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            info["is_success"] = bool(info.get("won", False))
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()


def _native_vec_env(env_id: str, config: TrainConfig, seed: int) -> Any | None:
    """The project's native batched SB3 VecEnv (:mod:`forty_thieves_env.sb3`), or None without it."""
    try:
        from forty_thieves_env.sb3 import make_sb3_vec_env
    except ImportError:
        return None
    return make_sb3_vec_env(env_id, n_envs=config.n_envs, seed=seed, num_threads=1, **config.env_kwargs)


def make_train_env(env_id: str, config: TrainConfig, seed: int) -> Any:
    """The training VecEnv: native when available (``vec_env: auto|native``), else SB3's."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    import forty_thieves_env  # noqa: F401  (registers the ids)

    if config.vec_env in ("auto", "native"):
        venv = _native_vec_env(env_id, config, seed)
        if venv is not None:
            return venv
        if config.vec_env == "native":
            raise ConfigError("vec_env: native, but forty_thieves_env.sb3 is not available")
    kwargs = dict(config.env_kwargs)

    def make() -> gym.Env:
        from forty_thieves_env.registration import register_envs

        register_envs()  # in a subprocess too
        return gym.make(env_id, **kwargs)

    cls = SubprocVecEnv if config.vec_env == "subproc" else DummyVecEnv
    venv = cls([make] * config.n_envs)
    venv.seed(seed)
    return VecMonitor(venv)


def eval_chunks(deals: Sequence[int], n_envs: int) -> list[list[int]]:
    """Split ``deals`` between ``n_envs`` envs as SB3's ``evaluate_policy`` splits episodes.

    ``evaluate_policy`` plays ``(n + i) // n_envs`` episodes in env ``i``; env ``i`` gets that
    many deals, so the envs together play every deal once.
    """
    n = len(deals)
    counts = [(n + i) // n_envs for i in range(n_envs)]
    out, start = [], 0
    for c in counts:
        out.append(list(deals[start : start + c]))
        start += c
    return out


def make_eval_env(env_id: str, config: TrainConfig) -> Any:
    """Envs that play the first ``n_eval_episodes`` validation deals, once each (Monitor-wrapped).

    Up to ``EVAL_ENVS`` envs play side by side, so the policy runs on a batch of positions per
    step rather than one.
    """
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import forty_thieves_env  # noqa: F401
    from forty_thieves_env.deals import deal_split

    deals = [int(d) for d in deal_split("validation")[: config.n_eval_episodes]]
    kwargs = dict(config.env_kwargs)
    chunks = eval_chunks(deals, min(EVAL_ENVS, len(deals)))
    return DummyVecEnv([lambda c=c: Monitor(FixedDeals(gym.make(env_id, **kwargs), c)) for c in chunks])


# ------------------------------------------------------------------------- callbacks


def _callbacks() -> Any:
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import BaseCallback

    class EpisodeStats(BaseCallback):
        """Win rate and cards home of the last 100 training episodes (``rollout/win_rate``)."""

        def __init__(self, window: int = 100) -> None:
            super().__init__()
            self.won: deque[float] = deque(maxlen=window)
            self.cards: deque[float] = deque(maxlen=window)

        def _on_step(self) -> bool:
            for done, info in zip(self.locals["dones"], self.locals["infos"], strict=False):
                if done and ("won" in info or "is_success" in info):
                    self.won.append(float(info.get("won", info.get("is_success", False))))
                    self.cards.append(float(info.get("cards_on_foundations", 0)))
            return True

        def _on_rollout_end(self) -> None:
            if self.won:
                self.logger.record("rollout/win_rate", float(np.mean(self.won)))
                self.logger.record("rollout/cards_on_foundations", float(np.mean(self.cards)))

    class Progress(BaseCallback):
        """A tqdm bar over the run's total steps, with the recent training win rate."""

        def __init__(self, total: int, stats: EpisodeStats, enabled: bool = True) -> None:
            super().__init__()
            self.total, self.stats, self.enabled = total, stats, enabled
            self.bar: Any = None

        def _on_training_start(self) -> None:
            if self.enabled:
                from tqdm import tqdm

                self.bar = tqdm(total=self.total, initial=self.num_timesteps, unit="step", smoothing=0.1)

        def _on_step(self) -> bool:
            if self.bar is not None:
                self.bar.update(self.num_timesteps - self.bar.n)
                if self.n_calls % 50 == 0 and self.stats.won:
                    self.bar.set_postfix(win=f"{100 * np.mean(self.stats.won):.1f}%", refresh=False)
            return True

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    class StopAfter(BaseCallback):
        """Stops training after ``seconds`` of wall-clock time."""

        def __init__(self, seconds: float) -> None:
            super().__init__()
            self.seconds = seconds
            self.start = time.monotonic()
            self.stopped = False

        def _on_training_start(self) -> None:
            self.start = time.monotonic()

        def _on_step(self) -> bool:
            if time.monotonic() - self.start > self.seconds:
                self.stopped = True
                return False
            return True

    class DealEvalCallback(MaskableEvalCallback):
        """MaskableEvalCallback on :class:`FixedDeals`: the same validation deals every time.

        Keeps ``eval_state.json`` (every evaluation and the best mean reward) so that a
        resumed run only replaces ``best_model.zip`` with a better model.
        """

        def __init__(self, *args: Any, state_path: Path, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.state_path = state_path
            self.state: dict[str, Any] = {"best_mean_reward": None, "best_timesteps": None, "evaluations": []}
            if state_path.exists():
                self.state = json.loads(state_path.read_text(encoding="utf-8"))
                if self.state.get("best_mean_reward") is not None:
                    self.best_mean_reward = float(self.state["best_mean_reward"])

        def _on_step(self) -> bool:
            if not (self.eval_freq > 0 and self.n_calls % self.eval_freq == 0):
                return True
            self.eval_env.env_method("rewind")
            best_before = self.best_mean_reward
            t0 = time.monotonic()
            keep_going = super()._on_step()
            entry = {
                "timesteps": int(self.num_timesteps),
                "mean_reward": float(self.last_mean_reward),
                "win_rate": float(np.mean(self._is_success_buffer)) if self._is_success_buffer else None,
                "episodes": int(self.n_eval_episodes),
                "seconds": round(time.monotonic() - t0, 2),
            }
            self.state["evaluations"].append(entry)
            if self.best_mean_reward > best_before:
                self.state["best_mean_reward"] = float(self.best_mean_reward)
                self.state["best_timesteps"] = int(self.num_timesteps)
                self.state["best_win_rate"] = entry["win_rate"]
            self.state_path.write_text(json.dumps(self.state, indent=1) + "\n", encoding="utf-8")
            return keep_going

    return EpisodeStats, Progress, StopAfter, DealEvalCallback


# ------------------------------------------------------------------------- run folder


def library_versions() -> dict[str, Any]:
    """Python, platform, library versions and the git commit (for ``versions.json``)."""
    from importlib import metadata

    out: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in (
        "forty-thieves-env",
        "numpy",
        "numba",
        "gymnasium",
        "torch",
        "stable-baselines3",
        "sb3-contrib",
        "pydantic",
        "tensorboard",
    ):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    try:
        root = Path(__file__).resolve().parents[2]
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
        out["git_commit"] = commit or None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        out["git_dirty"] = bool(status.stdout.strip()) if commit else None
    except (OSError, subprocess.SubprocessError):
        out["git_commit"] = out["git_dirty"] = None
    try:
        import torch

        out["torch_threads"] = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        pass
    out["cpu_count"] = os.cpu_count()
    return out


def new_run_dir(runs_dir: Path, env_id: str, config: TrainConfig, name: str | None) -> Path:
    if name:
        run_dir = runs_dir / name
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ValueError(f"run folder {run_dir} exists: --resume {run_dir} to continue it, or another --name")
    else:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = runs_dir / f"{env_id}_{config.algo}_{stamp}"
        k = 1
        while run_dir.exists():
            k += 1
            run_dir = runs_dir / f"{env_id}_{config.algo}_{stamp}-{k}"
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def find_last_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most steps in ``run_dir/checkpoints``, or None."""
    best: tuple[int, Path] | None = None
    for p in (run_dir / "checkpoints").glob(f"{CHECKPOINT_PREFIX}_*_steps.zip"):
        m = _CKPT.match(p.name)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), p)
    return None if best is None else best[1]


def read_run_config(run_dir: Path) -> tuple[str, TrainConfig]:
    path = run_dir / "config.yaml"
    if not path.exists():
        raise ValueError(f"{run_dir} is not a run folder (no config.yaml)")
    return load_config(path)


def _record_command(run_dir: Path, line: str) -> None:
    with (run_dir / "command.txt").open("a", encoding="utf-8") as f:
        f.write(line + "\n")


def _make_logger(run_dir: Path, verbose: bool) -> Any:
    from stable_baselines3.common.logger import CSVOutputFormat, HumanOutputFormat, Logger, TensorBoardOutputFormat

    logs = run_dir / "logs"
    logs.mkdir(exist_ok=True)
    session = len(list(logs.glob("progress-*.csv")))
    formats: list[Any] = [CSVOutputFormat(str(logs / f"progress-{session}.csv")), TensorBoardOutputFormat(str(logs))]
    if verbose:
        formats.append(HumanOutputFormat(sys.stdout))
    return Logger(str(logs), formats)


# ------------------------------------------------------------------------- training


def build_model(config: TrainConfig, venv: Any, seed: int) -> Any:
    from sb3_contrib import MaskablePPO

    from .networks import policy_kwargs_for

    return MaskablePPO(
        config.policy,
        venv,
        learning_rate=parse_schedule(config.learning_rate),
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=parse_schedule(config.clip_range),
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        max_grad_norm=config.max_grad_norm,
        target_kl=config.target_kl,
        normalize_advantage=config.normalize_advantage,
        policy_kwargs=policy_kwargs_for(config.policy_kwargs),
        seed=seed,
        device=config.device,
        verbose=0,
    )


def _set_threads(config: TrainConfig) -> None:
    import torch

    if config.torch_threads > 0:
        torch.set_num_threads(config.torch_threads)


def train(
    config_path: str | Path | None = None,
    env_id: str | None = None,
    *,
    overrides: Sequence[str] = (),
    total_timesteps: int | None = None,
    seed: int | None = None,
    resume: str | Path | None = None,
    runs_dir: str | Path = RUNS_DIR,
    name: str | None = None,
    max_minutes: float | None = None,
    progress: bool = True,
    verbose: bool = False,
    final_eval: bool = True,
    argv: Sequence[str] | None = None,
    log: Callable[[str], None] = print,
) -> Path:
    """Train (or resume) one run; return its folder. See the module docstring."""
    extra: list[str] = list(overrides)
    if total_timesteps is not None:
        extra.append(f"n_timesteps={int(total_timesteps)}")
    if seed is not None:
        extra.append(f"seed={int(seed)}")
    if max_minutes is not None:
        extra.append(f"max_minutes={float(max_minutes)}")

    if resume is not None:
        run_dir = Path(resume)
        if not run_dir.is_dir():
            raise ValueError(f"--resume {run_dir}: no such run folder")
        env_id_run, _ = read_run_config(run_dir)
        if env_id and env_id != env_id_run:
            raise ValueError(f"{run_dir} trains {env_id_run}, not {env_id}")
        env_id, config = load_config(run_dir / "config.yaml", env_id_run, extra)
        checkpoint = find_last_checkpoint(run_dir)
        if checkpoint is None:
            raise ValueError(f"{run_dir} has no checkpoint to resume from (checkpoints/{CHECKPOINT_PREFIX}_*.zip)")
    else:
        if config_path is None:
            raise ValueError("give a config file (configs/ppo.yaml) or --resume RUN_FOLDER")
        env_id, config = load_config(config_path, env_id, extra)
        run_dir = new_run_dir(Path(runs_dir), env_id, config, name)
        checkpoint = None

    (run_dir / "config.yaml").write_text(dump_config(env_id, config), encoding="utf-8")
    if argv is not None:
        line = shlex.join(["forty-thieves", *argv])
    else:
        line = f"python: agents.training.train.train({config_path!r}, {env_id!r}, overrides={extra!r}, resume={resume!r})"
    _record_command(run_dir, line)
    (run_dir / "versions.json").write_text(json.dumps(library_versions(), indent=1) + "\n", encoding="utf-8")
    _set_threads(config)

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    done_steps = 0
    if checkpoint is not None:
        done_steps = int(_CKPT.match(checkpoint.name).group(1))  # type: ignore[union-attr]
    venv = make_train_env(env_id, config, config.seed + done_steps)
    if checkpoint is None:
        model = build_model(config, venv, config.seed)
        log(f"training {config.algo} on {env_id} for {config.n_timesteps:,} steps -> {run_dir}")
    else:
        model = MaskablePPO.load(str(checkpoint), env=venv, device=config.device)
        log(f"resuming {run_dir} from {checkpoint.name} ({model.num_timesteps:,} of {config.n_timesteps:,} steps)")
    model.set_logger(_make_logger(run_dir, verbose))

    EpisodeStats, Progress, StopAfter, DealEvalCallback = _callbacks()
    stats = EpisodeStats()
    n = config.n_envs
    callbacks: list[Any] = [stats, Progress(config.n_timesteps, stats, progress)]
    if config.save_freq > 0:
        callbacks.append(
            CheckpointCallback(
                save_freq=max(1, config.save_freq // n),
                save_path=str(run_dir / "checkpoints"),
                name_prefix=CHECKPOINT_PREFIX,
            )
        )
    eval_env = None
    if config.eval_freq > 0:
        eval_env = make_eval_env(env_id, config)
        callbacks.append(
            DealEvalCallback(
                eval_env,
                n_eval_episodes=config.n_eval_episodes,
                eval_freq=max(1, config.eval_freq // n),
                best_model_save_path=str(run_dir),
                log_path=str(run_dir),
                deterministic=config.eval_deterministic,
                verbose=0,
                warn=False,
                state_path=run_dir / "eval_state.json",
            )
        )
    stopper = None
    if config.max_minutes is not None:
        stopper = StopAfter(60.0 * config.max_minutes)
        callbacks.append(stopper)

    # The eval env is a DummyVecEnv of one env even when training runs on the native vector env.
    warnings.filterwarnings("ignore", message="Training and eval env are not of the same type")
    remaining = config.n_timesteps - model.num_timesteps
    t0 = time.monotonic()
    interrupted = False
    if remaining > 0:
        try:
            model.learn(
                total_timesteps=remaining,
                callback=CallbackList(callbacks),
                reset_num_timesteps=checkpoint is None,
                progress_bar=False,
            )
        except KeyboardInterrupt:
            interrupted = True
            log("interrupted: saving a checkpoint")
    else:
        log(f"{run_dir} has already trained {model.num_timesteps:,} steps (n_timesteps {config.n_timesteps:,})")
    seconds = time.monotonic() - t0
    (run_dir / "checkpoints").mkdir(exist_ok=True)
    model.save(str(run_dir / "checkpoints" / f"{CHECKPOINT_PREFIX}_{model.num_timesteps}_steps"))
    model.save(str(run_dir / "final_model"))
    model.logger.close()
    venv.close()
    if eval_env is not None:
        eval_env.close()
    steps_per_s = (model.num_timesteps - done_steps) / max(seconds, 1e-9)
    why = "interrupted" if interrupted else ("time limit" if stopper is not None and stopper.stopped else "done")
    log(f"{why}: {model.num_timesteps:,} steps, {seconds:.0f} s this session ({steps_per_s:.0f} steps/s)")
    _update_train_info(run_dir, model.num_timesteps, seconds, why)
    if interrupted:
        raise KeyboardInterrupt
    if final_eval and config.final_eval_episodes > 0:
        summary = final_evaluation(run_dir, env_id, config)
        log(summary)
    return run_dir


def _update_train_info(run_dir: Path, num_timesteps: int, seconds: float, why: str) -> None:
    path = run_dir / "train_info.json"
    info = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"sessions": []}
    info["sessions"].append({"num_timesteps": int(num_timesteps), "seconds": round(seconds, 1), "stopped": why})
    info["num_timesteps"] = int(num_timesteps)
    info["train_seconds"] = round(sum(s["seconds"] for s in info["sessions"]), 1)
    path.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def final_evaluation(run_dir: Path, env_id: str, config: TrainConfig, workers: int = 1) -> str:
    """Play the run's best model (else its final one) on the first test deals; write ``final_eval*``."""
    from forty_thieves_env.registration import ENV_IDS

    from agents.evaluation.evaluate import evaluate, format_summary, write_results
    from agents.players.ppo import ensure_registered

    ensure_registered()
    model = run_dir / "best_model.zip"
    if not model.exists():
        model = run_dir / "final_model.zip"
    evaluation = evaluate(
        "ppo",
        ENV_IDS[env_id],
        "test",
        n=config.final_eval_episodes,
        seed=config.seed,
        workers=workers,
        agent_kwargs={"model": str(model), "deterministic": config.eval_deterministic},
        progress=False,
    )
    write_results(evaluation, run_dir / "final_eval")
    out = {"model": model.name, "settings": evaluation.settings, "summary": evaluation.summary}
    (run_dir / "final_eval.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return f"final evaluation ({model.name}): {format_summary(evaluation)}"


# ------------------------------------------------------------------------- command line


def run_cli(args: Any) -> int:
    """The ``forty-thieves train`` handler."""
    try:
        train(
            args.config,
            args.env,
            overrides=args.set,
            total_timesteps=args.total_timesteps,
            seed=args.seed,
            resume=args.resume,
            runs_dir=args.runs_dir,
            name=args.name,
            max_minutes=args.max_minutes,
            progress=not args.quiet,
            verbose=args.verbose,
            final_eval=not args.no_final_eval,
            argv=sys.argv[1:],
        )
    except KeyboardInterrupt:
        return 130
    return 0
