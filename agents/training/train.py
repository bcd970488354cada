"""``forty-thieves train``: one run of a config file, by the trainer its ``algo`` names, into a
self-describing run folder (the training spine).

    forty-thieves train configs/ppo.yaml [--env FortyThieves-v0] [--total-timesteps N] [--seed S]
    forty-thieves train configs/ppo.yaml --smoke            # a one-minute run of the same recipe
    forty-thieves train --resume runs/FortyThieves-v0_MaskablePPO_20260101-120000

The spine: the config file is read once and its env id resolved once with its ``env_kwargs``
(:class:`~forty_thieves_env.envs.resolved.ResolvedEnv`: every consumer below is handed that
value); the trainer of the config's ``algo`` (:mod:`.trainers`: ``MaskablePPO``, ``TorchPPO``,
``RLlibPPO``) refuses what it cannot train before anything is written; the run folder is made
(or reopened) and its record written (:mod:`.runs`); the trainer trains through a
:class:`~.session.Session` (logs, periodic evaluation, checkpoints, time limit, Ctrl-C); and the
run's best model plays the first test deals of the same env (:func:`final_evaluation`).

A run folder (``runs/<env>_<algo>_<time>`` or ``--name``) holds:

=====================  ==========================================================================
``config.yaml``        the resolved config (``default`` merged, overrides applied): train from it
``command.txt``        each command line that trained in this folder, one per line
``versions.json``      Python and library versions, the git commit
``imitation*``         with an ``imitation`` section: ``imitation_model.zip`` (the warm start) and
                       ``imitation.json`` (positions, win rates, accuracy per round); ``imitation/``
                       its stages, each saved as it finishes (:mod:`.imitation_stages`)
``checkpoints/``       ``rl_model_<steps>_steps.zip`` every ``save_freq`` steps and at the end
``best_model.zip``     the model with the best mean reward on the validation deals
``final_model.zip``    the model when training stopped
``eval_state.json``    every periodic evaluation (steps, mean reward, win rate) and the best one
``evaluations.npz``    the same, as SB3's EvalCallback writes it
``logs/``              ``progress-<k>.csv`` (one per session) and TensorBoard event files
``final_eval.json``    the best model on the first ``final_eval_episodes`` test deals (summary)
``final_eval/``        the same game by game (``results.csv``, ``results.json``)
=====================  ==========================================================================

With an ``imitation`` section the policy first imitates a teacher agent
(:mod:`.warm_start`, :mod:`.imitation`), then PPO trains it. Periodic evaluation plays the *same*
first ``n_eval_episodes`` validation deals each time (deals 1001..), all side by side, with the
policy's most likely move or (``eval_deterministic: false``) a move drawn from it; the best
trained model is kept (:mod:`.evaluations`). The final test evaluation plays the best model
(else the final one) the same way. ``--resume`` continues from the last checkpoint with the
folder's own config, keeping the step count, the schedules and the best model.

**Faults.** The folder's files are written atomically and read back checked (:mod:`.runs`).
Ctrl-C in any stage leaves a folder ``--resume`` continues from the last finished stage
(:func:`~.runs.resume_point`: the newest good checkpoint, else the finished imitation, else the
imitation's last finished stage, else the start); during PPO a checkpoint is saved first. The
last line on exit says which.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.configs.config_file import load_env_config
from agents.configs.run_file import write_run_config
from agents.configs.train_config import RunConfig
from agents.storage.files import DamagedFileError, write_json
from forty_thieves_env.envs.resolved import ResolvedEnv

from .runs import RUNS_DIR, ResumePoint, new_run_dir, read_run_config, record_command, resume_hint, write_versions
from .trainers import trainer_class

# ------------------------------------------------------------------------- training


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
    smoke: bool = False,
    progress: bool = True,
    verbose: bool = False,
    final_eval: bool = True,
    argv: Sequence[str] | None = None,
    log: Callable[[str], None] = print,
) -> Path:
    """Train (or resume) one run; return its folder. See the module docstring.

    The config (or the run folder's, with ``resume``) is read once and its env resolved once
    (:func:`~agents.configs.config_file.load_env_config`); the trainer its ``algo`` names
    (:mod:`.trainers`) checks what it can before the run folder is made, then trains.

    Raises:
        ConfigError: a bad config (naming the key and the fix); nothing is written.
        ValueError: a bad argument, ``init_model`` or device; nothing is written.
        KeyboardInterrupt: after what was trained is saved (the last line says how to continue).
    """
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
        env, config = read_run_config(run_dir, env_id, extra)  # refuses a damaged config.yaml
    else:
        if config_path is None:
            raise ValueError("give a config file (configs/ppo.yaml) or --resume RUN_FOLDER")
        env, config = load_env_config(config_path, env_id, extra, smoke=smoke)
    trainer = trainer_class(config.algo)(env, config, progress=progress, verbose=verbose, log=log)
    trainer.check()  # before anything is written
    if resume is None:
        run_dir = new_run_dir(Path(runs_dir), env.env_id, config.algo, name)
        point = ResumePoint(run_dir, "start")
    else:
        point = trainer.resume_point(run_dir, log)
    write_run_config(run_dir, env.env_id, config)
    if argv is not None:
        line = shlex.join(["forty-thieves", *argv])
    else:
        call = f"{config_path!r}, {env.env_id!r}, overrides={extra!r}, resume={resume!r}, smoke={smoke!r}"
        line = f"python: agents.training.train.train({call})"
    record_command(run_dir, line)
    write_versions(run_dir, trainer.versions())
    try:
        trainer.train(run_dir, point)
        episodes = getattr(config, "final_eval_episodes", 0)
        if final_eval and trainer.plays_final_evaluation and episodes > 0:
            log(final_evaluation(run_dir, env, config))
    except KeyboardInterrupt:
        try:
            where: ResumePoint | DamagedFileError = trainer.resume_point(run_dir, mend=False)
        except DamagedFileError as err:
            where = err
        log(resume_hint(run_dir, where, trainer.total))
        raise
    return run_dir


def final_evaluation(run_dir: Path, env: ResolvedEnv, config: RunConfig, workers: int = 1) -> str:
    """Play the run's best model (else its final one) on the first ``final_eval_episodes`` test
    deals of the run's env (its rules, variant options included); write ``final_eval*``."""
    from agents.evaluation.evaluate import evaluate, format_summary, write_results

    model = run_dir / "best_model.zip"
    if not model.exists():
        model = run_dir / "final_model.zip"
    evaluation = evaluate(
        "ppo",
        env,
        "test",
        n=getattr(config, "final_eval_episodes"),  # noqa: B009 (a PPO config's key)
        seed=config.seed,
        workers=workers,
        agent_kwargs={"model": str(model), "deterministic": getattr(config, "eval_deterministic", True)},
        progress=False,
    )
    write_results(evaluation, run_dir / "final_eval")
    out = {"model": model.name, "settings": evaluation.settings, "summary": evaluation.summary}
    write_json(run_dir / "final_eval.json", out)
    return f"final evaluation ({model.name}): {format_summary(evaluation)}"


# ------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves train`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("config", nargs="?", help="config file, e.g. configs/ppo.yaml (not needed with --resume)")
    parser.add_argument("--env", help="env id: a section of the config (default: its only one, else FortyThieves-v0)")
    parser.add_argument("--total-timesteps", type=int, help="override n_timesteps")
    parser.add_argument("--seed", type=int, help="override seed")
    parser.add_argument("--max-minutes", type=float, help="stop training after this many minutes (then evaluate)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (a.b=v)")
    parser.add_argument("--resume", metavar="RUN", help="continue the run folder RUN from its last checkpoint")
    parser.add_argument("--runs-dir", default="runs", help="where new run folders go (default: runs)")
    parser.add_argument("--name", help="run folder name (default: <env>_<algo>_<time>)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run of the config (a minute on one core: batch, rollout, imitation and evaluations scaled down)",
    )
    parser.add_argument("--no-final-eval", action="store_true", help="skip the test-deal evaluation at the end")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--verbose", action="store_true", help="print SB3's log table after each rollout")


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
            smoke=args.smoke,
            progress=not args.quiet,
            verbose=args.verbose,
            final_eval=not args.no_final_eval,
            argv=sys.argv[1:],
        )
    except KeyboardInterrupt:
        return 130
    return 0
