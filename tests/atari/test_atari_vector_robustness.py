"""AtariVectorEnv under misuse: seeds, options, threads, Ctrl-C; every keyword defined once."""

from __future__ import annotations

import pickle
import re
import subprocess
import textwrap
import threading
import time
import typing
from pathlib import Path

import numpy as np
import pytest

import torchwm
from testing_support import python_with_ctrl_c
from torchwm import _core
from torchwm.atari import AtariSettings

ATARI_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "atari.md"


@pytest.fixture
def env():
    env = torchwm.AtariVectorEnv("breakout", num_envs=2)
    yield env
    env.close()


@pytest.mark.parametrize(
    "seed",
    [
        np.array([477, -1099511627776]),
        np.array([1, 2**31]),
        np.array([2**64 - 1, 3], dtype=np.uint64),
        [1, -1],
        np.array([1.0, 2.0]),
    ],
)
def test_seed_arrays_are_checked_like_scalar_seeds(env: torchwm.AtariVectorEnv, seed: object) -> None:
    with pytest.raises(torchwm.InvalidArgumentError, match="seed"):
        env.reset(seed=seed)
    obs, _ = env.reset(seed=[1, 2])  # a plain list of ints, as gymnasium accepts
    np.testing.assert_array_equal(obs, env.reset(seed=np.array([1, 2]))[0])


@pytest.mark.parametrize("options", [5, "abc", [1]])
def test_options_that_are_not_a_dict(env: torchwm.AtariVectorEnv, options: object) -> None:
    with pytest.raises(TypeError, match="options"):
        env.reset(options=options)
    env.reset()


def test_errors_raised_by_the_core_pickle(env: torchwm.AtariVectorEnv) -> None:
    """Errors cross process boundaries (gymnasium's AsyncVectorEnv pickles them): the core's must pickle."""
    raised = []
    for call in (lambda: torchwm.AtariVectorEnv("breakout", 2, frameskip=0), env.recv):
        with pytest.raises(torchwm.TorchwmError) as caught:
            call()
        raised.append(caught.value)
    env.close()
    with pytest.raises(torchwm.ClosedEnvironmentError) as closed:
        env.reset()
    for error in [*raised, closed.value]:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error)


def test_aliases_of_the_ale_guide_and_seed_keyword() -> None:
    guide = torchwm.VectorAtariEnv(
        game="breakout", num_envs=2, frame_skip=3, fire_reset=False, max_episode_steps=900, seed=5
    )
    plain = torchwm.AtariVectorEnv("breakout", 2, frameskip=3, use_fire_reset=False, max_num_frames_per_episode=900)
    try:
        assert torchwm.VectorAtariEnv is torchwm.AtariVectorEnv
        assert guide._live_core().settings == plain._live_core().settings
        np.testing.assert_array_equal(guide.reset()[0], plain.reset(seed=5)[0])
        actions = np.array([1, 2])
        for _ in range(20):
            np.testing.assert_array_equal(guide.step(actions)[0], plain.step(actions)[0])
    finally:
        guide.close()
        plain.close()
    with pytest.raises(TypeError, match="frame_skip"):
        torchwm.AtariVectorEnv("breakout", 2, frameskip=4, frame_skip=4)
    with pytest.raises(TypeError, match="unexpected keyword argument 'frame_skipp'"):
        torchwm.AtariVectorEnv("breakout", 2, frame_skipp=4)
    with pytest.raises(torchwm.InvalidArgumentError, match="seed"):
        torchwm.AtariVectorEnv("breakout", 2, seed=-3)


