"""Speed benchmarks: the env rows (:mod:`.envs`), the training rows (:mod:`.training`) and
``forty-thieves bench``, which runs both and prints one table (:mod:`.command`); the solver on a
range of deals (:mod:`.solver`). The scripts in ``benchmarks/`` run these and the engine's own
timings."""
