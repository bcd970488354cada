"""Where a PPO run's network starts: fresh, another model's weights (``init_model``), the imitation
of a teacher (``imitation``), or the imitation an earlier session of the run finished.

:func:`start_model` brings a fresh model to the start of PPO; :func:`warm_start` runs the
imitation (:mod:`.imitation`: the teacher's games, cloning, DAgger rounds) and writes
``imitation_model.zip`` and, last, ``imitation.json`` (which marks it finished: ``--resume``
then starts PPO from it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.configs.train_config import TrainConfig
from agents.storage.files import write_json
from agents.storage.modelfile import load_parameters, read_parameters, save_model
from forty_thieves_env.envs.resolved import ResolvedEnv

from .runs import IMITATION_INFO, IMITATION_MODEL, ResumePoint


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


def load_weights(model: Any, source: str, log: Callable[[str], None]) -> None:
    """Copy into ``model``'s policy the weights of the model at ``source`` that it has too.

    ``source`` is a model ``.zip``, a run folder or a shipped name. Parameters the source lacks
    (an asymmetric critic's stock table) keep their fresh initialisation; a parameter
    of another shape is refused, naming it (:func:`shared_weights`). Adam's moments are not copied.
    """
    import torch

    path, shared = shared_weights(model, source)
    mine = model.policy.state_dict()
    with torch.no_grad():
        model.policy.load_state_dict(shared, strict=False)
    fresh = sorted(set(mine) - set(shared))
    log(f"init_model: {len(shared)} tensors from {path}" + (f"; fresh: {', '.join(fresh)}" if fresh else ""))


def start_model(
    model: Any, env: ResolvedEnv, config: TrainConfig, point: ResumePoint, log: Callable[[str], None]
) -> None:
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
            warm_start(model, env, config, point.run_dir, log)
        except KeyboardInterrupt:
            log("interrupted in the imitation: it keeps nothing until it finishes")
            raise


def warm_start(model: Any, env: ResolvedEnv, config: TrainConfig, run_dir: Path, log: Callable[[str], None]) -> None:
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
    data = collect(env, deals[: im.games], im.teacher, workers=im.workers, log=log, **common)
    fit = dict(batch_size=im.batch_size, learning_rate=im.learning_rate, vf_coef=im.vf_coef, seed=config.seed, log=log)
    rounds = [{"games": im.games, "positions": len(data), "teacher_won": float(data.won.mean())}]
    rounds[0].update(clone(model.policy, data, epochs=im.epochs, **fit))
    path = run_dir / IMITATION_MODEL
    for r in range(im.dagger_rounds):
        save_model(model, path)
        start = im.games + r * im.dagger_games
        log(f"imitation: DAgger round {r + 1}/{im.dagger_rounds}, the student plays {im.dagger_games} deals")
        new = collect(
            env,
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
