"""Shared parts of the fuzz suites: a case runner in its own process (a crash or hang fails the case,
not the test run), hypothesis profiles, value strategies, and the rules for a clean rejection.

Profiles: ``ci`` (default: a few examples, no shrinking, so that a hanging case costs one timeout);
``TORCHWM_FUZZ_EXAMPLES=N`` selects ``fuzz`` with N examples per test and shrinking on.
``TORCHWM_FUZZ_TIMEOUT`` (seconds, default 30) bounds one case.
"""

from __future__ import annotations

import faulthandler
import multiprocessing as mp
import os
import pickle
import resource
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

import torchwm
from torchwm import errors

CASE_TIMEOUT_S = float(os.environ.get("TORCHWM_FUZZ_TIMEOUT", "30"))
EXAMPLES = int(os.environ.get("TORCHWM_FUZZ_EXAMPLES", "0")) or 12
# The runner process may map at most this much: a huge size must be refused (or be a MemoryError),
# never eat the machine.
ADDRESS_SPACE_LIMIT = 4 * 2**30

settings.register_profile(
    "ci",
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    database=None,  # nothing written into the checkout; print_blob gives the reproducer
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("fuzz" if os.environ.get("TORCHWM_FUZZ_EXAMPLES") else "ci")

# pytest-timeout for a whole fuzz test: every case may use its full timeout.
TEST_TIMEOUT = pytest.mark.timeout(EXAMPLES * CASE_TIMEOUT_S * 2 + 120)

# A clean rejection: the argument classes, torchwm's tree, gymnasium's errors, and running out of memory.
CLEAN = (ValueError, TypeError, MemoryError, gym.error.Error, errors.TorchwmError, torchwm.TorchwmError)


def describe(exc: BaseException) -> str:
    return f"{type(exc).__module__}.{type(exc).__qualname__}: {str(exc)[:200]}"


@dataclass
class Outcome:
    """What one call did: its result, or the exception it raised."""

    call: str
    result: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def attempt(call: str, fn: Callable[[], Any]) -> Outcome:
    try:
        return Outcome(call, result=fn())
    except BaseException as exc:  # PanicException derives from BaseException
        if isinstance(exc, KeyboardInterrupt):
            raise
        return Outcome(call, error=exc)


def check_clean(outcome: Outcome, findings: list[str], allowed: tuple[type[BaseException], ...] = CLEAN) -> None:
    """A failed call must fail with a documented class."""
    if outcome.error is not None and not isinstance(outcome.error, allowed):
        findings.append(f"{outcome.call} -> unclean {describe(outcome.error)}")


def same_results(a: Any, b: Any) -> bool:
    """Equal step/reset results (nested tuples, dicts and arrays)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_results(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_results(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=np.asarray(a).dtype.kind == "f")
    return bool(a == b)


# --- values a careless or unlucky user passes ----------------------------------------------------------

HUGE = [2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30]
NEGATIVE = [-1, -2, -(2**31), -(2**63), -(2**40)]


def _int_forms(value: int) -> st.SearchStrategy[Any]:
    """``value`` as a Python int, a numpy integer of any type it fits, or a float."""
    forms: list[Any] = [value, float(value)]
    for dtype in (np.int32, np.int64, np.uint32, np.uint64):
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            forms.append(dtype(value))
    return st.sampled_from(forms)


def nasty_int() -> st.SearchStrategy[Any]:
    return st.sampled_from(HUGE + NEGATIVE + [0]).flatmap(_int_forms)


def odd_value() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=3),
        st.just([1]),
        st.just({}),
        st.just(np.zeros(2)),
    )


def int_setting(plausible: st.SearchStrategy[int]) -> st.SearchStrategy[Any]:
    """Mostly a huge or negative int (in some integer type), sometimes an odd value or a plausible int in
    another integer type."""
    return st.one_of(nasty_int(), nasty_int(), odd_value(), plausible.flatmap(_int_forms))


def bool_setting() -> st.SearchStrategy[Any]:
    return st.one_of(st.booleans(), st.booleans(), st.sampled_from([np.bool_(True), 0, 1, None, "yes"]))


def float_setting(low: float, high: float) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.floats(low, high),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([np.float32(0.25), -0.5, 1.5, None, "0.1", True]),
    )


def seed_value(count: int) -> st.SearchStrategy[Any]:
    """``reset(seed=...)`` values: None, ints, arrays and lists of every dtype, shape and range."""
    entries = st.one_of(st.integers(0, 1000), st.sampled_from(HUGE + NEGATIVE))
    return st.one_of(
        st.none(),
        st.integers(0, 10_000),
        nasty_int(),
        odd_value(),
        st.lists(entries, min_size=count, max_size=count),
        st.lists(st.integers(0, 100), min_size=0, max_size=count + 2),
        st.tuples(st.lists(entries, min_size=count, max_size=count), _seed_dtypes()).map(_as_seed_array),
        st.just(np.arange(count, dtype=np.float64)),
        st.just(np.full(count, 2**64 - 1, dtype=np.uint64)),
    )


def _seed_dtypes() -> st.SearchStrategy[Any]:
    return st.sampled_from([np.int64, np.int32, np.uint64, np.uint32, np.int8, np.float32, object])


def _as_seed_array(pair: tuple[list[int], Any]) -> np.ndarray:
    values, dtype = pair
    try:
        return np.array(values, dtype=dtype)
    except OverflowError:
        return np.array(values, dtype=object)


def seed_is_valid(seed: Any, count: int, limit: int | None = 2**31) -> bool:
    """The documented rule: seeds are integers in ``[0, limit)``; an int seeds env i with seed + i."""
    bound = float("inf") if limit is None else limit

    def is_int(value: Any) -> bool:
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))

    if seed is None:
        return True
    if is_int(seed):
        return int(seed) >= 0 and int(seed) + count <= bound
    if isinstance(seed, np.ndarray):
        if seed.shape != (count,) or seed.dtype.kind not in "iuO":
            return False
        values = seed.tolist()
    elif isinstance(seed, (list, tuple)):
        values = list(seed)
        if len(values) != count:
            return False
    else:
        return False
    return all(value is None or (is_int(value) and 0 <= int(value) < bound) for value in values)


def options_value(num_envs: int) -> st.SearchStrategy[Any]:
    masks = st.lists(st.booleans(), min_size=num_envs, max_size=num_envs)
    return st.one_of(
        st.none(),
        st.just({}),
        masks.map(lambda m: {"reset_mask": np.array(m, dtype=bool)}),
        masks.map(lambda m: {"reset_mask": m}),
        masks.map(lambda m: {"reset_mask": np.array(m, dtype=np.int64)}),
        st.just({"reset_mask": np.ones(num_envs + 1, dtype=bool)}),
        st.just({"reset_mask": None}),
        st.sampled_from([5, "abc", [1], (1,), 2.5]),
    )


def options_are_valid(options: Any, num_envs: int) -> bool:
    """``None`` or a dict whose ``reset_mask``, if any, is None or a bool array of shape (num_envs,)."""
    if options is None:
        return True
    if not isinstance(options, dict):
        return False
    mask = options.get("reset_mask")
    return mask is None or (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (num_envs,))


@dataclass(frozen=True)
class ActionSpec:
    """Actions described before the env exists; :func:`make_actions` builds them for a batch."""

    kind: str
    value: Any = None


def action_spec() -> st.SearchStrategy[ActionSpec]:
    values = st.one_of(
        st.integers(-3, 20),
        st.sampled_from(HUGE + NEGATIVE),
        st.sampled_from([np.iinfo(np.int64).min, 0.5, float("nan"), float("inf"), True, None, "1"]),
    )
    return st.one_of(
        st.just(ActionSpec("sample")),
        st.just(ActionSpec("sample")),
        st.builds(ActionSpec, st.just("one_entry"), values),
        st.builds(ActionSpec, st.just("dtype"), st.sampled_from(["float32", "float64", "bool", "uint8", "object"])),
        st.builds(ActionSpec, st.just("length"), st.sampled_from(["empty", "fewer", "more"])),
        st.builds(ActionSpec, st.just("extra_dim"), st.just(None)),
        st.builds(ActionSpec, st.just("list"), st.just(None)),
        st.builds(ActionSpec, st.just("scalar"), values),
        st.builds(ActionSpec, st.just("unpicklable"), st.just(None)),
        st.just(ActionSpec("none")),
    )


def make_actions(spec: ActionSpec, space: gym.Space, rng: np.random.Generator) -> Any:
    """The actions ``spec`` describes for a batched action ``space``."""
    space.seed(int(rng.integers(2**31)))
    valid = np.asarray(space.sample())
    if spec.kind == "sample":
        return valid
    if spec.kind == "one_entry":
        actions = valid.astype(object)
        actions.flat[int(rng.integers(actions.size))] = spec.value
        try:
            return np.array(actions.tolist())
        except (OverflowError, ValueError, TypeError):
            return actions
    if spec.kind == "dtype":
        return valid.astype(spec.value)
    if spec.kind == "length":
        size = {"empty": 0, "fewer": len(valid) - 1, "more": len(valid) + 1}[spec.value]
        return np.resize(valid, (size, *valid.shape[1:]))
    if spec.kind == "extra_dim":
        return valid[..., None]
    if spec.kind == "list":
        return valid.tolist()
    if spec.kind == "scalar":
        return spec.value
    if spec.kind == "unpicklable":
        actions = valid.astype(object)
        actions.flat[0] = lambda: None
        return actions
    return None


# --- the runner ---------------------------------------------------------------------------------------------


def _serve(conn: Any) -> None:
    os.setsid()  # its own process group: a hang is killed with every process the case started
    faulthandler.enable()  # a crash prints the stack to stderr
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
    conn.send(("ready", None))
    while True:
        try:
            fn, args = conn.recv()  # unpickling imports the case's module: start-up, not the case's time
        except EOFError:
            return
        except Exception as exc:
            conn.send(("harness", f"the case could not be received: {describe(exc)}"))
            continue
        conn.send(("started", None))
        try:
            reply: Any = ("ok", fn(*args))
        except BaseException as exc:
            reply = ("harness", f"{describe(exc)}\n{traceback.format_exc()}")
        try:
            conn.send(reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            conn.send(("harness", f"unpicklable reply: {exc}"))


# How many times its own measured start-up the runner process may take to receive a case (unpickling
# it imports the case's module, torchwm and gymnasium: start-up work that a loaded machine slows alike).
STARTUP_ALLOWANCE = 20


class CaseRunner:
    """Runs ``fn(*args)`` (module-level, picklable) in a long-lived spawned process and returns its list
    of findings; a crash or a case past the timeout becomes a finding and the process is replaced.

    ``timeout_s`` counts from the moment the process has the case in hand: its start-up (an interpreter
    that imports numpy, which a busy machine can slow past any small constant) is never a case's time.
    The start-up itself is measured, and receiving a case may take :data:`STARTUP_ALLOWANCE` times it.
    """

    def __init__(self, timeout_s: float = CASE_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._ctx = mp.get_context("spawn")
        self._process: Any = None
        self._conn: Any = None
        self.startup_s = 0.0  # the last start-up's measured length

    def _start(self) -> None:
        self._conn, child = self._ctx.Pipe()
        # Not daemonic: the cases start worker processes. It ends when this side's pipe closes.
        self._process = self._ctx.Process(target=_serve, args=(child,), daemon=False)
        started = time.monotonic()
        self._process.start()
        child.close()
        ready = self._receive()  # no limit but the test's: the start-up is what is being measured
        if ready is None or ready[0] != "ready":
            raise AssertionError(f"the fuzz runner process did not start: {self._died()}")
        self.startup_s = time.monotonic() - started

    def _receive(self, limit_s: float | None = None) -> tuple[str, Any] | None:
        """The process's next message; None once it died; ``TimeoutError`` after ``limit_s``."""
        deadline = None if limit_s is None else time.monotonic() + limit_s
        while not self._conn.poll(1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))):
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError
            if not self._process.is_alive() and not self._conn.poll(0):
                return None
        try:
            return self._conn.recv()
        except (EOFError, ConnectionResetError):
            return None

    def _died(self) -> str:
        self._process.join(5)
        code = self._process.exitcode
        self.stop()
        return f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"

    def run(self, fn: Callable[..., list[str]], *args: Any) -> list[str]:
        if self._process is None or not self._process.is_alive():
            self._start()
        self._conn.send((fn, args))
        receive_limit = max(self.timeout_s, STARTUP_ALLOWANCE * self.startup_s)
        try:
            message = self._receive(receive_limit)
        except TimeoutError:
            self.stop()
            return [f"hang: the case was not received within {receive_limit:.0f} s (start-up: {self.startup_s:.1f} s)"]
        if message is not None and message[0] == "started":
            try:
                message = self._receive(self.timeout_s)
            except TimeoutError:
                self.stop()
                return [f"hang: no answer within {self.timeout_s:.0f} s"]
        if message is None:
            return [f"crash: the process died ({self._died()})"]
        status, payload = message
        if status == "harness":
            raise AssertionError(f"the fuzz harness itself failed:\n{payload}")
        return list(payload)

    def stop(self) -> None:
        if self._process is None:
            return
        if self._process.is_alive():
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._process.join(5)
        self._conn.close()
        self._process = None


