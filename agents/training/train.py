"""``forty-thieves train``: MaskablePPO from a config file, into a self-describing run folder.

(A config with ``algo: RLlibPPO``, such as ``configs/rllib_ppo.yaml``, goes to RLlib's PPO
instead: :mod:`.rllib`.)

    forty-thieves train configs/ppo.yaml [--env FortyThieves-v0] [--total-timesteps N] [--seed S]
    forty-thieves train --resume runs/FortyThieves-v0_MaskablePPO_20260101-120000

A run folder (``runs/<env>_<algo>_<time>`` or ``--name``) holds:

=====================  ==========================================================================
``config.yaml``        the resolved config (``default`` merged, overrides applied): train from it
``command.txt``        each command line that trained in this folder, one per line
``versions.json``      Python and library versions, the git commit
``imitation*``         with an ``imitation`` section: ``imitation_model.zip`` (the warm start) and
                       ``imitation.json`` (positions, win rates, accuracy per round)
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
(:func:`warm_start`, :mod:`.imitation`), then PPO trains it. Training runs on the native
batched vector env when it is there (:func:`make_train_env`),
else on SB3's ``DummyVecEnv``. Periodic evaluation plays the *same* first ``n_eval_episodes``
validation deals each time (deals 1001.., one after the other), with action masks, the
policy's most likely move or (``eval_deterministic: false``) a move drawn from it; the best
is kept. The final test evaluation plays the best model the same way. ``--resume`` continues from the last checkpoint
with the folder's own config, keeping the step count, the schedules and the best model.

**Faults.** The folder's files are written atomically and read back checked (:mod:`.runs`).
Ctrl-C in any stage leaves a folder ``--resume`` continues from the last finished stage
(:func:`~.runs.resume_point`: the newest good checkpoint, else the finished imitation, else
the start); during PPO a checkpoint is saved first. The last line on exit says which.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.configs.config_file import load_config
from agents.configs.run_file import write_run_config
from agents.configs.train_config import RLlibConfig, TrainConfig
from agents.storage.files import write_json
from agents.storage.modelfile import load_model, load_parameters, read_parameters, save_model

from .envs import make_eval_env, make_train_env
from .runs import (
    IMITATION_INFO,
    IMITATION_MODEL,
    RUNS_DIR,
    ResumePoint,
    checkpoint_path,
    make_logger,
    new_run_dir,
    read_run_config,
    record_command,
    resume_hint,
    resume_point,
    update_train_info,
    write_versions,
)

# ------------------------------------------------------------------------- training


def shared_weights(model: Any, source: str) -> tuple[Path, dict[str, Any]]:
    """The model file at ``source`` and those of its policy's tensors that ``model``'s policy has too.

    Raises:
        ValueError: a tensor of another shape (naming it and both shapes), or a source that
            shares no tensor with the model (another network altogether).
    """
    from agents.players.shipped import resolve_model

    path = resolve_model(source)[0]
    theirs = read_parameters(path, f"init_model {source!r}: give a model that is whole")["policy"]
    mine = model.policy.state_dict()
    wrong = [k for k, v in theirs.items() if k in mine and mine[k].shape != v.shape]
    if wrong:
        k = wrong[0]
        raise ValueError(
            f"init_model {source!r}: {k} has shape {tuple(theirs[k].shape)} there and {tuple(mine[k].shape)} here"
        )
    shared = {k: v for k, v in theirs.items() if k in mine}
    if not shared:
        raise ValueError(
            f"init_model {source!r}: its network ({', '.join(sorted(theirs)[:3])}, ...) shares no weights with "
            f"this config's ({', '.join(sorted(mine)[:3])}, ...): another network"
        )
    return path, shared


def check_init_model(config: TrainConfig, env_id: str) -> None:
    """Refuse an ``init_model`` whose network does not fit the config's, before anything is written."""
    from .torch_run import model_container

    shared_weights(model_container(config, env_id, "cpu"), str(config.init_model))


def check_device(config: TrainConfig) -> None:
    """Refuse a ``device`` this machine cannot train on, before anything is written (the
    message names what is missing)."""
    import torch

    if config.algo == "TorchPPO":
        from forty_thieves_env.envs.torch_games import torch_device

        from .torch_run import training_device

        torch_device(training_device(config.device))
    elif config.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: cuda, but torch sees no CUDA GPU (a CUDA build of torch and an NVIDIA driver)")


def load_weights(model: Any, source: str, log: Callable[[str], None]) -> None:
    """Copy into ``model``'s policy the weights of the model at ``source`` that it has too.

    ``source`` is a model ``.zip``, a run folder or a shipped name. Parameters the source lacks
    (an asymmetric critic's stock table, say) keep their fresh initialisation; a parameter
    of another shape is refused, naming it (:func:`shared_weights`). Adam's moments are not copied.
    """
    import torch

    path, shared = shared_weights(model, source)
    mine = model.policy.state_dict()
    with torch.no_grad():
        model.policy.load_state_dict(shared, strict=False)
    fresh = sorted(set(mine) - set(shared))
    log(f"init_model: {len(shared)} tensors from {path}" + (f"; fresh: {', '.join(fresh)}" if fresh else ""))


