"""MaskablePPO training: configs (:mod:`.config`), the envs (:mod:`.envs`), callbacks
(:mod:`.callbacks`), run folders (:mod:`.runs`), the policy networks (:mod:`.networks`,
:mod:`.move_scorer`), the imitation warm start (:mod:`.imitation`), the trainer and
``forty-thieves train`` (:mod:`.train`), shipping a run (:mod:`.shipping`), the speed rows of the
bench (:mod:`.throughput`), the demo (:mod:`.demo`) and the notebook runner (:mod:`.notebooks`).
torch and stable-baselines3 are imported only here and in :mod:`agents.players.ppo`."""
