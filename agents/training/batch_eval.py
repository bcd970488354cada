"""The periodic evaluation of a TorchPPO run: the first validation deals, all at once, on the training device.

:class:`ValidationGames` deals the first ``n_eval_episodes`` validation deals (1001, 1002, ...)
to one :class:`~forty_thieves_env.envs.torch_games.TorchGames` batch and plays each once with the
live policy, one forward pass a move for every game: an evaluation costs about as many
forward passes as the longest game has moves (at most the 1000-move limit), not one per
move of every game. It plays the same deals every time, and a sampled policy
(``eval_deterministic: false``) draws its moves from a generator seeded alike every time, so
two evaluations differ only by the policy.

The figures are those of SB3's evaluation of a MaskablePPO run (:class:`~.callbacks.DealEvalCallback`):
the mean episode return (what the best model is chosen by), the win rate, and here also the
mean cards home and episode length. The final test evaluation of a run is
:func:`agents.training.train.final_evaluation`, the same as MaskablePPO's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from forty_thieves_env.engine.deals import deal_split
from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS
from forty_thieves_env.envs.torch_games import TorchGames

from .torch_ppo import masked_log_probs, sample_actions


class ValidationGames:
    """The first ``n`` validation deals of ``env_id``, played side by side (module docstring).

    Args:
        env_id: A registered env id.
        n: Validation deals to play (the first ``n``).
        env_kwargs: The training run's env options (observation, reward, variant options).
        device: The policy's device.
        num_threads: numba threads of a CPU step.
    """

    def __init__(
        self, env_id: str, n: int, env_kwargs: dict[str, Any], device: torch.device, num_threads: int | None = 1
    ) -> None:
        self.deals = [int(d) for d in deal_split("validation")[:n]]
        self.games = TorchGames(
            len(self.deals),
            env_id,
            device=device,
            autoreset="next_step",
            max_episode_steps=MAX_EPISODE_STEPS,
            num_threads=num_threads,
            **env_kwargs,
        )

    @torch.no_grad()
    def play(self, logits_of: Callable[[Any], torch.Tensor], deterministic: bool, seed: int = 0) -> dict[str, float]:
        """Play every deal once; returns ``mean_reward``, ``win_rate``, ``mean_cards``, ``mean_length``.

        Args:
            logits_of: The policy: observations (the games' tensors) to ``(N, n)`` logits.
            deterministic: The most likely legal move, else one drawn from the policy.
            seed: Seeds the drawn moves (the same every evaluation).
        """
        g = self.games
        n = g.num_envs
        obs, info = g.reset(seed=0, deal=self.deals)
        dev = g.device
        done = torch.zeros(n, dtype=torch.bool, device=dev)
        ret = torch.zeros(n, dtype=torch.float64, device=dev)
        won = torch.zeros(n, dtype=torch.bool, device=dev)
        cards = torch.zeros(n, dtype=torch.int64, device=dev)
        length = torch.zeros(n, dtype=torch.int64, device=dev)
        gen = torch.Generator(device=dev).manual_seed(seed)
        steps = 0
        # A game's episode lasts at most MAX_EPISODE_STEPS steps; one more lets the last one end.
        while not bool(done.all()) and steps <= MAX_EPISODE_STEPS:
            log_probs, probs = masked_log_probs(logits_of(obs), info["action_mask"])
            actions = log_probs.argmax(1) if deterministic else sample_actions(probs, gen)
            obs, _, terminated, truncated, info = g.step(actions)
            steps += 1
            ended = (terminated | truncated) & ~done
            if bool(ended.any()):
                ret = torch.where(ended, info["episode_return"], ret)
                won |= ended & info["won"]
                cards = torch.where(ended, info["cards_on_foundations"], cards)
                length = torch.where(ended, torch.full_like(length, steps), length)
                done |= ended
        return {
            "mean_reward": float(ret.mean()),
            "win_rate": float(won.double().mean()),
            "mean_cards": float(cards.double().mean()),
            "mean_length": float(length.double().mean()),
            "episodes": float(n),
        }
