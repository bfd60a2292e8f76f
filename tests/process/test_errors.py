"""torchwm's exception tree: pickle round trips, the bases users' ``except`` clauses rely on, and
errors crossing a process boundary (a torchwm env inside gymnasium's ``AsyncVectorEnv``).

Run as a script (``python tests/test_errors.py KIND``) this file is the probe that the
``AsyncVectorEnv`` tests start in a subprocess, so that a hang fails one test instead of the run.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import torchwm
from torchwm import errors

CLASSES = [getattr(errors, name) for name in errors.__all__]
PROBE_TIMEOUT_S = 30.0


def make_instance(cls: type[BaseException]) -> BaseException:
    """An instance of ``cls`` built as torchwm's code builds it."""
    if issubclass(cls, errors.SubEnvError):
        return cls(
            3, "ValueError", "bad action 7", "Traceback (most recent call last):\n  ...\nValueError: bad action 7"
        )
    if issubclass(cls, (gym.error.AlreadyPendingCallError, gym.error.NoAsyncCallError)):
        return cls("calling `step_wait` without any prior call to `step_async`", "step")
    return cls(f"{cls.__name__}: something went wrong with env 2")


def test_every_exception_class_of_the_module_is_exported() -> None:
    defined = {
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if issubclass(obj, BaseException) and obj.__module__ == errors.__name__ and not obj.__name__.startswith("_")
    }
    assert defined == set(CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_pickle_round_trip_keeps_type_message_and_attributes(cls: type[BaseException]) -> None:
    original = make_instance(cls)
    original.add_note("raised in worker 1")
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        copy = pickle.loads(pickle.dumps(original, protocol=protocol))
        assert type(copy) is cls
        assert str(copy) == str(original)
        assert copy.args == original.args
        assert vars(copy) == vars(original)  # env_index, name, __notes__, ...


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_pickle_round_trip_of_a_raised_exception_with_a_cause(cls: type[BaseException]) -> None:
    raised = make_instance(cls)
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise raised from inner
    except cls:
        copy = pickle.loads(pickle.dumps(raised))
    assert type(copy) is cls
    assert str(copy) == str(raised)


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (errors.TorchwmError, (Exception,)),
        (errors.InvalidArgumentError, (errors.TorchwmError, ValueError, gym.error.Error)),
        (errors.InvalidArgumentTypeError, (errors.InvalidArgumentError, TypeError)),
        (errors.EnvStateError, (errors.TorchwmError, RuntimeError)),
        (errors.ClosedEnvironmentError, (errors.EnvStateError, gym.error.ClosedEnvironmentError)),
        (errors.AlreadyPendingCallError, (errors.EnvStateError, gym.error.AlreadyPendingCallError)),
        (errors.NoAsyncCallError, (errors.EnvStateError, gym.error.NoAsyncCallError)),
        (errors.AleError, (errors.TorchwmError, RuntimeError)),
        (errors.WorkerError, (errors.TorchwmError, RuntimeError)),
        (errors.WorkerCrashedError, (errors.TorchwmError, RuntimeError)),
        (errors.SubEnvError, (errors.TorchwmError, RuntimeError)),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_classes_derive_from_what_users_catch(cls: type, bases: tuple[type, ...]) -> None:
    for base in bases:
        assert issubclass(cls, base), f"{cls.__name__} is not a {base.__name__}"


def test_every_class_is_a_torchwm_error() -> None:
    assert all(issubclass(cls, errors.TorchwmError) for cls in CLASSES)


@pytest.mark.parametrize("name", ["AlreadyPendingCallError", "NoAsyncCallError"])
def test_protocol_errors_read_like_gymnasiums(name: str) -> None:
    """Same constructor, message and ``name`` attribute as gymnasium's own class."""
    theirs = getattr(gym.error, name)("step_async was already called", "step")
    ours = getattr(errors, name)("step_async was already called", "step")
    assert str(ours) == str(theirs)
    assert ours.name == theirs.name


@pytest.mark.parametrize(
    "name",
    [
        "TorchwmError",
        "EnvStateError",
        "InvalidArgumentError",
        "InvalidArgumentTypeError",
        "AleError",
        "WorkerError",
        "SubEnvError",
        "WorkerCrashedError",
    ],
)
def test_torchwm_exports_the_tree_classes(name: str) -> None:
    """``torchwm.X`` is ``torchwm.errors.X``: one tree, whatever layer raises."""
    assert getattr(torchwm, name) is getattr(errors, name)


def _core_errors() -> list[BaseException]:
    """Exceptions as AtariVectorEnv raises them: a bad argument, recv before reset, step after close."""
    caught: list[BaseException] = []
    try:
        torchwm.AtariVectorEnv("pong", 0)
    except Exception as exc:
        caught.append(exc)
    env = torchwm.AtariVectorEnv("pong", 1)
    try:
        env.recv()
    except Exception as exc:
        caught.append(exc)
    env.close()
    try:
        env.step(np.zeros(1, dtype=np.int64))
    except Exception as exc:
        caught.append(exc)
    return caught


def test_exceptions_raised_by_atari_vector_env_are_tree_classes_and_pickle() -> None:
    raised = _core_errors()
    assert len(raised) == 3
    assert isinstance(raised[0], errors.InvalidArgumentError)
    assert isinstance(raised[1], errors.EnvStateError)
    assert isinstance(raised[2], errors.EnvStateError)
    for exc in raised:
        copy = pickle.loads(pickle.dumps(exc))
        assert type(copy) is type(exc)
        assert str(copy) == str(exc)


def _protocol_misuse(env: gym.vector.VectorEnv) -> list[type[BaseException]]:
    """Classes raised by step_wait without step_async, step_async twice, and step after close."""
    raised: list[type[BaseException]] = []
    env.reset(seed=0)
    actions = env.action_space.sample()
    for call in (lambda: env.step_wait(), lambda: (env.step_async(actions), env.step_async(actions))):
        try:
            call()
        except Exception as exc:
            raised.append(type(exc))
    env.step_wait()
    env.close()
    try:
        env.step(actions)
    except Exception as exc:
        raised.append(type(exc))
    return raised


def test_process_vectorizer_protocol_errors_are_gymnasiums_classes() -> None:
    theirs = _protocol_misuse(gym.vector.AsyncVectorEnv([lambda: gym.make("CartPole-v1")] * 2))
    ours = _protocol_misuse(
        torchwm.TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), num_workers=1, envs_per_worker=2)
    )
    assert len(ours) == len(theirs) == 3
    for our_class, their_class in zip(ours, theirs):
        assert issubclass(our_class, their_class), f"{our_class.__name__} is not gymnasium's {their_class.__name__}"
        assert issubclass(our_class, errors.TorchwmError)