def set_threads(config: TrainConfig) -> None:
    """torch on the config's number of threads (0: leave torch's default)."""
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
    """Train (or resume) one run; return its folder. See the module docstring.

    A config with ``algo: RLlibPPO`` trains RLlib's PPO instead (:mod:`.rllib`).
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
        env_id, config = read_run_config(run_dir, env_id, extra)  # refuses a damaged config.yaml
        check_device(config)
        point = resume_point(run_dir, config.imitation is not None, log)
    else:
        if config_path is None:
            raise ValueError("give a config file (configs/ppo.yaml) or --resume RUN_FOLDER")
        env_id, config = load_config(config_path, env_id, extra)  # the model its algo asks for
        if isinstance(config, RLlibConfig):
            from .rllib import train_rllib

            return train_rllib(env_id, config, config_path, runs_dir=runs_dir, name=name, argv=argv, log=log)
        if config.init_model is not None:  # a bad path is refused before the run folder is made
            from agents.players.shipped import resolve_model

            try:
                resolve_model(config.init_model)
            except ValueError as err:
                raise ValueError(f"init_model: {err}") from None
            check_init_model(config, env_id)
        check_device(config)
        run_dir = new_run_dir(Path(runs_dir), env_id, config, name)
        point = ResumePoint(run_dir, "start")

    write_run_config(run_dir, env_id, config)
    if argv is not None:
        line = shlex.join(["forty-thieves", *argv])
    else:
        call = f"{config_path!r}, {env_id!r}, overrides={extra!r}, resume={resume!r}"
        line = f"python: agents.training.train.train({call})"
    record_command(run_dir, line)
    write_versions(run_dir)
    set_threads(config)
    try:
        if config.algo == "TorchPPO":  # the same resume points and warm starts (start_model)
            from .torch_run import train_torch

            checkpoint = point.path if point.stage == "checkpoint" else None
            prepare = lambda model: start_model(model, env_id, config, point, log)  # noqa: E731
            train_torch(
                run_dir, env_id, config, checkpoint, progress=progress, verbose=verbose, log=log, prepare=prepare
            )
        else:
            _train_maskable(run_dir, env_id, config, point, progress, verbose, log)
        if final_eval and config.final_eval_episodes > 0:
            log(final_evaluation(run_dir, env_id, config))
    except KeyboardInterrupt:
        log(resume_hint(run_dir, config))
        raise
    return run_dir


def start_model(model: Any, env_id: str, config: TrainConfig, point: ResumePoint, log: Callable[[str], None]) -> None:
    """Bring a fresh model to the start of PPO: the finished imitation's model when the run
    has one, else ``init_model``'s weights and the imitation (:func:`warm_start`)."""
    if point.stage == "imitation":
        assert point.path is not None
        load_parameters(model, point.path, "the imitation runs again if you move it away", device=str(model.device))
        log(f"{point.run_dir}: the imitation had finished; PPO starts from {point.path.name}")
        return
    if config.init_model is not None:
        load_weights(model, config.init_model, log)
    if config.imitation is not None:
        try:
            warm_start(model, env_id, config, point.run_dir, log)
        except KeyboardInterrupt:
            log("interrupted in the imitation: it keeps nothing until it finishes")
            raise


