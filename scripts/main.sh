#!/usr/bin/env bash
# The main job: install what is missing, build, replay the shipped GPT-3-XL
# trace on the H200 model (native, the measured baseline) and on the RTX 3080 Ti
# model under per-kernel DVFS, and regenerate the headline figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build
trace=traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz
./build/apps/dvfsim trace info "$trace"
./build/apps/dvfsim run --trace "$trace" --device h200 --policy native --out results/main/h200-native
if [ -f models/devices/rtx3080ti.yaml ] && ./build/apps/dvfsim policies | grep -q '^kernel-oracle'; then
  ./build/apps/dvfsim run --trace "$trace" --device rtx3080ti --policy kernel-oracle \
    --set switch_latency_us=0 --out results/main/rtx3080ti-kernel-oracle
fi
if [ -x scripts/figures.sh ]; then
  bash scripts/figures.sh --headline
fi
echo "main: results in results/main/"
