"""The multi-agent cases (PettingZoo ParallelEnvs, agents as rows) and the grid of configurations every
backend runs for each: workers x envs per worker, and the pool batches (in workers) at each worker count.
A case whose env does not install here (``mpe2``, ``pymunk``) is skipped with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchwm.benchmarks.core.machine import cores

__all__ = ["MA_CASES", "agent_count", "case_missing", "config_name", "configs", "pool_sizes"]


def simple_spread() -> Any:
    from mpe2 import simple_spread_v3

    return simple_spread_v3.parallel_env(N=3, max_cycles=25)


def pistonball() -> Any:
    from pettingzoo.butterfly import pistonball_v6

    return pistonball_v6.parallel_env(n_pistons=8, max_cycles=125)


# case: (factory, description, envs per worker searched); the workers searched are 1, cores, 2 x cores.
MA_CASES: dict[str, tuple[Callable[[], Any], str, tuple[int, ...]]] = {
    "simple_spread": (simple_spread, "MPE simple_spread_v3, 3 agents (mpe2)", (4, 16)),
    "pistonball": (pistonball, "Butterfly pistonball_v6, 8 pistons (pymunk)", (1, 2)),
}


def configs(case: str, grid: bool = True) -> list[tuple[int, int]]:
    """The (workers, envs per worker) every backend runs for ``case``: one worker (SuperSuit then steps
    in the caller's process), one per core and two per core, each with the case's envs per worker;
    without ``grid`` (a smoke run), one per core with the case's fewest envs."""
    if not grid:
        return [(cores(), min(MA_CASES[case][2]))]
    workers = sorted({1, cores(), 2 * cores()})
    return [(w, e) for w in workers for e in MA_CASES[case][2]]


def agent_count(factory: Callable[[], Any]) -> int:
    """How many possible agents (rows) each env of ``factory`` has; the probe env is closed."""
    probe = factory()
    try:
        return len(probe.possible_agents)
    finally:
        probe.close()


def pool_fits(workers: int) -> bool:
    """Whether pool mode (half the workers per batch) takes ``workers``: an even number, 2 or more."""
    return workers >= 2 and workers % 2 == 0


def pool_sizes(workers: int) -> list[int]:
    """The batches of pool mode measured at ``workers``, in workers per batch: half of them (an even
    number, 2 or more), and one where that differs. With more workers than cores, a batch of one lets a
    worker that waits for its actions hand its core to another (a deeper pipeline)."""
    sizes = [workers // 2] if pool_fits(workers) else []
    return sizes + ([1] if workers > 2 else [])


def config_name(workers: int, envs: int, pool: int = 0) -> str:
    """``2x4`` (sync), ``2x4 pool`` (a batch of half the workers, the first to answer) or ``4x4 pool1``
    (a batch of one worker's envs, where that is not half)."""
    if not pool:
        return f"{workers}x{envs}"
    return f"{workers}x{envs} pool" + ("" if 2 * pool == workers else str(pool))


def case_missing(case: str) -> str | None:
    """Why ``case``'s env cannot be made here (its package is not installed), or None where it can."""
    try:
        MA_CASES[case][0]().close()
    except ImportError as error:
        return f"not installed here: {error}"
    return None
