"""Solving deals: solve sweeps and their verdict folders (:mod:`.sweep`, ``forty-thieves solve``),
the winnable-deal sets they export, and the winnability table measured from them (:mod:`.winnability`)."""