def _train_maskable(
    run_dir: Path,
    env_id: str,
    config: TrainConfig,
    point: ResumePoint,
    progress: bool,
    verbose: bool,
    log: Callable[[str], None],
) -> None:
    """A MaskablePPO run from ``point`` (a checkpoint, the finished imitation or the start)."""
    from stable_baselines3.common.callbacks import CallbackList

    from .callbacks import Checkpoints, DealEvalCallback, EpisodeStats, Progress, StopAfter
    from .networks.policies import build_model

    done_steps = point.steps
    venv = make_train_env(env_id, config, config.seed + done_steps)
    if point.stage == "checkpoint":
        assert point.path is not None
        model = load_model(point.path, env=venv, device=config.device)
        log(f"resuming {run_dir} from {point.path.name} ({model.num_timesteps:,} of {config.n_timesteps:,} steps)")
    else:
        model = build_model(config, venv, config.seed, env_id)
        start_model(model, env_id, config, point, log)
        log(f"training {config.algo} on {env_id} for {config.n_timesteps:,} steps -> {run_dir}")
    model.set_logger(make_logger(run_dir, verbose))

    stats = EpisodeStats()
    n = config.n_envs
    callbacks: list[Any] = [stats, Progress(config.n_timesteps, stats, progress)]
    if config.save_freq > 0:
        callbacks.append(Checkpoints(max(1, config.save_freq // n), run_dir))
    eval_env = None
    if config.eval_freq > 0:
        eval_env = make_eval_env(env_id, config)
        callbacks.append(
            DealEvalCallback(
                eval_env,
                n_eval_episodes=config.n_eval_episodes,
                eval_freq=max(1, config.eval_freq // n),
                best_model_path=run_dir / "best_model.zip",
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
                reset_num_timesteps=point.stage != "checkpoint",
                progress_bar=False,
            )
        except KeyboardInterrupt:
            interrupted = True
            log("interrupted: saving a checkpoint")
    else:
        log(f"{run_dir} has already trained {model.num_timesteps:,} steps (n_timesteps {config.n_timesteps:,})")
    seconds = time.monotonic() - t0
    save_model(model, checkpoint_path(run_dir, model.num_timesteps))
    save_model(model, run_dir / "final_model.zip")
    model.logger.close()
    venv.close()
    if eval_env is not None:
        eval_env.close()
    steps_per_s = (model.num_timesteps - done_steps) / max(seconds, 1e-9)
    why = "interrupted" if interrupted else ("time limit" if stopper is not None and stopper.stopped else "done")
    log(f"{why}: {model.num_timesteps:,} steps, {seconds:.0f} s this session ({steps_per_s:.0f} steps/s)")
    update_train_info(run_dir, model.num_timesteps, seconds, why, log)
    if interrupted:
        raise KeyboardInterrupt


def warm_start(model: Any, env_id: str, config: TrainConfig, run_dir: Path, log: Callable[[str], None]) -> None:
    """Clone the config's teacher into ``model`` (then DAgger); write ``imitation_model.zip``, ``imitation.json``."""
    from .imitation import Demonstrations, clone, collect, training_deals

    im = config.imitation
    assert im is not None
    t0 = time.monotonic()
    n_all = im.games + im.dagger_rounds * im.dagger_games
    deals = training_deals(n_all, config.seed)
    # imitation.json marks a finished imitation (runs.resume_point): one left by an earlier,
    # damaged try must not vouch for the student models saved below.
    (run_dir / IMITATION_INFO).unlink(missing_ok=True)
    common = dict(teacher_kwargs=im.teacher_kwargs, seed=config.seed, gamma=config.gamma, idle_cut=im.idle_cut)
    log(f"imitation: {im.teacher} plays {im.games} training deals")
    data = collect(env_id, deals[: im.games], im.teacher, workers=im.workers, log=log, **common)
    fit = dict(batch_size=im.batch_size, learning_rate=im.learning_rate, vf_coef=im.vf_coef, seed=config.seed, log=log)
    rounds = [{"games": im.games, "positions": len(data), "teacher_won": float(data.won.mean())}]
    rounds[0].update(clone(model.policy, data, epochs=im.epochs, **fit))
    path = run_dir / IMITATION_MODEL
    for r in range(im.dagger_rounds):
        save_model(model, path)
        start = im.games + r * im.dagger_games
        log(f"imitation: DAgger round {r + 1}/{im.dagger_rounds}, the student plays {im.dagger_games} deals")
        new = collect(
            env_id,
            deals[start : start + im.dagger_games],
            im.teacher,
            student=str(path),
            beta=im.beta,
            workers=im.workers,
            log=log,
            **common,
        )
        data = Demonstrations.concat([data, new])
        stats = {"games": im.dagger_games, "positions": len(new), "student_won": float(new.won.mean())}
        stats.update(clone(model.policy, data, epochs=im.dagger_epochs, **fit))
        rounds.append(stats)
    save_model(model, path)
    info = {"teacher": im.teacher, "rounds": rounds, "seconds": round(time.monotonic() - t0, 1)}
    write_json(run_dir / IMITATION_INFO, info)  # last: the imitation has finished
    log(f"imitation done in {info['seconds']:.0f} s -> {path.name}")


def final_evaluation(run_dir: Path, env_id: str, config: TrainConfig, workers: int = 1) -> str:
    """Play the run's best model (else its final one) on the first test deals; write ``final_eval*``."""
    from agents.evaluation.evaluate import evaluate, format_summary, write_results

    model = run_dir / "best_model.zip"
    if not model.exists():
        model = run_dir / "final_model.zip"
    evaluation = evaluate(
        "ppo",
        env_id,
        "test",
        n=config.final_eval_episodes,
        seed=config.seed,
        workers=workers,
        agent_kwargs={"model": str(model), "deterministic": config.eval_deterministic},
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
            progress=not args.quiet,
            verbose=args.verbose,
            final_eval=not args.no_final_eval,
            argv=sys.argv[1:],
        )
    except KeyboardInterrupt:
        return 130
    return 0
