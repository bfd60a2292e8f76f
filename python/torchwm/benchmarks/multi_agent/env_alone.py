"""The env's own cost, beside the backends: one env stepped in this process with nothing around it (CPU
milliseconds per row, which bounds any vectorizer at ``cores / env_ms_per_row``), and ``envs_alone``:
processes stepping the envs with no vectorizer at all, measured in the same rounds as the backends
(so under the same load)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["ALONE", "alone_rate", "env_ms_per_row"]

ALONE = "envs_alone"  # the reference beside the backends: the envs stepped in processes, no vectorizer


def env_ms_per_row(factory: Callable[[], Any], seconds: float, seed: int = 0) -> float:
    """CPU milliseconds per row of one env stepped in this process, nothing around it (actions drawn
    ahead; the step after an episode ends resets, as the vectorizers' default autoreset does)."""
    env = factory()
    try:
        agents = list(env.possible_agents)
        space = env.action_space(agents[0])
        space.seed(seed)
        actions = [{agent: space.sample() for agent in agents} for _ in range(16)]
        env.reset(seed=seed)
        steps, start = 0, time.process_time()
        while (now := time.process_time()) < start + seconds or steps == 0:
            if env.agents:
                env.step({agent: actions[steps % 16][agent] for agent in env.agents})
            else:
                env.reset()
            steps += 1
        return (now - start) * 1e3 / (steps * len(agents))
    finally:
        env.close()


def _step_alone(factory: Callable[[], Any], envs: int, seconds: float, start: Any, rates: Any) -> None:
    """One process of ``alone_rate``: ``envs`` envs stepped in turn (actions drawn ahead), timed from
    the moment every process is ready; puts its rows per second."""
    group = [factory() for _ in range(envs)]
    agents = list(group[0].possible_agents)
    space = group[0].action_space(agents[0])
    space.seed(0)
    actions = [{agent: space.sample() for agent in agents} for _ in range(16)]
    for i, env in enumerate(group):
        env.reset(seed=i)
    start.wait()
    steps, begin = 0, time.perf_counter()
    while (now := time.perf_counter()) < begin + seconds or steps == 0:
        for env in group:
            if env.agents:
                env.step({agent: actions[steps % 16][agent] for agent in env.agents})
            else:
                env.reset()
        steps += 1
    rates.put(steps * envs * len(agents) / (now - begin))


def alone_rate(factory: Callable[[], Any], workers: int, envs: int, seconds: float) -> float:
    """Rows per second of ``workers`` processes each stepping ``envs`` envs with no vectorizer around
    them (nothing sent, copied or waited for): the most any vectorizer's workers could give at that
    shape, measured beside the backends, so under the same load."""
    import multiprocessing as mp

    ctx: Any = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    start, rates = ctx.Barrier(workers), ctx.Queue()
    processes = [ctx.Process(target=_step_alone, args=(factory, envs, seconds, start, rates)) for _ in range(workers)]
    for process in processes:
        process.start()
    total = sum(rates.get(timeout=seconds + 120) for _ in processes)
    for process in processes:
        process.join()
    return total
