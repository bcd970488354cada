"""The MaskablePPO policy of the networks that score moves themselves (``move_scorer``, ``lookup_scorer``).

Such a network returns ``[logits | value features]`` from its features extractor, so the policy
reads the logits straight through (no ``net_arch`` heads, ``action_net`` the identity) and puts
SB3's linear value layer on the rest. :class:`ScorerPolicy` does that wiring once; a network's
policy only names its extractor class.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from torch import nn

from forty_thieves_env.engine.actions import max_run_for

from .masked_distribution import OnceMaskedCategoricalDistribution


class Split(nn.Module):
    """Stands in for SB3's ``mlp_extractor``: the first ``n`` features are the logits, the rest the value's."""

    def __init__(self, n_actions: int, value_dim: int) -> None:
        super().__init__()
        self.latent_dim_pi, self.latent_dim_vf = n_actions, value_dim

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, : self.latent_dim_pi]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, self.latent_dim_pi :]


class ScorerPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO's ``Dict`` policy with a move-scoring network computing the logits.

    ``net_arch`` is not used (the scorer has its own layers); ``features_extractor_kwargs`` go
    to :attr:`extractor` (``max_run`` is filled in from the action space). The extractor has
    ``n_actions``, ``value_dim`` and ``reset_output_layers()``.
    """

    #: The network (a ``BaseFeaturesExtractor``); set by each subclass.
    extractor: ClassVar[type[nn.Module]]

    def __init__(
        self, observation_space: gym.spaces.Dict, action_space: gym.spaces.Discrete, *args: Any, **kwargs: Any
    ) -> None:
        kwargs["features_extractor_class"] = self.extractor
        fx = dict(kwargs.get("features_extractor_kwargs") or {})
        fx["max_run"] = max_run_for(observation_space["tableau"].shape[0], action_space.n)
        kwargs["features_extractor_kwargs"] = fx
        kwargs["net_arch"] = []
        super().__init__(observation_space, action_space, *args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        fx = self.features_extractor
        assert isinstance(fx, self.extractor)
        self.mlp_extractor = Split(fx.n_actions, fx.value_dim)

    def _build(self, lr_schedule: Any) -> None:
        self.action_dist = OnceMaskedCategoricalDistribution(int(self.action_space.n))
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the scorer's logits are the action logits
        fx = self.features_extractor
        assert isinstance(fx, self.extractor)
        fx.reset_output_layers()  # SB3's orthogonal init (ortho_init) would undo the small start
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)
