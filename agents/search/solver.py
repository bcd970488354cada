"""Perfect-information solver: knows every card (stock order and face-down cards included).

``solve(state)`` searches for a winning line from a position and returns a
:class:`SolveResult`: ``won`` with the whole move list in the engine's move text,
``lost`` when the search space is exhausted (a proof that no line wins), or ``unknown``
when a budget (nodes, seconds, memory) ran out first. The kernels are in the
other modules of :mod:`agents.search`; every rule of the game comes from the engine.

Search
------
Positions are nodes, moves (the engine's actions) are edges. Two searches share the same
pruned graph and transposition table design:

* ``best``: best-first on an integer heuristic (a bucket queue; ties go to the newest
  position). It stores every position it generates (the state array, its parent and the
  move) so it can rebuild the line of a win.
* ``dfs``: depth-first with an explicit stack, children ordered by the same heuristic;
  stores 16 bytes per position.
* ``beam``: beam searches of growing width (128, 256, ... positions a layer, each width
  with four heuristics in turn, each from the start with a fresh table, up to what the
  memory allows). A layer keeps only the best children of the one before, so a beam
  search cuts the space arbitrarily: it finds wins, often many times faster than
  best-first (greedy best-first stays committed to its early stock turns; a beam keeps
  many alternatives abreast), but it never proves a loss (``GAVE_UP``).
* ``prover``: depth-first with no move order and one 8-byte word per stored position
  (:mod:`agents.search.prover`): the search for proving a loss, since that means
  generating every position anyway. It reaches about five times as many positions a
  second as ``dfs``, and it alone applies rule 7 (the relaxed game), at its root.
* ``portfolio`` (default): best-first with the two heuristics, the beam searches and the
  prover, run in turns of 10,000 positions on a quarter of the memory each; the first to
  win, or a complete search that exhausts its space, decides. Which search finds a win
  first varies a lot from deal to deal; the prover decides the losses. Under a time budget
  the prover takes at most ``PROVER_SHARE`` (a tenth) of the time, its relaxed search from
  the root included: on classic deals 1..200 every loss it proves is proved at that root,
  and a quarter of the time cost wins. The best-first searches find their wins early and
  then rarely: past ``BEST_FIRST_WINDOW`` of the time (a tenth with the balanced
  heuristic, three tenths with the waste one) each takes at most ``LATE_SHARE`` (a tenth)
  of it, and the beam searches, which find the later wins with wider and wider beams,
  get the rest. (Depth-first used to be a member: on classic deals
  1..40 at 10 s it decided one deal, which best-first also wins, and it never exhausted a
  space.)

Best-first, depth-first and the prover are complete: when one runs out of positions to expand, every
position the pruned graph reaches from the start has been generated, and none is won,
hence ``lost``. The beam search is not, and only ever reports wins.

Canonical positions and the transposition table
-----------------------------------------------
A position is hashed to 128 bits (two independent 64-bit Zobrist halves), canonically:
the columns are a multiset (each column's own Zobrist sum is mixed by splitmix64 and the
results are added, so the order of the columns, and in particular which empty column is
which, does not matter); the two copies of a card share one code, so swapping them changes
nothing; the waste and the stock are hashed slot by slot (while no redeal has been used
since the start, the stock is a prefix of the start's stock and only its length is
hashed); the foundations follow from the cards still in play. Open addressing with linear
probing stores the two halves (one bit of the second marks a used slot). A false "already
seen" needs two different positions to agree on all 127 bits: if the hash behaves like a
random function, the chance with ``n`` stored positions is about ``n**2 / 2**128``, below
``1e-23`` for the ``3e7`` positions a 2 GB table holds, far below the chance of a hardware
fault, which is what the ``lost`` verdicts rest on here.

Why a ``lost`` verdict is a proof
---------------------------------
Let ``mu(S)`` be the length of a shortest winning line from a winnable position ``S``
(in the game itself, every move counted). Each pruning rule keeps, at every winnable
position the search expands, some child ``S'`` with ``mu(S') < mu(S)``. Take a winnable
position among those the search generated with the least ``mu``; the search expanded it
(it exhausted its queue or stack), so it generated that child too -- a winnable position
with a smaller ``mu``, unless that child is the won position itself, which the search
would have reported. So when the search exhausts its space, the start is not winnable.
The rules:

1. **Safe moves** (the engine's :func:`~forty_thieves_env.engine.rules.is_safe`, the definition
   of ``auto_play_safe``): a card that can go home and on which no card still in play
   can ever be built (both copies of every card that builds on it are home). They are
   played at once, without branching, and listed in the line. Take a shortest winning
   line from ``S`` and delete every move of that card: the rest stays legal with the
   card home. Nothing is ever built on it, so it only ever lies on top of its pile; the
   cards under it and every other card are where they were; an empty column it took
   stays empty, which only allows more; and with both copies of the rank below home, an
   extra card of its rank home can only raise the lower pile of its suit, so every
   foundation move stays legal. The line loses at least one move, so ``mu`` drops.
2. **Empty columns are interchangeable**: of the moves that put the same cards into
   different empty columns only the first empty column is tried; the positions are equal
   up to the order of the columns, so they have the same ``mu``.
3. **Moving a whole column into an empty column** gives the same position back; it is never
   in a shortest line.
4. **The stock turn when the waste is empty**: turning the stock changes only the stock
   and the waste, and with an empty waste no other move reads or changes either, so it
   commutes with every move that can happen before it and none of them disables it. A
   winning line must turn the stock (the won position has an empty stock), so moving
   that turn to the front of a shortest line gives a shortest line that starts with it.
   The turn alone is a persistent set (partial-order reduction).
5. **Positions already in the transposition table** are not searched again: all positions
   with one canonical hash have the same ``mu``.
6. **Blocked suits** (:func:`~agents.search.pruning.blocked_suits`; suit building,
   single-card moves, no empty column): a position it flags is not winnable, so it has no
   ``mu`` and cutting it (best-first does not expand it, depth-first does not enter it)
   changes nothing above. It finds a set ``P`` of *pinned* cards (column cards, and waste
   cards once no redeal is left) and a non-empty set ``T`` of *trapped* card types such
   that (a) both copies of each type in ``T`` are in ``P``, each with a ``P`` card above it
   in its pile; (b) every column holds a ``P`` card; (c) each ``P`` card with no ``P`` card
   above it can neither go home unless a card of a ``T`` type of its suit and lower rank
   is home first (its pile must pass that rank), nor go onto a column card: it is a king,
   or each copy of the card one rank up is home, lies under a ``P`` card, or is a ``P``
   card in the waste (never a column top). Let ``E`` be the events "a card of a ``T``
   type goes home" and "a column becomes empty", and suppose one happens; take the first
   move ``u`` at which an ``E`` event happens or a ``P`` card leaves its pile. If a ``P``
   card ``c`` leaves at ``u``, every card that was above it has left, so none was in ``P``
   (one card moves per move), and by (c) ``c`` needs either a ``T`` card home or a target
   card that is still home, still covered or still in the waste, or an empty column: an
   ``E`` event before ``u``. A ``T`` card going home at ``u`` is a ``P`` card exposed, so
   the ``P`` card above it left before ``u``; a column emptied at ``u`` lost its ``P``
   card at or before ``u``. Every case contradicts the choice of ``u``, so no ``E`` event
   ever happens, and the ``T`` cards never go home. ``P`` and ``T`` are the greatest
   fixpoint: start with every card pinned and every type with both copies covered
   trapped, and unpin any uncovered card that fails (c) until nothing changes.

7. **The relaxed game** (:mod:`agents.search.relaxation`; suit building, single-card moves,
   no redeal left): a position whose relaxed game cannot be won is not winnable either, so
   cutting it changes nothing above (as for rule 6). The relaxed game keeps the columns'
   cards (leaving from the top), the waste and the stock in their order and the
   foundations as they are, but a card moved onto a card one rank up in its suit becomes
   free for good, unless that card is the top of a *tracked* column (one with a low card
   of its suit buried): then, as in an empty column, the moved card holds the column
   until it leaves. Each real move has a relaxed counterpart: a card one rank up on top of
   a real column is a column's top card, a holding card or a free card in the relaxed
   game; an empty real column is empty there too, since the relaxed game holds no more
   columns than the real one (cards are only ever freed sooner). So a real winning line
   gives a relaxed one.
   Its search is small (free cards have no order) and exact; the prover runs it at its
   root.

``tests/agents/search/test_solver.py`` checks that turning the rules off (``prune=False``) never
changes a verdict, on hand-made positions and on end positions of random play-outs in
every preset, and that rule 6 flags no position along winning lines of classic and
limited deals; ``tests/agents/search/test_relaxation.py`` does the same for rule 7, on winning lines and
on random positions against the unpruned search.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.text.game import GameState
from forty_thieves_env.text.notation import format_move

from .beam import Beam
from .best_first import BestFirst
from .control import DEPTH_FULL, EXHAUSTED, GAVE_UP, RUNNING, STATES_PER_SECOND, TABLE_FULL, WON, Search
from .dfs import DepthFirst
from .prover import Prover
from .zobrist import zobrist_for

#: The most of the portfolio's time the prover takes under a time budget, its relaxed search
#: from the root included. Small: on classic deals 1..200 at 10 CPU-s every loss it proves is
#: proved at that root, while a quarter of the time pushed two wins of 8.2 and 6.7 s (without
#: the prover) past 10 s. Three tenths, once the prover had dropped its relaxed searches after
#: turns and ran three times as fast, decided the same 103 deals as a tenth.
PROVER_SHARE = 0.1
#: The fraction of a time budget after which each best-first search (by name) takes at most
#: ``LATE_SHARE`` of the time. On classic test deals 1..1000 (at 4de3c30) best-first won 326
#: deals, 20 of them after a fifth of the budget, none after 6 s of 10, while the beam
#: searches kept winning to the end: with their time given to the beam, the table of test
#: deals 1..200 at 10 CPU-s gained wins in five presets (classic 106 instead of 98, Maria 166
#: instead of 153; three wins of best-first, at 3.7-9.9 s, lost), the losses unchanged; on
#: classic 1..1000 three losses that best-first proved at 5.5-5.9 s became unknown
#: (docs/solver.md).
BEST_FIRST_WINDOW = {"best/balanced": 0.1, "best/waste": 0.3}
#: The most of the time a best-first search takes once past its window.
LATE_SHARE = 0.1


def _share_cap(name: str, elapsed: float, max_seconds: float) -> float:
    """The most of the time search ``name`` may have had to take its turn now (1: no cap)."""
    if name == "prover":
        return PROVER_SHARE
    window = BEST_FIRST_WINDOW.get(name)
    if window is not None and elapsed > window * max_seconds:
        return LATE_SHARE
    return 1.0


Verdict = Literal["won", "lost", "unknown"]
Strategy = Literal["portfolio", "best", "dfs", "beam", "prover"]
Clock = Literal["wall", "cpu"]
STRATEGIES: tuple[str, ...] = ("portfolio", "best", "dfs", "beam", "prover")


@dataclass
class SolveResult:
    """Outcome of :func:`solve`.

    Attributes:
        verdict: ``"won"``, ``"lost"`` (proof: every line was searched) or ``"unknown"``.
        moves: For ``won``, every move from the given position to the win, as move text
            that :meth:`GameState.play` accepts; empty otherwise.
        nodes: Positions generated by the search (all searches of a portfolio together).
        seconds: Time the search took (by the clock the budget used).
        reason: Which budget stopped an ``unknown`` search (``nodes``, ``seconds``,
            ``memory`` or ``depth``; ``memory`` too when the beam search has run its
            widest beam); empty otherwise.
        states: Distinct positions stored.
        decided_by: The search that found the win or exhausted its space.
    """

    verdict: Verdict
    moves: list[str] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    reason: str = ""
    states: int = 0
    decided_by: str = ""


_WARM: set[str] = set()


def warm_up(strategy: str) -> None:
    """Compile the kernels of ``strategy`` (once per process, outside any time budget)."""
    if strategy in _WARM:
        return
    _WARM.add(strategy)
    from forty_thieves_env.text.game import deal

    # The portfolio's own turns would leave the beam and the prover uncompiled at this node budget.
    for single in ("best", "beam", "prover") if strategy == "portfolio" else (strategy,):
        _WARM.add(single)
        solve(deal("classic", 2), max_nodes=2000, max_seconds=float("inf"), strategy=single)  # type: ignore[arg-type]


def solve(
    state: GameState,
    max_nodes: int = 50_000_000,
    max_seconds: float = 10.0,
    max_memory_mb: float = 2048.0,
    strategy: Strategy = "portfolio",
    clock: Clock = "wall",
    max_depth: int = 20_000,
    prune: bool = True,
) -> SolveResult:
    """Search for a winning line from ``state`` (which is left unchanged).

    Args:
        state: The position; the solver knows the whole stock and every face-down card.
        max_nodes: Stop after generating this many positions (all searches together).
        max_seconds: Stop after about this much time (checked between chunks of about
            20 ms). Compiling the kernels (the first call in a process) is not counted.
        max_memory_mb: Memory for the search's arrays; a search whose arrays are full
            stops (``unknown``, reason ``memory``, when no other decides).
        strategy: ``"portfolio"`` (default), ``"best"``, ``"dfs"`` or ``"beam"`` (finds
            wins only); see the module docs.
        clock: ``"wall"`` (default) or ``"cpu"``: this process's CPU time, which a
            machine shared with other work does not inflate.
        max_depth: Longest line the depth-first stack holds (reason ``depth``).
        prune: Apply the search reductions (see the module docs). Off only to test that
            they change no verdict.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} ({', '.join(STRATEGIES)})")
    if clock not in ("wall", "cpu"):
        raise ValueError(f"unknown clock {clock!r} (wall or cpu)")
    warm_up(strategy)
    now = time.perf_counter if clock == "wall" else time.process_time
    t0 = now()
    cfg = state.cfg
    z = zobrist_for(int(cfg[Cfg.DEPTH]), int(cfg[Cfg.STOCK]))
    budget = max_memory_mb * 2**20 - 16 * 2**20  # room for the small arrays
    searches: list[Search]
    setup = 0.0
    if strategy == "best":
        searches = [BestFirst(state, z, budget, max_nodes, prune, "balanced")]
    elif strategy == "dfs":
        searches = [DepthFirst(state, z, budget, max_nodes, prune, max_depth, STATES_PER_SECOND * max_seconds)]
    elif strategy == "beam":
        searches = [Beam(state, z, budget, prune)]
    elif strategy == "prover":
        searches = [Prover(state, z, budget, max_nodes, prune, max_depth, STATES_PER_SECOND * max_seconds)]
    else:
        quarter = budget / 4
        searches = [
            BestFirst(state, z, quarter, max_nodes, prune, "waste"),
            BestFirst(state, z, quarter, max_nodes, prune, "balanced"),
            Beam(state, z, quarter, prune),
        ]
        t = now()
        searches.append(Prover(state, z, quarter, max_nodes, prune, max_depth, STATES_PER_SECOND * max_seconds))
        setup = now() - t  # its relaxed search from the root: its share of the time too

    # Turns of a fixed number of positions (not of time), so that under a node budget the
    # interleaving, and so the result, is reproducible. 10k positions take 10-50 ms. Under a
    # time budget a search sits out a turn while it has had more than its cap of the time
    # (``_share_cap``: the prover's ``PROVER_SHARE``, since with equal turns its share would
    # follow its speed, not what it decides; a best-first search's ``LATE_SHARE`` once past
    # its window).
    chunk = 10_000
    timed = max_seconds != float("inf")
    spent = {id(s): setup if isinstance(s, Prover) else 0.0 for s in searches}
    reason = ""
    done: Search | None = next((s for s in searches if s.status in (WON, EXHAUSTED)), None)
    while done is None:
        running = [s for s in searches if s.status == RUNNING]
        if not running:
            break
        if sum(s.nodes for s in searches) >= max_nodes:
            reason = "nodes"
            break
        if now() - t0 >= max_seconds:
            reason = "seconds"
            break
        if timed and len(running) > 1:
            elapsed = now() - t0
            used = sum(spent.values())
            under = [s for s in running if spent[id(s)] <= _share_cap(s.name, elapsed, max_seconds) * used]
            # Every search left can be past its cap once the beam has run its widest search
            # (its time counts in ``used``): then they all take turns.
            running = under or running
        for s in running:
            total = sum(x.nodes for x in searches)
            if total >= max_nodes:
                break
            t = now()
            s.run(s.nodes + min(chunk, max_nodes - total))
            spent[id(s)] += now() - t
            if s.status in (WON, EXHAUSTED):
                done = s
                break

    result = SolveResult("unknown", nodes=sum(s.nodes for s in searches), states=sum(s.states for s in searches))
    if done is not None:
        result.decided_by = done.name
        if done.status == WON:
            result.verdict = "won"
            result.moves = [format_move(state.variant, int(a)) for a in done.line()]
        else:
            result.verdict = "lost"
    else:
        stops = {s.status for s in searches}
        if reason:
            result.reason = reason
        elif TABLE_FULL in stops or GAVE_UP in stops:
            result.reason = "memory"
        elif DEPTH_FULL in stops:
            result.reason = "depth"
        else:
            result.reason = "nodes"
    result.seconds = now() - t0
    return result
