"""``torchwm bench --suite atari``: AtariVectorEnv against ale_py, EnvPool and gymnasium's vector envs,
the same game and settings for all. ``backends`` (how each is made), ``emulator`` (the raw single-thread
speed that bounds them), ``measure`` (one point, and sweeps in interleaved repeats), ``summary`` (the
ratios the targets are stated in), ``report`` (which points, the table, plot and JSON) and ``stalls``
(``--stalls``: how much longer a batch that carries a reset takes)."""
