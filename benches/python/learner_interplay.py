"""Whether a torch learner runs slower next to one vector env than next to another: PPO-shaped rounds
(a rollout with a CNN forward pass per step, then an update of a few epochs), the backends taking
turns, the order alternating every round (whichever goes first after start-up pays torch's warm-up).

    python benches/python/learner_interplay.py --rounds 12 --backends torchwm ale_py

Prints each backend's rollout and update seconds per round and their medians. Needs torch.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from torchwm.benchmarks.atari.backends import BACKENDS


def _nature_cnn(num_actions: int) -> Any:
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(4, 32, 8, stride=4),
        nn.ReLU(),
        nn.Conv2d(32, 64, 4, stride=2),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(3136, 512),
        nn.ReLU(),
        nn.Linear(512, num_actions),
    )


def run(backends: list[str], rounds: int, num_envs: int = 8, steps: int = 64) -> dict[str, dict[str, list[float]]]:
    import torch

    torch.manual_seed(0)
    net = _nature_cnn(4)
    optimizer = torch.optim.Adam(net.parameters(), lr=2.5e-4)
    envs = {b: BACKENDS[b]("breakout", num_envs) for b in backends}
    obs = {b: env.reset(seed=0)[0] for b, env in envs.items()}
    buffer = torch.zeros((steps * num_envs, 4, 84, 84), dtype=torch.uint8)
    rng = np.random.default_rng(0)
    times: dict[str, dict[str, list[float]]] = {b: {"rollout": [], "update": []} for b in backends}
    try:
        for round_index in range(rounds):
            for backend in backends if round_index % 2 == 0 else backends[::-1]:
                start = time.perf_counter()
                for step in range(steps):
                    with torch.no_grad():
                        net(torch.as_tensor(obs[backend]).float() / 255.0).argmax(1)
                    buffer[step * num_envs : (step + 1) * num_envs] = torch.as_tensor(obs[backend])
                    obs[backend] = envs[backend].step(rng.integers(0, 4, num_envs))[0]
                rolled = time.perf_counter()
                for _ in range(2):
                    for minibatch in torch.randperm(len(buffer)).split(128):
                        loss = net(buffer[minibatch].float() / 255.0).logsumexp(1).mean()
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                times[backend]["rollout"].append(rolled - start)
                times[backend]["update"].append(time.perf_counter() - rolled)
    finally:
        for env in envs.values():
            env.close()
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["torchwm", "ale_py"])
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args(argv)
    for backend, phases in run(args.backends, args.rounds).items():
        for phase, seconds in phases.items():
            rounded = ", ".join(f"{s:.3f}" for s in seconds)
            print(f"{backend:8} {phase:8} median {statistics.median(seconds):.3f} s  [{rounded}]")


if __name__ == "__main__":
    main()
