"""Fuzzing ``torchwm.AtariVectorEnv`` with random-but-plausible calls, as a careless user would make them.

Each case runs in a separate process (``fuzz_support.CaseRunner``): a crash or a hang is a finding.
Every call must succeed or fail with a documented class; an accepted call must have been valid (seeds,
options and actions by the documented rules); and a rejected call must leave the env as it was: a
twin env that receives only the accepted calls gives the same results, and both step normally at
the end. ``TORCHWM_FUZZ_EXAMPLES=N`` runs N cases per test instead of a handful.

The keyword test at the end fuzzes construction: one odd value for one keyword, then odd seeds, options
and actions, each case in a fresh interpreter (an abort or hang fails that case); every call must
succeed or raise a documented class, and a built env must still reset and step.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

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
    float_setting,
    int_setting,
    make_actions,
    nasty_int,
    odd_value,
    options_are_valid,
    options_value,
    seed_is_valid,
    seed_value,
)
from gymnasium.vector import AutoresetMode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import torchwm
from testing_support import torchwm_worker_threads
from torchwm import _core

INT_KEYWORDS: dict[str, st.SearchStrategy[int]] = {
    "frameskip": st.integers(1, 8),
    "stack_num": st.integers(1, 8),
    "img_height": st.integers(1, 210),
    "img_width": st.integers(1, 160),
    "noop_max": st.integers(0, 40),
    "max_num_frames_per_episode": st.integers(1, 2000),
    "batch_size": st.integers(0, 4),
    "num_threads": st.integers(0, 4),
    "thread_affinity_offset": st.integers(-1, 1),
}
BOOL_KEYWORDS = [
    "grayscale",
    "maxpool",
    "reward_clipping",
    "use_fire_reset",
    "episodic_life",
    "life_loss_info",
    "full_action_space",
    "continuous",
]
AUTORESET_MODES = [*AutoresetMode, "NextStep", "SameStep", "Disabled", "bogus", None, 1]


def keyword_value(name: str, nasty: bool) -> st.SearchStrategy[Any]:
    if name in INT_KEYWORDS:
        return int_setting(INT_KEYWORDS[name]) if nasty else INT_KEYWORDS[name]
    if name in BOOL_KEYWORDS:
        return bool_setting() if nasty else st.booleans()
    if name == "autoreset_mode":
        return st.sampled_from(AUTORESET_MODES if nasty else list(AutoresetMode)[:2])
    return float_setting(0.0, 1.0) if nasty else st.floats(0.0, 1.0)


KEYWORDS = [*INT_KEYWORDS, *BOOL_KEYWORDS, "autoreset_mode", "repeat_action_probability", "continuous_action_threshold"]


@dataclass
class AtariCase:
    game: Any
    num_envs: Any
    kwargs: dict[str, Any]
    ops: list[tuple[Any, ...]]
    seed: int

    def constructor(self) -> str:
        return f"AtariVectorEnv({self.game!r}, {self.num_envs!r}, **{self.kwargs!r})"


def operations(num_envs: int) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.one_of(
        st.tuples(st.just("reset"), seed_value(num_envs), options_value(num_envs)),
        st.tuples(st.just("step"), action_spec()),
        st.tuples(st.just("step"), action_spec()),
        st.tuples(st.just("send"), action_spec()),
        st.just(("recv",)),
        st.sampled_from([("close",), ("recv",), ("step", ActionSpec("sample"))]),
    )


@st.composite
def atari_cases(draw: st.DrawFn, nasty_construction: bool) -> AtariCase:
    """A game, num_envs and up to 3 keywords, all plausible but (with ``nasty_construction``) one of
    them, then a few calls (most often after a plain seeded reset)."""
    targets = ["game", "num_envs", *KEYWORDS]
    nasty = draw(st.sampled_from(targets)) if nasty_construction else None
    game = draw(
        st.sampled_from(["Pong", "ALE/Breakout-v5", "", "nope", None, 3])
        if nasty == "game"
        else st.sampled_from(["pong", "breakout"])
    )
    num_envs = draw(st.one_of(nasty_int(), odd_value()) if nasty == "num_envs" else st.integers(1, 4))
    names = draw(st.lists(st.sampled_from(KEYWORDS), unique=True, max_size=2))
    if nasty in KEYWORDS and nasty not in names:
        names.append(nasty)
    kwargs = {name: draw(keyword_value(name, name == nasty)) for name in names}
    count = num_envs if type(num_envs) is int and 1 <= num_envs <= 4 else 2
    ops = draw(st.lists(operations(count), max_size=3 if nasty_construction else 7))
    if draw(st.integers(0, 4)):  # most cases start from a plain seeded reset, as programs do
        ops.insert(0, ("reset", draw(st.integers(0, 1000)), None))
    return AtariCase(game, num_envs, kwargs, ops, draw(st.integers(0, 2**31 - 1)))


# --- one case, run in the runner process --------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


class AtariPlay(TwinPlay):
    def deterministic(self) -> bool:
        """Async batches (batch_size < num_envs) depend on timing; sync ones on the seeds only."""
        return self.seeded and self.env.batch_size == self.env.num_envs

    def call_for(self, op: tuple[Any, ...]) -> Call:
        name = op[0]
        if name == "reset":
            seed, options = op[1], op[2]
            counts = _reset_counts(options, self.env.num_envs)
            invalid = None
            if not any(seed_is_valid(seed, count) for count in counts):
                invalid = "an invalid seed"
            elif not options_are_valid(options, self.env.num_envs):
                invalid = "invalid options"
            # ale_py refuses a first reset that does not reset every env with RuntimeError.
            first_partial = not self.has_reset and isinstance(options, dict)
            return Call(
                f"reset(seed={seed!r}, options={options!r})",
                lambda env: env.reset(seed=seed, options=options),
                allowed=(*CLEAN, RuntimeError) if first_partial else CLEAN,
                invalid=invalid,
            )
        if name in ("step", "send"):
            spec: ActionSpec = op[1]
            actions = make_actions(spec, self.env.action_space, self.rng)
            valid = self.env.continuous or actions_validity(self.env.action_space, actions) is not False
            return Call(
                f"{name}({actions!r}) [{spec.kind}]",
                lambda env: getattr(env, name)(actions),
                compare=name == "step",
                invalid=None if valid else f"actions outside action_space {self.env.action_space}",
            )
        return Call(f"{name}()", lambda env: getattr(env, name)(), compare=name == "recv")


def _reset_counts(options: Any, num_envs: int) -> list[int]:
    """How many envs a reset resets (a seed array may name those, or every env)."""
    mask = options.get("reset_mask") if isinstance(options, dict) else None
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (num_envs,):
        return [int(mask.sum()), num_envs]
    return [num_envs]


def run_atari_case(case: AtariCase) -> list[str]:
    """Findings of one case (empty: nothing wrong)."""
    findings: list[str] = []
    built = attempt(case.constructor(), lambda: torchwm.AtariVectorEnv(case.game, case.num_envs, **case.kwargs))
    check_clean(built, findings)
    if not built.ok:
        return findings
    for name, value in [("num_envs", case.num_envs), *case.kwargs.items()]:
        if (name == "num_envs" or name in INT_KEYWORDS) and not _is_int(value):
            findings.append(f"{case.constructor()} -> accepted {name}={value!r} ({type(value).__name__})")
    twin = attempt(
        case.constructor() + " [twin]", lambda: torchwm.AtariVectorEnv(case.game, case.num_envs, **case.kwargs)
    )
    if not twin.ok:
        built.result.close()
        return [*findings, f"{case.constructor()} -> accepted once, then {describe(twin.error)}"]
    play = AtariPlay(built.result, twin.result, case.seed)
    try:
        play.play(case.ops)
        play.final_check()
    finally:
        for env in (play.env, play.twin):
            check_clean(attempt("close()", env.close), play.findings)
    findings += play.findings
    leaked = torchwm_worker_threads()
    if leaked:
        findings.append(f"worker threads left running after close(): {leaked}")
    return [f"{case.constructor()}: {finding}" for finding in findings]


# --- the tests ---------------------------------------------------------------------------------------------


@TEST_TIMEOUT
@given(case=atari_cases(nasty_construction=True))
def test_fuzz_construction(runner: CaseRunner, case: AtariCase) -> None:
    findings = runner.run(run_atari_case, case)
    assert not findings, "\n".join(findings)


@TEST_TIMEOUT
@given(case=atari_cases(nasty_construction=False))
def test_fuzz_calls(runner: CaseRunner, case: AtariCase) -> None:
    findings = runner.run(run_atari_case, case)
    assert not findings, "\n".join(findings)


def test_runner_reports_crashes_and_hangs() -> None:
    """The harness itself: a case that kills its process or never returns is a finding, not a hang."""
    runner = CaseRunner(timeout_s=3)
    try:
        assert runner.run(_abort) == ["crash: the process died (signal SIGABRT)"]
        assert runner.run(_sleep) == ["hang: no answer within 3 s"]
        assert runner.run(_nothing_wrong) == []
    finally:
        runner.stop()


def _abort() -> list[str]:
    import os

    os.abort()


def _sleep() -> list[str]:
    import time

    time.sleep(60)
    return []


def _nothing_wrong() -> list[str]:
    return []


# ---------------------------------------------------------------------------- keyword values

EXAMPLES = int(os.environ.get("TORCHWM_FUZZ_EXAMPLES", "20"))

ODD_VALUES = [
    -1,
    0,
    1,
    2,
    3,
    84,
    1001,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**63,
    -(2**63),
    "np.uint64(2**64 - 1)",
    "np.int8(-5)",
    0.5,
    1.5,
    "float('nan')",
    True,
    False,
    "'4'",
    None,
    "[1]",
    "'NextStep'",
    "'Disabled'",
]
SEEDS = [
    "None",
    "0",
    "-1",
    "2**31",
    "[1, 2]",
    "np.array([477, -1099511627776])",
    "np.array([2**64 - 1, 1], dtype=np.uint64)",
    "'7'",
    "1.5",
]
OPTIONS = [
    "None",
    "{}",
    "5",
    "'abc'",
    "[1]",
    "{'reset_mask': np.array([True, False])}",
    "{'reset_mask': [True, False]}",
]
ACTIONS = [
    "[0, 1]",
    "np.array([0, 99])",
    "np.array([-1, 0])",
    "np.array([0.5, 1.0])",
    "np.array([2**63 - 1, 0])",
    "None",
    "[[0]]",
    "np.zeros(2, dtype=np.uint64) - 1",
]

KW_KEYWORDS = [name for name, _aliases, _default, _doc in _core.ATARI_SETTINGS if name != "num_envs"]

CASE = """
import faulthandler, sys, numpy as np, gymnasium, torchwm
faulthandler.enable()
ALLOWED = (TypeError, ValueError, MemoryError, gymnasium.error.Error, torchwm.TorchwmError)
def attempt(call):
    try:
        call()
        return True
    except ALLOWED:
        return False
env = None
def make():
    global env
    env = torchwm.AtariVectorEnv("breakout", 2, {keyword}={value})
if attempt(make):
    attempt(lambda: env.reset(seed={seed}, options={options}))
    attempt(lambda: env.step({actions}))
    env.reset(seed=1)
    obs, *_ = env.step(np.zeros(env.batch_size, dtype=np.int64) if not env.continuous else np.zeros((env.batch_size, 3), dtype=np.float32))
    assert obs.shape[0] == env.batch_size
    env.close()
print("ok")
"""


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    keyword=st.sampled_from(KW_KEYWORDS),
    value=st.sampled_from(ODD_VALUES),
    seed=st.sampled_from(SEEDS),
    options=st.sampled_from(OPTIONS),
    actions=st.sampled_from(ACTIONS),
)
def test_fuzzed_calls_raise_documented_errors_and_leave_the_env_usable(
    keyword: str, value: object, seed: str, options: str, actions: str
) -> None:
    code = textwrap.dedent(CASE).format(keyword=keyword, value=value, seed=seed, options=options, actions=actions)
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", f"{code}\n{out.stdout}\n{out.stderr}"
