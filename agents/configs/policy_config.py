"""The policy network's part of a training config: which network (``features_extractor``), its
options (one model per network) and SB3's heads (``net_arch``).

:class:`PolicyKwargs` is ``policy_kwargs`` in a config file; :mod:`agents.training.networks.policies`
turns it into an SB3 policy class and its keyword arguments. What a network may read (a player's
fields or the oracle's) is a rule between this section and ``env_kwargs``, checked by
:meth:`agents.configs.train_config.TrainConfig.problems`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from .messages import MODELS


class Strict(BaseModel):
    """A config section: unknown keys refused, no coercion from strings, defaults checked too."""

    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)


class NetArch(Strict):
    """Separate hidden layers for the policy (``pi``) and the value function (``vf``)."""

    pi: list[int] = Field(default_factory=lambda: [256, 256])
    vf: list[int] = Field(default_factory=lambda: [256, 256])


class EmbeddingKwargs(Strict):
    """Options of :class:`agents.training.networks.card_embedding.CardEmbeddingExtractor` (ignored by ``mlp``)."""

    embed_dim: int = Field(16, ge=1, le=256)  # size of a card code's embedding (one table for all slots)
    column_dim: int = Field(64, ge=1, le=1024)  # features per column, one network shared by all columns
    waste_cards: int = Field(8, ge=1, le=64)  # top waste cards seen one by one (the rest as a bag)
    features_dim: int = Field(256, ge=1, le=4096)  # output size of the extractor


class AttentionKwargs(Strict):
    """Options of :class:`.networks.card_attention.CardAttentionExtractor` (``features_extractor: card_attention``)."""

    top_cards: int = Field(8, ge=1, le=64)  # slots from the top of each column read as tokens
    waste_cards: int = Field(4, ge=1, le=64)  # top waste cards read as tokens
    d_model: int = Field(64, ge=1, le=1024)  # width of a token
    n_heads: int = Field(4, ge=1, le=64)  # attention heads (d_model a multiple of it)
    n_layers: int = Field(2, ge=1, le=16)  # encoder layers
    dim_feedforward: int = Field(128, ge=1, le=4096)  # width of each layer's feed-forward network
    features_dim: int = Field(256, ge=1, le=4096)  # output size of the extractor


class ScorerKwargs(Strict):
    """Options of :class:`agents.training.networks.move_scorer.MoveScorer` (``features_extractor: move_scorer``)."""

    embed_dim: int = Field(16, ge=1, le=256)  # size of a card's embedding and of its distance-from-home one
    top_cards: int = Field(4, ge=1, le=64)  # slots from the top of a column read one by one
    waste_cards: int = Field(3, ge=1, le=64)  # top waste cards read one by one
    hidden: int = Field(64, ge=1, le=1024)  # width of the column, waste, table vectors and the move scorers
    rank: int = Field(16, ge=1, le=256)  # source and destination vectors whose dot product scores a column pair
    value_dim: int = Field(64, ge=1, le=1024)  # value features under SB3's value layer


class LookupKwargs(Strict):
    """Options of :class:`.networks.lookup_scorer.LookupScorer` (``features_extractor: lookup_scorer``)."""

    top_cards: int = Field(3, ge=1, le=64)  # slots from the top of a column whose facts are read
    waste_cards: int = Field(2, ge=1, le=64)  # top waste cards whose facts are read
    hidden: int = Field(48, ge=1, le=1024)  # width of the column and table vectors
    rank: int = Field(8, ge=1, le=256)  # source and destination vectors whose dot product scores a column pair
    value_dim: int = Field(64, ge=1, le=1024)  # value features under SB3's value layer
    critic_stock: int = Field(0, ge=0, le=1024)  # next stock cards the value reads (asymmetric critic, oracle obs)


#: The options model of each network that takes options.
EXTRACTOR_KWARGS: dict[str, type[Strict]] = {
    "card_embedding": EmbeddingKwargs,
    "card_attention": AttentionKwargs,
    "move_scorer": ScorerKwargs,
    "lookup_scorer": LookupKwargs,
}


class PolicyKwargs(Strict):
    """The policy network."""

    features_extractor: Literal["card_embedding", "card_attention", "mlp", "move_scorer", "lookup_scorer"] = (
        "card_embedding"
    )
    features_extractor_kwargs: EmbeddingKwargs | AttentionKwargs | ScorerKwargs | LookupKwargs = Field(
        default_factory=EmbeddingKwargs
    )
    net_arch: list[int] | NetArch = Field(default_factory=lambda: [256, 256])
    activation_fn: Literal["tanh", "relu"] = "tanh"
    ortho_init: bool = True
    _mismatch: str | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _kwargs_default(cls, data: Any) -> Any:
        # null: the chosen extractor's defaults; mlp has no options, so whatever is given is unused.
        if isinstance(data, Mapping) and (
            data.get("features_extractor_kwargs", 0) is None or data.get("features_extractor") == "mlp"
        ):
            data = {k: v for k, v in data.items() if k != "features_extractor_kwargs"}
        return data

    @model_validator(mode="after")
    def _kwargs_of_extractor(self) -> PolicyKwargs:
        # The union takes the first options model that fits; the extractor says which it must be.
        # Options of another network are not refused here but reported by problems(), beside
        # whatever else the config needs changing (one message names every fix).
        kwargs = self.features_extractor_kwargs
        want = EXTRACTOR_KWARGS.get(self.features_extractor, EmbeddingKwargs)
        self._mismatch = None
        if not isinstance(kwargs, want):
            given = kwargs.model_dump(include=kwargs.model_fields_set)
            try:
                self.features_extractor_kwargs = want(**given)
            except ValidationError as e:
                names = ", ".join(want.model_fields)
                bad = ", ".join(str(err["loc"][0]) for err in e.errors())
                self._mismatch = (
                    f"{bad} do not apply to {self.features_extractor} (its options: {names}): "
                    "--set policy_kwargs.features_extractor_kwargs=null gives its defaults"
                )
        return self

    def problems(self) -> list[tuple[str, str]]:
        """``(key, message)`` pairs: options given for another network than the one chosen, or
        attention heads that do not divide the token width."""
        key = "policy_kwargs.features_extractor_kwargs"
        if self._mismatch:
            return [(key, self._mismatch)]
        kwargs = self.features_extractor_kwargs
        # Checked here, not in AttentionKwargs: a union member that raises would make the union's
        # message list every other member's keys as well.
        if isinstance(kwargs, AttentionKwargs) and kwargs.d_model % kwargs.n_heads:
            return [(f"{key}.n_heads", f"d_model {kwargs.d_model} is not a multiple of n_heads {kwargs.n_heads}")]
        return []

    @field_validator("net_arch")
    @classmethod
    def _positive_layers(cls, v: list[int] | NetArch) -> list[int] | NetArch:
        layers = v if isinstance(v, list) else [*v.pi, *v.vf]
        if any(n < 1 for n in layers):
            raise ValueError("layer sizes must be at least 1")
        return v


MODELS["NetArch"] = NetArch  # a union member whose keys messages may list
