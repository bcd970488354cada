"""Training configs: the pydantic model of a config file (:mod:`.train_config`), its error
messages (:mod:`.messages`) and a run folder's ``config.yaml`` (:mod:`.run_file`).

They sit below the players and training: a ``ppo`` player describes a run's model from its
``config.yaml``, and training, benchmarks and RLlib read the same model.
"""
