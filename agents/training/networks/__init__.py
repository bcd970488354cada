"""The policy networks: the ``card_embedding`` extractor (:mod:`.card_embedding`), the move-scoring
networks (:mod:`.move_scorer`, :mod:`.lookup_scorer` over the card facts of :mod:`.card_facts`, both
wired into SB3 by :mod:`.scorer_policy` with :mod:`.masked_distribution`), and which of them a
config names (:mod:`.policies`)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # A card_embedding run's model zip pickles its extractor as agents.training.networks.CardEmbeddingExtractor
    # (this package was one module then); loading it asks for that name here.
    if name == "CardEmbeddingExtractor":
        from .card_embedding import CardEmbeddingExtractor

        return CardEmbeddingExtractor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
