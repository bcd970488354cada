"""MaskablePPO training: configs (:mod:`agents.configs`), the envs (:mod:`.envs`), callbacks
(:mod:`.callbacks`), run folders (:mod:`.runs`), the policy networks (:mod:`.networks`), the
imitation warm start (:mod:`.imitation`), the trainer and ``forty-thieves train`` (:mod:`.train`),
the trainers by algo (:mod:`.trainers`; the device-resident PPO :mod:`.torch_ppo`), shipping a run
(:mod:`.shipping`), the demo (:mod:`.demo`) and the notebook runner (:mod:`.notebooks`).
torch and stable-baselines3 are imported only here, in the policy module :mod:`agents.players.policy`
(with the ``ppo`` agent that uses it) and in the batched policy evaluation
:mod:`agents.evaluation.policy_eval`.

A model zip pickles its policy class by module path, and the shipped models and runs saved before
the networks moved into :mod:`.networks` name paths that are gone (``agents.training.lookup_scorer``,
``agents.training.move_scorer``, ``agents.training.config``): the model loaders answer them
(:data:`agents.storage.modelfile.MOVED_MODULES`), so those paths are not importable.
"""
