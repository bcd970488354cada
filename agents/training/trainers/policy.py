"""What the trainers of an SB3 maskable policy share (MaskablePPO and TorchPPO): the checks before
a run, where its network starts, its periodic evaluation and where ``--resume`` continues."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents.configs.train_config import TrainConfig
from forty_thieves_env.envs.resolved import ResolvedEnv

from ..runs import ResumePoint, resume_point
from ..warm_start import WarmStart, dataset_games, shared_weights
from .base import Trainer


def validation(
    policy: Any, env: ResolvedEnv, n: int, deterministic: bool, seed: int, device: Any = None
) -> Callable[[], Mapping[str, float]]:
    """A run's periodic evaluation: ``policy`` (live, left as found) on the first ``n`` validation
    deals of the run's env, all side by side on ``device``
    (:func:`agents.evaluation.policy_eval.play_policy`, the evaluation ``evaluate --agent ppo``
    plays), its most likely or a drawn move; returns the figures ``eval_state.json`` records."""
    from agents.evaluation.policy_eval import eval_figures, play_policy
    from forty_thieves_env.engine.deals import deal_split

    deals = [int(d) for d in deal_split("validation")[:n]]

    def evaluate() -> Mapping[str, float]:
        games = play_policy(policy, env.options, deals, seed=seed, deterministic=deterministic, device=device)
        return eval_figures(games)

    return evaluate


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


class PolicyTrainer(Trainer):
    """A trainer of an SB3 maskable policy on a :class:`~agents.configs.train_config.TrainConfig`."""

    config: TrainConfig

    def check(self) -> None:
        """Refuse a ``device`` this machine cannot train on and an ``init_model`` that does not
        exist or does not fit the config's network, before anything is written."""
        self.check_device()
        imitation = self.config.imitation
        if imitation is not None and imitation.dataset is not None:
            dataset_games(self.env, self.config)
        if self.config.init_model is not None:
            from agents.players.shipped import resolve_model

            try:
                resolve_model(self.config.init_model)
            except ValueError as err:
                raise ValueError(f"init_model: {err}") from None
            shared_weights(self.fresh_policy("cpu"), str(self.config.init_model))

    def check_device(self) -> None:
        """Refuse a ``device`` this machine cannot train on (the message names what is missing)."""
        import torch

        if self.config.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("device: cuda, but torch sees no CUDA GPU (a CUDA build of torch and an NVIDIA driver)")

    def fresh_policy(self, device: str) -> Any:
        """The config's network with fresh weights (seeded by the config's seed) on ``device``."""
        from ..networks.policies import build_policy, spaces_for

        observation, action = spaces_for(self.env.variant, self.env.observation)
        return build_policy(self.config, observation, action, device, self.config.seed, variant=self.env.variant)

    def resume_point(self, run_dir: Path, log: Callable[[str], None] = print, mend: bool = True) -> ResumePoint:
        return resume_point(run_dir, self.config.imitation is not None, log, mend)

    def start_policy(self, policy: Any, save: Callable[[Path], Any], start: ResumePoint) -> None:
        """Bring a fresh network to where PPO starts (:class:`agents.training.warm_start.WarmStart`)."""
        WarmStart(policy, save, self.env, self.config, start.run_dir, self.log).start(start)

    def set_threads(self) -> None:
        """torch on the config's number of threads (0: leave torch's default)."""
        import torch

        if self.config.torch_threads > 0:
            torch.set_num_threads(self.config.torch_threads)

    def validation(self, policy: Any, device: Any) -> Callable[[], Mapping[str, float]] | None:
        """The periodic evaluation of ``policy`` (the live network): the first ``n_eval_episodes``
        validation deals of the run's env, its most likely or a drawn move as
        ``eval_deterministic`` says (None when ``eval_freq`` is 0)."""
        config = self.config
        if config.eval_freq <= 0:
            return None
        return validation(policy, self.env, config.n_eval_episodes, config.eval_deterministic, config.seed, device)
