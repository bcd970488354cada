"""Sweeps over deals, as the evaluator and the solve sweeps run them: which deals, and one job per
deal in this process or on a pool of worker processes (:mod:`.pool`), or on Ray (:mod:`.ray_pool`)."""
