#!/usr/bin/env bash
# The main job: install what is missing, build, replay the shipped GPT-3-XL
# trace on the H200 model (native, the measured baseline) and on the RTX 3080 Ti
# model under per-kernel DVFS, and regenerate the headline figures.
# Every step must succeed (a step that fails stops the job with its status);
# results/main/ is emptied first, so nothing of an earlier run stays behind.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build
trace=traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz
rm -rf results/main
./build/apps/dvfsim trace info "$trace"
./build/apps/dvfsim run --trace "$trace" --device h200 --policy native --out results/main/h200-native
./build/apps/dvfsim run --trace "$trace" --device rtx3080ti --policy kernel-oracle \
  --set switch_latency_us=0 --out results/main/rtx3080ti-kernel-oracle
bash scripts/figures.sh --headline
echo "main: results in results/main/"
