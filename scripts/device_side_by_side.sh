#!/usr/bin/env bash
# On the lent device machine (16 cores, a GPU), in one call of at most 10 minutes: the runs behind
# docs/performance.md's 16-core tables. Carry .carry (scripts/device_bundle.sh made it here). Writes
# its results under $OUT (JSON lines and the bench's JSON/plots), each step bounded by a timeout so
# that one slow step cannot take the others' time.
set -uo pipefail
export PYTHONPATH="$PWD/.carry/site" OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
out="${OUT:-$PWD/device-out}"
mkdir -p "$out"
seconds="${SIDE_BY_SIDE_SECONDS:-1.0}"
nproc
python3 -c "import torchwm, ale_py, envpool, gymnasium, pufferlib.vector, torch; \
print('torchwm', torchwm.__version__, 'ale_py', ale_py.__version__, 'envpool', envpool.__version__, \
'gymnasium', gymnasium.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available())" || exit 1
# Atari: torchwm, ale_py, EnvPool at 16/64/256 envs, sync and async; the reset stall; the policies.
timeout 330 python3 scripts/many_cores.py --out "$out/many_cores.jsonl" --seconds "$seconds" --rounds 1 \
    >"$out/many_cores.log" 2>&1
echo "many_cores: rc=$? $(tail -n 1 "$out/many_cores.log")"
# The process vectorizer against PufferLib and gymnasium: every core, then two of them.
process=(python3 -m torchwm bench --suite process --seconds 1.2 --process-rounds 2
    --backends torchwm pufferlib pufferlib_async gym_sync)
timeout 120 "${process[@]}" --out "$out/process-16core" >"$out/process-16core.log" 2>&1
echo "process, 16 cores: rc=$?"
timeout 60 taskset -c 0,1 "${process[@]}" --out "$out/process-2core" >"$out/process-2core.log" 2>&1
echo "process, 2 cores: rc=$?"
ls -R "$out"
