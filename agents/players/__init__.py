"""The players: the agent protocol and registry (:mod:`.base`), ``random``, ``heuristic`` (with
its :mod:`.weights`), ``lookahead``, ``sampling_solver`` (the solver on sampled hidden cards),
the oracle ``solver`` player, ``ppo`` (a trained model; shipped ones by name: :mod:`.shipped`),
and :mod:`.view`, which rebuilds game states from observations. Importing a player other than
``ppo`` imports no torch."""
