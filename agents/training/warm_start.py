"""Where a PPO run's network starts: fresh, another model's weights (``init_model``), the imitation
of a teacher (``imitation``), or the imitation an earlier session of the run finished.

:class:`WarmStart` brings a fresh network to the start of PPO (:meth:`WarmStart.start`);
:meth:`WarmStart.imitate` runs the imitation (:mod:`.imitation`: the teacher's games, cloning,
DAgger rounds), saving each stage as it finishes in ``imitation/`` (:mod:`.imitation_stages`:
``--resume`` goes on after the last finished one), and writes ``imitation_model.zip`` and, last,
``imitation.json`` (which marks it finished: ``--resume`` then starts PPO from it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.configs.train_config import TrainConfig
from agents.storage.files import write_json
from agents.storage.modelfile import read_parameters
from forty_thieves_env.envs.resolved import ResolvedEnv

from .imitation_stages import IMITATION_STAGES
from .runs import IMITATION_INFO, IMITATION_MODEL, ResumePoint


def shared_weights(policy: Any, source: str) -> tuple[Path, dict[str, Any]]:
    """The model file at ``source`` and those of its policy's tensors that ``policy`` has too.

    Raises:
        ValueError: a tensor of another shape (naming it and both shapes), or a source that
            shares no tensor with the model (another network altogether).
    """
    from agents.players.shipped import resolve_model

    path = resolve_model(source)[0]
    theirs = read_parameters(path, f"init_model {source!r}: give a model that is whole")["policy"]
    mine = policy.state_dict()
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


def load_weights(policy: Any, source: str, log: Callable[[str], None]) -> None:
    """Copy into ``policy`` the weights of the model at ``source`` that it has too.

    ``source`` is a model ``.zip``, a run folder or a shipped name. Parameters the source lacks
    (an asymmetric critic's stock table) keep their fresh initialisation; a parameter
    of another shape is refused, naming it (:func:`shared_weights`). Adam's moments are not copied.
    """
    import torch

    path, shared = shared_weights(policy, source)
    mine = policy.state_dict()
    with torch.no_grad():
        policy.load_state_dict(shared, strict=False)
    fresh = sorted(set(mine) - set(shared))
    log(f"init_model: {len(shared)} tensors from {path}" + (f"; fresh: {', '.join(fresh)}" if fresh else ""))


def load_policy_state(policy: Any, path: Path, advice: str) -> None:
    """Load a model zip's weights and optimizer state into ``policy`` (the same network), checked.

    Raises:
        DamagedFileError: the file is damaged or its parameters are another network's.
    """
    from agents.storage.files import DamagedFileError

    params = read_parameters(path, advice)
    try:
        policy.load_state_dict(params["policy"])
        if "policy.optimizer" in params:
            policy.optimizer.load_state_dict(params["policy.optimizer"])
    except (RuntimeError, ValueError, KeyError) as err:
        why = " ".join(str(err).split())[:200]
        raise DamagedFileError(f"{path} does not fit this network ({why}): {advice}") from None


@dataclass(frozen=True)
class WarmStart:
    """Where a PPO run's network starts (module docstring).

    Attributes:
        policy: The run's network (an SB3 maskable policy with its optimizer).
        save: Writes the policy as a model zip at the path given (the imitation's models).
        env: The run's env.
        config: The run's config.
        run_dir: The run folder.
        log: Where messages go.
    """

    policy: Any
    save: Callable[[Path], Any]
    env: ResolvedEnv
    config: TrainConfig
    run_dir: Path
    log: Callable[[str], None]

    def start(self, point: ResumePoint) -> None:
        """Bring the fresh policy to the start of PPO: the finished imitation's model when the run
        has one, else ``init_model``'s weights and the imitation (:meth:`imitate`), which goes on
        after its last finished stage when an earlier session left some.

        Args:
            point: Where the run stands (:func:`agents.training.runs.resume_point`).
        """
        policy, config, log = self.policy, self.config, self.log
        if point.stage == "imitation":
            assert point.path is not None
            load_policy_state(policy, point.path, "the imitation runs again if you move it away")
            log(f"{point.run_dir}: the imitation had finished; PPO starts from {point.path.name}")
            return
        if config.init_model is not None:
            load_weights(policy, config.init_model, log)
        if config.imitation is not None:
            try:
                self.imitate()
            except KeyboardInterrupt:
                log(interrupted_in_imitation(self.run_dir))
                raise

    def imitate(self) -> None:
        """Clone the config's teacher into the policy (then DAgger), saving each stage as it finishes
        (:mod:`.imitation_stages`) and going on after the last one an earlier session finished; write
        ``imitation_model.zip`` (with ``save``) and, last, ``imitation.json``."""
        from agents.datasets.demonstrations import Demonstrations, training_deals

        from .imitation import clone, collect
        from .imitation_stages import StageRecord, stage_settings, stage_title, write_demonstrations

        policy, save, env, config, run_dir, log = self.policy, self.save, self.env, self.config, self.run_dir, self.log
        im = config.imitation
        assert im is not None
        # imitation.json marks a finished imitation (runs.resume_point): one left by an earlier,
        # damaged try must not vouch for the student models saved below.
        (run_dir / IMITATION_INFO).unlink(missing_ok=True)
        record = StageRecord.open(run_dir, stage_settings(config), log)
        n_all = im.games + im.dagger_rounds * im.dagger_games
        deals = training_deals(n_all, config.seed)
        common = dict(teacher_kwargs=im.teacher_kwargs, seed=config.seed, gamma=config.gamma, idle_cut=im.idle_cut)
        fit = dict(
            batch_size=im.batch_size, learning_rate=im.learning_rate, vf_coef=im.vf_coef, seed=config.seed, log=log
        )
        fit |= dict(targets=im.targets, decisive_weight=im.decisive_weight)
        fitted = max((r for r in range(im.dagger_rounds + 1) if record.finished(f"model_{r}")), default=-1)
        if record.last is not None:
            going_on = f"going on with {stage_title(record.next)}"
            log(f"imitation: {stage_title(record.last)} had finished ({record.folder}); {going_on}")
        if fitted >= 0:
            again = f"move {record.folder} away: the imitation runs again"
            load_policy_state(policy, record.path(f"model_{fitted}"), again)
        # A fit left to do needs every position so far: the finished rounds' games, read back.
        data: Demonstrations | None = None
        if 0 <= fitted < im.dagger_rounds:
            data = Demonstrations.concat([record.games(r) for r in range(fitted + 1)])
        for r in range(fitted + 1, im.dagger_rounds + 1):
            name = f"games_{r}"
            if record.finished(name):
                new = record.games(r)
            else:
                t0 = time.monotonic()
                if r == 0 and im.dataset is not None:
                    new = dataset_games(env, config, log)
                    figures = {"games": im.games, "positions": len(new), "teacher_won": float(new.won.mean())}
                    figures["dataset"] = im.dataset
                elif r == 0:
                    log(f"imitation: {im.teacher} plays {im.games} training deals")
                    new = collect(env, deals[: im.games], im.teacher, workers=im.workers, log=log, **common)
                    figures = {"games": im.games, "positions": len(new), "teacher_won": float(new.won.mean())}
                else:
                    start = im.games + (r - 1) * im.dagger_games
                    log(f"imitation: DAgger round {r}/{im.dagger_rounds}, the student plays {im.dagger_games} deals")
                    student = str(record.path(f"model_{r - 1}"))  # the previous fit, read from its zip
                    new = collect(
                        env,
                        deals[start : start + im.dagger_games],
                        im.teacher,
                        student=student,
                        beta=im.beta,
                        workers=im.workers,
                        log=log,
                        **common,
                    )
                    figures = {"games": im.dagger_games, "positions": len(new), "student_won": float(new.won.mean())}
                write_demonstrations(record.path(name), new)
                record.add(name, time.monotonic() - t0, figures)
            data = new if data is None else Demonstrations.concat([data, new])
            t0 = time.monotonic()
            stats = clone(policy, data, epochs=im.epochs if r == 0 else im.dagger_epochs, **fit)
            save(record.path(f"model_{r}"))
            record.add(f"model_{r}", time.monotonic() - t0, stats)
        path = run_dir / IMITATION_MODEL
        save(path)
        info = {"teacher": im.teacher, "rounds": record.rounds_figures(), "seconds": record.seconds}
        write_json(run_dir / IMITATION_INFO, info)  # last: the imitation has finished
        log(f"imitation done in {info['seconds']:.0f} s -> {path.name}")


def dataset_games(env: ResolvedEnv, config: TrainConfig, log: Callable[[str], None] | None = None) -> Any:
    """The first ``imitation.games`` games of the config's data set (``imitation.dataset``), as
    :class:`~agents.datasets.demonstrations.Demonstrations` with their decisive flags and vote
    shares; without ``log``, only checked (before a run folder is made).

    Raises:
        ValueError: no such data set, one of other rules than the run's, or fewer games than asked.
    """
    from agents.datasets import load_dataset
    from agents.datasets.manifest import read_manifest
    from forty_thieves_env.envs.resolved import describe_variant

    im = config.imitation
    assert im is not None and im.dataset is not None
    where = f"imitation.dataset {im.dataset}"
    try:
        settings = read_manifest(im.dataset, "collect it again").settings
    except (OSError, ValueError) as err:
        raise ValueError(f"{where}: not a data set ({err})") from None
    rules = ResolvedEnv.resolve(settings.env_id, settings.env_kwargs).variant
    if rules != env.variant:
        theirs, ours = describe_variant(rules), describe_variant(env.variant)
        raise ValueError(f"{where} was played on {theirs}, this run plays {ours}")
    if settings.games < im.games:
        raise ValueError(f"{where} holds {settings.games} games, imitation.games asks for {im.games}")
    if log is None:
        return None
    if settings.teacher != im.teacher:
        log(f"imitation: the data set's teacher is {settings.teacher}; {im.teacher} labels the DAgger rounds")
    log(f"imitation: the first {im.games} games of {im.dataset} ({settings.teacher})")
    return load_dataset(im.dataset, log).to_demonstrations(config.gamma, im.games)


def interrupted_in_imitation(run_dir: Path) -> str:
    """What a Ctrl-C in the imitation leaves: the last finished stage, and where ``--resume`` goes on."""
    from .imitation_stages import StageRecord, stage_title

    record = StageRecord.read(run_dir / IMITATION_STAGES, mend=False)
    if record is None or record.last is None:
        return (
            "interrupted in the imitation during the teacher's games: no stage had finished; --resume plays them again"
        )
    return (
        f"interrupted in the imitation during {stage_title(record.next)}: {stage_title(record.last)} had finished "
        f"(saved in {IMITATION_STAGES}/); --resume goes on with {stage_title(record.next)}"
    )
