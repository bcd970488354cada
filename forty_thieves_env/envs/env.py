"""The Gymnasium environment: one game of the Forty Thieves family per episode."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, NamedTuple, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from ..engine.checks import check_action, check_int
from ..engine.config import config_for
from ..engine.deals import MAX_ENV_DEAL, deal_layout, shuffled_pack
from ..engine.layout import Cfg
from ..engine.rules import cards_home, legal_mask
from ..engine.state_check import check_state
from ..engine.variants import Variant
from ..jitcache import compile_notice
from ..text.errors import IllegalMoveError, action_space_error
from ..text.explain import why_illegal
from ..text.game import GameState
from ..text.notation import format_move, parse_move
from ..text.position import format_position
from .observation import MASK_KEY, ObservationEncoder, observation_space
from .options import RENDER_MODES, EnvOptions, check_position, check_reset_deal
from .rewards import Reward
from .sampling import draw_deal
from .step import G_CARDS, G_LEGAL, G_LEN, G_MOVES, ST_ILLEGAL, ST_TERMINATED, ST_WON, kernel_params, step_one

__all__ = ["EnvState", "FortyThievesEnv"]

Observation = dict[str, np.ndarray] | np.ndarray
#: Whether this process has run the step kernel once (compiled or loaded from numba's cache).
_WARM = False


class EnvState(NamedTuple):
    """What :meth:`FortyThievesEnv.get_state` returns: enough for an exact restore."""

    array: np.ndarray  # (size,) int8 state array (a copy)
    deal: int
    moves: int


class FortyThievesEnv(gym.Env[Observation, np.int64]):
    """Forty Thieves (Napoleon at St Helena) and its family, one deal per episode.

    ## Description

    Two-deck patience: build all 104 cards onto eight foundations, ace to king in suit,
    from ten (or nine, or twelve) columns that build down, a stock turned one card at a
    time and its waste. The rules of every variant are in :mod:`forty_thieves_env.engine.rules`;
    the variants are :data:`forty_thieves_env.engine.variants.PRESETS` (one registered id each).

    ## Action Space

    ``Discrete(n)``: every move of the variant is one number, 112 in classic and 1192 in
    Josephine: ``0`` turns the stock (or redeals), ``1`` plays the waste's top card to a
    foundation, then come the waste to each column, each column to a foundation, and every
    move of ``1..K`` cards from one column to another (``K = 1`` with ``run_moves="none"``,
    else 13). The numbering is set out once, in the action codec
    (:mod:`forty_thieves_env.engine.actions`).

    :meth:`action_masks` (what sb3-contrib's ``MaskablePPO`` calls) and
    ``info["action_mask"]`` give the legal actions as a ``(n,) bool`` array; it is never
    all-False unless the episode has terminated. :meth:`action_for` and
    :meth:`describe_action` convert between actions and move text.

    ## Observation Space

    ``observation="dict"`` (default): a ``Dict`` of ``int8`` ``Box`` fields holding what a
    player sees, nothing more (``D`` = most cards a column can hold, 16 in classic; ``T``
    = stock size after the deal, 64 in classic):

    =============== ======= =================================================================
    key             shape   content
    =============== ======= =================================================================
    ``tableau``     (C, D)  columns, bottom card first; card code ``suit*13 + rank`` (suits
                            C S H D, rank 0 = ace), 52 = face-down card, 53 = empty slot
    ``waste``       (T,)    the waste right-aligned: ``waste[-1]`` is the playable top card;
                            53 pads the front
    ``foundations`` (8,)    height 0..13 of pile ``2*suit + k`` (pile ``2*suit`` is the higher)
    ``counts``      (2,)    ``[cards in the stock, redeals left]``
    =============== ======= =================================================================

    ``observation="flat"``: one ``(C*D + T + 10,) int8`` ``Box``, the four fields above
    flattened and concatenated in that order (for ``MlpPolicy``).
    ``observation="oracle"``: the ``Dict`` plus ``stock`` ``(T,)`` (stock cards, next to
    turn first, 53 after the last) and ``tableau_revealed`` ``(C, D)`` (face-down cards
    shown): perfect information, for planning research. See :mod:`.observation`.

    ``mask_in_observation=True`` adds the action mask, ``0``/``1`` ``int8``: the ``Dict``'s
    ``"action_mask"`` key (``Box(0, 1, (n,), int8)``, the ``int8`` view of
    ``info["action_mask"]``: no copy), or the last ``n`` entries of the ``flat`` row
    (:func:`~.observation.flat_mask_start`, :func:`~.observation.split_flat`).

    ## Rewards

    A :class:`~.rewards.Reward` object (``reward=`` a name or an instance):
    ``"foundation"`` (default): 1/104 per card reaching a foundation, so a win's cards sum
    to 1, plus 1.0 on the winning step; ``"win"``: 1 on the winning step, else 0;
    ``"score"``: 10 points per card home (the scored rule page's points, no clock). A
    refused action earns the reward's ``illegal`` value (-1/104, -0.01, -10).

    ## Starting State

    ``reset(seed=s)`` draws a deal number from ``np_random``, uniformly from ``deals`` when
    given, else from the training range 32000..2**31-1 (:data:`forty_thieves_env.engine.deals.TRAIN_RANGE`, apart
    from the evaluation splits 1..2000), and deals PySolFC's game of that number;
    ``options={"deal": n}`` plays deal ``n``; ``options={"position": text}`` starts from a
    position in the position format (see :mod:`forty_thieves_env.text.position`) of this variant.

    ## Episode End

    ``terminated`` when the game is won or no legal move is left (also on an illegal action
    with ``illegal_action="terminate"``); ``truncated`` only by the ``TimeLimit`` that each
    registered id carries (``max_episode_steps=1000``, far beyond a real game, to stop
    shuffling loops). Once an episode has terminated, :meth:`step` raises
    ``gymnasium.error.ResetNeeded`` (and changes nothing) until :meth:`reset`; so does a step
    before the first reset (docs/validation.md). ``info`` always holds ``deal`` (0 when started from a position),
    ``moves`` (legal moves played), ``cards_on_foundations``, ``won``, ``illegal_action``
    and ``action_mask``.

    ## Arguments

    Every argument is checked before anything is made (:mod:`forty_thieves_env.engine.checks`):
    flags must be bools, numbers integers (numpy ones too), choices one of their strings.

    * ``variant``: a preset name (``"classic"``, ``"josephine"``, ``"streets"``, ``"maria"``,
      ``"limited"``, ``"rank_and_file"``, ``"relaxed"``) or a :class:`~forty_thieves_env.engine.variants.Variant`
      (or an :class:`~.options.EnvOptions`, then with no other argument).
    * ``observation``: ``"dict"``, ``"flat"`` or ``"oracle"``.
    * ``mask_in_observation``: also put the action mask into the observation (default
      ``False``; see Observation Space).
    * ``reward``: ``"foundation"``, ``"win"``, ``"score"`` or a :class:`~.rewards.Reward`.
    * ``illegal_action``: what an in-space action outside the mask does (an action outside the action
      space, not an integer in ``[0, n)``, is a caller's bug: :class:`~forty_thieves_env.text.errors.ActionSpaceError`
      in every mode, a float or bool a ``TypeError``, the state unchanged). ``"penalize"`` (default, so
      that Gymnasium's ``check_env`` and unmasked agents can sample any action): the state
      is unchanged, the reward is the reward's ``illegal`` value and
      ``info["illegal_action"]`` is true. ``"raise"``: :class:`~forty_thieves_env.text.errors.IllegalMoveError`
      naming the move and why it is illegal, state unchanged. ``"terminate"``: as
      ``"penalize"`` but the episode ends.
    * ``deals``: the deal numbers (integers 1..2**63-1, as ``options={"deal": n}``) a
      reset draws from: a split name (``"test"``: 1..1000,
      ``"validation"``: 1001..2000, see :func:`forty_thieves_env.engine.deals.deal_split`) or a sequence of numbers.
    * ``winnable_only``: deal only deals that the solver proved winnable, from the variant's
      shipped set (:mod:`.winnable`: training deals, each with a winning line; a biased,
      easier subset). With ``deals`` it keeps the given deals that are in the set (an error
      if none is). Only the unmodified presets have sets, and variants that only relax
      one (more redeals, longer run moves) share it. ``options={"deal": n}`` still
      plays any deal.
    * ``render_mode``: ``None``, ``"ansi"`` (text) or ``"rgb_array"`` (``(H, W, 3) uint8``).
    * any :class:`~forty_thieves_env.engine.variants.Variant` option as a keyword (``redeals=1``,
      ``run_moves="supermove"``, ``auto_play_safe=True``, ...), overriding the preset.

    ```python
    env = gym.make("FortyThieves-v0", reward="win", run_moves="supermove")
    ```

    ## Version History

    * v0: Initial version.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # noqa: RUF012 (Gymnasium's convention)

    def __init__(self, variant: str | Variant | EnvOptions = "classic", **options: Any) -> None:
        # The arguments are checked in one place, EnvOptions.make (listed under "Arguments" above).
        opts = self.options = EnvOptions.of(variant, **options)
        self.variant: Variant = opts.variant
        self.cfg = config_for(self.variant)
        self.n_actions = int(self.cfg[Cfg.N_ACTIONS])
        self.observation_mode = opts.observation
        self.mask_in_observation = opts.mask_in_observation
        self.reward: Reward = opts.reward
        self.illegal_action = opts.illegal_action
        self.render_mode = opts.render_mode
        self.deals = opts.deals
        self.winnable_only = opts.winnable_only

        self.action_space = spaces.Discrete(self.n_actions)
        self.observation_space = observation_space(self.variant, self.observation_mode, self.mask_in_observation)

        self._game = GameState(self.variant)
        self._s = self._game.array  # (size,) int8, the live state
        self._encoder = ObservationEncoder(self.variant, self.observation_mode, self.mask_in_observation)
        self._mask = self._new_mask()  # (n,) legal actions now
        # The fused step kernel (:func:`.step.step_one`) reads these: reward numbers, mode
        # switches, and the game's counters (moves and cards home are kept there).
        self._spec = self.reward.spec()
        self._params = kernel_params(opts)
        self._counters = np.zeros(G_LEN, dtype=np.int64)
        self._deal = 0
        self._live = False  # an episode is in progress: reset() or set_state() to a live position starts one
        self._renderer: Any = None

    @property
    def _moves(self) -> int:
        return int(self._counters[G_MOVES])

    def _sync(self, moves: int) -> None:
        """Bring the mask, observation buffer and counters up to date after ``_s`` changed."""
        n_legal = legal_mask(self._s, self.cfg, self._mask)
        self._encoder.encode(self._s)
        self._counters[:] = 0
        self._counters[G_LEGAL] = n_legal
        self._counters[G_MOVES] = moves
        self._counters[G_CARDS] = cards_home(self._s)
        # A position with no legal move (won or stuck) has no episode left to step.
        self._live = n_legal > 0

    # ----- the Gymnasium API ----------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict]:
        """Start a new deal (see the class docstring for ``options``).

        Every option is checked before anything changes (the generator included): a refused
        reset leaves the environment as it was.
        """
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        unknown = set(options) - {"deal", "position"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; options are 'deal' and 'position'")
        if "deal" in options and "position" in options:
            raise ValueError("give either options['deal'] or options['position'], not both")
        position = check_position(self.variant, options["position"]) if "position" in options else None
        number = check_reset_deal(options["deal"]) if "deal" in options else None
        super().reset(seed=seed)
        with compile_notice("the environment's kernels") if not _WARM else nullcontext():
            if position is not None:
                self._s[:] = position
                self._deal = 0
            else:
                number = self._draw_deal() if number is None else number
                deal_layout(self._s, self.cfg, shuffled_pack(number))
                self._deal = number
            self._sync(0)
            if not _WARM:
                self._warm_step()
        if self.mask_in_observation:
            obs, mask = self._observe_with_mask()
            return obs, self._info(False, False, mask)
        return self._encoder.observation(), self._info(False, False)

    def _warm_step(self) -> None:
        """Compile (or load) the step kernel at the process's first reset, under its notice, with
        a refused action on copies: the first step then costs what every step costs."""
        global _WARM
        enc = self._encoder
        step_one(
            self._s.copy(),
            self.cfg,
            self._mask.copy(),
            enc.buffer.copy(),
            enc.place,
            self._spec,
            -1,
            self._params,
            self._counters.copy(),
        )
        _WARM = True

    def step(self, action: int | np.integer) -> tuple[Observation, SupportsFloat, bool, bool, dict]:
        """Play one action; see the class docstring for rewards, episode end and ``info``.

        One compiled call (:func:`.step.step_one`) checks the action against the mask,
        plays it, and refreshes the reward, mask, observation buffer and counters.
        """
        # An integer only (a float is not truncated into some other move); the commonest
        # types skip the full check.
        try:
            a = action if type(action) is int else check_action(action)
        except TypeError as err:
            raise TypeError(f"{err}; the action space is Discrete({self.n_actions})") from None
        if not self._live:
            raise ResetNeeded(
                "step() with no episode in progress: the episode has ended (won, stuck, or ended by an "
                "illegal action), or reset() was never called; call reset() (or set_state() to a live position)"
            )
        if not 0 <= a < self.n_actions:  # a caller's bug, not a move: refused whatever illegal_action says
            raise action_space_error(a, self.n_actions, self.variant.name)
        if self.illegal_action == "raise" and not self._mask[a]:
            raise IllegalMoveError(f"illegal move {format_move(self.variant, a)}: {why_illegal(self._s, self.cfg, a)}")
        enc = self._encoder
        reward, status, moves, cards = step_one(
            self._s, self.cfg, self._mask, enc.buffer, enc.place, self._spec, a, self._params, self._counters
        )
        if self.mask_in_observation:
            obs, mask = self._observe_with_mask()
        else:
            obs, mask = enc.observation(), self._mask.copy()
        info = {
            "deal": self._deal,
            "moves": moves,
            "cards_on_foundations": cards,
            "won": (status & ST_WON) != 0,
            "illegal_action": (status & ST_ILLEGAL) != 0,
            "action_mask": mask,
        }
        terminated = (status & ST_TERMINATED) != 0
        if terminated:
            self._live = False
        return obs, reward, terminated, False, info

    def _new_mask(self) -> np.ndarray:
        """The live mask: its own array, or, for ``flat`` rows that carry it, the ``bool`` view of
        the tail of the encoder's buffer, where the step writes it (so that a copy of the
        buffer is the whole observation)."""
        enc = self._encoder
        if enc.mask_start < enc.buffer.shape[0]:
            return enc.buffer[enc.mask_start :].view(np.bool_)
        return np.zeros(self.n_actions, dtype=np.bool_)

    def _observe_with_mask(self) -> tuple[Observation, np.ndarray]:
        """``mask_in_observation``: the observation and the info's mask, sharing memory, with one
        copy of the mask as without the option: a ``Dict``'s ``"action_mask"`` is the ``int8``
        view of the info's mask; a ``flat`` row is the copy of the encoder's buffer, whose tail
        is the live mask, and the info's mask the ``bool`` view of the row's tail."""
        enc = self._encoder
        if self.observation_mode == "flat":
            row = enc.buffer.copy()  # the mask is the buffer's tail (see _new_mask)
            return row, row[enc.mask_start :].view(np.bool_)
        obs = enc.observation()
        mask = self._mask.copy()
        obs[MASK_KEY] = mask.view(np.int8)  # type: ignore[index]
        return obs, mask

    def _info(self, won: bool, illegal: bool, mask: np.ndarray | None = None) -> dict[str, Any]:
        return {
            "deal": self._deal,
            "moves": self._moves,
            "cards_on_foundations": int(self._counters[G_CARDS]),
            "won": won,
            "illegal_action": illegal,
            "action_mask": self._mask.copy() if mask is None else mask,
        }

    def _draw_deal(self) -> int:
        return draw_deal(self.np_random, self.deals)

    def action_masks(self) -> np.ndarray:
        """``(n,) bool``: the legal actions now (a copy). ``MaskablePPO`` finds this method."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        """The table as text (``"ansi"``) or as an ``(H, W, 3) uint8`` picture (``"rgb_array"``)."""
        from . import render

        if self.render_mode == "ansi":
            title = f"{self.variant.name}  deal {self._deal}  move {self._moves}"
            return render.table_text(self._game, title)
        if self.render_mode == "rgb_array":
            if self._renderer is None:
                self._renderer = render.TableRenderer(self.variant)
            return self._renderer.draw(self._game)
        gym.logger.warn("render() called without a render_mode; make the env with render_mode='ansi' or 'rgb_array'")
        return None

    def close(self) -> None:
        self._renderer = None

    # ----- helpers for people and search ---------------------------------------------
    def action_for(self, move: str) -> int:
        """The action number of move text (``"3>7"``, ``"w>f"``, ``"s"``, ``"3>7x2"``)."""
        return parse_move(self.variant, move)

    def describe_action(self, action: int | np.integer) -> str:
        """Move text of an action number."""
        return format_move(self.variant, action)

    def legal_moves(self) -> list[str]:
        """Move text of every legal action, in action order."""
        return [format_move(self.variant, a) for a in np.flatnonzero(self._mask)]

    def position_text(self) -> str:
        """The current position as text (:func:`~forty_thieves_env.text.game.parse_position` reads it)."""
        return format_position(self._game)

    @property
    def game(self) -> GameState:
        """A copy of the current game (mutating it does not affect the environment)."""
        return self._game.copy()

    def get_state(self) -> EnvState:
        """A snapshot for search: the state array (a copy), the deal number and the move count."""
        return EnvState(self._s.copy(), self._deal, self._moves)

    def set_state(self, state: EnvState | GameState | np.ndarray, *, check: bool = True) -> None:
        """Restore a snapshot from :meth:`get_state` (or a state array or GameState of this variant).

        The ``TimeLimit`` wrapper's step count is not part of the snapshot. A state with no
        legal move (won or stuck) ends the episode: the next :meth:`step` needs a reset.

        Args:
            state: The snapshot.
            check: Validate the state array first
                (:func:`~forty_thieves_env.engine.state_check.check_state`: every invariant the
                rules rely on). ``False`` is the fast path for search code that restores
                snapshots it took itself from :meth:`get_state`.

        Raises:
            TypeError: not a snapshot, ``GameState`` or numpy array.
            ValueError: another variant's state, or (with ``check``) an invalid state array,
                naming what is wrong; the environment is unchanged.
        """
        if isinstance(state, EnvState):
            array, deal, moves = state
            deal = check_int(deal, "EnvState.deal", 0, MAX_ENV_DEAL)
            moves = check_int(moves, "EnvState.moves", 0)
        elif isinstance(state, GameState):
            if state.variant != self.variant:
                raise ValueError(f"a {state.variant.name} state cannot be set in a {self.variant.name} environment")
            array, deal, moves = state.array, 0, 0
        elif isinstance(state, np.ndarray):
            array, deal, moves = state, 0, 0
        else:
            raise TypeError(f"state must be an EnvState, a GameState or a state array, got {type(state).__name__}")
        if check:
            check_state(self.variant, array, "the state array")
        elif not isinstance(array, np.ndarray) or array.shape != self._s.shape or array.dtype != np.int8:
            raise ValueError(f"state array must be {self._s.shape} int8, got {array!r}")
        self._s[:] = array
        self._deal = deal
        self._sync(moves)

    # ----- pickling -------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_renderer"] = None  # fonts do not pickle; redrawn on demand
        del state["_encoder"], state["_s"]  # buffer views: rebuilt
        state["_mask"] = self._mask.copy()  # (a view of the encoder's buffer with flat rows that carry it)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._s = self._game.array
        self._encoder = ObservationEncoder(self.variant, self.observation_mode, self.mask_in_observation)
        self._encoder.encode(self._s)
        mask = self._new_mask()
        mask[:] = self._mask
        self._mask = mask
