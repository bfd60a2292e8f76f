"""What ``torchwm bench`` runs, one sub-package per suite over one measuring core: ``core`` (timing a
step loop, CPU time per batch, interleaved rounds and their spread, the caller's stand-in policies,
tables), ``atari`` (``--suite atari``: AtariVectorEnv against ale_py, EnvPool and gymnasium, and
``--stalls``), ``process`` (``--suite process``: TorchVectorizedEnv against PufferLib and gymnasium,
with the transport's cost per batch), ``multi_agent`` (the process suite's PettingZoo cases) and
``soak`` (``--soak``: leaks over a long run). One-off diagnostics live outside the package, in the
repository's ``benches/python/``; ``torchwm.autotune`` lives beside what it tunes (``torchwm.process``)."""
