"""Fuzzing ``torchwm.TorchVectorizedEnv`` with random-but-plausible calls, as a careless user would make them.

Same method as ``test_fuzz_atari.py``: each case in a separate process (a crash or hang is a finding),
every call succeeds or fails with a documented class, accepted actions are in the batched action space
(gymnasium's ``contains`` decides), rejected calls leave the env as it was (a twin env fed only the
accepted calls gives the same results), and ``close()`` leaves no worker process behind.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import pickle
import threading
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from fuzz_support import (
    CLEAN,
    TEST_TIMEOUT,
    ActionSpec,
    Call,
    CaseRunner,
    TwinPlay,
    action_spec,
    actions_validity,
    attempt,
    bool_setting,
    check_clean,
    describe,
    make_actions,
    odd_value,
    options_are_valid,
    options_value,
    seed_is_valid,
    seed_value,
)
from gymnasium.vector import AutoresetMode
from hypothesis import given
from hypothesis import strategies as st

import torchwm

SMALL_NASTY_SIZES = st.sampled_from([0, -1, -(2**63), 2**64, np.uint64(2), np.int8(1), 2.0, True])
ENV_IDS = {"cartpole": "CartPole-v1", "pendulum": "Pendulum-v1"}
CONTEXTS = [None, "fork", "spawn", "forkserver"]


def keyword_values(nasty: bool) -> dict[str, st.SearchStrategy[Any]]:
    """Plausible values of each constructor keyword, or nasty ones."""
    if not nasty:
        return {
            "num_workers": st.integers(1, 2),
            "envs_per_worker": st.integers(1, 3),
            "seed": st.none() | st.integers(0, 1000),
            "context": st.sampled_from(CONTEXTS),
            "shared_memory": st.booleans(),
            "autoreset_mode": st.sampled_from(list(AutoresetMode)[:2]),
            "copy": st.booleans(),
        }
    return {
        # No huge worker counts: on a shared machine a fuzz case must not fork thousands of processes.
        "num_workers": st.one_of(SMALL_NASTY_SIZES, odd_value()),
        "envs_per_worker": st.one_of(SMALL_NASTY_SIZES, st.sampled_from([2**31 - 1, 2**40]), odd_value()),
        "seed": seed_value(2),
        "context": st.sampled_from(["bogus", 3, "", "Spawn"]),
        "shared_memory": bool_setting(),
        "autoreset_mode": st.sampled_from([*AutoresetMode, "NextStep", "Disabled", "bogus", None, 1]),
        "copy": bool_setting(),
        "daemon": bool_setting(),
    }


@dataclass
class ProcessCase:
    env: str
    kwargs: dict[str, Any]
    ops: list[tuple[Any, ...]]
    seed: int

    def constructor(self) -> str:
        return f"TorchVectorizedEnv({ENV_IDS[self.env]!r}, **{self.kwargs!r})"


def operations(num_envs: int) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.one_of(
        st.tuples(st.just("reset"), seed_value(num_envs), options_value(num_envs)),
        st.tuples(st.just("step"), action_spec()),
        st.tuples(st.just("step"), action_spec()),
        st.tuples(st.just("step_async"), action_spec()),
        st.tuples(st.just("step_wait"), st.sampled_from([None, 0, 0.001, 5.0, -1, "x"])),
        st.tuples(st.just("get_attr"), st.sampled_from(["spec", "np_random_seed", "nonexistent", 3])),
        st.tuples(
            st.just("set_attr"),
            st.sampled_from(["fuzz_value", 3]),
            st.sampled_from(["int", "lambda", "lock", "wrong_length", "per_env"]),
        ),
        st.tuples(st.just("call"), st.sampled_from(["nonexistent", "spec"])),
        st.sampled_from([("close",), ("step", ActionSpec("sample"))]),
    )


@st.composite
def process_cases(draw: st.DrawFn, nasty_construction: bool) -> ProcessCase:
    """Plausible constructor keywords but (with ``nasty_construction``) one, then a few calls."""
    plausible, nasty_values = keyword_values(False), keyword_values(True)
    nasty = draw(st.sampled_from(sorted(nasty_values))) if nasty_construction else None
    names = draw(st.lists(st.sampled_from(sorted(plausible)), unique=True, max_size=3))
    if nasty is not None and nasty not in names:
        names.append(nasty)
    kwargs = {name: draw(nasty_values[name] if name == nasty else plausible[name]) for name in names}
    kwargs.setdefault("num_workers", 1)
    kwargs.setdefault("envs_per_worker", 2)
    num_envs = _num_envs(kwargs)
    ops = draw(st.lists(operations(num_envs), max_size=3 if nasty_construction else 6))
    if draw(st.integers(0, 4)):  # most cases start from a plain seeded reset, as programs do
        ops.insert(0, ("reset", draw(st.integers(0, 1000)), None))
    return ProcessCase(draw(st.sampled_from(sorted(ENV_IDS))), kwargs, ops, draw(st.integers(0, 2**31 - 1)))


def _num_envs(kwargs: dict[str, Any]) -> int:
    workers, per_worker = kwargs["num_workers"], kwargs["envs_per_worker"]
    if type(workers) is int and type(per_worker) is int and 1 <= workers <= 2 and 1 <= per_worker <= 3:
        return workers * per_worker
    return 2


# --- one case, run in the runner process --------------------------------------------------------------

# The remote errors of call/get_attr/set_attr are raised again in the caller (AttributeError for a
# missing attribute), and a value that cannot be pickled fails as pickle fails.
ATTRIBUTE_ERRORS = (*CLEAN, AttributeError, pickle.PicklingError)


def _set_attr_value(kind: str, num_envs: int) -> Any:
    return {
        "int": 5,
        "lambda": lambda: None,
        "lock": threading.Lock(),
        "wrong_length": [1] * (num_envs + 1),
        "per_env": list(range(num_envs)),
    }[kind]


class ProcessPlay(TwinPlay):
    wait_name = "step_wait"

    def call_for(self, op: tuple[Any, ...]) -> Call:
        name = op[0]
        if name == "reset":
            seed, options = op[1], op[2]
            num_envs = self.env.num_envs
            invalid = None
            if not seed_is_valid(seed, num_envs, limit=None):  # gymnasium takes any non-negative int
                invalid = "an invalid seed"
            elif not options_are_valid(options, num_envs):
                invalid = "invalid options"
            first_partial = not self.has_reset and isinstance(options, dict)
            return Call(
                f"reset(seed={seed!r}, options={options!r})",
                lambda env: env.reset(seed=seed, options=options),
                allowed=(*CLEAN, RuntimeError) if first_partial else CLEAN,
                invalid=invalid,
            )
        if name in ("step", "step_async"):
            spec: ActionSpec = op[1]
            actions = make_actions(spec, self.env.action_space, self.rng)
            return Call(
                f"{name}({actions!r}) [{spec.kind}]",
                lambda env: getattr(env, name)(actions),
                compare=name == "step",
                invalid="actions outside action_space"
                if actions_validity(self.env.action_space, actions) is False
                else None,
            )
        if name == "step_wait":
            timeout = op[1]
            return Call(
                f"step_wait(timeout={timeout!r})",
                lambda env: env.step_wait(timeout=timeout),
                mirror=lambda env: env.step_wait(),  # the twin waits as long as it takes
                allowed=(*CLEAN, mp.TimeoutError),
            )
        if name == "set_attr":
            value = _set_attr_value(op[2], self.env.num_envs)
            return Call(
                f"set_attr({op[1]!r}, {op[2]})", lambda env: env.set_attr(op[1], value), allowed=ATTRIBUTE_ERRORS
            )
        if name in ("get_attr", "call"):
            return Call(
                f"{name}({op[1]!r})", lambda env: getattr(env, name)(op[1]), compare=False, allowed=ATTRIBUTE_ERRORS
            )
        return Call(f"{name}()", lambda env: getattr(env, name)(), compare=False)


def _make(case: ProcessCase) -> Any:
    factory = functools.partial(gym.make, ENV_IDS[case.env])
    # The strict action check: a refused action must leave the env as it was (the default delivers every
    # action, as gymnasium does; test_torch_vectorized_env_gymnasium14.py covers that mode).
    return torchwm.TorchVectorizedEnv(factory, **{"check_actions": True, **case.kwargs})


def run_process_case(case: ProcessCase) -> list[str]:
    """Findings of one case (empty: nothing wrong)."""
    findings: list[str] = []
    children_before = set(mp.active_children())
    built = attempt(case.constructor(), lambda: _make(case))
    check_clean(built, findings)
    seed = case.kwargs.get("seed")
    if built.ok and not seed_is_valid(seed, built.result.num_envs, limit=None):
        findings.append(f"accepted seed={seed!r} ({type(seed).__name__})")
    if built.ok:
        twin = attempt(case.constructor() + " [twin]", lambda: _make(case))
        if not twin.ok:
            built.result.close()
            findings.append(f"accepted once, then {describe(twin.error)}")
        else:
            play = ProcessPlay(built.result, twin.result, case.seed)
            try:
                play.play(case.ops)
                play.final_check()
            finally:
                for env in (play.env, play.twin):
                    check_clean(attempt("close()", env.close), play.findings)
            findings += play.findings
    left = [p for p in set(mp.active_children()) - children_before if p.is_alive()]
    if left:
        findings.append(f"worker processes left after close(): {left}")
        for process in left:
            process.kill()
            process.join(5)
    return [f"{case.constructor()}: {finding}" for finding in findings]


# --- the tests ---------------------------------------------------------------------------------------------


@TEST_TIMEOUT
@given(case=process_cases(nasty_construction=True))
def test_fuzz_construction(runner: CaseRunner, case: ProcessCase) -> None:
    findings = runner.run(run_process_case, case)
    assert not findings, "\n".join(findings)


@TEST_TIMEOUT
@given(case=process_cases(nasty_construction=False))
def test_fuzz_calls(runner: CaseRunner, case: ProcessCase) -> None:
    findings = runner.run(run_process_case, case)
    assert not findings, "\n".join(findings)


def test_same_case_without_faults_has_no_findings() -> None:
    """The harness is not trigger-happy: plain calls on a plain env give no finding."""
    case = ProcessCase(
        "cartpole",
        {"num_workers": 1, "envs_per_worker": 2},
        [("reset", 3, None), ("step", ActionSpec("sample")), ("get_attr", "spec"), ("set_attr", "fuzz_value", "int")],
        seed=0,
    )
    assert run_process_case(case) == []
