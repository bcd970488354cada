"""The policy networks: the ``card_embedding`` and ``card_attention`` extractors (:mod:`.card_embedding`,
:mod:`.card_attention`), the move-scoring networks (:mod:`.move_scorer`, :mod:`.lookup_scorer` over the
card facts of :mod:`.card_facts`, both wired into SB3 by :mod:`.scorer_policy` with
:mod:`.masked_distribution`), which of them a config names and the policy it builds (:mod:`.policies`).

A ``card_embedding`` model saved when this package was one module pickles its extractor as
``agents.training.networks.CardEmbeddingExtractor``: the model loaders answer that path
(:data:`agents.storage.modelfile.MOVED_NAMES`), not this package.
"""
