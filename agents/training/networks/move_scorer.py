"""A policy that scores every move from the cards it involves: the ``move_scorer`` network.

SB3's policies put one linear layer from a feature vector to the action logits, so a flat
network must learn, for each of the 112 (classic) or 1192 (run-moving variants) actions
separately, which column it names. This network builds the logits from the action codec's
structure instead (:mod:`forty_thieves_env.engine.actions`), one shared scorer per kind of
move, so what it learns about "a column-to-column move that uncovers a card that can go
home" holds for every pair of columns:

* **Cards.** Each card code gets an embedding plus embeddings of three facts about it in
  this position, computed from the observation (so every card carries the relations a
  move's value depends on, which a network would otherwise have to discover): its *distance
  from home* (how many cards its suit's nearer foundation still needs before it; 0: it can
  go home now), whether it *fits on a column's top card* now (the variant's build rule), and
  how many cards that could be built on it are *still out* (not home: 0 means parking it on
  a foundation costs nothing).
* **Columns.** A column's slots are read *from the top* (the playable card first). The top
  ``top_cards`` slots are concatenated with the *dig* summary (the card nearest home anywhere
  in the column, shallowest first: its distance and how many cards lie on it, as embeddings),
  the column's length, face-down count and whether it is empty, and go through one network
  shared by the columns: ``c_i``.
* **Waste and table.** The top waste cards give ``w``; the foundation heights, the stock size
  and redeals left with ``w`` give the global vector ``g``.
* **Moves.** One small network on ``(c_i, g)`` gives each column a source score ``a_i``, a
  destination score ``b_j``, a home score, a waste-onto score and three vectors of size
  ``rank``. Column ``i`` to column ``j`` scores ``a_i + b_j + u_i . v_j`` (all 90 pairs in one
  batched product); a run of ``k`` cards adds a term linear in the source's ``k``-th and
  ``(k+1)``-th cards from the top (the run's base and what the move uncovers) and a bias per
  ``k``; waste to column ``j`` scores its waste-onto score plus ``vw_j . q(w, g)``; column ``i``
  home its home score; the waste's top card home and the stock come from ``(w, g)``.
* **Value.** An MLP of the mean and max of the columns, ``w`` and ``g``.

The extractor returns ``[logits | value features]``; :class:`MoveScorerPolicy` (a
:class:`~.scorer_policy.ScorerPolicy`) reads the logits straight through (no extra
layer) and puts SB3's linear value layer on the rest. Illegal moves are masked by
MaskablePPO as usual. Shapes are written in comments: ``B`` samples, ``C`` columns, ``D``
column depth, ``T`` waste slots, ``E`` embedding, ``H`` hidden.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from forty_thieves_env.engine.actions import n_actions_for
from forty_thieves_env.engine.cards import N_RANKS
from forty_thieves_env.envs.observation import FACE_DOWN, N_CODES, N_OBS_CODES, NO_CARD

from .card_facts import columns_top_first
from .scorer_policy import ScorerPolicy

N_SUITS = 4
#: Distance-from-home values: 0..13 for cards, then face-down and no card.
DIST_FACE_DOWN = N_RANKS + 1  # 14
DIST_NO_CARD = N_RANKS + 2  # 15
N_DIST = N_RANKS + 3


def _mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))


class MoveScorer(BaseFeaturesExtractor):
    """Per-move logits and value features from the ``Dict`` observation (see the module docstring).

    Args:
        observation_space: The env's ``Dict`` space (``tableau``, ``waste``, ``foundations``,
            ``counts``; oracle fields are ignored).
        max_run: Cards a column-to-column move may carry (1 without run moves, else 13); with
            the column count it fixes the action layout.
        embed_dim: Size of a card's embedding (and of its distance embedding).
        top_cards: Slots from the top of a column read one by one.
        waste_cards: Top waste cards read one by one.
        hidden: Width of the column, waste and table vectors and of the move scorers.
        rank: Size of the source and destination vectors whose dot product scores a pair.
        value_dim: Value features handed to SB3's value layer.
        alternate: The variant builds down in alternate colours (else by suit).
    """

    def __init__(
        self,
        observation_space: gym.spaces.Dict,
        max_run: int = 1,
        embed_dim: int = 16,
        top_cards: int = 4,
        waste_cards: int = 3,
        hidden: int = 64,
        rank: int = 16,
        value_dim: int = 64,
        alternate: bool = False,
    ) -> None:
        n_cols, depth = observation_space["tableau"].shape
        n_actions = n_actions_for(n_cols, max_run)
        super().__init__(observation_space, n_actions + value_dim)
        self.n_cols, self.depth, self.max_run, self.n_actions = n_cols, depth, max_run, n_actions
        self.top_cards = min(top_cards, depth)
        self.waste_cards = min(waste_cards, observation_space["waste"].shape[0])
        self.embed_dim, self.hidden, self.rank, self.value_dim = embed_dim, hidden, rank, value_dim
        e, h, r = embed_dim, hidden, rank

        self.card = nn.Embedding(N_OBS_CODES, e)
        self.dist = nn.Embedding(N_DIST, e)
        self.fits = nn.Embedding(2, e)
        self.out = nn.Embedding(5, e)  # 0..2 copies (suit build), 0..4 (alternate colours)
        self.alternate = alternate
        self.register_buffer("targets", _targets(alternate), persistent=False)  # (52, 2) codes it builds on
        self.register_buffer("below", _below(alternate), persistent=False)  # (52, 4) piles holding its builders
        # The buried card nearest home: its distance and how many cards lie on it.
        self.dig_dist = nn.Embedding(N_DIST, e)
        self.dig_depth = nn.Embedding(depth, e)
        self.column = nn.Sequential(nn.Linear(self.top_cards * e + e + 3, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.waste = nn.Sequential(nn.Linear(self.waste_cards * e + 1, h), nn.ReLU())
        n_found = observation_space["foundations"].shape[0]
        counts_high = observation_space["counts"].high.astype("float32")
        self.register_buffer("counts_scale", torch.as_tensor(1.0 / counts_high.clip(min=1)), persistent=False)
        self.glob = nn.Sequential(nn.Linear(n_found + 2 + h, h), nn.ReLU())
        self.register_buffer("ranks", torch.arange(N_RANKS), persistent=False)

        # Per column, from (c_i, g): source score, destination score, home score, waste-onto
        # score, source vector, destination vector, waste-onto vector.
        self.heads_col = nn.Linear(h, h)  # first layer split by input: the table's part is added per sample
        self.heads_glob = nn.Linear(h, h, bias=False)
        self.heads_out = nn.Linear(h, 4 + 3 * r)
        self.waste_query = nn.Linear(2 * h, r)  # (w, g) -> what the waste's top card looks for
        self.stock = _mlp(2 * h, h, 2)  # (w, g) -> stock, waste home
        if max_run > 1:
            # A k-card move: linear in the base card's and the uncovered card's slot embeddings,
            # plus a bias per k (kept to lookups: 1192 actions must stay cheap).
            self.run_slot = nn.Linear(2 * e, 1)
            self.run_k = nn.Parameter(torch.zeros(max_run))
        self.value = nn.Sequential(nn.Linear(4 * h, value_dim), nn.ReLU())
        # Off-diagonal (i, j) pairs in the codec's order: i major, then j != i ascending.
        off = ~torch.eye(n_cols, dtype=torch.bool)
        self.register_buffer("off_diagonal", off.reshape(-1), persistent=False)
        self.output_layers = [self.heads_out, self.waste_query, self.stock[-1]]
        if max_run > 1:
            self.output_layers.append(self.run_slot)

    def reset_output_layers(self, gain: float = 0.01) -> None:
        """Small orthogonal weights on the logit layers: a near-uniform policy over legal moves at the start."""
        for layer in self.output_layers:
            nn.init.orthogonal_(layer.weight, gain=gain)
            nn.init.zeros_(layer.bias)

    def _distances(self, heights: torch.Tensor) -> torch.Tensor:
        """``(B, 54) long``: every code's distance from home (0: it can go home now)."""
        h = heights.long().reshape(-1, N_SUITS, 2)  # (B, 4, 2)
        d = self.ranks.view(1, 1, N_RANKS, 1) - h.unsqueeze(2)  # (B, 4, 13, 2)
        d = torch.where(d >= 0, d, torch.full_like(d, N_RANKS))
        d = torch.minimum(d[..., 0], d[..., 1])  # (B, 4, 13); not amin(-1), slow over a dim of 2
        b = h.shape[0]
        special = torch.tensor([DIST_FACE_DOWN, DIST_NO_CARD], device=d.device).expand(b, 2)
        return torch.cat([d.reshape(b, -1), special], dim=1)  # codes FACE_DOWN=52, NO_CARD=53

    def _facts(self, tops: torch.Tensor, heights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, 54) long`` each: whether each code fits on a column top now (0/1), and how many of
        its builders are still out (0..4); 0 for face-down and no card."""
        b = tops.shape[0]
        present = torch.zeros(b, N_OBS_CODES + 1, device=tops.device)
        present.scatter_(1, tops, 1.0)  # which codes are column tops (NO_CARD for an empty column)
        present[:, NO_CARD] = 0.0
        fits = present[:, self.targets].amax(-1).long()  # (B, 52); targets padded with the zero slot 54
        h = torch.cat([heights.long(), heights.new_zeros(b, 1).long()], dim=1)  # pile 8: a dummy, height 0
        rank = self.ranks.repeat(N_SUITS)  # (52,)
        # A builder (rank r-1) is home on pile p when its height is at least r; pile 8 never counts.
        home = ((h[:, self.below] >= rank.view(1, -1, 1)) & (self.below < 8)).sum(-1)  # (B, 52)
        out = (self.below < 8).sum(-1) - home  # 2 (or 4) copies of the builders, less those home
        out = torch.where(rank == 0, torch.zeros_like(out), out).clamp(0, 4)
        pad = fits.new_zeros(b, 2)
        return torch.cat([fits, pad], dim=1), torch.cat([out, pad], dim=1)

    def _embed(self, codes: torch.Tensor, tables: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """``(*codes.shape, E)``: card embedding plus its distance and fact embeddings.

        ``tables``: the ``(B, 54) long`` distance, fits and builders-out values of every code.
        All lookups are ``index_select`` (its backward, an index-add, is the fast one on the CPU).
        """
        b = codes.shape[0]
        flat = codes.reshape(b, -1)
        dist, fits, out = (t.gather(1, flat).reshape(-1) for t in tables)
        e = self.card.weight.index_select(0, flat.reshape(-1)) + self.dist.weight.index_select(0, dist)
        facts = self.fits.weight.index_select(0, fits) + self.out.weight.index_select(0, out)
        e = e + facts * (flat.reshape(-1, 1) < N_CODES)  # no facts for face-down and empty slots
        return e.reshape(*codes.shape, self.embed_dim)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        tableau = observations["tableau"].long()  # (B, C, D), bottom card first
        waste = observations["waste"].long()  # (B, T), top card last
        heights = observations["foundations"].float()  # (B, 8)
        counts = observations["counts"].float()  # (B, 2)
        b, c, d = tableau.shape
        dist = self._distances(heights)  # (B, 54)

        # Columns read from the top: slot k is the card k places below the playable one.
        top, length = columns_top_first(tableau, d)  # (B, C, D) top first, (B, C)
        k = torch.arange(d, device=tableau.device)
        top_dist = dist.gather(1, top.reshape(b, -1)).reshape(b, c, d)  # (B, C, D)
        # The shallowest card nearest home: min over slots of dist * D + depth from top.
        key = (top_dist * d + k).int().amin(-1).long()  # (B, C); int32: the int64 reduction is slower
        dig = self.dig_dist.weight.index_select(0, (key // d).reshape(-1)) + self.dig_depth.weight.index_select(
            0, (key % d).reshape(-1)
        )
        dig = dig.reshape(b, c, self.embed_dim)  # (B, C, E)
        kt = max(self.top_cards, self.max_run + 1 if self.max_run > 1 else 0)
        tables = (dist, *self._facts(top[:, :, 0], heights))  # (B, 54) each
        slots = self._embed(top[:, :, :kt], tables)  # (B, C, kt, E)
        face_down = (tableau == FACE_DOWN).sum(-1)
        col_in = torch.cat(
            [
                slots[:, :, : self.top_cards].reshape(b, c, -1),
                dig,
                (length.float() / d).unsqueeze(-1),
                (face_down.float() / d).unsqueeze(-1),
                (length == 0).float().unsqueeze(-1),
            ],
            dim=-1,
        )
        cols = self.column(col_in)  # (B, C, H)

        wcodes = waste[:, -self.waste_cards :].flip(1)  # (B, W) top first
        wtop = self._embed(wcodes, tables)  # (B, W, E)
        n_waste = (waste != NO_CARD).sum(-1, keepdim=True).float() / waste.shape[1]
        w = self.waste(torch.cat([wtop.reshape(b, -1), n_waste], dim=1))  # (B, H)
        g = self.glob(torch.cat([heights / N_RANKS, counts * self.counts_scale, w], dim=1))  # (B, H)
        wg = torch.cat([w, g], dim=1)  # (B, 2H)

        r = self.rank
        heads = self.heads_out(torch.relu(self.heads_col(cols) + self.heads_glob(g).unsqueeze(1)))  # (B, C, 4+3r)
        src, dst, home, onto = heads[..., 0], heads[..., 1], heads[..., 2], heads[..., 3]  # (B, C) each
        u, v, vw = heads[..., 4 : 4 + r], heads[..., 4 + r : 4 + 2 * r], heads[..., 4 + 2 * r :]  # (B, C, r)
        pair = src.unsqueeze(2) + dst.unsqueeze(1) + torch.bmm(u, v.transpose(1, 2))  # (B, C, C)
        pair = pair.reshape(b, c * c)[:, self.off_diagonal].reshape(b, c, c - 1, 1)
        if self.max_run > 1:
            kk = self.max_run
            under = slots[:, :, 1 : kk + 1]
            if under.shape[2] < kk:  # a column shorter than the longest run: nothing below
                under = torch.cat([under, under.new_zeros(b, c, kk - under.shape[2], self.embed_dim)], 2)
            run = self.run_slot(torch.cat([slots[:, :, :kk], under], dim=-1)).squeeze(-1) + self.run_k  # (B, C, K)
            pair = pair + run.unsqueeze(2)  # (B, C, C-1, K)
        col_col = pair.reshape(b, -1)
        waste_col = onto + torch.bmm(vw, self.waste_query(wg).unsqueeze(-1)).squeeze(-1)  # (B, C)
        stock = self.stock(wg)  # (B, 2): stock, waste home
        logits = torch.cat([stock, waste_col, home, col_col], dim=1)  # codec order (actions.py)

        value = self.value(torch.cat([cols.mean(1), cols.amax(1), w, g], dim=1))  # (B, V)
        return torch.cat([logits, value], dim=1)


def _targets(alternate: bool) -> torch.Tensor:
    """``(52, 2) long``: the codes each card may be built on (54: none, an always-absent slot)."""
    out = torch.full((52, 2), N_OBS_CODES, dtype=torch.long)
    for code in range(52):
        suit, rank = divmod(code, N_RANKS)
        if rank == N_RANKS - 1:
            continue
        if alternate:
            other = (2, 3) if suit < 2 else (0, 1)
            out[code] = torch.tensor([o * N_RANKS + rank + 1 for o in other])
        else:
            out[code, 0] = code + 1
    return out


def _below(alternate: bool) -> torch.Tensor:
    """``(52, 4) long``: foundation piles of the suits whose next-lower card builds on each card (8: none)."""
    out = torch.full((52, 4), 8, dtype=torch.long)
    for code in range(52):
        suit = code // N_RANKS
        suits = ((2, 3) if suit < 2 else (0, 1)) if alternate else (suit,)
        piles = [2 * s + k for s in suits for k in (0, 1)]
        out[code, : len(piles)] = torch.tensor(piles)
    return out


class MoveScorerPolicy(ScorerPolicy):
    """MaskablePPO's ``Dict`` policy with :class:`MoveScorer` computing the logits.

    The wiring is :class:`~.scorer_policy.ScorerPolicy`'s; ``features_extractor_kwargs`` go to :class:`MoveScorer`.
    """

    extractor = MoveScorer
