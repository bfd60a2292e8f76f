"""What the vectorizers offer the trainers people use: torch batches (``reset_batch``/``step_batch``) and
Stable-Baselines3's ``VecEnv`` (``to_sb3()``), mixed into every vector env by :class:`trainer.TrainerIntegrationMixin`."""
