"""A short check of an installed torchwm wheel, run from outside the repository in a fresh virtualenv:
the gymnasium hook the wheel installs resolves TorchWM/<Game>-v5 before torchwm is imported, the
extension loads, and an AtariVectorEnv resets and steps."""

import sys

import gymnasium as gym
import numpy as np

env = gym.make("TorchWM/Pong-v5")  # no `import torchwm` before: the wheel's .pth hook registers it
env.close()

import torchwm  # noqa: E402

envs = torchwm.AtariVectorEnv("pong", 2)
envs.reset(seed=0)
observations, *_ = envs.step(np.zeros(2, dtype=np.int64))
envs.close()
assert observations.shape == (2, 4, 84, 84), observations.shape
print(f"wheel OK: torchwm {torchwm.__version__} on CPython {sys.version.split()[0]}")
