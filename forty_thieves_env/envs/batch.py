"""The batch engine: N games of one variant stepped, reset and encoded in one compiled call.

:class:`BatchGames` owns the arrays of a batch (their layout is in :mod:`.batch_kernels`)
and calls the kernels; it is the machinery under the native vector environments
(:mod:`.vector` for Gymnasium, :mod:`.sb3` for stable-baselines3). It imports neither
gymnasium nor torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext

import numpy as np

from ..engine.cards import N_CARDS
from ..engine.checks import check_actions
from ..engine.config import config_for
from ..engine.deals import MAX_ENV_DEAL, check_deal_numbers
from ..engine.layout import Cfg
from ..engine.pcg64 import ST_LEN, check_range, export_state, import_state
from ..engine.rules import cards_home, legal_mask
from ..engine.variants import Variant
from ..jitcache import compile_notice
from ..text.errors import IllegalMoveError, ResetNeededError, action_space_error
from ..text.explain import why_illegal
from ..text.notation import format_move
from .batch_kernels import F_LEN, F_TERMINATED, F_TRUNCATED, reset_batch, step_batch_parallel, step_games
from .observation import MASK_KEY, encode_obs, obs_place, observation_lay, observation_layout
from .options import AUTORESETS, EnvOptions, check_batch, check_position, check_reset_deal, check_seeds
from .sampling import DEAL_RANGE, draw_next_deals, new_rng, sample_counted
from .step import (
    G_CARDS,
    G_DEAL,
    G_ELAPSED,
    G_LEGAL,
    G_LEN,
    G_MOVES,
    G_NEXT_DEAL,
    G_PENDING,
    P_ORACLE,
    kernel_params,
)

#: Below this many games a step runs in the calling thread: waking numba's worker threads
#: costs microseconds on an idle machine and milliseconds on a busy one, more than the
#: work of a small batch (about a microsecond per game).
PARALLEL_MIN_GAMES = 512
#: Games per work item of a parallel step (see :meth:`BatchGames._run`): 64 games' per-step
#: flags fill one cache line, so that two threads seldom write the same line.
PARALLEL_CHUNK = 64
#: The kernels this process has called once (compiled or loaded): later calls need no notice.
_WARM: set[object] = set()


class BatchGames:
    """``num_envs`` games of one variant, stepped in one compiled call (no gymnasium needed).

    Every game has its own random generator for its deals, seeded as Gymnasium's
    ``SyncVectorEnv`` seeds its sub-environments (``seed + i`` for game ``i``), and draws
    deal numbers from it exactly as :class:`~.env.FortyThievesEnv` does; the number of
    each game's next deal is drawn in advance (``games[:, G_NEXT_DEAL]``), and the kernel
    draws the following one from the game's generator state (:attr:`gens`, see
    :mod:`forty_thieves_env.engine.pcg64`) when it autoresets, without Python. A seed
    therefore fixes every deal of every game, and game ``i`` plays the same deals as a
    single environment reset with ``seed + i``.

    Args:
        num_envs: ``N``.
        variant: A preset name or :class:`~forty_thieves_env.engine.variants.Variant`, with
            ``options`` (``observation``, ``mask_in_observation``, ``reward``,
            ``illegal_action``, ``deals``, ``winnable_only``, variant options: see
            :meth:`.options.EnvOptions.make`); or an :class:`~.options.EnvOptions` already
            made (then no ``options``). With ``mask_in_observation``, :meth:`observations`
            adds the mask to a dict (``"action_mask"``, a view of the masks as ``int8``) and
            the ``flat`` rows of ``obs`` end with it (``obs_size`` = fields + ``n_actions``;
            the step writes it there, and the live rows' mask part is brought up to date
            when they are read after a step that handed out fresh rows).
            ``illegal_action="raise"`` is checked in Python, before any game moves.
        max_episode_steps: Truncate an episode after this many steps (``None``: never).
        autoreset: ``"next_step"`` or ``"same_step"`` (see :mod:`.batch_kernels`).
        num_threads: numba threads for a step (``None``: numba's current setting).
    """

    def __init__(
        self,
        num_envs: int,
        variant: str | Variant | EnvOptions = "classic",
        *,
        max_episode_steps: int | None = None,
        autoreset: str = "next_step",
        num_threads: int | None = None,
        **options: object,
    ) -> None:
        check_batch(num_envs, max_episode_steps, autoreset, num_threads)
        opts = self.options = EnvOptions.of(variant, **options)
        n = self.num_envs = int(num_envs)
        self.variant = opts.variant
        self.cfg = config_for(self.variant)
        self.n_actions = int(self.cfg[Cfg.N_ACTIONS])
        self.observation_mode = observation = opts.observation
        self.reward = opts.reward
        self.spec = self.reward.spec()
        self.illegal_action = opts.illegal_action
        self.deals = opts.deals
        self.winnable_only = opts.winnable_only
        self.max_episode_steps = max_episode_steps
        self.autoreset = autoreset
        self.num_threads = num_threads
        self.mask_in_observation = opts.mask_in_observation
        self.layout = observation_layout(self.variant, observation, opts.mask_in_observation)
        obs_size = self.obs_size = max(stop for _, stop, _ in self.layout.values())
        self.obs_lay = observation_lay(self.layout, n, self.observation_mode != "flat", self.n_actions)
        # Flat rows that end with the mask: the step copies each game's mask into a row's tail.
        self._mask_rows = MASK_KEY in self.layout
        self._mask_start = self.layout[MASK_KEY][0] if self._mask_rows else obs_size
        self._tails_stale = False  # the live rows' mask part is behind the masks (see _live_tails)

        self.params = kernel_params(opts, AUTORESETS.index(autoreset), max_episode_steps or 0)
        # The kernels draw deals from this list when it is not empty (see engine/pcg64.py).
        self.deal_pool = np.zeros(0, dtype=np.int64) if self.deals is None else self.deals.astype(np.int64)
        check_range(*DEAL_RANGE, self.deal_pool.shape[0])

        size = int(self.cfg[Cfg.SIZE])
        self.states = np.zeros((n, size), dtype=np.int8)
        self.masks = np.zeros((n, self.n_actions), dtype=np.bool_)
        self.obs = np.zeros(n * obs_size, dtype=np.int8)
        self._obs_rows = self.obs.reshape(n, obs_size)  # the flat mode's (N, F) view, one object
        self.games = np.zeros((n, G_LEN), dtype=np.int64)
        self.ep_return = np.zeros(n, dtype=np.float64)
        self.rewards = np.zeros(n, dtype=np.float64)
        self.flags = np.zeros((F_LEN, n), dtype=np.bool_)
        self.actions = np.zeros(n, dtype=np.int64)
        self.decks = np.zeros((n, N_CARDS), dtype=np.int8)
        # Last observation, mask and counters of the games a SAME_STEP step reset.
        same = autoreset == "same_step"
        self.final_obs = np.zeros((n if same else 0, obs_size), dtype=np.int8)
        self.final_masks = np.zeros((n if same else 0, self.n_actions), dtype=np.bool_)
        self.final_games = np.zeros((n if same else 0, G_LEN), dtype=np.int64)
        self.final_return = np.zeros(n if same else 0, dtype=np.float64)
        # What step(emit=True) hands out (filled by the kernel), and the empty stand-ins otherwise.
        self.out_obs = np.zeros(0, dtype=np.int8)
        self.out_masks = np.zeros((0, self.n_actions), dtype=np.bool_)
        self.out_info = np.zeros((3, 0), dtype=np.int64)
        self._no_outputs = (self.out_obs, self.out_masks.reshape(-1), self.out_info)
        if self._mask_rows:  # a step writes every game's mask into its live row's tail
            self._no_outputs = (self.out_obs, self.obs.view(np.bool_), self.out_info)
        # Each game's deal generator (numpy's PCG64 state, drawn from by the kernels).
        self.gens = np.zeros((n, ST_LEN), dtype=np.uint64)
        self.seeded = False  # whether seed_rngs has given every game a generator
        self.seeds: list[int | None] = [None] * n  # what each game's generator was seeded with
        self._parallel = n >= PARALLEL_MIN_GAMES and num_threads != 1
        #: The arrays the kernels step and reset, in the order of :data:`.batch_kernels.BUFS`
        #: (allocated once: the tuple stays valid).
        self.bufs = (
            self.states,
            self.masks,
            self.obs,
            self.obs_lay,
            self.games,
            self.ep_return,
            self.rewards,
            self.flags,
            self.final_obs,
            self.final_masks,
            self.final_games,
            self.final_return,
            self.decks,
            self.gens,
            self.deal_pool,
        )
        self.started = False  # whether every game has been reset once (a step before that is refused)

    # ----- views --------------------------------------------------------------------
    def field(self, name: str, source: np.ndarray | None = None, buffer: np.ndarray | None = None) -> np.ndarray:
        """``(N, *shape)`` view of observation field ``name``: of the live buffer ``obs`` (or
        ``buffer``, laid out alike, e.g. :attr:`out_obs`), or of ``source``, an ``(n, F)``
        array of flat observation rows."""
        start, stop, shape = self.layout[name]
        if source is not None:
            return source[:, start:stop].reshape(source.shape[0], *shape)
        n = self.num_envs
        if buffer is None and self._tails_stale:
            self._live_tails()
        buf = self.obs if buffer is None else buffer
        if self.observation_mode == "flat":
            return buf.reshape(n, self.obs_size)[:, start:stop].reshape(n, *shape)
        base = n * start
        return buf[base : base + n * (stop - start)].reshape(n, *shape)

    def flat_rows(self) -> np.ndarray:
        """``(N, F)``: every game's observation as a flat row (a copy in dict modes)."""
        if self.observation_mode == "flat":
            self._live_tails()
            return self._obs_rows
        return np.concatenate([self.field(name).reshape(self.num_envs, -1) for name in self.layout], axis=1)

    def observations(
        self,
        source: np.ndarray | None = None,
        copy: bool = True,
        buffer: np.ndarray | None = None,
        masks: np.ndarray | None = None,
    ) -> np.ndarray | dict[str, np.ndarray]:
        """Batched observations: of the live buffer (or ``buffer``, laid out alike), or of the
        flat rows ``source``; the rows in ``"flat"`` mode, else a dict of :meth:`field`
        arrays (each one contiguous block of the buffer); copies, or views with ``copy=False``
        (of the live buffer: overwritten by the next step).

        With ``mask_in_observation``, ``masks`` (``(n, n_actions) bool``) are the masks that go
        with ``source`` or ``buffer`` (the live masks go with the live buffer): a dict's
        ``"action_mask"`` is them viewed as ``int8`` (copied with ``copy``), and they are
        written into the mask part of the rows of ``source`` (which the kernels leave
        unwritten; ``buffer``'s rows have theirs).
        """
        if self.mask_in_observation and masks is None and (source is not None or buffer is not None):
            raise ValueError("mask_in_observation: give the masks that go with source or buffer")
        if self.observation_mode == "flat":
            if source is None:
                if buffer is None:
                    self._live_tails()
                    source = self._obs_rows
                else:
                    source = buffer.reshape(self.num_envs, self.obs_size)
                return source.copy() if copy else source
            rows = source.copy() if copy else source
            if self._mask_rows:
                rows[:, self._mask_start :] = masks.view(np.int8)  # type: ignore[union-attr]
            return rows
        out = {name: self.field(name, source, buffer) for name in self.layout}
        if self.mask_in_observation:
            out[MASK_KEY] = (self.masks if masks is None else masks).view(np.int8)
        if copy:
            return {name: v.copy() for name, v in out.items()}
        return out

    def final_observations(self, idx: np.ndarray) -> list[np.ndarray | dict[str, np.ndarray]]:
        """The last observation of each game in ``idx`` that a same-step reset ended, one per game."""
        last = self.observations(self.final_obs[idx], masks=self.final_masks[idx])
        if isinstance(last, np.ndarray):
            return list(last)
        return [{name: v[k] for name, v in last.items()} for k in range(len(idx))]

    def _live_tails(self) -> None:
        """Bring the mask part of the live flat rows up to date (``mask_in_observation``): a step
        that handed out fresh rows wrote the masks there, not here; a reset writes none."""
        if self._tails_stale:
            self._obs_rows[:, self._mask_start :] = self.masks.view(np.int8)
            self._tails_stale = False

    @property
    def num_games(self) -> int:
        """Alias of :attr:`num_envs`, kept for code written before."""
        return self.num_envs

    @property
    def terminated(self) -> np.ndarray:
        return self.flags[F_TERMINATED]

    @property
    def truncated(self) -> np.ndarray:
        return self.flags[F_TRUNCATED]

    # ----- deals ----------------------------------------------------------------------
    def _refill(self, idx: Sequence[int] | np.ndarray) -> None:
        draw_next_deals(self.gens, self.deal_pool, self.games, np.asarray(idx, dtype=np.int64))

    def generators(self) -> tuple[np.random.Generator, ...]:
        """Each game's deal generator, as a ``numpy.random.Generator`` in its present state.

        Snapshots: the batch keeps the generators' states in :attr:`gens`, so drawing from
        these does not change the games' deals. Each is one draw ahead of a single
        environment seeded alike, the draw of the game's next deal (``G_NEXT_DEAL``).
        """
        if not self.seeded:
            self.seed_rngs(None)
        return tuple(import_state(row) for row in self.gens)

    def seed_rngs(self, seed: int | Sequence[int | None] | None) -> None:
        """(Re)seed the games' generators: ``seed + i`` for game ``i``, a list of N seeds, or ``None``.

        A ``None`` seed (for all games, or one entry of a list) keeps the game's generator, as
        ``SyncVectorEnv`` leaves a sub-environment's; games without one get an unseeded one.
        A reseeded game's next deal is drawn again from its new generator.
        """
        seeds = check_seeds(seed, self.num_envs)
        changed = [i for i, s in enumerate(seeds) if not self.seeded or s is not None]
        for i in changed:
            export_state(new_rng(seeds[i]), self.gens[i])
            self.seeds[i] = seeds[i]
        self.seeded = True
        self._refill(changed)

    def reset(
        self,
        seed: int | Sequence[int | None] | None = None,
        deal: int | Sequence[int] | np.ndarray | None = None,
        which: np.ndarray | None = None,
        position: object = None,
    ) -> None:
        """Deal new games: each game's pre-drawn next deal, or ``deal`` (one number or N).

        Args:
            seed: see :meth:`seed_rngs`.
            deal: deal numbers to play instead of drawing (one for all, or one per game).
            which: ``(N,) bool``: reset only these games (default all).
            position: start from this position instead (text or ``GameState``, one for all
                or a list of N); the game's deal number is then 0 and nothing is drawn.
        """
        which, numbers = self.check_reset(seed, deal, which, position)
        if position is not None:
            arrays = self._check_positions(position, which)
            self.seed_rngs(seed)
            self._load_positions(arrays, which)
            return
        self.seed_rngs(seed)
        if deal is None:
            numbers = self.games[:, G_NEXT_DEAL].copy()
            drawn = np.flatnonzero(which)
        else:
            drawn = np.zeros(0, dtype=np.int64)
        with compile_notice("the batch reset kernel") if reset_batch not in _WARM else nullcontext():
            reset_batch(self.cfg, self.params, which, numbers, self.bufs)
        _WARM.add(reset_batch)  # it also cleared the games' rewards and flags
        self._refill(drawn)
        self._tails_stale = self._mask_rows  # the reset kernel writes no row's mask part
        self._live_tails()
        self.started = True

    def check_reset(
        self,
        seed: object = None,
        deal: object = None,
        which: np.ndarray | None = None,
        position: object = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Check :meth:`reset`'s arguments (positions aside) before anything changes.

        Returns:
            ``which`` as an ``(N,) bool`` array, and the ``(N,) int64`` deal numbers ``deal``
            gives (``None`` when it gives none).

        Raises:
            TypeError, ValueError: a bad seed, ``which`` or deal; ``deal`` with ``position``;
                a first reset of only some games.
        """
        n = self.num_envs
        # Everything is checked before anything changes: a refused reset leaves every game as it was.
        check_seeds(seed, self.num_envs)
        if which is None:
            which = np.ones(n, dtype=np.bool_)
        elif not isinstance(which, np.ndarray) or which.dtype != np.bool_ or which.shape != (n,):
            raise ValueError(f"which must be a ({n},) bool array, got {which!r}")
        if not self.started and not which.all():
            raise ValueError("the first reset must reset every game (which=None or all true)")
        if deal is None:
            return which, None
        if position is not None:
            raise ValueError("give either a deal or a position, not both")
        if not isinstance(deal, (Sequence, np.ndarray)) or isinstance(deal, str) or np.ndim(deal) == 0:
            return which, np.full(n, check_reset_deal(deal), dtype=np.int64)  # one number for every game
        numbers = check_deal_numbers(deal, "options['deal']", MAX_ENV_DEAL)
        if numbers.shape != (n,):
            raise ValueError(f"options['deal'] must be one deal number or num_envs={n} of them, got {len(numbers)}")
        return which, numbers

    def _check_positions(self, position: object, which: np.ndarray) -> dict[int, np.ndarray]:
        """The state array of each game of ``which`` from ``position`` (one for all, or a list of N), checked."""
        one = isinstance(position, str) or not isinstance(position, Sequence)
        positions = [position] * self.num_envs if one else list(position)  # type: ignore[arg-type]
        if len(positions) != self.num_envs:
            raise ValueError(
                f"options['position'] must be one position or num_envs={self.num_envs} of them, got {len(positions)}"
            )
        return {int(i): check_position(self.variant, positions[i]) for i in np.flatnonzero(which)}

    def _load_positions(self, arrays: dict[int, np.ndarray], which: np.ndarray) -> None:
        oracle = self.params[P_ORACLE]
        for i, array in arrays.items():
            s = self.states[i]
            s[:] = array
            g = self.games[i]
            g[G_DEAL] = g[G_MOVES] = g[G_ELAPSED] = g[G_PENDING] = 0
            g[G_LEGAL] = legal_mask(s, self.cfg, self.masks[i])
            encode_obs(s, self.cfg, self.obs, obs_place(self.obs_lay, i), oracle)
            g[G_CARDS] = cards_home(s)
        self.ep_return[which] = 0.0
        self.flags[:, which] = False
        self.rewards[which] = 0.0
        self._tails_stale = self._mask_rows
        self._live_tails()
        self.started = True

    def step(self, actions: np.ndarray, emit: bool = False, emit_obs: bool = True) -> None:
        """Step every game with ``actions`` (``(N,)`` ints); results land in the arrays.

        With ``emit``, the kernel also writes fresh arrays of what a step returns, for the
        caller to keep: :attr:`out_masks` ``(N, n)``, :attr:`out_info` ``(3, N)`` (deal,
        moves, cards home) and, with ``emit_obs``, :attr:`out_obs` (the observation buffer,
        laid out as ``obs``; see :meth:`observations`). When the ``flat`` rows carry the
        mask (``mask_in_observation``), :attr:`out_masks` is the ``bool`` view of the mask
        part of the rows of :attr:`out_obs` (of the live rows, without ``emit_obs``): the
        masks are written once, there.
        """
        n = self.num_envs
        try:
            checked = check_actions(actions, n)  # integers only, one per game: nothing broadcast or truncated
        except TypeError as err:
            raise TypeError(f"{err}; the action space of each game is Discrete({self.n_actions})") from None
        # Out of the action space is a caller's bug in every mode. One reduction over the batch, the
        # cheapest check measured (~1 us for 64 or 4096 games): as unsigned, a negative action is huge too.
        if np.maximum.reduce(checked.view(np.uint64)) >= self.n_actions:
            i = int(np.flatnonzero(checked.view(np.uint64) >= self.n_actions)[0])
            shown = int(actions[i])  # as given: check_actions turned one beyond int64 into -1
            raise action_space_error(shown, self.n_actions, self.variant.name, game=i)
        if not self.started:
            raise ResetNeededError("step() before the first reset(): call reset() first")
        if self.illegal_action == "raise":
            self._raise_if_illegal(checked)
        if emit:
            self.out_obs = np.empty(n * self.obs_size if emit_obs else 0, dtype=np.int8)
            self.out_info = np.empty((3, n), dtype=np.int64)
            if self._mask_rows:  # the masks go into the tails of the rows handed out (or the live ones)
                rows = self.out_obs if emit_obs else self.obs
                self.out_masks = rows.reshape(n, self.obs_size)[:, self._mask_start :].view(np.bool_)
                outs = (self.out_obs, rows.view(np.bool_), self.out_info)
                self._tails_stale = emit_obs
            else:
                self.out_masks = np.empty((n, self.n_actions), dtype=np.bool_)
                outs = (self.out_obs, self.out_masks.reshape(-1), self.out_info)
        else:
            outs = self._no_outputs
            self._tails_stale = False
        a = self.actions
        a[:] = checked
        if self._parallel:
            kernel, args = step_batch_parallel, (self.cfg, self.spec, self.params, a, self.bufs, outs, PARALLEL_CHUNK)
        else:
            kernel, args = step_games, (0, a.shape[0], self.cfg, self.spec, self.params, a, self.bufs, outs)
        if kernel in _WARM:
            self._run(kernel, *args)
            return
        with compile_notice("the batch step kernel"):  # the first call of this process may compile it
            self._run(kernel, *args)
        _WARM.add(kernel)

    def _run(self, kernel, *args) -> None:
        """Call a kernel; a parallel one hands its chunks of :data:`PARALLEL_CHUNK` games to
        the threads one at a time.

        numba's threads split a loop into one block each by default, so a thread that the
        OS preempts (a busy machine) holds up the whole step; taking chunks in turn lets the
        others take over its share.
        """
        if not self._parallel:
            kernel(*args)
            return
        import numba

        before = numba.get_num_threads()
        if self.num_threads is not None:
            numba.set_num_threads(min(self.num_threads, numba.config.NUMBA_NUM_THREADS))
        try:
            with numba.parallel_chunksize(1):
                kernel(*args)
        finally:
            if self.num_threads is not None:
                numba.set_num_threads(before)

    def _raise_if_illegal(self, a: np.ndarray) -> None:
        live = self.games[:, G_PENDING] == 0
        in_range = (a >= 0) & (a < self.n_actions)
        legal = in_range & self.masks[np.arange(self.num_envs), np.clip(a, 0, self.n_actions - 1)]
        bad = np.flatnonzero(live & ~legal)
        if bad.size:  # every action is in range here (step refused the others)
            i = int(bad[0])
            act = int(a[i])
            why = why_illegal(self.states[i], self.cfg, act)
            raise IllegalMoveError(f"game {i}: illegal move {format_move(self.variant, act)}: {why}")

    def sample_legal(self, rng: np.random.Generator, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per game (0 where none is legal), in one call,
        written into ``out`` (``(N,) int64``; a new array when ``None``), which is returned.

        ``rng`` draws one uniform number per game. The randomness comes first and the output
        second, as in :meth:`.cuda_games.CudaGames.sample_legal`.
        """
        out = np.zeros(self.num_envs, dtype=np.int64) if out is None else out
        u = rng.random(self.num_envs)
        sample_counted(self.masks, self.games, u, out)
        return out
