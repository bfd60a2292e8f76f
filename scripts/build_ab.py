"""A/B of two torchwm builds, side by side in one run: the same AtariVectorEnv cases, interleaved.

    python scripts/build_ab.py --a /path/to/old/python --b /path/to/new/python

A developer's tool (not in the wheel): each child imports the torchwm it is given.

Each path is a folder holding a ``torchwm`` package with its built ``_core`` extension (a source
tree's ``python/`` after ``maturin develop``, or an unpacked wheel). Every measurement runs in a fresh
child process whose ``sys.path`` starts with that folder; the rounds alternate A and B case by case,
so a noisy machine slows both alike. The ratio reported per case is B/A of the medians.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm


@dataclass(frozen=True)
class Case:
    num_envs: int
    num_threads: int  # 0: torchwm's default for the mode
    batch_size: int  # 0: all envs (sync)
    policy_ms: float = 0.0

    @property
    def label(self) -> str:
        mode = "sync" if self.batch_size in (0, self.num_envs) else f"async {self.batch_size}"
        policy = f" +{self.policy_ms:g} ms policy" if self.policy_ms else ""
        threads = self.num_threads or "default"
        return f"{self.num_envs:>2} envs, {threads} threads, {mode}{policy}"


def default_cases(env_counts: list[int], thread_counts: list[int]) -> list[Case]:
    """Sync and async (half the envs per batch) at each env and thread count, and the async overlap
    with a 1 ms policy at the middle env count and the next (default threads)."""
    cases = []
    for num_envs in env_counts:
        for threads in thread_counts:
            cases.append(Case(num_envs, threads, 0))
            cases.append(Case(num_envs, threads, num_envs // 2))
    middle = env_counts[len(env_counts) // 2 : len(env_counts) // 2 + 2]
    cases += [Case(num_envs, 0, num_envs // 2, policy_ms=1.0) for num_envs in middle]
    return cases


_CHILD = """
import json, sys, time
sys.path.insert(0, {path!r})
import torchwm
from torchwm.benchmarks.core.timing import steps_per_second
assert torchwm.__file__.startswith({path!r}), torchwm.__file__
policy = (lambda obs: time.sleep({policy_ms} / 1000)) if {policy_ms} else None
env = torchwm.AtariVectorEnv({game!r}, {num_envs}, num_threads={num_threads}, batch_size={batch_size})
rate = steps_per_second(env, {seconds}, batch_size=env.batch_size, num_actions=int(env.single_action_space.n),
                        policy=policy)
env.close()
print(json.dumps(rate))
"""


def measure(path: str, case: Case, game: str, seconds: float) -> float:
    """Env steps/s of `case` with the build at `path`, in a fresh interpreter."""
    code = _CHILD.format(path=path, game=game, seconds=seconds, **case.__dict__)
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def run(a: str, b: str, cases: list[Case], game: str, seconds: float, rounds: int) -> list[dict[str, Any]]:
    rates: dict[Case, dict[str, list[float]]] = {case: {"a": [], "b": []} for case in cases}
    with tqdm(total=len(cases) * rounds * 2, desc="A/B", unit="run") as progress:
        for round_index in range(rounds):
            for case in cases:
                # Alternate which build goes first, so neither always runs on a warmer machine.
                order = (("a", a), ("b", b)) if round_index % 2 == 0 else (("b", b), ("a", a))
                for name, path in order:
                    rates[case][name].append(measure(path, case, game, seconds))
                    progress.update()
    rows = []
    for case in cases:
        a_median, b_median = (statistics.median(rates[case][name]) for name in ("a", "b"))
        per_round = [rb / ra for ra, rb in zip(rates[case]["a"], rates[case]["b"])]
        rows.append(
            {
                "case": case.label,
                "a_steps_per_s": round(a_median),
                "b_steps_per_s": round(b_median),
                "ratio": round(b_median / a_median, 3),
                "ratio_range": [round(min(per_round), 3), round(max(per_round), 3)],
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| case | A steps/s | B steps/s | B/A (median) | B/A per round |", "|---|---:|---:|---:|---:|"]
    for row in rows:
        low, high = row["ratio_range"]
        lines.append(
            f"| {row['case']} | {row['a_steps_per_s']:,} | {row['b_steps_per_s']:,} | "
            f"{row['ratio']:.2f}x | {low:.2f}–{high:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="folder holding build A's torchwm package (the baseline)")
    parser.add_argument("--b", required=True, help="folder holding build B's torchwm package")
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts (0: the default)")
    parser.add_argument("--only", action="append", default=[], help="run only cases whose label contains this")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument(
        "--policy-ms", type=float, default=0.0, help="a sleep between steps in every case (0: only the overlap cases)"
    )
    args = parser.parse_args(argv)
    cases = [
        dataclasses.replace(case, policy_ms=case.policy_ms or args.policy_ms)
        for case in default_cases(args.num_envs, args.threads)
        if not args.only or any(part in case.label for part in args.only)
    ]
    rows = run(args.a, args.b, cases, args.game, args.seconds, args.rounds)
    print(markdown(rows))
    if args.json:
        with open(args.json, "w") as file:
            json.dump(rows, file, indent=1)


if __name__ == "__main__":
    main()
