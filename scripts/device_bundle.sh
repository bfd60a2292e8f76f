#!/usr/bin/env bash
# Here, before a device call: unpacks into .carry/site what the lent machine's CPython 3.12 lacks for the
# 16-core side by side (scripts/device_side_by_side.sh runs it there): torchwm's wheel as scripts/test.sh
# built it (dist/), gymnasium, ale_py, EnvPool and PufferLib's vectorizer. Nothing can be fetched there,
# and a call carries at most 64 MiB: EnvPool's wheel alone is 61 MB, so only its Atari family keeps its
# compiled code and data (it imports every family's registration, which stays). The machine has numpy,
# torch, matplotlib, psutil, cloudpickle, tqdm, pillow, absl-py (docs of the device tool).
# Then, with the device tool: run(command="bash scripts/device_side_by_side.sh", carry=[".carry"]).
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qsx '/.carry/' .git/info/exclude || echo '/.carry/' >>.git/info/exclude
wheel=$(ls dist/torchwm-*-cp310-abi3-manylinux_2_28_x86_64.whl)
python=$(bash scripts/find_python.sh 3.12)
rm -rf .carry && mkdir -p .carry/wheels .carry/site
"$python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .carry/wheels \
    gymnasium==1.4.0 farama-notifications==0.0.6 ale-py==0.12.1 envpool==1.2.7 envpool-assets==0.4.1 \
    dm-env==1.6 optree==0.20.0 pufferlib-core==3.0.23
for archive in "$wheel" .carry/wheels/*.whl; do
    "$python" -m zipfile -e "$archive" .carry/site
done
rm -rf .carry/wheels
# EnvPool: only its Atari family (and its shared Python code) goes; its entry module, which imports every
# family's registration, imports Atari's alone; of its assets, the Atari ROMs.
find .carry/site/envpool -mindepth 1 -maxdepth 1 -type d ! -name atari ! -name python -exec rm -rf {} +
find .carry/site/envpool_assets -mindepth 1 -maxdepth 1 -type d ! -name atari -exec rm -rf {} +
rm -rf .carry/site/envpool.libs  # Qt, for families not carried
echo "import envpool.atari.registration  # noqa: F401 (scripts/device_bundle.sh: Atari only)" \
    >.carry/site/envpool/entry.py
# PufferLib's torch kernels (built for another torch) are optional to it and unused by its vectorizer.
rm -f .carry/site/pufferlib/_C*.so
du -sh .carry
