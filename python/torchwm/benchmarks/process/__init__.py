"""``torchwm bench --suite process``: TorchVectorizedEnv against PufferLib (where installed) and
gymnasium's vector envs; its multi-agent cases are ``torchwm.benchmarks.multi_agent``'s. ``envs`` (the
cases' envs), ``shapes`` (workers x envs x batch), ``steppers`` (each backend behind one interface),
``sampling`` (the timed loop, also ``autotune``'s), ``rounds`` (the measured points and their
interleaved rounds), ``rows``, ``summary`` and ``targets`` (the table's rows, each backend's best and
the goals), ``bench`` (the whole suite), ``report`` (table, summary lines, plot), and the transport's
own cost per batch: ``overhead``, run by ``transport_cost`` in Linux's column and in the portable one."""