# --- playing calls on an env and on its twin ---------------------------------------------------------------


@dataclass
class Call:
    """One call of a case: how to make it on the env, how the twin repeats it, and how to judge it."""

    label: str
    run: Callable[[Any], Any]
    mirror: Callable[[Any], Any] | None = None  # the twin's call, when timing-dependent arguments differ
    allowed: tuple[type[BaseException], ...] = CLEAN
    compare: bool = True  # the result must equal the twin's
    invalid: str | None = None  # why the documented rules refuse the call (None: valid, or not decided)


class TwinPlay:
    """Plays a case's calls on an env and on a twin that receives only the calls the env accepted.

    A rejected call must leave the env as it was, so the two keep giving the same results; at the end
    both reset and step normally. Subclasses turn a case's operations into :class:`Call` objects.
    """

    wait_name = "recv"  # the call that collects a pending batch
    async_names = ("send", "step_async")  # the calls that leave one pending

    def __init__(self, env: Any, twin: Any, seed: int) -> None:
        self.env, self.twin = env, twin
        self.findings: list[str] = []
        self.has_reset = self.seeded = self.closed = False
        # None: unknown (a reset was accepted while a batch was pending, or one was sent before any reset)
        self.pending: bool | None = False
        self.rng = np.random.default_rng(seed)
        self.seed = seed

    def call_for(self, op: tuple[Any, ...]) -> Call:
        raise NotImplementedError

    def deterministic(self) -> bool:
        """Whether equal calls give equal results (a seeded reset happened, no timing in the batches)."""
        return self.seeded

    def seeds_every_env(self, op: tuple[Any, ...]) -> bool:
        mask = op[2].get("reset_mask") if isinstance(op[2], dict) else None
        return op[1] is not None and (mask is None or bool(np.all(mask)))

    def play(self, ops: list[tuple[Any, ...]]) -> None:
        for op in ops:
            call = self.call_for(op)
            outcome = attempt(call.label, lambda call=call: call.run(self.env))
            check_clean(outcome, self.findings, call.allowed)
            if self.closed:
                if outcome.ok and op[0] != "close":
                    self.findings.append(f"{call.label} after close() -> accepted")
                continue
            if not outcome.ok:
                continue
            if call.invalid is not None:
                self.findings.append(f"{call.label} -> accepted {call.invalid}")
            self._mirror(op, call, outcome)

    def _mirror(self, op: tuple[Any, ...], call: Call, outcome: Outcome) -> None:
        mirror = call.mirror or call.run
        twin = attempt(call.label, lambda: mirror(self.twin))
        if twin.error is not None:
            self.findings.append(f"{call.label} -> accepted, but the twin env raised {describe(twin.error)}")
        elif call.compare and self.deterministic() and not same_results(outcome.result, twin.result):
            self.findings.append(
                f"{call.label} -> results differ from the twin's: an earlier rejected call changed the env"
            )
        if op[0] == "reset":
            self.has_reset = True
            self.seeded = self.seeded or self.seeds_every_env(op)
            self.pending = None if self.pending else False
        elif op[0] == "close":
            self.closed = True
        elif op[0] in self.async_names:
            # Before the first reset the sub-envs receive the step and may refuse it (gym.make's envs
            # raise ResetNeeded, as in gymnasium's AsyncVectorEnv): its wait may then raise.
            self.pending = True if self.has_reset else None
        elif op[0] in ("step", self.wait_name):
            self.pending = False

    def final_check(self) -> None:
        """After any sequence: a pending batch can be collected, and the env resets and steps as its twin."""
        if self.closed:
            outcome = attempt("step() after close()", lambda: self.env.step(self.env.action_space.sample()))
            if outcome.ok:
                self.findings.append("step() after close() -> accepted")
            check_clean(outcome, self.findings)
            return
        if self.pending is not False:
            pending = attempt(f"{self.wait_name}() at the end", getattr(self.env, self.wait_name))
            check_clean(pending, self.findings)
            if self.pending and not pending.ok:
                self.findings.append(f"{self.wait_name}() at the end -> the pending call was lost")
            if pending.ok != attempt("twin", getattr(self.twin, self.wait_name)).ok:
                self.findings.append(f"{self.wait_name}() at the end: the env and its twin disagree")
        self.seeded = True
        mine, twins = (self._reset_and_step(env) for env in (self.env, self.twin))
        for ours, theirs in zip(mine, twins):
            if ours.error is not None:
                self.findings.append(f"env unusable after the calls above: {ours.call} -> {describe(ours.error)}")
                return
            if self.deterministic() and theirs.ok and not same_results(ours.result, theirs.result):
                self.findings.append(f"{ours.call} -> differs from the twin's after the calls above")
                return
            if not self.env.observation_space.contains(ours.result[0]):
                self.findings.append(f"{ours.call} -> observation outside observation_space")

    def _reset_and_step(self, env: Any) -> list[Outcome]:
        rng = np.random.default_rng(self.seed)
        outcomes = [attempt("reset(seed=7) at the end", lambda: env.reset(seed=7))]
        for _ in range(3):
            env.action_space.seed(int(rng.integers(2**31)))
            actions = env.action_space.sample()
            outcomes.append(attempt(f"step({actions!r}) at the end", lambda a=actions: env.step(a)))
        return outcomes


def actions_validity(space: gym.Space, actions: Any) -> bool | None:
    """Whether ``actions`` are a valid batch for the batched ``space``: True, False, or None where
    users' habits and gymnasium's ``contains`` disagree (bools, integral floats for a discrete space,
    float64 for a float32 Box): those are not judged."""
    try:
        array = np.asarray(actions)
    except (ValueError, TypeError, OverflowError):
        return False
    if array.shape != space.shape or array.dtype.kind not in "biuf":
        return False
    if isinstance(space, gym.spaces.MultiDiscrete):
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            return False
        if not (np.all(array >= space.start) and np.all(array <= space.start + space.nvec - 1)):
            return False
        return True if array.dtype.kind in "iu" else None
    if isinstance(space, gym.spaces.Box):
        if array.dtype.kind == "b":
            return None
        if not np.all(np.isfinite(array)):
            return False
        return bool(np.all(array >= space.low) and np.all(array <= space.high))
    return None
