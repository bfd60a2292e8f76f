"""``torchwm bench --soak``: not a speed test but a long run and many create/close cycles of
AtariVectorEnv and TorchVectorizedEnv, watching for leaks. ``snapshot`` (what is watched: memory,
threads, file descriptors, child processes, ``/dev/shm`` segments) and ``run`` (the parts of the run
and their one-line summary)."""
