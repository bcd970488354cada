"""Measuring agents: games on fixed deals (:mod:`.evaluate`; a game's row and seed in :mod:`.games`;
a trained policy's games side by side in :mod:`.policy_eval`), win-rate statistics
(:mod:`.statistics`) and paired comparisons (:mod:`.comparison`). The deals and worker pool are
:mod:`agents.sweeps`'; solve sweeps are :mod:`agents.solving`."""
