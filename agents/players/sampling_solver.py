"""The ``sampling_solver`` agent: the perfect-information solver run on sampled hidden cards.

It knows only what a player knows (the ``Dict`` observation, plus a redealt stock's order,
remembered with :class:`~agents.players.view.StockRecall`). At a decision that matters it
draws ``samples`` *determinizations* (full game states that agree with everything seen, the
stock order and the face-down cards a random permutation of the unseen cards; see
:mod:`agents.players.view`), solves each with a small node budget
(:func:`agents.search.solver.solve`), and plays the move that starts the most winning lines.
With no winning line, or a tie, the heuristic's order decides.

Two ways to turn solves into votes (``mode``):

* ``"root"`` (default): solve each sample from the current position; a won line's first move
  is one vote. One solve per sample.
* ``"child"``: for each of the heuristic's best ``candidates`` moves, solve the position after
  it in each sample; every candidate that wins in a sample gets a vote. ``candidates`` solves
  per sample, but a vote for every winning move, not only the one the solver tried first.

**Winning lines are kept.** A sample whose line won stays *live* while it agrees with what
the player sees: each move the agent plays is played in the sample too, and the line goes on
while the move played was the line's next one and the sample still looks exactly like the
real game (the same visible cards: a stock card turned up, or a face-down card turned over,
that differs from the sample's ends it). At the next decision every live line votes for its
next move without a new solve, and only the rest of the ``samples`` are drawn and solved
afresh. Keeping the winning samples and redrawing the others leans the votes toward the
hidden cards that can still be won; that is where a decision can matter.

**No hidden card left** (classic once the stock is spent; any variant once every hidden card
is known), every sample is the real position: one solve with the budget of all the samples
decides, and a won line is a sure win; a ``lost`` verdict ends the searching for the game.

The heuristic's move is played without search (unless a live line says otherwise) when it is
the only legal move, when it sends a safe card home, when no other move is sensible, and
when the game has gone ``max_idle`` moves without a card home or a stock turn (as for the
``lookahead`` agent).

Budget: ``nodes_per_solve`` positions per solve (the default; then play is reproducible from
the seed on any machine), optionally ``seconds_per_solve`` CPU seconds per solve on top; and
per game ``game_nodes`` positions over all solves and optionally ``game_seconds`` CPU seconds
of the agent's own time. Once a game's budget is spent the live lines are still followed
and otherwise the heuristic plays on. With a seconds budget the play depends on the
machine's speed.

**What a decision was made from.** After each :meth:`~SamplingSolverAgent.act` the agent keeps
the figures of that decision (they change nothing in play; a demonstration data set records
them, :mod:`agents.datasets`):

* ``last_votes``: ``{move: votes}``, the winning lines' votes the move was picked from (live
  lines and fresh solves); empty where no sampled line won or no world was consulted (then the
  heuristic's move, or the policy's for the ``guided_solver``, was played). With no hidden card
  left, the one line of the real position: ``{move: 1}``.
* ``last_samples``: the sampled worlds consulted: live lines plus fresh solves (1 for the real
  position with no hidden card; 0 where the move was played without looking at any world).
* ``last_searched``: whether a solve ran for this decision (False: the only legal move, a safe
  card home, a decision that did not matter, live lines alone, or the budget was spent).
* ``last_exact``: whether nothing was hidden, so the decision was made on the real position.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from agents.hashing import noise
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.engine.rules import apply_action
from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.envs.observation import FACE_DOWN
from forty_thieves_env.text.game import GameState
from forty_thieves_env.text.notation import parse_move

from .base import Observation
from .heuristic import HeuristicAgent, visible_hash
from .lookahead import is_safe_home
from .view import StockRecall
from .weights import POINTLESS

MODES = ("root", "child")


@dataclass
class Line:
    """A winning line in one sampled world: the world as it stands now and the moves still to play."""

    world: np.ndarray  # the sample's state array, advanced with every move played
    moves: list[int]
    next: int = 0
    sure: bool = False  # the world is the real position (no hidden card was left)

    @property
    def move(self) -> int:
        return self.moves[self.next]


class SamplingSolverAgent(HeuristicAgent):
    """Determinized solving with votes (see the module docstring).

    Args:
        variant: The rules in force.
        seed: Seeds the samples and the heuristic's tie-breaks.
        samples: Sampled worlds per decision (live winning lines included).
        nodes_per_solve: The solver's node budget per solve.
        seconds_per_solve: Optional CPU-second budget per solve (makes play machine-dependent).
        mode: ``"root"`` (one solve per sample, its line's first move votes) or ``"child"``
            (each of ``candidates`` moves solved in each sample).
        candidates: Moves tried per sample in ``"child"`` mode.
        game_nodes: Node budget for all the solves of one game.
        game_seconds: Optional CPU seconds for one game's decisions; past it only live lines
            and the heuristic play (makes play machine-dependent).
        strategy: The solver's search (see :func:`agents.search.solver.solve`).
        reuse: Keep winning lines for later decisions while their sample stays consistent.
        max_idle: Moves in a row without a card home or a stock turn after which the agent
            stops searching (while hidden cards are left).
        max_memory_mb: Memory for one solve's arrays.
        weights: Heuristic weight overrides (the fallback and the candidate order).
    """

    name = "sampling_solver"
    observation = "dict"

    def __init__(
        self,
        variant: str | Variant = "classic",
        seed: int | None = None,
        samples: int = 8,
        nodes_per_solve: int = 10_000,
        seconds_per_solve: float | None = None,
        mode: str = "root",
        candidates: int = 3,
        game_nodes: int = 12_000_000,
        game_seconds: float | None = None,
        strategy: str = "best",
        reuse: bool = True,
        max_idle: int = 40,
        max_memory_mb: float = 256.0,
        weights: dict[str, float] | None = None,
    ) -> None:
        if samples < 1 or nodes_per_solve < 1 or candidates < 1 or game_nodes < 0:
            raise ValueError("samples, nodes_per_solve and candidates must be at least 1, game_nodes at least 0")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} ({', '.join(MODES)})")
        from agents.search.solver import STRATEGIES

        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r} ({', '.join(STRATEGIES)})")
        self.samples = int(samples)
        self.nodes_per_solve = int(nodes_per_solve)
        self.seconds_per_solve = seconds_per_solve
        self.mode = mode
        self.candidates = int(candidates)
        self.game_nodes = int(game_nodes)
        self.game_seconds = game_seconds
        self.strategy = strategy
        self.reuse = bool(reuse)
        self.max_idle = int(max_idle)
        self.max_memory_mb = float(max_memory_mb)
        self._recall = StockRecall()
        super().__init__(variant, seed, avoid_cycles=True, weights=weights)
        self._sample = np.zeros(int(self._cfg[Cfg.SIZE]), dtype=np.int8)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._recall.reset()
        self._idle = 0
        self._progress: tuple[int, int, int] | None = None
        self._lines: list[Line] = []
        self._lost = False  # an exact solve (no hidden card) proved the game lost
        #: This game's figures: decisions searched, solves run, nodes and CPU seconds spent,
        #: decisions played from live lines without a new solve.
        self.searched = 0
        self.solves = 0
        self.nodes = 0
        self.seconds = 0.0
        self.reused = 0
        self._clear_last()

    def _clear_last(self) -> None:
        #: What the last decision was made from (see the module docstring).
        self.last_votes: dict[int, int] = {}
        self.last_samples = 0
        self.last_searched = False
        self.last_exact = False

    # ---------------------------------------------------------------------- decisions

    def act(self, observation: Observation, action_mask: np.ndarray) -> int:
        self._t0 = time.process_time()
        self._clear_last()
        solves = self.solves
        self._recall.update(observation)
        best, s, mask, tie_seed = self._choose(observation, action_mask, check_all=True)
        progress = (int(observation["foundations"].sum()), int(observation["counts"][0]), int(observation["counts"][1]))
        self._idle = 0 if progress != self._progress else self._idle + 1
        self._progress = progress
        move = self._decide(observation, best, s, mask, tie_seed)
        self._advance(move)
        self.last_searched = self.solves > solves
        self.seconds += time.process_time() - self._t0
        return move

    def _decide(self, observation: Observation, best: int, s: np.ndarray, mask: np.ndarray, tie_seed: np.uint64) -> int:
        legal = np.flatnonzero(mask)
        self._keep_consistent(s)
        if legal.size == 1:
            return int(best)
        if self._idle >= self.max_idle or is_safe_home(self._cfg, s, best):
            order = self._heuristic_order(legal, tie_seed)  # the heuristic's move, which avoids cycles
            sure = True
        else:
            best, order, sure = self._ranking(observation, legal, best, tie_seed)
        known = self._recall.known_stock(observation)
        hidden = int(np.count_nonzero(observation["tableau"] == FACE_DOWN)) + int(observation["counts"][0])
        if hidden == (0 if known is None else len(known)):
            return self._decide_exact(observation, best, known)
        votes = self._live_votes()
        self.last_samples = len(self._lines)
        if votes:
            self.reused += 1
        sensible = [a for a in order if self._scores[a] > POINTLESS]
        # A decision that does not matter: the live lines' move, else the fallback.
        if sure or len(sensible) <= 1:
            return self._pick(votes, order, best)
        fresh = self.samples - len(self._lines)
        if fresh > 0 and not self._spent():
            self.searched += 1
            cands = sensible[: self.candidates]
            for _ in range(fresh):
                if self._spent():
                    break
                self._det.fill(observation, self._sample, self.rng, known)
                self.last_samples += 1
                if self.mode == "root":
                    self._solve_root(self._sample, votes)
                else:
                    self._solve_children(self._sample, cands, votes)
        return self._pick(votes, order, best)

    def _heuristic_order(self, legal: np.ndarray, tie_seed: np.uint64) -> list[int]:
        """The legal moves best first by the heuristic's scores (``self._scores``), ties by noise."""
        return sorted(legal.tolist(), key=lambda a: (-self._scores[a], -noise(tie_seed, a)))

    def _ranking(
        self, observation: Observation, legal: np.ndarray, best: int, tie_seed: np.uint64
    ) -> tuple[int, list[int], bool]:
        """``(fallback, order, sure)``: the move played when no line votes, the order that breaks
        ties between votes and picks ``mode="child"``'s candidates, and whether the fallback is
        played without search. Here the heuristic's: ``best``, its scores' order, never sure.
        A subclass with a learned prior ranks by the policy (:mod:`.guided_solver`)."""
        return best, self._heuristic_order(legal, tie_seed), False

    def _decide_exact(self, observation: Observation, best: int, known: np.ndarray | None) -> int:
        """No hidden card: the one position there is gets one solve with every sample's budget."""
        self.last_exact = True
        if self._lines:  # a live line's world is now the real position: a sure win
            self._lines[0].sure = True
            return self._last_line(self._lines[0].move)
        if self._lost or self._spent():
            return int(best)
        self.searched += 1
        self.last_samples = 1
        self._det.fill(observation, self._sample, None, known)
        verdict, moves = self._solve(self._sample, self.samples * self.nodes_per_solve)
        if verdict == "lost":
            self._lost = True
        if not moves:
            return int(best)
        self._lines = [Line(self._sample.copy(), moves, sure=True)]
        return self._last_line(moves[0])

    def _last_line(self, move: int) -> int:
        """Record the real position's one winning line as the decision's vote; return its move."""
        self.last_votes, self.last_samples = {int(move): 1}, 1
        return move

    def _pick(self, votes: dict[int, int], order: list[int], best: int) -> int:
        """The move with the most votes, ties in the heuristic's order; no vote: ``best``."""
        self.last_votes = dict(votes)
        if not votes:
            return int(best)
        rank = {a: i for i, a in enumerate(order)}
        return max(votes, key=lambda a: (votes[a], -rank[a]))

    # -------------------------------------------------------------------------- solving

    def _solve(self, world: np.ndarray, budget: int | None = None) -> tuple[str, list[int]]:
        """Solve ``world`` (left unchanged): the verdict and, if won, the line's action numbers
        (none when ``world`` is won already)."""
        from agents.search.solver import solve

        nodes = self.nodes_per_solve if budget is None else budget
        nodes = min(nodes, max(1, self.game_nodes - self.nodes))
        seconds = float("inf") if self.seconds_per_solve is None else float(self.seconds_per_solve)
        state = GameState(self.variant, world.copy(), check=False)
        result = solve(
            state,
            max_nodes=nodes,
            max_seconds=seconds,
            max_memory_mb=self.max_memory_mb,
            strategy=self.strategy,  # type: ignore[arg-type]
            clock="cpu",
        )
        self.solves += 1
        self.nodes += result.nodes
        if result.verdict != "won":
            return result.verdict, []
        return "won", [parse_move(self.variant, m) for m in result.moves]

    def _solve_root(self, world: np.ndarray, votes: dict[int, int]) -> None:
        """Solve one sampled world from the current position; a won line's first move votes."""
        _, moves = self._solve(world)
        if moves:
            self._lines.append(Line(world.copy(), moves))
            votes[moves[0]] = votes.get(moves[0], 0) + 1

    def _solve_children(self, world: np.ndarray, cands: list[int], votes: dict[int, int]) -> None:
        """Solve one sampled world after each candidate; each candidate that wins votes."""
        kept = False
        for a in cands:
            if self._spent():
                return
            child = world.copy()
            apply_action(child, self._cfg, a)
            verdict, moves = self._solve(child)
            if verdict == "won":
                votes[a] = votes.get(a, 0) + 1
                if not kept:  # one line per sample is enough to follow
                    self._lines.append(Line(world.copy(), [a, *moves]))
                    kept = True

    def _spent(self) -> bool:
        """Whether this game's search budget (nodes, and CPU seconds if set) is used up."""
        if self.nodes >= self.game_nodes:
            return True
        if self.game_seconds is None:
            return False
        return self.seconds + time.process_time() - self._t0 >= self.game_seconds

    # ---------------------------------------------------------------------- live lines

    def _live_votes(self) -> dict[int, int]:
        votes: dict[int, int] = {}
        for line in self._lines:
            votes[line.move] = votes.get(line.move, 0) + 1
        return votes

    def _keep_consistent(self, s: np.ndarray) -> None:
        """Drop the lines whose world no longer looks like the real game (``s``'s visible cards)."""
        seen = visible_hash(s, self._cfg)
        self._lines = [x for x in self._lines if x.next < len(x.moves) and visible_hash(x.world, self._cfg) == seen]

    def _advance(self, move: int) -> None:
        """Play ``move`` in every live line that had it next; drop the others."""
        kept = []
        for line in self._lines:
            if line.move == move and (self.reuse or line.sure):
                apply_action(line.world, self._cfg, move)
                line.next += 1
                kept.append(line)
        self._lines = kept
