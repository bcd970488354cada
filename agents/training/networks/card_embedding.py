"""Policy networks that see the card structure of the ``Dict`` observation.

SB3's default extractor for a ``Dict`` observation (``CombinedExtractor``) flattens every
field and feeds the card codes to an MLP as plain numbers, so ``KD`` (51) looks "bigger"
than ``AC`` (0). :class:`CardEmbeddingExtractor` reads them as what they are:

* one embedding table for the 54 codes (52 cards, face-down, empty), shared by every slot:
  tableau, waste and the foundations' next cards;
* each column, its slots' embeddings plus a learnt depth embedding, through one small
  network shared by all columns, the column features then concatenated in column order
  (actions name columns, so their order is kept);
* the top ``waste_cards`` waste cards one by one (the playable one last) and the rest of
  the waste as a mean of embeddings (what is buried);
* for each foundation pile the *next card it needs*, embedded with the same table (so a card
  that matches a foundation looks like it), and the pile heights;
* the stock size and redeals left, scaled to 0..1.

All of it is concatenated and passed through one linear layer with ReLU to
``features_dim`` features, on which SB3 builds the usual policy and value heads.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from forty_thieves_env.engine.cards import N_RANKS
from forty_thieves_env.envs.observation import N_OBS_CODES, NO_CARD


class CardEmbeddingExtractor(BaseFeaturesExtractor):
    """Card-code embeddings per slot, a column network shared across columns (see the module docstring).

    Args:
        observation_space: The env's ``Dict`` space (``tableau``, ``waste``, ``foundations``,
            ``counts``; extra oracle fields are ignored).
        embed_dim: Size of a card code's embedding.
        column_dim: Features per column.
        waste_cards: Top waste cards embedded one by one.
        features_dim: Output size.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Dict,
        embed_dim: int = 16,
        column_dim: int = 64,
        waste_cards: int = 8,
        features_dim: int = 256,
    ) -> None:
        super().__init__(observation_space, features_dim)
        n_cols, depth = observation_space["tableau"].shape
        stock_size = observation_space["waste"].shape[0]
        self.n_cols, self.depth = n_cols, depth
        self.waste_cards = min(waste_cards, stock_size)
        self.embed_dim = embed_dim
        self.embed = nn.Embedding(N_OBS_CODES, embed_dim)
        self.depth_pos = nn.Parameter(torch.zeros(depth, embed_dim))
        self.column = nn.Sequential(nn.Linear(depth * embed_dim, column_dim), nn.ReLU())
        self.waste_pos = nn.Parameter(torch.zeros(self.waste_cards, embed_dim))
        n_found = observation_space["foundations"].shape[0]
        counts_high = observation_space["counts"].high.astype("float32")
        self.register_buffer("counts_scale", torch.as_tensor(1.0 / counts_high.clip(min=1)), persistent=False)
        # Pile p holds suit p // 2; its next card is suit * 13 + height (none once complete).
        self.register_buffer("pile_suit", torch.arange(n_found) // 2 * N_RANKS, persistent=False)
        n_in = n_cols * column_dim + (self.waste_cards + 1) * embed_dim + n_found * (embed_dim + 1) + 2
        self.head = nn.Sequential(nn.Linear(n_in, features_dim), nn.ReLU())

    def _lookup(self, codes: torch.Tensor) -> torch.Tensor:
        """The embeddings of integer ``codes`` (any shape), ``(*codes.shape, embed_dim)``.

        The same rows ``self.embed(codes)`` gives, gathered with ``index_select``: on the CPU its
        backward (an index-add) is 2-3 times faster than ``nn.Embedding``'s, which sorts the
        indices, and the embedding's backward was half of the extractor's time
        (``benchmarks/extractor_bench.py --profile``).
        """
        return self.embed.weight.index_select(0, codes.reshape(-1)).reshape(*codes.shape, self.embed_dim)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        tableau = observations["tableau"].long()  # (B, C, D)
        waste = observations["waste"].long()  # (B, T)
        heights = observations["foundations"]  # (B, 8) float
        counts = observations["counts"]  # (B, 2) float
        b = tableau.shape[0]

        # column(embeddings + depth_pos), with the depth term moved through the linear layer:
        # W (x + p) + c = W x + (W p + c), so the (B, C, D, E) sum and its backward are spared.
        linear = self.column[0]
        bias = linear.bias + linear.weight @ self.depth_pos.reshape(-1)  # (H,)
        cols = self._lookup(tableau).reshape(b, self.n_cols, self.depth * self.embed_dim)  # (B, C, D*E)
        cols = self.column[1](nn.functional.linear(cols, linear.weight, bias))  # (B, C, H)

        w = self.waste_cards
        top = self._lookup(waste[:, -w:]) + self.waste_pos  # (B, W, E)
        rest = waste[:, :-w] if waste.shape[1] > w else waste[:, :0]
        # The mean embedding of the buried cards as (how many of each code) @ (the table): the
        # codes carry no gradient, so only a (B, 54) x (54, E) product is differentiated.
        present = (rest != NO_CARD).float()  # (B, T-W)
        held = torch.zeros(b, N_OBS_CODES, device=rest.device).scatter_add_(1, rest, present)  # (B, 54)
        bag = (held @ self.embed.weight) / present.sum(1, keepdim=True).clamp(min=1.0)  # (B, E)

        h = heights.long()
        nxt = torch.where(h < N_RANKS, self.pile_suit + h, torch.full_like(h, NO_CARD))
        found = self._lookup(nxt)  # (B, 8, E)

        parts = [
            cols.reshape(b, -1),
            top.reshape(b, -1),
            bag,
            found.reshape(b, -1),
            heights / N_RANKS,
            counts * self.counts_scale,
        ]
        return self.head(torch.cat(parts, dim=1))
