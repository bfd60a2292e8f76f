"""The worker of PettingZoo ``ParallelEnv``s: each env owns ``len(possible_agents)`` consecutive rows.

Row ``e * A + a`` is agent ``possible_agents[a]`` of the worker's env ``e``. A row whose agent is not in
its env's observation dict (gone, or not yet there) holds a zero observation, reward 0 and both flags
False, and its ``agent_mask`` is False: never the data of an earlier step. An env is done when none of
its agents remains (every agent in ``env.agents`` terminated or truncated); it is then reset as
single-agent envs are in the autoreset mode. A malformed env (an agent outside ``possible_agents``, a
missing entry, a space that changed) raises a ``ValueError`` naming the env.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, create_empty_array, iterate

from torchwm.process.agents import AgentLayout, is_parallel_env
from torchwm.process.protocol import STEP_DONE_FRAME, Message, frame
from torchwm.process.remote_errors import RemoteError, capture
from torchwm.process.sb3_calls import SB3_CALLS
from torchwm.process.worker import BoxRows, EnvOptions, Worker

__all__ = ["AgentWorker"]

# One row's results of a step: (reward, terminated, truncated, present).
_ABSENT = (0.0, False, False, False)
_RESET = (0.0, False, False, True)  # an agent's row after a reset


class AgentWorker(Worker):
    """A :class:`Worker` whose envs are ParallelEnvs, their agents as rows (env-major)."""

    def _start(self) -> None:
        import cloudpickle

        config, buffers = self.config, self.config.buffers
        layout: AgentLayout = config.agents
        # Each env's own layout: a reset compares its spaces with these, the same objects in the common
        # case (a cheap check), not with env 0's, which came from another process's env.
        self.layouts: list[AgentLayout] = []
        for i, factory in enumerate(config.factories):
            self.current = config.first_env + i
            make = cloudpickle.loads(factory) if isinstance(factory, bytes) else factory
            env = make()
            if not is_parallel_env(env):
                raise TypeError(
                    f"sub-environment {self.current}: the env factory returned {type(env).__name__}, not a "
                    "PettingZoo ParallelEnv as sub-environment 0's"
                )
            self.envs.append(env)
            self.layouts.append(AgentLayout.of(env, self.current))
            layout.check_same(self.layouts[-1], self.current)
        self.layout, self.agent_count = layout, layout.count
        self.index = {agent: a for a, agent in enumerate(layout.agents)}
        rows = len(self.envs) * layout.count
        first_row = config.first_env * layout.count
        self.views = buffers.views(first_row, first_row + rows)
        self.observation_space = buffers.observation_space
        self.action_space = batch_space(buffers.action_space, rows)
        self.plain_actions = isinstance(self.action_space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary))
        self.autoreset = [False] * len(self.envs)
        self.next_step = config.autoreset_mode == AutoresetMode.NEXT_STEP
        self.same_step = config.autoreset_mode == AutoresetMode.SAME_STEP
        self.zero = next(iter(iterate(self.observation_space, create_empty_array(self.observation_space, 1, np.zeros))))
        self.observations = [self.zero] * rows
        self.zeros, self.absent = [self.zero] * layout.count, [_ABSENT] * layout.count  # one env's empty rows
        self.box_rows = BoxRows.of(self.views.observations)
        assert self.views.agent_mask is not None  # allocated for agent rows
        self.agent_mask: np.ndarray = self.views.agent_mask

    def _env_spaces(self) -> list[tuple[spaces.Space, spaces.Space]]:
        return [(self.layout.observation_space, self.layout.action_space)] * len(self.envs)

    # ------------------------------------------------------------------------------------ step

    def _step(self, batch: Any) -> bytes:
        actions: Any = batch
        if not (isinstance(batch, list) or (self.plain_actions and isinstance(batch, np.ndarray))):
            actions = list(iterate(self.action_space, batch))
        rows = len(self.observations)
        results = [_ABSENT] * rows
        infos: list[list[dict]] | None = None
        raised: list[RemoteError] = []
        for e in range(len(self.envs)):
            self.current = self.config.first_env + e
            try:
                if self.autoreset[e] and self.next_step:
                    row_infos = self._reset_rows(e, None, None, results)
                else:
                    row_infos = self._step_rows(e, actions, results)
            except Exception as error:  # the envs after it step all the same, as in the Worker's step
                raised.append(capture(self.current, error))
                continue
            if row_infos:
                infos = infos or [[] for _ in range(rows)]
                for r, info in row_infos:
                    infos[r].extend(info)
        if raised:
            return frame(Message.RAISED, raised)
        views = self.views
        rewards, terminations, truncations, present = zip(*results)
        views.rewards[:] = rewards
        views.terminations[:] = terminations
        views.truncations[:] = truncations
        self.agent_mask[:] = present
        payload = self._publish()
        if payload is None and infos is None:
            return STEP_DONE_FRAME
        return frame(Message.OK, (payload, infos))

    def _step_rows(self, e: int, actions: Any, results: list[tuple]) -> list[tuple[int, list[dict]]]:
        """Steps env ``e`` with its live agents' actions; fills its rows; returns their infos."""
        env, base = self.envs[e], e * self.agent_count
        observations, rewards, terminations, truncations, infos = env.step(self._actions(env, base, actions))
        row_infos = self._fill_rows(e, observations, infos, results, (rewards, terminations, truncations))
        done = all(terminations.get(agent) or truncations.get(agent) for agent in env.agents)
        self.autoreset[e] = done
        if done and self.same_step:
            return self._same_step_reset(e, row_infos, results)
        return row_infos

    def _actions(self, env: Any, base: int, actions: Any) -> dict[Any, Any]:
        """The actions of ``env``'s live agents (rows from ``base``), by agent."""
        index = self.index
        try:
            return {agent: actions[base + index[agent]] for agent in env.agents}
        except (KeyError, TypeError):  # names the agent that is not a possible agent
            return {agent: actions[base + self._row(agent, "env.agents")] for agent in env.agents}

    def _same_step_reset(
        self, e: int, row_infos: list[tuple[int, list[dict]]], results: list[tuple]
    ) -> list[tuple[int, list[dict]]]:
        """SAME_STEP: env ``e`` is reset at once; each row's last observation and info become
        gymnasium's ``final_obs``/``final_info``; the step's rewards and flags stay, the mask is the reset's."""
        base, count = e * self.agent_count, self.agent_count
        finals = {r: {"final_obs": self.observations[r], "final_info": {}} for r in range(base, base + count)}
        for r, info in row_infos:
            finals[r]["final_info"] = info[0]
        step_results = results[base : base + count]
        reset_infos = dict(self._reset_rows(e, None, None, results))
        for offset, (reward, terminated, truncated, _) in enumerate(step_results):
            results[base + offset] = (reward, terminated, truncated, results[base + offset][3])
        self.autoreset[e] = False
        return [(r, [finals[r], *reset_infos.get(r, [])]) for r in finals]

    # ------------------------------------------------------------------------------------ reset

    def _reset_rows(self, e: int, seed: int | None, options: Any, results: list[tuple]) -> list[tuple[int, list[dict]]]:
        """Resets env ``e`` (then checks that its spaces did not change); fills its rows; returns their infos."""
        env = self.envs[e]
        observations, infos = env.reset(seed=seed, options=options)
        self.layouts[e].check_same(AgentLayout.of(env, self.current), self.current)
        row_infos = self._fill_rows(e, observations, infos, results, None)
        self.autoreset[e] = False
        return row_infos

    def reset(self, payload: Any) -> bytes:
        seeds, options, mask = payload
        rows = len(self.observations)
        results = [_ABSENT] * rows
        infos: list[list[dict] | None] = [None] * rows
        views = self.views
        raised: list[RemoteError] = []
        for e in range(len(self.envs)):
            self.current = self.config.first_env + e
            if mask is not None and not mask[e]:
                continue
            env_options = options[e] if isinstance(options, EnvOptions) else options
            try:
                row_infos = dict(self._reset_rows(e, seeds[e], env_options, results))
            except Exception as error:  # the envs after it reset all the same, as in the Worker's reset
                raised.append(capture(self.current, error))
                continue
            for r in range(e * self.agent_count, (e + 1) * self.agent_count):
                infos[r] = row_infos.get(r, [])
                views.rewards[r], views.terminations[r], views.truncations[r], self.agent_mask[r] = results[r]
        if raised:
            return frame(Message.RAISED, raised)
        return frame(Message.OK, (self._publish(), infos))

    def _fill_rows(
        self, e: int, observations: Any, infos: Any, results: list[tuple], step: tuple[dict, dict, dict] | None
    ) -> list[tuple[int, list[dict]]]:
        """Env ``e``'s rows: observations (zeros for agents absent from ``observations``) and results
        (``step``'s rewards and flags by agent, or a reset's); returns the non-empty infos of the agents
        present, by row. One pass over the agents: this runs for every env at every step."""
        if not isinstance(observations, dict):
            raise ValueError(
                f"sub-environment {self.current}: expected a dict of observations by agent (PettingZoo's "
                f"parallel API), got {type(observations).__name__}"
            )
        base, count, index, rows = e * self.agent_count, self.agent_count, self.index, self.observations
        rows[base : base + count] = self.zeros
        results[base : base + count] = self.absent
        infos = infos if isinstance(infos, dict) else {}
        rewards, terminations, truncations = step or ({}, {}, {})
        row_infos = []
        for agent, observation in observations.items():
            try:
                r = base + index[agent]
            except (KeyError, TypeError):
                r = base + self._row(agent, "the observations")  # raises, naming the agent
            rows[r] = observation
            try:
                results[r] = (
                    (float(rewards[agent]), bool(terminations[agent]), bool(truncations[agent]), True)
                    if step
                    else _RESET
                )
            except KeyError:
                raise ValueError(
                    f"sub-environment {self.current}: step() returned an observation of agent {agent!r} "
                    "but no reward, termination or truncation for it"
                ) from None
            info = infos.get(agent)
            if info:
                row_infos.append((r, [info]))
        return row_infos

    def _row(self, agent: Any, where: str) -> int:
        """The row offset of ``agent`` in its env; ``ValueError`` if it is not a possible agent."""
        try:
            return self.index[agent]
        except (KeyError, TypeError):
            raise ValueError(
                f"sub-environment {self.current}: agent {agent!r} in {where} is not one of possible_agents "
                f"{list(self.layout.agents)}"
            ) from None

    # ------------------------------------------------------------------------------------ calls

    def call(self, payload: Any) -> bytes:
        name, args, kwargs = payload

        def call_one(env: Any, i: int) -> Any:
            attr = getattr(env, name)
            return attr(*args, **kwargs) if callable(attr) else attr

        return self._each_env(call_one)

    def set_attr(self, payload: Any) -> bytes:
        name, values = payload
        return self._each_env(lambda env, i: setattr(env, name, values[i]))

    @staticmethod
    def sb3_call_on(env: Any, call: str, name: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """SB3's per-env calls on a ParallelEnv (attributes as ``getattr`` finds them; never wrapped in
        a gymnasium wrapper, as SuperSuit's vector envs answer)."""
        return _sb3_call(env, call, name, args, kwargs)


def _sb3_call(env: Any, call: str, name: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    if call == "get_attr" and name == "render_mode":  # PettingZoo's ParallelEnv only annotates it
        return getattr(env, name, None)
    if call == "get_attr":
        return getattr(env, name)
    if call == "set_attr":
        setattr(env, name, args[0])
        return None
    if call == "has_attr":
        return hasattr(env, name)
    if call == "env_method":
        return getattr(env, name)(*args, **kwargs)
    if call == "is_wrapped":
        return False
    raise ValueError(f"unknown SB3 call {call!r}; expected one of {SB3_CALLS}")
