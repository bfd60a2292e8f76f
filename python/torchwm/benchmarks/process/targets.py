"""The process vectorizer's targets, checked on every run of the process suite: each a ratio of
torchwm's rate to a peer's, against its goal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["target_checks"]

HEAVY_CASE = "cartpole_numpy"  # the heavier env (numpy work per step), judged against the best of both

# The targets for TorchVectorizedEnv, checked on every run: (what, ratio, goal).
CHEAP_VS_BEST = 1.3
ONE_WORKER_VS_PUFFERLIB = 1.0
HEAVY_VS_BEST_OF_BOTH = 1.2
POOL_VS_PUFFERLIB = 1.0


def target_checks(rows: list[dict[str, Any]], summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets of the process vectorizer's transport work, as measured by this run (where both
    sides of a ratio were measured): CartPole best vs PufferLib's best and Sync's; one worker vs
    PufferLib's one worker; the heavier env's best vs the best of PufferLib and Sync; each pool shape
    vs PufferLib's at the same batch."""
    checks = []

    def check(what: str, ratio: float | None, goal: float) -> None:
        if ratio is not None:
            checks.append({"target": what, "ratio": round(ratio, 2), "goal": goal, "met": ratio >= goal})

    for case, s in summary.items():
        x = s["torchwm_best_x"]
        if case == "cartpole":
            check("cartpole: torchwm best / pufferlib best", x.get("pufferlib"), CHEAP_VS_BEST)
            check("cartpole: torchwm best / gym_sync", x.get("gym_sync"), CHEAP_VS_BEST)
            for row in _one_worker_rows(rows, case):
                check(
                    f"cartpole {row['workers_envs']}: torchwm / pufferlib",
                    row.get("vs_pufferlib"),
                    ONE_WORKER_VS_PUFFERLIB,
                )
        if case == HEAVY_CASE:
            # Over the faster of the two: the lower of torchwm's (per-round) ratios to each.
            ratios = [x[b] for b in ("pufferlib", "gym_sync") if b in x]
            if ratios:
                check(f"{case}: torchwm best / best of pufferlib and gym_sync", min(ratios), HEAVY_VS_BEST_OF_BOTH)
        for row in rows:
            if row["case"] == case and row["backend"] == "torchwm" and row["mode"] == "pool":
                # Against PufferLib's faster pool at this shape, where both of its pools were measured.
                ratios = [row[k] for k in ("vs_pufferlib", "vs_pufferlib_async") if row.get(k) is not None]
                check(
                    f"{case} {row['workers_envs']} pool {row['batch_size']}: torchwm / pufferlib",
                    min(ratios) if ratios else None,
                    POOL_VS_PUFFERLIB,
                )
    return checks


def _one_worker_rows(rows: list[dict[str, Any]], case: str) -> Iterator[dict[str, Any]]:
    for row in rows:
        one_worker = row["workers_envs"].startswith("1x")
        if row["case"] == case and row["backend"] == "torchwm" and row["mode"] == "sync" and one_worker:
            yield row
