"""A policy network that reads the cards as tokens of a small transformer ("cards as tokens").

:class:`~.card_embedding.CardEmbeddingExtractor` sees each column through one network of its own
slots, so what one column can do for another (a card that fits, a card a foundation needs) is
left to the heads after the concatenation. :class:`CardAttentionExtractor` lets every card look
at every other card first:

* the tokens (``d_model`` wide, each a sum of embeddings):

  - one ``CLS`` token carrying the counts (stock size, redeals left) and the waste's size,
    scaled to 0..1 through one linear layer;
  - for each tableau column its top ``top_cards`` slots, top first: the card code (one table
    over the 54 codes, shared by every token), the column, the depth from the top, and how many
    cards lie below the slots read (a column deeper than ``top_cards`` is not mistaken for a
    short one). Slots past the column's bottom are left out of attention
    (``src_key_padding_mask``), except the top one: an empty column is one ``NO_CARD`` token,
    since an empty column is a move target of its own;
  - the top ``waste_cards`` waste cards, playable one first, with a position embedding (slots
    past the waste's bottom left out, the top one kept as for a column);
  - for each foundation pile the *next card it needs* (``NO_CARD`` once complete), embedded with
    the same table so that a card that goes home looks like it, plus the pile's embedding;

* ``n_layers`` pre-norm ``nn.TransformerEncoder`` layers (``batch_first``, no dropout);
* the output, in a fixed order so that SB3's heads can map it to actions that name columns: the
  ``CLS`` output, each column's mean output over its kept tokens (in column order), each waste
  token's output (left-out ones zeroed), concatenated and passed through one linear layer with
  ReLU to ``features_dim``.

It reads only a player's fields (``tableau``, ``waste``, ``foundations``, ``counts``); the
oracle's extra fields are never looked at (and the config refuses the oracle observation for
this network all the same).
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from forty_thieves_env.engine.cards import N_RANKS
from forty_thieves_env.envs.observation import N_OBS_CODES, NO_CARD

from .card_facts import columns_top_first


class CardAttentionExtractor(BaseFeaturesExtractor):
    """Cards as tokens of a transformer encoder, pooled per column (see the module docstring).

    Args:
        observation_space: The env's ``Dict`` space (``tableau``, ``waste``, ``foundations``,
            ``counts``; extra oracle fields are ignored).
        top_cards: Slots read from the top of each column (at most the column capacity).
        waste_cards: Top waste cards read (at most the stock size).
        d_model: Width of a token.
        n_heads: Attention heads (``d_model`` must be a multiple of it).
        n_layers: Encoder layers.
        dim_feedforward: Width of each layer's feed-forward network.
        features_dim: Output size.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Dict,
        top_cards: int = 8,
        waste_cards: int = 4,
        d_model: int = 64,
        n_heads: int = 4,
        n_layers: int = 2,
        dim_feedforward: int = 128,
        features_dim: int = 256,
    ) -> None:
        super().__init__(observation_space, features_dim)
        if d_model % n_heads:
            raise ValueError(f"d_model {d_model} is not a multiple of n_heads {n_heads}")
        n_cols, depth = observation_space["tableau"].shape
        stock_size = observation_space["waste"].shape[0]
        n_found = observation_space["foundations"].shape[0]
        self.n_cols, self.depth, self.n_found = n_cols, depth, n_found
        self.top_cards = min(top_cards, depth)
        self.waste_cards = min(waste_cards, stock_size)
        self.d_model = d_model

        def table(rows: int) -> nn.Parameter:
            # Small random rows: the sums of a token start distinct, none dominates the code's.
            return nn.Parameter(torch.randn(rows, d_model) * 0.02)

        self.embed = nn.Embedding(N_OBS_CODES, d_model)
        self.col_pos = table(n_cols)  # which column
        self.depth_pos = table(self.top_cards)  # slot k from the top
        self.below = table(depth + 1)  # cards under the slots read: 0..depth
        self.waste_pos = table(self.waste_cards)
        self.pile_pos = table(n_found)
        self.cls = table(1)
        counts_high = observation_space["counts"].high.astype("float32")
        self.register_buffer("counts_scale", torch.as_tensor(1.0 / counts_high.clip(min=1)), persistent=False)
        self.counts_in = nn.Linear(counts_high.shape[0] + 1, d_model)  # the counts and the waste's size
        # Pile p holds suit p // 2; its next card is suit * 13 + height (none once complete).
        self.register_buffer("pile_suit", torch.arange(n_found) // 2 * N_RANKS, persistent=False)
        self.register_buffer("slot", torch.arange(self.top_cards), persistent=False)  # (K,)
        layer = nn.TransformerEncoderLayer(
            d_model, n_heads, dim_feedforward, dropout=0.0, batch_first=True, norm_first=True
        )
        # Pre-norm layers train without a warm-up; nested tensors would drop the left-out
        # tokens' outputs in eval mode only, so they stay off (the pooling masks them itself).
        self.encoder = nn.TransformerEncoder(layer, n_layers, norm=nn.LayerNorm(d_model), enable_nested_tensor=False)
        n_out = (1 + n_cols + self.waste_cards) * d_model
        self.head = nn.Sequential(nn.Linear(n_out, features_dim), nn.ReLU())

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        tableau = observations["tableau"].long()  # (B, C, D), bottom card first, NO_CARD past the end
        waste = observations["waste"].long()  # (B, T), right-aligned: waste[:, -1] is playable
        heights = observations["foundations"].long()  # (B, 8)
        counts = observations["counts"].float()  # (B, 2)
        b, c, k, w = tableau.shape[0], self.n_cols, self.top_cards, self.waste_cards

        codes, length = columns_top_first(tableau, k)  # (B, C, K) top first, (B, C)
        col_pad = self.slot >= length.clamp(min=1).unsqueeze(-1)  # (B, C, K), slot 0 always kept
        under = (length - k).clamp(min=0)  # (B, C)
        cols = self.embed(codes) + self.col_pos[:, None] + self.depth_pos + self.below[under].unsqueeze(2)
        cols = cols.reshape(b, c * k, self.d_model)  # (B, C*K, E)

        top = waste[:, -w:].flip(1)  # (B, W), the playable card first
        waste_pad = top == NO_CARD
        waste_pad[:, 0] = False  # an empty waste is one NO_CARD token
        wst = self.embed(top) + self.waste_pos  # (B, W, E)

        nxt = torch.where(heights < N_RANKS, self.pile_suit + heights, torch.full_like(heights, NO_CARD))
        found = self.embed(nxt) + self.pile_pos  # (B, 8, E)

        waste_size = (waste != NO_CARD).sum(1, keepdim=True).float() / waste.shape[1]  # (B, 1)
        scalars = torch.cat([counts * self.counts_scale, waste_size], dim=1)  # (B, 3)
        cls = (self.cls + self.counts_in(scalars)).unsqueeze(1)  # (B, 1, E)

        tokens = torch.cat([cls, cols, wst, found], dim=1)  # (B, 1 + C*K + W + 8, E)
        keep_found = torch.zeros(b, self.n_found + 1, dtype=torch.bool, device=tokens.device)
        pad = torch.cat([keep_found[:, :1], col_pad.reshape(b, c * k), waste_pad, keep_found[:, 1:]], dim=1)
        out = self.encoder(tokens, src_key_padding_mask=pad)  # (B, S, E)

        # Pool only kept tokens: a left-out token's output depends on the attention path taken.
        keep = (~pad).unsqueeze(-1).float()  # (B, S, 1)
        out = out * keep
        col_out = out[:, 1 : 1 + c * k].reshape(b, c, k, self.d_model).sum(2)  # (B, C, E)
        col_out = col_out / keep[:, 1 : 1 + c * k].reshape(b, c, k, 1).sum(2)  # >= 1 kept per column
        wst_out = out[:, 1 + c * k : 1 + c * k + w]  # (B, W, E)
        parts = [out[:, 0], col_out.reshape(b, -1), wst_out.reshape(b, -1)]
        return self.head(torch.cat(parts, dim=1))  # (B, features_dim)
