"""How long a vector env's batch takes when one of its envs resets, against batches without a reset,
for torchwm, ale_py and EnvPool side by side, with the caller's policy between steps.

    python -m torchwm.benchmarks.atari.stalls --game breakout --num-envs 16 --batch-size 16 \\
        --backends torchwm ale_py envpool --policy sleep --policy-ms 1 --rounds 3

In next-step autoreset mode an env whose episode ended resets on its next step, so a batch "has a
reset" when it steps an env that ended in the batch before. A sync batch waits for all its envs, so a
reset (ALE's own reset plus up to 30 no-op steps) can hold up the whole batch; an async batch is the
first envs to finish, so it does not wait for one. torchwm runs such resets ahead, while the caller's
policy runs, so its batches should barely wait. A batch's time is its ``step`` call alone (the policy
is not in it); steps/s counts the policy's time too, as a training loop's would.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from torchwm.benchmarks.atari.backends import BACKENDS, available_backends
from torchwm.benchmarks.core.policies import KINDS, Policy, make_policy


@dataclass
class StallResult:
    backend: str
    game: str
    num_envs: int
    batch_size: int
    policy: str
    steps_per_s: float
    batches: int
    share_with_reset: float
    ms_with_reset: float | None
    ms_without_reset: float | None

    @property
    def stall_ratio(self) -> float | None:
        """How many times longer a batch with a reset takes than one without."""
        if self.ms_with_reset is None or not self.ms_without_reset:
            return None
        return self.ms_with_reset / self.ms_without_reset


def _make_env(backend: str, game: str, num_envs: int, batch_size: int) -> Any:
    if batch_size != num_envs and backend.startswith("gym_"):
        raise ValueError(f"{backend}: only sync batches (batch_size == num_envs) are measured")
    return BACKENDS[backend](game, num_envs, batch_size=batch_size)


def _timed_batches(
    env: Any, policy: Policy | None, seconds: float, num_envs: int, seed: int
) -> tuple[int, float, list[float], list[float]]:
    """Steps for ``seconds``; returns (batches, elapsed s, step times with a reset, without)."""
    batch_size = getattr(env, "batch_size", num_envs)  # EnvPool's sync env has no batch_size
    actions = np.random.default_rng(seed).integers(0, int(env.single_action_space.n), size=(256, batch_size))
    obs, _ = env.reset(seed=seed)
    ended = np.zeros(num_envs, dtype=bool)
    with_reset: list[float] = []
    without_reset: list[float] = []
    batches = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if policy is not None:
            policy(obs)
        began = time.perf_counter()
        obs, _, terminated, truncated, info = env.step(actions[batches % 256])
        took = time.perf_counter() - began
        env_ids = np.asarray(info["env_id"])
        (with_reset if ended[env_ids].any() else without_reset).append(took)
        ended[env_ids] = np.asarray(terminated) | np.asarray(truncated)
        batches += 1
    return batches, time.perf_counter() - start, with_reset, without_reset


def measure(
    game: str,
    num_envs: int,
    batch_size: int,
    seconds: float,
    seed: int = 0,
    backend: str = "torchwm",
    policy: str = "none",
    policy_ms: float = 1.0,
) -> StallResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EnvPool: reset(seed=) is ignored
        env = _make_env(backend, game, num_envs, batch_size)
        try:
            batches, elapsed, with_reset, without_reset = _timed_batches(
                env, make_policy(policy, policy_ms), seconds, num_envs, seed
            )
            size = getattr(env, "batch_size", num_envs)
        finally:
            env.close()
    label = f"sleep {policy_ms:g} ms" if policy == "sleep" else policy
    return StallResult(
        backend,
        game,
        num_envs,
        size,
        label,
        round(batches * size / elapsed),
        batches,
        round(len(with_reset) / batches, 3),
        round(1000 * float(np.mean(with_reset)), 3) if with_reset else None,
        round(1000 * float(np.mean(without_reset)), 3) if without_reset else None,
    )


def _median(results: list[StallResult]) -> dict[str, Any]:
    def med(values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return round(statistics.median(present), 3) if present else None

    row = asdict(results[0])
    for key in ("steps_per_s", "share_with_reset", "ms_with_reset", "ms_without_reset"):
        row[key] = med([getattr(r, key) for r in results])
    row["stall_ratio"] = med([r.stall_ratio for r in results])
    row["rounds"] = len(results)
    return row


def stall_rows(
    games: list[str],
    num_envs: list[int],
    backends: list[str],
    policy: str,
    policy_ms: float,
    seconds: float,
    rounds: int,
) -> list[dict[str, Any]]:
    """Every game x env count x mode (sync, and async with half batches) x backend, backends interleaved
    round by round; one row of medians per point (what ``torchwm bench --stalls`` prints). Backends that
    have no async mode (gymnasium's) are measured in sync mode only."""
    rows = []
    for game in games:
        for n in num_envs:
            for batch_size in (n, max(1, n // 2)):
                runs: dict[str, list[StallResult]] = {}
                for _ in range(rounds):
                    for backend in backends:
                        if batch_size != n and backend.startswith("gym_"):
                            continue
                        result = measure(game, n, batch_size, seconds, 0, backend, policy, policy_ms)
                        runs.setdefault(backend, []).append(result)
                rows += [_median(results) for results in runs.values()]
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", nargs="+", default=["breakout", "pong"])
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--batch-size", type=int, nargs="+", default=[32, 16])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--backends", nargs="+", default=["torchwm"], help=f"any of {available_backends()}")
    parser.add_argument("--policy", choices=KINDS, default="none", help="the caller's work between steps")
    parser.add_argument("--policy-ms", type=float, default=1.0, help="--policy sleep: its length")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds; medians are printed")
    args = parser.parse_args(argv)
    for game in args.game:
        for batch_size in args.batch_size:
            runs: dict[str, list[StallResult]] = {backend: [] for backend in args.backends}
            for _ in range(args.rounds):
                for backend in args.backends:
                    runs[backend].append(
                        measure(game, args.num_envs, batch_size, args.seconds, 0, backend, args.policy, args.policy_ms)
                    )
            for results in runs.values():
                if results:
                    print(json.dumps(_median(results)), flush=True)


if __name__ == "__main__":
    main()