def test_every_keyword_is_defined_once_in_the_core() -> None:
    """The Python signature, the type checkers' TypedDict and docs/atari.md's list follow the Rust table."""
    table = {name: (aliases, default) for name, aliases, default, _doc in _core.ATARI_SETTINGS}
    names = set(table) - {"num_envs"}
    aliases = {alias for alias_list, _ in table.values() for alias in alias_list}
    assert set(typing.get_type_hints(AtariSettings)) == names | aliases
    params = torchwm.AtariVectorEnv.__init__.__signature__.parameters  # type: ignore[attr-defined]
    assert set(params) == {"self", "game", "seed"} | set(table)
    for name, (_, default) in table.items():
        expected = torchwm.atari.AutoresetMode(default) if name == "autoreset_mode" else default
        assert params[name].default == expected, name
    section = ATARI_GUIDE.read_text().split("## Keywords", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `([^`]+)` \| ([^|]*) \|", section, flags=re.MULTILINE)
    listed = {name: (shown, re.findall(r"`(\w+)`", alias_cell)) for name, shown, alias_cell in rows}
    assert set(listed) == set(table), "docs/atari.md's keyword table differs from the core's"
    for name, (alias_list, default) in table.items():
        shown = torchwm.atari.AutoresetMode(default).name if name == "autoreset_mode" else repr(default)
        assert listed[name] == (shown, list(alias_list)), name


def _long_step_env(**kwargs: object) -> torchwm.AtariVectorEnv:
    """One step of this env takes seconds (many long frameskips on one thread)."""
    return torchwm.AtariVectorEnv(
        "pong", 8, frameskip=4000, max_num_frames_per_episode=4000, num_threads=1, noop_max=0, **kwargs
    )


def test_close_from_another_thread_ends_a_waiting_step() -> None:
    env = _long_step_env()
    env.reset(seed=0)
    closer = threading.Timer(0.3, env.close)
    closer.start()
    with pytest.raises(torchwm.ClosedEnvironmentError):
        env.step(np.zeros(8, dtype=np.int64))
    closer.join()
    with pytest.raises(torchwm.ClosedEnvironmentError):
        env.reset()


def _wait_until_another_thread_holds(env: torchwm.AtariVectorEnv) -> None:
    """Waits (on the event, not for a fixed time: a busy machine may start the thread late) until another
    thread's call holds ``env``: ``recv()`` with nothing sent is refused, by name once that call runs."""
    deadline = time.monotonic() + 120  # only a thread that never starts its call gets here
    while True:
        try:
            env.recv()
        except torchwm.EnvStateError as error:
            if "another thread" in str(error):
                return
        assert time.monotonic() < deadline, "the other thread never started its call"
        time.sleep(0.001)


def test_concurrent_steps_from_two_threads_are_refused_by_name() -> None:
    env = _long_step_env()
    try:
        env.reset(seed=0)
        stepper = threading.Thread(target=env.step, args=(np.zeros(8, dtype=np.int64),))
        stepper.start()
        _wait_until_another_thread_holds(env)
        with pytest.raises(torchwm.EnvStateError, match="another thread"):
            env.step(np.zeros(8, dtype=np.int64))
        stepper.join()
        obs, *_ = env.step(np.zeros(8, dtype=np.int64))  # usable once the first call is done
        assert obs.shape[0] == 8
    finally:
        env.close()


def test_ctrl_c_interrupts_a_step_and_leaves_the_env_steppable() -> None:
    code = textwrap.dedent(
        """
        import os, signal, threading, time, numpy as np, torchwm
        env = torchwm.AtariVectorEnv("pong", 8, frameskip=4000, max_num_frames_per_episode=4000,
                                     num_threads=1, noop_max=0)
        env.reset(seed=0)
        try:  # the timer inside: on a busy machine its Ctrl-C may come before the step has begun
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
            env.step(np.zeros(8, dtype=np.int64))
        except KeyboardInterrupt:
            print("interrupted")
        env.close()
        env = torchwm.AtariVectorEnv("breakout", 2)
        env.reset(seed=0)
        done = threading.Event()
        def interrupt_often():
            for _ in range(20):
                time.sleep(0.01)
                os.kill(os.getpid(), signal.SIGINT)
            done.set()
        threading.Thread(target=interrupt_often).start()
        steps = 0
        while not done.is_set():
            try:
                while not done.is_set():
                    env.step(np.zeros(2, dtype=np.int64))
                    steps += 1
            except KeyboardInterrupt:
                pass
        env.step(np.zeros(2, dtype=np.int64))
        env.close()
        print("steppable", steps)
        """
    )
    out = subprocess.run(python_with_ctrl_c(code), check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "interrupted" in out.stdout and "steppable" in out.stdout, out.stdout + out.stderr
