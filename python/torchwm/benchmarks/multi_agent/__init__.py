"""The process suite's multi-agent cases (``torchwm bench --suite process``, PettingZoo ParallelEnvs with
agents as rows): TorchVectorizedEnv against SuperSuit and PufferLib. ``cases`` (the envs and the grid of
configurations), ``steppers`` (the backends and their timed loop), ``env_alone`` (the env's own cost,
the bound on any vectorizer), ``grid`` (the interleaved rounds over the grid, each backend at its best),
``final`` (the two best head to head) and ``report`` (the summary lines)."""
