#!/usr/bin/env bash
# The parent process's instructions per step of TorchVectorizedEnv (CartPole, 1 worker x 4 envs, fork),
# counted by callgrind over STEPS minus 500 steps, on one core (the parent then sleeps at once: no
# spinning enters the count). Compares builds of the transport independently of the machine's load.
# Usage: bash scripts/parent_instructions.sh PYTHON [STEPS]   (PYTHON: an interpreter with torchwm)
set -euo pipefail
python="$1"
steps="${2:-2500}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/steps.py" <<'PY'
import sys
from functools import partial

import gymnasium as gym
import numpy as np

from torchwm import TorchVectorizedEnv

if __name__ == "__main__":
    envs = TorchVectorizedEnv(partial(gym.make, "CartPole-v1"), 1, 4, context="fork")
    envs.reset(seed=0)
    actions = np.zeros(4, np.int64)
    for _ in range(int(sys.argv[1])):
        envs.step(actions)
    envs.close()
PY
count() {  # the parent's total instructions for $1 steps
    local out="$work/$1"
    mkdir -p "$out"
    taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$out/%p.out" "$python" "$work/steps.py" "$1" \
        >/dev/null 2>"$out/log"
    local parent
    parent=$(grep -m1 -o '^==[0-9]*==' "$out/log" | tr -d =)
    sed -n 's/^summary: //p' "$out/$parent.out"
}
short=$(count 500)
long=$(count "$steps")
echo "parent instructions per step: $(((long - short) / (steps - 500)))"