# --- a torchwm exception raised inside a gymnasium AsyncVectorEnv sub-env ----------------------------


def _run_probe(kind: str) -> dict[str, Any]:
    """Runs this file as a script in a subprocess; its JSON outcome, or a hang reported as such."""
    try:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), kind],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"AsyncVectorEnv hung for {PROBE_TIMEOUT_S:.0f} s after its sub-env raised {kind}")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runtime_error_outcome() -> dict[str, Any]:
    return _run_probe("RuntimeError")


def test_async_vector_env_reports_a_plain_runtime_error(runtime_error_outcome: dict[str, Any]) -> None:
    assert runtime_error_outcome["type"] == "builtins.RuntimeError"


def _takes_one_message(cls: type[BaseException]) -> bool:
    try:
        cls("message")
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("cls", [c for c in CLASSES if _takes_one_message(c)], ids=lambda c: c.__name__)
def test_async_vector_env_reports_torchwm_errors_as_it_reports_runtime_error(
    cls: type[BaseException], runtime_error_outcome: dict[str, Any]
) -> None:
    """No hang; the parent re-raises the sub-env's class with its message, as for RuntimeError."""
    outcome = _run_probe(cls.__name__)
    assert outcome["type"] == f"{cls.__module__}.{cls.__qualname__}", outcome
    assert str(make_instance(cls)) in outcome["message"]
    assert outcome["seconds"] < PROBE_TIMEOUT_S


@pytest.mark.parametrize("name", ["AlreadyPendingCallError", "NoAsyncCallError"])
def test_async_vector_env_reports_protocol_errors_as_it_reports_gymnasiums(name: str) -> None:
    """gymnasium re-raises ``exctype(value)``, which its own two-argument classes cannot take (the parent
    gets a ``TypeError``); torchwm's subclasses take it, so the parent gets the real class and message."""
    ours = _run_probe(name)
    theirs = _run_probe(f"gym.{name}")
    assert theirs["type"] == "builtins.TypeError", theirs  # gymnasium's own outcome, for the record
    assert ours["type"] == f"torchwm.errors.{name}", ours
    assert "step_wait" in ours["message"], ours


def test_async_vector_env_reports_sub_env_error_without_hanging() -> None:
    outcome = _run_probe("SubEnvError")
    assert outcome["type"] is not None


def test_async_vector_env_reports_an_error_raised_by_atari_vector_env() -> None:
    """The reported case: an AtariVectorEnv used inside a sub-env raises (recv before reset)."""
    outcome = _run_probe("core")
    assert outcome["type"] is not None
    assert "recv" in outcome["message"], outcome


def _probe_exception(kind: str) -> BaseException:
    if kind == "RuntimeError":
        return RuntimeError("plain RuntimeError from the sub-env")
    if kind.startswith("gym."):
        return getattr(gym.error, kind[4:])("calling `step_wait` without any prior call to `step_async`", "step")
    return make_instance(getattr(errors, kind))


class _RaisingEnv(gym.Env):
    """Steps by raising the probe's exception (or by misusing a real AtariVectorEnv, kind ``core``)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.kind == "core":
            env = torchwm.AtariVectorEnv("pong", 1)
            try:
                env.recv()
            finally:
                env.close()
        raise _probe_exception(self.kind)


def _probe(kind: str) -> dict[str, Any]:
    envs = gym.vector.AsyncVectorEnv([lambda: _RaisingEnv(kind)] * 2)
    envs.reset(seed=0)
    start = time.monotonic()
    outcome: dict[str, Any] = {"type": None, "message": ""}
    try:
        envs.step(np.zeros(2, dtype=np.int64))
    except Exception as exc:
        outcome = {"type": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": str(exc)}
    outcome["seconds"] = time.monotonic() - start
    # gymnasium's own close() sometimes raises EOFError here (the other worker's pipe closed while its
    # step was pending): a race in AsyncVectorEnv, not what this probe measures.
    with contextlib.suppress(EOFError, BrokenPipeError):
        envs.close(terminate=True)
    return outcome


if __name__ == "__main__":
    print(json.dumps(_probe(sys.argv[1])))
