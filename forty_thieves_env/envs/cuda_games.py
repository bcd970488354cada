"""The batch engine on a GPU: :class:`CudaGames`, the device-resident twin of :class:`~.batch.BatchGames`.

A :class:`CudaGames` keeps every array of a batch in the GPU's memory and steps all games in
one CUDA kernel, one game a thread, with the CPU kernels' own per-game code
(:mod:`.cuda_kernels`): same options, same deals from the same seeds, same observations,
masks, rewards, flags and autoresets. A host :class:`~.batch.BatchGames` does what needs
Python: it checks the options, seeds the games' deal generators and runs the resets that
take a seed or a position, after which everything is uploaded; from then on the device
arrays are the batch, and autoresets deal from the device copies of the generators
(``gens``) and of the ``deals=`` pool.

The arrays keep :class:`~.batch.BatchGames`' names, shapes and dtypes (numba device arrays,
each with ``__cuda_array_interface__``: ``torch.as_tensor(games.obs, device="cuda")`` wraps
one without a copy). Kernels are launched on the default stream, after which a read of the
arrays on that stream (torch's default) sees the results; :meth:`CudaGames.synchronize`
waits for them on the host.

Needs the ``cuda`` extra (numba-cuda) and an NVIDIA GPU with its driver; without them the
constructor says which is missing. It imports neither gymnasium nor torch.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.checks import check_actions, check_int
from ..engine.variants import Variant
from ..text.errors import ResetNeededError
from .batch import BatchGames
from .batch_kernels import F_TERMINATED, F_TRUNCATED
from .extras import install_line
from .options import EnvOptions

#: What the missing-extra error says to run.
INSTALL_HINT = install_line("cuda")


def require_cuda(device: int = 0) -> Any:
    """``numba.cuda``, once it is known to reach GPU ``device``; a one-line error otherwise.

    Raises:
        ImportError: numba-cuda is not installed (the ``cuda`` extra).
        RuntimeError: no CUDA driver or no GPU, or no GPU ``device``.
    """
    if importlib.util.find_spec("numba_cuda") is None:
        raise ImportError(f"CudaGames needs numba-cuda, which is not installed: {INSTALL_HINT}")
    from numba import cuda

    if not cuda.is_available():
        raise RuntimeError("CudaGames needs an NVIDIA GPU and its CUDA driver: numba-cuda finds none here")
    if not 0 <= device < len(cuda.gpus):
        raise RuntimeError(f"CudaGames: no GPU {device}; this machine has {len(cuda.gpus)} (0..{len(cuda.gpus) - 1})")
    return cuda


class CudaDevice:
    """The few device operations :class:`CudaGames` makes, on GPU ``index`` with numba-cuda.

    Kept apart so that the class's own logic (which array goes where, when) can be tested
    on a machine without a GPU, with a CPU stand-in that runs the same per-game code.
    """

    def __init__(self, index: int = 0) -> None:
        self.cuda = require_cuda(index)
        self.index = index
        from . import cuda_kernels  # compiles nothing yet: a kernel compiles at its first launch

        self.kernels = cuda_kernels

    def context(self) -> Any:
        """A ``with`` block in which allocations and launches go to this GPU."""
        return self.cuda.gpus[self.index]

    def to_device(self, host: np.ndarray) -> Any:
        return self.cuda.to_device(host)

    def upload(self, dev: Any, host: np.ndarray) -> None:
        dev.copy_to_device(host)

    def download(self, dev: Any, host: np.ndarray) -> None:
        dev.copy_to_host(host)

    def is_device_array(self, x: object) -> bool:
        return hasattr(x, "__cuda_array_interface__")

    def as_array(self, x: object) -> Any:
        """A numba view of ``x`` (anything with ``__cuda_array_interface__``), no copy; a
        numba device array itself (no new view: launches take it as it is)."""
        if getattr(x, "__cuda_ndarray__", False):
            return x
        return self.cuda.as_cuda_array(x)

    def launch(self, name: str, n: int, *args: Any) -> None:
        """Launch kernel ``name`` of :mod:`.cuda_kernels` over ``n`` games (one thread each)."""
        k = self.kernels
        getattr(k, name)[k.blocks(n), k.THREADS](*args)

    def synchronize(self) -> None:
        self.cuda.synchronize()


class CudaGames:
    """``num_envs`` games of one variant, stepped on a GPU, one game a thread.

    Behaves as :class:`~.batch.BatchGames` made with the same arguments (its every option,
    autoreset mode, deal pool and seed), with the batch's arrays on the GPU: ``states, masks,
    obs, obs_lay, games, ep_return, rewards, flags, final_obs, final_masks, final_games,
    final_return, gens`` (numba device arrays; names, shapes and dtypes as in BatchGames).

    Args:
        num_envs: ``N``.
        variant: A preset name, :class:`~forty_thieves_env.engine.variants.Variant` or
            :class:`~.options.EnvOptions`, with ``options`` as for BatchGames.
        max_episode_steps: Truncate an episode after this many steps (``None``: never).
        autoreset: ``"next_step"`` or ``"same_step"``.
        device: The GPU's index.

    With ``mask_in_observation`` and ``observation="flat"``, each row of ``obs`` ends with the
    game's mask (as BatchGames' do): one more launch after a step or reset copies it there.

    Raises:
        ImportError, RuntimeError: no numba-cuda, or no GPU (see :func:`require_cuda`).
        ValueError: ``illegal_action="raise"``, which needs a check on the host every step.
    """

    def __init__(
        self,
        num_envs: int,
        variant: str | Variant | EnvOptions = "classic",
        *,
        max_episode_steps: int | None = None,
        autoreset: str = "next_step",
        device: int = 0,
        **options: object,
    ) -> None:
        self.device = check_int(device, "device", 0)
        dev = self._dev = self._make_device(self.device)  # fails first, without a GPU
        host = self.host = BatchGames(
            num_envs, variant, max_episode_steps=max_episode_steps, autoreset=autoreset, **options
        )
        if host.illegal_action == "raise":
            raise ValueError(
                "CudaGames cannot raise on an illegal action (that needs a host check each step): use "
                'illegal_action="penalize" or "terminate", or BatchGames'
            )
        self.num_envs = host.num_envs
        self.n_actions = host.n_actions
        self.variant = host.variant
        self.options = host.options
        self.observation_mode = host.observation_mode
        self.layout = host.layout
        self.obs_size = host.obs_size
        self.autoreset = host.autoreset
        self.max_episode_steps = host.max_episode_steps
        self.started = False
        with dev.context():
            self.cfg = dev.to_device(host.cfg)
            self.spec = dev.to_device(host.spec)
            self.params = dev.to_device(host.params)
            self._actions = dev.to_device(host.actions)  # where host actions are uploaded
            #: The batch arrays on the device, in the order of :data:`.batch_kernels.BUFS`.
            self.bufs = tuple(dev.to_device(a) for a in host.bufs)
        (
            self.states,  # (N, size) int8
            self.masks,  # (N, n_actions) bool
            self.obs,  # (N * obs_size,) int8, laid out by obs_lay
            self.obs_lay,  # (O_LEN, 2) int64
            self.games,  # (N, G_LEN) int64
            self.ep_return,  # (N,) float64
            self.rewards,  # (N,) float64
            self.flags,  # (F_LEN, N) bool
            self.final_obs,  # (N, obs_size) int8 with same_step autoreset, else (0, obs_size)
            self.final_masks,  # (N, n_actions) bool, or (0, n_actions)
            self.final_games,  # (N, G_LEN) int64, or (0, G_LEN)
            self.final_return,  # (N,) float64, or (0,)
            self.decks,  # (N, 104) int8: the resets' scratch
            self.gens,  # (N, ST_LEN) uint64: each game's deal generator
            self.deal_pool,  # (P,) int64: the deals= pool (empty: the training range)
        ) = self.bufs

    @staticmethod
    def _make_device(index: int) -> CudaDevice:
        return CudaDevice(index)

    @property
    def num_games(self) -> int:
        """Alias of :attr:`num_envs`, kept for code written before."""
        return self.num_envs

    @property
    def terminated(self) -> Any:
        """``(N,) bool`` device view: the episode ended at the last step."""
        return self.flags[F_TERMINATED]

    @property
    def truncated(self) -> Any:
        """``(N,) bool`` device view: the time limit ended the episode at the last step."""
        return self.flags[F_TRUNCATED]

    # ----- moving the batch between host and device -------------------------------------
    def _upload(self) -> None:
        with self._dev.context():
            for dev, host in zip(self.bufs, self.host.bufs, strict=True):
                self._dev.upload(dev, host)

    def to_host(self) -> BatchGames:
        """Copy the device arrays into the host :class:`~.batch.BatchGames` and return it
        (a snapshot for text, positions and checks: changing it changes nothing here)."""
        with self._dev.context():
            for dev, host in zip(self.bufs, self.host.bufs, strict=True):
                self._dev.download(dev, host)
        return self.host

    def synchronize(self) -> None:
        """Wait until the kernels launched so far have finished."""
        with self._dev.context():
            self._dev.synchronize()

    # ----- reset, step, sample --------------------------------------------------------------
    def reset(
        self,
        seed: int | Sequence[int | None] | None = None,
        deal: int | Sequence[int] | np.ndarray | None = None,
        which: np.ndarray | None = None,
        position: object = None,
    ) -> None:
        """Deal new games, as :meth:`.batch.BatchGames.reset` (same arguments, same deals).

        Without a seed or a position, once the batch has started, the reset runs on the
        device (the pre-drawn next deals, or ``deal``); otherwise the host batch is brought
        up to date, reset, and uploaded.
        """
        host = self.host
        if self.started and seed is None and position is None:
            which, numbers = host.check_reset(None, deal, which, None)  # raises before anything changes
            given = np.zeros(0, dtype=np.int64) if numbers is None else numbers
            with self._dev.context():
                args = (self.cfg, self.params, self._dev.to_device(which), self._dev.to_device(given))
                self._dev.launch("reset_kernel", self.num_envs, *args, self.bufs)
                self._mask_rows()
            return
        host.check_reset(seed, deal, which, position)  # before the download: a refused reset costs nothing
        if self.started:
            self.to_host()  # the games a partial reset leaves alone, and the generators, as they are now
        host.reset(seed=seed, deal=deal, which=which, position=position)
        self._upload()
        self.started = True

    def step(self, actions: Any) -> None:
        """Step every game with ``actions`` (``(N,)`` integers): a device array, or anything
        with ``__cuda_array_interface__`` (a torch CUDA ``int64`` tensor: no copy), or host
        integers (checked and uploaded). Results land in the device arrays."""
        if not self.started:
            raise ResetNeededError("step() before the first reset(): call reset() first")
        a = self._device_vector(actions, np.int64, "actions")
        with self._dev.context():
            self._dev.launch("step_kernel", self.num_envs, self.cfg, self.spec, self.params, a, self.bufs)
            self._mask_rows()

    def _mask_rows(self) -> None:
        """Flat rows that carry the mask: copy every game's mask into its row (in the device
        context). Nothing to do otherwise."""
        if self.host._mask_rows:
            self._dev.launch("mask_rows_kernel", self.num_envs, self.masks, self.obs, self.obs_lay)

    def sample_legal(self, seed_or_uniforms: int | Any, out: Any = None) -> Any:
        """A uniformly random legal action of every game (0 for a game with none), written into
        the device array ``out`` (``(N,) int64``; a new one when ``None``), which is returned.

        ``seed_or_uniforms``: an integer seed (each game's number in ``[0, 1)`` is hashed from
        it and the game's index: give a new seed for new actions), or ``(N,) float64``
        uniform numbers (device or host), from which the actions are those that
        :meth:`.batch.BatchGames.sample_legal` picks for the same numbers. The arguments come
        in that method's order: the randomness first, the output second.
        """
        if not self.started:
            raise ResetNeededError("sample_legal() before the first reset(): call reset() first")
        if out is None:
            with self._dev.context():
                out = self._dev.to_device(np.zeros(self.num_envs, dtype=np.int64))
        dst = self._device_vector(out, np.int64, "out", upload=False)
        with self._dev.context():
            if isinstance(seed_or_uniforms, (int, np.integer)) and not isinstance(seed_or_uniforms, bool):
                seed = np.int64(check_int(seed_or_uniforms, "seed", -(2**63), 2**63 - 1))
                self._dev.launch("sample_seeded_kernel", self.num_envs, self.masks, self.games, seed, dst)
            else:
                u = self._device_vector(seed_or_uniforms, np.float64, "uniforms")
                self._dev.launch("sample_kernel", self.num_envs, self.masks, self.games, u, dst)
        return out

    def _device_vector(self, x: Any, dtype: type, name: str, upload: bool = True) -> Any:
        """``x`` as an ``(N,)`` device array of ``dtype``: a view of a device array (which must
        already be one), or host values checked and uploaded (with ``upload``)."""
        n = self.num_envs
        if self._dev.is_device_array(x):
            with self._dev.context():
                arr = self._dev.as_array(x)
            if arr.shape != (n,) or np.dtype(arr.dtype) != np.dtype(dtype):
                want = f"an ({n},) {np.dtype(dtype)} device array"
                raise ValueError(f"{name} must be {want}, got shape {arr.shape}, dtype {arr.dtype}")
            return arr
        if not upload:
            raise TypeError(f"{name} must be a device array (with __cuda_array_interface__), got {type(x).__name__}")
        if dtype is np.int64:
            host = check_actions(x, n, name)
        else:
            host = np.asarray(x, dtype=dtype)
            if host.shape != (n,):
                raise ValueError(f"{name} must be {n} numbers, got shape {host.shape}")
        with self._dev.context():
            if dtype is np.int64:
                self._dev.upload(self._actions, host)
                return self._actions
            return self._dev.to_device(host)
