"""Measuring agents and the env: games on fixed deals (:mod:`.evaluate`), solve sweeps
(:mod:`.solving`), the deals and worker pool they share (:mod:`.sweep`), win-rate
statistics (:mod:`.statistics`) and the env speed bench (:mod:`.bench`)."""
