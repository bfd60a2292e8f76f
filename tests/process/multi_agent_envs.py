"""Small PettingZoo ParallelEnvs for the multi-agent tests: agents that leave before the episode ends,
and malformed ones. Module scope, so that spawned workers can import them."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class Departures(ParallelEnv):
    """``agents`` agents, each terminated at a step drawn at reset (1..``length``); the ones still there
    at ``length`` are truncated. Observations carry the step, the agent and its last action."""

    metadata = {"name": "departures_v0"}  # noqa: RUF012 (PettingZoo's class attribute)

    def __init__(self, agents: int = 3, length: int = 6) -> None:
        self.possible_agents = [f"agent_{i}" for i in range(agents)]
        self.length = length
        self.rng = np.random.default_rng()
        self.box = spaces.Box(-1e6, 1e6, (3,), np.float32)
        self.discrete = spaces.Discrete(4)
        self.agents: list[str] = []
        self.label = "departures"
        self.render_mode = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.box

    def action_space(self, agent: str) -> spaces.Space:
        return self.discrete

    def _observation(self, agent: str, action: Any) -> np.ndarray:
        return np.array([self.t, self.possible_agents.index(agent), action], np.float32)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.t = 0
        self.leave = {agent: int(self.rng.integers(1, self.length + 1)) for agent in self.possible_agents}
        self.agents = list(self.possible_agents)
        offset = (options or {}).get("offset", 0)
        observations = {agent: self._observation(agent, offset) for agent in self.agents}
        return observations, {agent: {"leaves_at": self.leave[agent]} for agent in self.agents}

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        self.t += 1
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for agent in self.agents:
            observations[agent] = self._observation(agent, actions[agent])
            rewards[agent] = float(actions[agent]) + 0.5 * self.t
            terminations[agent] = self.t >= self.leave[agent]
            truncations[agent] = not terminations[agent] and self.t >= self.length
            infos[agent] = {"t": self.t} if agent == self.possible_agents[0] else {}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos


class Stranger(Departures):
    """Its step returns an observation of an agent that is not one of ``possible_agents``."""

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        result = super().step(actions)
        result[0]["stranger"] = result[0][next(iter(result[0]))]
        return result


class NoReward(Departures):
    """Its step leaves out the reward of its first agent."""

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        result = super().step(actions)
        result[1].pop(self.possible_agents[0], None)
        return result


class Shapeshifter(Departures):
    """Its observation space grows at its second reset."""

    resets = 0

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self.resets += 1
        if self.resets == 2:
            self.box = spaces.Box(-1e6, 1e6, (4,), np.float32)
        return super().reset(seed=seed, options=options)


class Uneven(Departures):
    """Its last agent has another action space (what PettingZoo's padding wrappers fix)."""

    def action_space(self, agent: str) -> spaces.Space:
        return spaces.Discrete(5) if agent == self.possible_agents[-1] else self.discrete


class Slow(Departures):
    """Each step takes ``seconds``: a Ctrl-C lands while the vector env waits for it."""

    seconds = 0.5

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        import time

        time.sleep(self.seconds)
        return super().step(actions)
