"""The move scorer built from table lookups: the ``lookup_scorer`` network, the training default.

It scores moves the way :mod:`agents.training.networks.move_scorer` does (one shared scorer per kind of
move, column pairs as ``a_i + b_j + u_i . v_j``, a run term for run moves), but it is about ten
times cheaper per sample, which is what lets PPO train at tens of thousands of steps a second
on two cores:

* **Every fact is an integer, and every integer is a row of one table.** For each column the
  network computes small integers from the observation: for each of its top ``top_cards``
  slots (top first) the card's code, its *distance from home* (how many cards its suit's
  nearer foundation still needs before it; 0: it can go home now), whether it *fits on a
  column top* now (the variant's build rule) and how many of the cards that could be built on
  it are *still out*; the length of the ordered run on top; the *dig* card (the one nearest
  home anywhere in the column, shallowest first: its distance and its depth); the column's
  length and face-down count. The column's first layer is the sum of those facts' rows of a
  learnt table (``embedding_bag``): the same function as one-hot features through a linear
  layer, without the one-hot vectors or the matrix product. The table's facts (foundation
  heights, stock size, redeals left, waste size and the top ``waste_cards`` waste cards with
  their facts) are summed the same way into ``g``.
* **One hidden layer per column**: ``x_i = relu(bag_i + W g)``, then a linear layer gives the
  column's source, destination, home and waste-onto scores and its vectors ``u_i``, ``v_i`` and
  ``vw_i`` of size ``rank``. Column ``i`` to ``j`` scores ``a_i + b_j + u_i . v_j``; waste to
  ``j`` scores its waste-onto score plus ``vw_j . q(g)``; the stock and the waste's card home come
  from ``g``. A run of ``k`` cards (run-moving variants) adds one learnt number for the run's
  base card (slot ``k-1`` from the top) and one for the card the move uncovers (slot ``k``),
  both lookups of the same facts, and a bias per ``k``.
* **Value**: a layer on the sum of the columns' ``x`` and on ``g``.
* **Asymmetric critic** (``critic_stock > 0``, trained on the ``oracle`` observation): the
  value also reads the next ``critic_stock`` stock cards, which a player cannot see: for each
  stock position ``p`` a learnt row for ``(p, card)`` and one for ``(p, distance from home)``,
  summed into the value layer's input. The logits never read them (:attr:`LookupScorer.actor_fields`
  lists what they read), so the trained policy plays from what a player sees, and its input at
  play time is the ``dict`` observation; a critic that knows the stock predicts the return with
  far less noise, which is what PPO's advantages are made of.

The facts are computed in torch from the ``Dict`` observation on small integer tensors; none
of them is learnt, so none carries a gradient. Shapes in comments: ``B`` samples, ``C``
columns, ``D`` column depth, ``S`` slots read, ``F`` facts, ``H`` hidden.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from numba import njit
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn
from torch.nn import functional as F

from forty_thieves_env.engine.actions import n_actions_for
from forty_thieves_env.engine.cards import N_RANKS
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.envs.observation import FACE_DOWN, NO_CARD, O_NAMES, O_STOCK

from .card_facts import CARD_ROWS, build_config, card_facts, card_facts_torch, column_rows, global_rows
from .scorer_policy import ScorerPolicy


@njit(cache=True, fastmath=True)
def _add_rows(rows, grad, out):
    """``out[rows[n, f]] += grad[n]`` for every ``n`` and ``f``: the gradient of a sum of table rows."""
    n, f = rows.shape
    h = grad.shape[1]
    for i in range(n):
        for j in range(f):
            r = rows[i, j]
            for k in range(h):
                out[r, k] += grad[i, k]


class _RowSum(torch.autograd.Function):
    """``table[rows].sum(1)`` with a fast backward on the CPU.

    The forward is ``embedding_bag``'s; its backward sorts the indices and took 95 % of the
    network's time, while the table is small (hundreds of rows): adding each gradient row into
    its table rows in compiled code is ten times faster.
    """

    @staticmethod
    def forward(ctx: Any, rows: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(rows)
        ctx.shape = table.shape
        return F.embedding_bag(rows, table, mode="sum")

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, torch.Tensor]:
        (rows,) = ctx.saved_tensors
        out = np.zeros(ctx.shape, np.float32)
        _add_rows(rows.cpu().numpy(), grad.detach().float().contiguous().cpu().numpy(), out)
        return None, torch.from_numpy(out).to(grad.device)


def row_sum(rows: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """``(N, H)``: the sum of ``table``'s rows named by ``rows`` ``(N, F)`` (``int64`` or ``int32``).

    On the CPU the gradient is added by compiled code (:class:`_RowSum`); on a GPU torch's own
    ``embedding_bag`` backward runs there (no host round trip).
    """
    if table.is_cuda:
        return F.embedding_bag(rows, table, mode="sum")
    return _RowSum.apply(rows, table)


class LookupScorer(BaseFeaturesExtractor):
    """Per-move logits and value features from summed table lookups (see the module docstring).

    Args:
        observation_space: The env's ``Dict`` space (``tableau``, ``waste``, ``foundations``,
            ``counts``; oracle fields are ignored).
        max_run: Cards a column-to-column move may carry (1 without run moves, else 13); with
            the column count it fixes the action layout.
        top_cards: Slots from the top of a column whose facts are read.
        waste_cards: Top waste cards whose facts are read.
        hidden: Width of the column and table vectors.
        rank: Size of the source and destination vectors whose dot product scores a pair.
        value_dim: Value features handed to SB3's value layer.
        alternate: The variant builds down in alternate colours (else by suit).
        critic_stock: Stock cards (next first) the value reads: an asymmetric critic, which
            needs the ``oracle`` observation's ``stock`` field; 0: none (the value reads
            only what the logits read).
    """

    #: The observation fields the logits read: a player's (never the oracle's hidden cards).
    actor_fields: tuple[str, ...] = O_NAMES[:O_STOCK]

    def __init__(
        self,
        observation_space: gym.spaces.Dict,
        max_run: int = 1,
        top_cards: int = 3,
        waste_cards: int = 2,
        hidden: int = 48,
        rank: int = 8,
        value_dim: int = 64,
        alternate: bool = False,
        critic_stock: int = 0,
    ) -> None:
        n_cols, depth = observation_space["tableau"].shape
        n_actions = n_actions_for(n_cols, max_run)
        super().__init__(observation_space, n_actions + value_dim)
        n_waste = observation_space["waste"].shape[0]
        max_redeals = int(observation_space["counts"].high[1])
        self.n_cols, self.depth, self.max_run, self.n_actions = n_cols, depth, max_run, n_actions
        self.top_cards = min(top_cards, depth)
        self.waste_cards = min(waste_cards, n_waste)
        self.hidden, self.rank, self.value_dim = hidden, rank, value_dim
        self.redeal_rows = max_redeals + 1
        #: Run moves read each run's base card and the card below it: the top max_run + 1 slots.
        self.slots = min(depth, max_run + 1) if max_run > 1 else 0
        self.cfg = build_config(alternate)
        n_col_facts = 4 * self.top_cards + 5
        n_glob_facts = 11 + 4 * self.waste_cards
        # Summed rows start as a sum of n independent unit-variance-ish terms scaled to variance ~1.
        self.col_table = nn.Parameter(torch.randn(column_rows(self.top_cards, depth), hidden) / n_col_facts**0.5)
        self.col_bias = nn.Parameter(torch.zeros(hidden))
        rows = global_rows(n_waste, max_redeals, self.waste_cards)
        self.glob_table = nn.Parameter(torch.randn(rows, hidden) / n_glob_facts**0.5)
        self.glob_bias = nn.Parameter(torch.zeros(hidden))

        h, r = hidden, rank
        self.heads = nn.Linear(h, 4 + 3 * r)  # source, destination, home, waste-onto; u, v, vw
        self.heads_glob = nn.Linear(h, 4 + 3 * r, bias=False)  # the table's part of every column's heads
        self.waste_query = nn.Linear(h, r)  # what the waste's top card looks for in a column
        self.stock = nn.Linear(h, 2)  # stock, waste card home
        if max_run > 1:
            # Per k: one number for the run's base card (slot k-1) and one for the card it uncovers (slot k).
            self.run_base = nn.Parameter(torch.zeros(CARD_ROWS, 1))
            self.run_under = nn.Parameter(torch.zeros(CARD_ROWS, 1))
            self.run_k = nn.Parameter(torch.zeros(max_run))
        self.value_cols = nn.Linear(h, value_dim, bias=False)  # of the columns' sum
        self.value_glob = nn.Linear(h, value_dim)
        self.critic_stock = 0
        if critic_stock > 0:
            if "stock" not in observation_space.spaces:
                raise ValueError(
                    "critic_stock needs the oracle observation (its 'stock' field): "
                    "set env_kwargs.observation: oracle, or critic_stock: 0"
                )
            self.critic_stock = min(int(critic_stock), int(observation_space["stock"].shape[0]))
            k = self.critic_stock
            # Rows: (position, card code) for k * (NO_CARD + 1), then (position, distance 0..13).
            self.stock_table = nn.Parameter(torch.zeros(k * (NO_CARD + 1) + k * (N_RANKS + 1), value_dim))
            self.register_buffer("stock_offsets", torch.arange(k) * (NO_CARD + 1), persistent=False)
            base = k * (NO_CARD + 1)
            self.register_buffer("dist_offsets", base + torch.arange(k) * (N_RANKS + 1), persistent=False)
        off = ~torch.eye(n_cols, dtype=torch.bool)
        self.register_buffer("off_diagonal", off.reshape(-1), persistent=False)
        self.reset_output_layers()

    def reset_output_layers(self, gain: float = 0.01) -> None:
        """Small orthogonal weights on the logit layers: a near-uniform policy over legal moves at the start."""
        for layer in (self.heads, self.heads_glob, self.waste_query, self.stock):
            nn.init.orthogonal_(layer.weight, gain=gain)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)

    def facts(
        self, observations: dict[str, torch.Tensor], in_torch: bool | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The lookup rows of a batch (:func:`agents.training.card_facts.card_facts`).

        On the CPU one compiled kernel computes them; on a GPU (or with ``in_torch``) the same
        rows come from torch on the observations' device
        (:func:`~agents.training.networks.card_facts.card_facts_torch`), never crossing to the host.

        Returns:
            ``(B, C, F)`` rows of the columns' table, ``(B, G)`` rows of the table's, and
            ``(B, C, S, 4)`` card facts of the run slots (``S`` 0 without run moves); ``long``.
        """
        if in_torch or (in_torch is None and observations["tableau"].is_cuda):
            return card_facts_torch(
                observations["tableau"],
                observations["waste"],
                observations["foundations"],
                observations["counts"],
                bool(self.cfg[Cfg.ALTERNATE]),
                self.top_cards,
                self.waste_cards,
                self.slots,
                self.redeal_rows,
            )
        obs = {
            k: observations[k].detach().cpu().numpy().astype(np.int64)
            for k in ("tableau", "waste", "foundations", "counts")
        }
        b, c = obs["tableau"].shape[:2]
        col = np.empty((b, c, 4 * self.top_cards + 5), np.int64)
        glob = np.empty((b, 11 + 4 * self.waste_cards), np.int64)
        slot = np.empty((b, c, self.slots, 4), np.int64)
        card_facts(
            obs["tableau"],
            obs["waste"],
            obs["foundations"],
            obs["counts"],
            self.cfg,
            self.top_cards,
            self.waste_cards,
            self.slots,
            self.redeal_rows,
            col,
            glob,
            slot,
        )
        device = observations["tableau"].device
        return (torch.from_numpy(col).to(device), torch.from_numpy(glob).to(device), torch.from_numpy(slot).to(device))

    def encode(self, observations: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The integer inputs of :meth:`forward_encoded`: the facts' table rows, and with an
        asymmetric critic the stock's rows (``long``; nothing here carries a gradient).

        A trainer may keep these instead of the observations: a rollout's samples are then
        encoded once, when they are played, not again at every pass of the update.
        """
        col, gidx, slot = self.facts(observations)
        out = {"col": col, "glob": gidx, "slot": slot}
        if self.critic_stock and "stock" in observations:  # absent at play time and in imitation data
            out["stock"] = self.stock_rows(observations)
        return out

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.forward_encoded(self.encode(observations))

    def forward_encoded(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(B, n_actions + value_dim)``: the logits and value features from :meth:`encode`'s rows."""
        col, gidx, slot = inputs["col"], inputs["glob"], inputs["slot"]
        b, c = col.shape[:2]
        bag_c = row_sum(col.reshape(b * c, -1), self.col_table).reshape(b, c, -1)  # (B, C, H)

        g = torch.relu(row_sum(gidx, self.glob_table) + self.glob_bias)  # (B, H)

        x = torch.relu(bag_c + self.col_bias)  # (B, C, H)
        r = self.rank
        heads = self.heads(x) + self.heads_glob(g).unsqueeze(1)  # (B, C, 4+3r)
        src, dst, home, onto = heads[..., 0], heads[..., 1], heads[..., 2], heads[..., 3]  # (B, C)
        u, v, vw = heads[..., 4 : 4 + r], heads[..., 4 + r : 4 + 2 * r], heads[..., 4 + 2 * r :]  # (B, C, r)
        pair = src.unsqueeze(2) + dst.unsqueeze(1) + torch.bmm(u, v.transpose(1, 2))  # (B, C, C)
        pair = pair.reshape(b, c * c)[:, self.off_diagonal].reshape(b, c, c - 1, 1)
        if self.max_run > 1:
            k, n_slots = self.max_run, slot.shape[2]
            flat = slot.reshape(-1, 4)  # (B*C*S, 4)
            base = row_sum(flat, self.run_base).reshape(b, c, n_slots)
            under = row_sum(flat, self.run_under).reshape(b, c, n_slots)
            if n_slots < k + 1:  # columns shallower than the longest run: nothing below
                under = torch.cat([under, under.new_zeros(b, c, k + 1 - n_slots)], dim=2)
                base = torch.cat([base, base.new_zeros(b, c, k + 1 - n_slots)], dim=2)
            runs = base[:, :, :k] + under[:, :, 1 : k + 1] + self.run_k  # (B, C, K)
            pair = pair + runs.unsqueeze(2)  # (B, C, C-1, K)
        col_col = pair.reshape(b, -1)
        waste_col = onto + torch.bmm(vw, self.waste_query(g).unsqueeze(-1)).squeeze(-1)  # (B, C)
        stock = self.stock(g)  # (B, 2): stock, waste card home
        logits = torch.cat([stock, waste_col, home, col_col], dim=1)  # codec order (actions.py)

        value = self.value_cols(x.sum(1)) + self.value_glob(g)  # (B, V)
        if "stock" in inputs:
            value = value + row_sum(inputs["stock"], self.stock_table)
        return torch.cat([logits, torch.relu(value)], dim=1)

    def stock_rows(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(B, 2k) long``: the critic's rows for the next ``k = critic_stock`` stock cards.

        Row ``(p, card)`` and row ``(p, distance)``: the card's rank less the height of its
        suit's higher foundation (clamped to 0..12; 13 for an empty stock slot).
        """
        k = self.critic_stock
        cards = observations["stock"][:, :k].long()  # (B, k), NO_CARD past the stock's end
        found = observations["foundations"].long()  # (B, 8): piles 2*suit and 2*suit + 1
        real = cards < FACE_DOWN  # card codes are 0..51
        code = torch.where(real, cards, torch.zeros_like(cards))
        suit, rank = code // N_RANKS, code % N_RANKS
        height = torch.maximum(found.gather(1, 2 * suit), found.gather(1, 2 * suit + 1))  # (B, k)
        dist = torch.where(real, (rank - height).clamp(0, N_RANKS - 1), torch.full_like(cards, N_RANKS))
        return torch.cat([cards + self.stock_offsets, dist + self.dist_offsets], dim=1)


class LookupScorerPolicy(ScorerPolicy):
    """MaskablePPO's ``Dict`` policy with :class:`LookupScorer` computing the logits.

    The wiring is :class:`~.scorer_policy.ScorerPolicy`'s; ``features_extractor_kwargs`` go to :class:`LookupScorer`.
    """

    extractor = LookupScorer
