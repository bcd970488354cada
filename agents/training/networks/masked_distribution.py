"""MaskablePPO's action distribution, normalised once and sampled by inverse CDF.

sb3-contrib builds a ``MaskableCategorical`` from the policy's logits (normalising them, then
once more through ``apply_masking(None)``) and then applies the action masks (normalising a
third time), each time with ``logsumexp``, which on the CPU is about twenty times slower
than ``log_softmax`` over the same rows; and it samples with ``torch.multinomial``, forty
times slower than a cumulative sum and a binary search. With a network as cheap as the
scorers', that was a third of the training time. This distribution keeps the logits until
the masks arrive, normalises the masked logits once with ``log_softmax`` and samples by
inverse CDF (:func:`agents.players.policy.sample_actions`, the draw the ``TorchPPO`` trainer
makes too). What it computes (log-probabilities, entropy, samples from the same
distribution, modes) is the same, so a model trained with it loads and plays with the stock
one and back.
"""

from __future__ import annotations

import numpy as np
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategorical, MaskableCategoricalDistribution
from torch.distributions import Distribution

from agents.players.policy import masked_logits, sample_actions


class _MaskedCategorical(MaskableCategorical):
    """A ``MaskableCategorical`` whose masks are applied before its one normalisation."""

    def __init__(self, logits: torch.Tensor, masks: torch.Tensor | np.ndarray | None) -> None:
        self._original_logits = logits
        if masks is None:
            self.masks = None
            masked = logits
        else:
            self.masks = torch.as_tensor(masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
            masked = masked_logits(logits, self.masks)
        # What Categorical.__init__ does with logits, with log_softmax for its logsumexp.
        self.logits = torch.log_softmax(masked, dim=-1)
        self._param = self.logits
        self._num_events = self.logits.shape[-1]
        Distribution.__init__(self, self.logits.shape[:-1], validate_args=False)

    def sample(self, sample_shape: torch.Size = torch.Size()) -> torch.Tensor:  # noqa: B008 (torch's signature)
        if sample_shape != torch.Size():
            return super().sample(sample_shape)
        probs = self.probs  # (B, A): the batch's logits are viewed as (-1, A)
        return sample_actions(probs.reshape(-1, self._num_events)).reshape(probs.shape[:-1])


class OnceMaskedCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical distribution, built once per batch (see the module docstring)."""

    def __init__(self, action_dim: int) -> None:
        super().__init__(action_dim)
        self._logits: torch.Tensor | None = None
        self._dist: MaskableCategorical | None = None

    @property  # type: ignore[override]
    def distribution(self) -> MaskableCategorical:
        if self._dist is None:  # no masks were applied: the plain distribution
            assert self._logits is not None, "proba_distribution() comes first"
            self._dist = _MaskedCategorical(self._logits, None)
        return self._dist

    @distribution.setter
    def distribution(self, value: MaskableCategorical) -> None:
        self._dist = value

    def proba_distribution(self, action_logits: torch.Tensor) -> OnceMaskedCategoricalDistribution:
        self._logits = action_logits.view(-1, self.action_dim)
        self._dist = None
        return self

    def mode(self) -> torch.Tensor:
        return torch.argmax(self.distribution.logits, dim=1)  # the probabilities' argmax, without exp

    def apply_masking(self, masks: torch.Tensor | np.ndarray | None) -> None:
        assert self._logits is not None, "proba_distribution() comes first"
        self._dist = _MaskedCategorical(self._logits, masks)
