"""N games as torch tensors: the batch engine for torch training loops (CleanRL style).

:class:`TorchGames` steps a batch of games in one compiled call, on the CPU (the
:class:`~.batch.BatchGames` kernels over numba's threads) or on a CUDA GPU (the same per-game
step compiled for CUDA, :mod:`.cuda_games`), and hands out its arrays as torch tensors **without
copies**: ``torch.from_numpy`` on the CPU, ``__cuda_array_interface__`` on the GPU. A training
loop therefore never moves an observation between host and device::

    import torch
    from forty_thieves_env.envs.torch_games import TorchGames

    games = TorchGames(4096, "classic", device="cpu", seed=0)   # device="cuda" with the [cuda] extra
    obs, info = games.reset()
    for _ in range(100):
        logits = torch.randn(4096, games.n_actions)              # a policy's output
        actions = logits.masked_fill(~info["action_mask"], -torch.inf).argmax(1)
        obs, rewards, terminated, truncated, info = games.step(actions)

**Every tensor is a view of the batch's live arrays** (the same objects every step): the
next :meth:`TorchGames.step` overwrites them, so copy what must outlive it (a rollout buffer
copies anyway). The keys the native vector env's infos also have (``action_mask``, ``won``,
``illegal_action``, ``deal``, ``moves``, ``cards_on_foundations``) have its names. Shapes and types:

================================  =====================  ==========================================
``obs``                           dict of ``(N, ...)``   the observation fields (``"dict"``/``"oracle"``),
                                  ``int8``, or ``(N, F)`` or the flat rows (``"flat"``); see
                                                         :mod:`.observation`
``rewards``                       ``(N,) float64``       this step's rewards
``terminated``                    ``(N,) bool``          won, stuck, or an illegal action that terminates
``truncated``                     ``(N,) bool``          the time limit
``info["action_mask"]``           ``(N, n) bool``        legal actions now
``info["won"]``                   ``(N,) bool``          the game is won (before a same-step reset)
``info["illegal_action"]``        ``(N,) bool``          the action was refused
``info["deal"]``                  ``(N,) int64``         deal number being played
``info["moves"]``                 ``(N,) int64``         legal moves played this episode
``info["cards_on_foundations"]``  ``(N,) int64``         cards on the foundations now
``info["episode_return"]``        ``(N,) float64``       the rewards of the episode so far
``info["final_obs"]``             like ``obs``           ``same_step`` only: the last observation of
                                                         each game reset by this step (rows of games
                                                         not reset are stale)
``info["final_cards"]``,          ``(N,) int64``,        ``same_step`` only: cards home, steps and
``info["final_length"]``,         ``(N,) int64``,        return of the episodes this step ended
``info["final_return"]``          ``(N,) float64``
================================  =====================  ==========================================

With ``mask_in_observation=True``, ``obs`` holds the mask too, ``0``/``1`` ``int8``: a dict's
``"action_mask"`` is ``info["action_mask"]`` viewed as ``int8`` (the same memory), and each
``flat`` row ends with its game's mask (written there by the step; the final rows' by a copy
of the final masks after each step).

Autoreset is ``"same_step"`` by default (a finished game is dealt anew within the step that
ended it, what PPO loops want); ``"next_step"`` is Gymnasium's. Deals, seeds and every option
are those of :class:`~.batch.BatchGames`: game ``i`` seeded ``seed + i`` plays the deals of
``gym.make(id).reset(seed=seed + i)``, on either device.

It imports torch (and, for ``device="cuda"``, numba-cuda); ``import forty_thieves_env`` does not
import this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .extras import install_line, missing_extra

try:
    import torch
except ImportError as exc:  # the core install has no torch
    raise missing_extra("forty_thieves_env.envs.torch_games", "torch", "train") from exc

from ..engine.variants import Variant
from .batch import BatchGames
from .batch_kernels import F_ILLEGAL, F_TERMINATED, F_TRUNCATED, F_WON
from .observation import MASK_KEY
from .options import EnvOptions
from .registration import MAX_EPISODE_STEPS, id_kwargs, is_env_id
from .step import G_CARDS, G_DEAL, G_ELAPSED, G_MOVES

__all__ = ["TorchGames", "torch_device"]


def torch_device(device: str | torch.device) -> torch.device:
    """``device`` as a ``torch.device``, checked: ``"cuda"`` needs a visible GPU and numba-cuda.

    Raises:
        ValueError: an unknown device, or ``"cuda"`` on a machine that cannot run it (the
            message names what is missing: the GPU and driver, or the ``[cuda]`` extra).
    """
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'cpu' or 'cuda' (or 'cuda:K'), got {device!r}") from None
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r}: torch sees no CUDA GPU (a CUDA build of torch and an NVIDIA driver are needed)"
            )
        try:
            import numba.cuda  # noqa: F401
        except ImportError:
            raise ValueError(f"device={device!r} needs numba-cuda: {install_line('cuda')}") from None
    return dev


class TorchGames:
    """``num_envs`` games stepped together, their arrays as torch tensors (module docstring).

    Args:
        num_envs: ``N``.
        variant: A registered env id (``"FortyThieves-v0"``), a preset name or a
            :class:`~forty_thieves_env.engine.variants.Variant`, with ``options``
            (``observation``, ``reward``, ``illegal_action``, ``deals``, ``winnable_only``,
            variant options; see :meth:`.options.EnvOptions.make`).
        device: ``"cpu"`` or ``"cuda"`` (``"cuda:K"``).
        seed: Seeds the first :meth:`reset` (game ``i``: ``seed + i``); ``None``: unseeded.
        max_episode_steps: Truncate an episode after this many steps (``None``: never).
        autoreset: ``"same_step"`` (default) or ``"next_step"``.
        num_threads: numba threads for a CPU step (``None``: all).
    """

    def __init__(
        self,
        num_envs: int,
        variant: str | Variant | EnvOptions = "classic",
        *,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        max_episode_steps: int | None = MAX_EPISODE_STEPS,
        autoreset: str = "same_step",
        num_threads: int | None = None,
        **options: Any,
    ) -> None:
        self.device = torch_device(device)
        if is_env_id(variant):  # an id: its rules and options, then the caller's
            id_options = id_kwargs(str(variant))
            variant = id_options.pop("variant")
            options = {**id_options, **options}
        opts = EnvOptions.of(variant, **options)
        kwargs = dict(max_episode_steps=max_episode_steps, autoreset=autoreset)
        if self.device.type == "cuda":
            if opts.illegal_action == "raise":
                raise ValueError('illegal_action="raise" needs a host check every step: use it on device="cpu"')
            from .cuda_games import CudaGames

            self.games: Any = CudaGames(num_envs, opts, device=self.device.index or 0, **kwargs)
            self._as_tensor = self._cuda_tensor
        else:
            self.games = BatchGames(num_envs, opts, num_threads=num_threads, **kwargs)
            self._as_tensor = torch.from_numpy
        g = self.games
        self.num_envs = g.num_envs
        self.n_actions = g.n_actions
        self.variant = g.variant
        self.options = opts
        self.observation_mode = g.observation_mode
        self.mask_in_observation = opts.mask_in_observation
        self.autoreset = autoreset
        self.max_episode_steps = max_episode_steps
        self._seed = seed
        self._tail_copies: list[tuple[torch.Tensor, torch.Tensor]] = []  # (rows' mask part, masks): copied each step
        self._bind()

    @property
    def num_games(self) -> int:
        """Alias of :attr:`num_envs`, kept for code written before."""
        return self.num_envs

    def _cuda_tensor(self, array: Any) -> torch.Tensor:
        return torch.as_tensor(array, device=self.device)

    def _bind(self) -> None:
        """Wrap the batch's arrays as tensors once (the batch keeps the same arrays for good)."""
        g, t = self.games, self._as_tensor
        self.masks = t(g.masks)  # (N, n) bool
        flat = t(g.obs)  # (N * F,) int8, laid out as the batch's obs_lay says
        self.obs = self._fields(flat, rows=self.observation_mode == "flat")
        rows = self.mask_in_observation and self.observation_mode == "flat"  # the steps write the rows' masks
        if self.mask_in_observation and not rows:
            self.obs[MASK_KEY] = self.masks.view(torch.int8)  # the masks themselves, as 0/1
        self.rewards = t(g.rewards)  # (N,) float64
        flags = t(g.flags)  # (F_LEN, N) bool
        self.terminated, self.truncated = flags[F_TERMINATED], flags[F_TRUNCATED]
        counters = t(g.games)  # (N, G_LEN) int64
        self.info: dict[str, Any] = {
            "action_mask": self.masks,
            "won": flags[F_WON],
            "illegal_action": flags[F_ILLEGAL],
            "deal": counters[:, G_DEAL],
            "moves": counters[:, G_MOVES],
            "cards_on_foundations": counters[:, G_CARDS],
            "episode_return": t(g.ep_return),
        }
        if self.autoreset == "same_step":
            final = t(g.final_obs)  # (N, F) int8: flat rows of every field
            final_games = t(g.final_games)
            final_obs = self._row_fields(final)
            if self.mask_in_observation and not rows:
                final_obs[MASK_KEY] = t(g.final_masks).view(torch.int8)
            elif rows:  # no step writes the final rows' mask part
                self._tail_copies.append((final[:, self.games.layout[MASK_KEY][0] :], t(g.final_masks)))
            self.info.update(
                final_obs=final_obs,
                final_cards=final_games[:, G_CARDS],
                final_length=final_games[:, G_ELAPSED],
                final_return=t(g.final_return),
            )

    def _fields(self, flat: torch.Tensor, rows: bool) -> Any:
        """The observation as the mode hands it out: ``(N, F)`` rows, or a dict of field views."""
        n, g = self.num_envs, self.games
        if rows:
            return flat.view(n, g.obs_size)
        out = {}
        for name, (start, stop, shape) in g.layout.items():
            out[name] = flat[n * start : n * stop].view(n, *shape)  # one block per field
        return out

    def _row_fields(self, rows: torch.Tensor) -> Any:
        """Flat observation rows ``(N, F)`` as the mode hands them out (field views of the rows)."""
        if self.observation_mode == "flat":
            return rows
        return {name: rows[:, start:stop].view(-1, *shape) for name, (start, stop, shape) in self.games.layout.items()}

    def _copy_tails(self) -> None:
        """``flat`` rows with the mask: copy the final masks into the mask part of the final rows,
        which no step writes."""
        for tail, masks in self._tail_copies:
            tail.copy_(masks.view(torch.int8))

    def observation_space(self) -> Any:
        """One game's Gymnasium observation space (gymnasium needed)."""
        from .observation import observation_space

        return observation_space(self.variant, self.observation_mode, self.mask_in_observation)

    # ----- stepping -----------------------------------------------------------------------
    def reset(
        self, seed: int | Sequence[int | None] | None = None, deal: int | Sequence[int] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Deal every game anew: its next drawn deal, or ``deal`` (one number, or one per game).

        ``seed`` reseeds the games' generators (game ``i``: ``seed + i``); the first reset uses
        the constructor's ``seed`` when none is given. Returns ``(obs, info)`` (views).
        """
        if seed is None and not self.games.started:
            seed = self._seed
        self.games.reset(seed=seed, deal=deal)
        if self._tail_copies:
            self._copy_tails()
        return self.obs, self.info

    def step(self, actions: torch.Tensor) -> tuple[Any, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """Step every game with ``actions`` (``(N,)`` integers on the games' device).

        Returns ``(obs, rewards, terminated, truncated, info)``, views of the live arrays
        (see the module docstring).
        """
        if not isinstance(actions, torch.Tensor):
            raise TypeError(f"actions must be a torch tensor of {self.num_envs} integers, got {type(actions).__name__}")
        if actions.device != self.device:
            raise ValueError(f"actions are on {actions.device}, the games on {self.device}")
        if actions.dtype != torch.int64:
            if actions.is_floating_point() or actions.dtype == torch.bool:
                raise TypeError(f"actions must be integers, got {actions.dtype}")
            actions = actions.long()
        if self.device.type == "cuda":
            self.games.step(actions.contiguous())
        else:
            self.games.step(actions.numpy())
        if self._tail_copies:
            self._copy_tails()
        return self.obs, self.rewards, self.terminated, self.truncated, self.info

    def action_masks(self) -> torch.Tensor:
        """``(N, n) bool``: every game's legal actions now (a view)."""
        return self.masks

    def random_actions(self, generator: np.random.Generator) -> torch.Tensor:
        """A uniformly random legal action per game (CPU games; for tests and benchmarks)."""
        if self.device.type != "cpu":
            raise ValueError("random_actions draws on the host: use it with device='cpu'")
        return torch.from_numpy(self.games.sample_legal(generator))

    def __repr__(self) -> str:
        return (
            f"TorchGames({self.num_envs}, {self.variant.name!r}, device={str(self.device)!r}, "
            f"observation={self.observation_mode!r}, autoreset={self.autoreset!r})"
        )
