"""The players: the agent protocol and registry (:mod:`.base`), ``random``, ``heuristic`` (with
its :mod:`.weights`), ``lookahead``, ``sampling_solver`` (the solver on sampled hidden cards),
``guided_solver`` (the same with a trained policy as its prior),
the oracle ``solver`` player, ``ppo`` (a trained model; shipped ones by name: :mod:`.shipped`),
:mod:`.policy` (what a trained policy reads, its logits, its greedy and sampled moves: for the
``ppo`` agent, the batched evaluation and the trainer) and :mod:`.view`, which rebuilds game
states from observations. Importing a player other than ``ppo`` and ``guided_solver`` imports
no torch (:mod:`.policy` does)."""
