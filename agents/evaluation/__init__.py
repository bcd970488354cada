"""Measuring agents and the env: games on fixed deals (:mod:`.evaluate`; a game's row and seed in
:mod:`.games`; a trained policy's games side by side in :mod:`.policy_eval`), solve sweeps
(:mod:`.solving`), the deals and worker pool they share (:mod:`.sweep`), win-rate statistics
(:mod:`.statistics`), paired comparisons (:mod:`.comparison`) and the env speed bench
(:mod:`.bench`)."""
