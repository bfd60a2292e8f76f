"""Fuzzing ``torchwm.AtariVectorEnv`` with random-but-plausible calls, as a careless user would make them.

Each case runs in a separate process (``fuzz_support.CaseRunner``): a crash or a hang is a finding.
Every call must succeed or fail with a documented class; an accepted call must have been valid (seeds,
options and actions by the documented rules); and a rejected call must leave the env as it was: a
twin env that receives only the accepted calls gives the same results, and both step normally at
the end. ``TORCHWM_FUZZ_EXAMPLES=N`` runs N cases per test instead of a handful.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import given
from hypothesis import strategies as st

import torchwm
from conftest import torchwm_worker_threads
from fuzz_support import (
    CLEAN,
    TEST_TIMEOUT,
    ActionSpec,
    CaseRunner,
    Outcome,
    action_spec,
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
    same_results,
    seed_is_valid,
    seed_value,
)

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


@dataclass
class _Play:
    """The state of one case: the env, its twin, and what the calls so far allow to compare."""

    case: AtariCase
    env: Any
    twin: Any
    findings: list[str] = field(default_factory=list)
    has_reset: bool = False
    seeded: bool = False
    closed: bool = False
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    @property
    def comparable(self) -> bool:
        """Results must equal the twin's: seeded, and synchronous (async batches depend on timing)."""
        return self.seeded and self.env.batch_size == self.env.num_envs


def _call(play: _Play, op: tuple[Any, ...]) -> tuple[str, Callable[[Any], Any], Any]:
    """The call ``op`` describes: its label, the call on an env, and the actions it sends (or None)."""
    name = op[0]
    if name == "reset":
        seed, options = op[1], op[2]
        return f"reset(seed={seed!r}, options={options!r})", lambda env: env.reset(seed=seed, options=options), None
    if name in ("step", "send"):
        spec: ActionSpec = op[1]
        actions = make_actions(spec, play.env.action_space, play.rng)
        return f"{name}({actions!r}) [{spec.kind}]", lambda env: getattr(env, name)(actions), actions
    return f"{name}()", lambda env: getattr(env, name)(), None


def _reset_count(options: Any, num_envs: int) -> list[int]:
    mask = options.get("reset_mask") if isinstance(options, dict) else None
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (num_envs,):
        return [int(mask.sum()), num_envs]
    return [num_envs]


def _accepted_invalid(play: _Play, op: tuple[Any, ...], label: str, actions: Any) -> None:
    """A call that succeeded must have been valid by the documented rules."""
    num_envs = play.env.num_envs
    if op[0] == "reset":
        seed, options = op[1], op[2]
        if not any(seed_is_valid(seed, count) for count in _reset_count(options, num_envs)):
            play.findings.append(f"{label} -> accepted an invalid seed")
        if not options_are_valid(options, num_envs):
            play.findings.append(f"{label} -> accepted invalid options")
    elif op[0] in ("step", "send") and not play.env.continuous and not _contains(play.env.action_space, actions):
        play.findings.append(f"{label} -> accepted actions outside action_space {play.env.action_space}")


def _contains(space: Any, actions: Any) -> bool:
    try:
        return bool(space.contains(actions)) and np.asarray(actions).dtype.kind in "iu"
    except Exception:
        return False


def _play_ops(play: _Play) -> None:
    for op in play.case.ops:
        label, call, actions = _call(play, op)
        first_partial_reset = op[0] == "reset" and not play.has_reset and isinstance(op[2], dict)
        outcome = attempt(label, lambda call=call: call(play.env))
        # ale_py refuses a first reset that does not reset every env with RuntimeError.
        check_clean(outcome, play.findings, (*CLEAN, RuntimeError) if first_partial_reset else CLEAN)
        if play.closed:
            if outcome.ok and op[0] != "close":
                play.findings.append(f"{label} after close() -> accepted")
            continue
        if not outcome.ok:
            continue
        _accepted_invalid(play, op, label, actions)
        _mirror(play, op, label, call, outcome)


def _mirror(play: _Play, op: tuple[Any, ...], label: str, call: Callable[[Any], Any], outcome: Outcome) -> None:
    """The twin makes the accepted call too; its result must match."""
    twin = attempt(label, lambda: call(play.twin))
    if twin.error is not None:
        play.findings.append(f"{label} -> accepted, but the twin env raised {describe(twin.error)}")
    elif play.comparable and op[0] not in ("send", "close") and not same_results(outcome.result, twin.result):
        play.findings.append(f"{label} -> results differ from the twin's: a rejected call earlier changed the env")
    if op[0] == "reset":
        play.has_reset = True
        mask = op[2].get("reset_mask") if isinstance(op[2], dict) else None
        play.seeded = play.seeded or (op[1] is not None and (mask is None or bool(np.all(mask))))
    elif op[0] == "close":
        play.closed = True


def _final_check(play: _Play) -> None:
    """After any sequence: a pending batch can be received, and the env resets and steps as its twin."""
    if play.closed:
        outcome = attempt("step after close()", lambda: play.env.step(np.zeros(play.env.batch_size, dtype=np.int64)))
        if outcome.ok:
            play.findings.append("step() after close() -> accepted")
        check_clean(outcome, play.findings)
        return
    pending = attempt("recv() at the end", play.env.recv)
    check_clean(pending, play.findings)
    if pending.ok != attempt("recv() at the end [twin]", play.twin.recv).ok:
        play.findings.append("recv() at the end: the env and its twin disagree about a pending batch")
    results = []
    for env in (play.env, play.twin):
        rng = np.random.default_rng(play.case.seed)
        steps = [attempt("reset(seed=7) at the end", lambda env=env: env.reset(seed=7))]
        for _ in range(3):
            env.action_space.seed(int(rng.integers(2**31)))
            actions = env.action_space.sample()
            steps.append(attempt("step(valid actions) at the end", lambda env=env, a=actions: env.step(a)))
        results.append(steps)
    for mine, twins in zip(*results):
        if not mine.ok:
            play.findings.append(f"env unusable after the calls above: {mine.call} -> {describe(mine.error)}")
            return
        if play.env.batch_size == play.env.num_envs and twins.ok and not same_results(mine.result, twins.result):
            play.findings.append(f"{mine.call} -> differs from the twin after the calls above")
            return
        if not play.env.observation_space.contains(mine.result[0]):
            play.findings.append(f"{mine.call} -> observation outside observation_space")


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
    play = _Play(case, built.result, twin.result, findings, rng=np.random.default_rng(case.seed))
    try:
        _play_ops(play)
        _final_check(play)
    finally:
        for env in (play.env, play.twin):
            check_clean(attempt("close()", env.close), findings)
    leaked = torchwm_worker_threads()
    if leaked:
        findings.append(f"worker threads left running after close(): {leaked}")
    return [f"{case.constructor()}: {finding}" for finding in findings]


# --- the tests ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runner() -> Iterator[CaseRunner]:
    runner = CaseRunner()
    yield runner
    runner.stop()


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
