"""The measuring core every suite of ``torchwm bench`` shares, and nothing re-implements: timing a
vector env's step loop (``timing``), other processes' CPU time (``cpu_time``) and what a batch costs
(``batch_cost``), interleaved rounds (``rounds``) and how far they agree (``round_spread``), the
caller's stand-in policies (``policies``), the machine's cores and description (``machine``), a
backend that cannot run here (``unavailable``) and the plain-text tables the reports print (``table``)."""
