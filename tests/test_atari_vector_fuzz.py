"""Fuzzing AtariVectorEnv as a careless user would: odd keyword values, seeds, options and actions.

Each case runs in a child process (a crash or abort fails the case instead of killing pytest; a hang
hits the timeout). Every call must succeed or raise a documented class, and an env that survived a
rejected call must still step. ``TORCHWM_FUZZ_EXAMPLES`` sets the number of cases (default 20).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchwm import _core

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

KEYWORDS = [name for name, _aliases, _default, _doc in _core.ATARI_SETTINGS if name != "num_envs"]

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
    keyword=st.sampled_from(KEYWORDS),
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
