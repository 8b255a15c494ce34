#!/usr/bin/env bash
# One device call on an H200 (docs/validation.md, "The first traced step";
# docs/calibration.md, "Elementwise kernels in L2"): the `l2` microbenchmark
# suite, then six workloads captured with five profiled steps instead of two,
# to see whether only the first traced step runs slow on the host. Usage, from
# the repository root:  bash validation/h200/firststep/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz. Read-only NVML; no clock,
# limit or mode is changed.
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d)
exec > >(tee -a "$out/run.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,power.draw,temperature.gpu --format=csv
timeout 200 python3 "$root/models/calibration/h200/microbench.py" --suite l2 --out "$w/l2" --window-s 3.0
echo "l2 rc=$?"
cap() {  # tag class limit_s workload [capture options...]
  local tag=$1 klass=$2 lim=$3 wl=$4
  shift 4
  timeout "$lim" python3 "$root/traces/capture/capture.py" --workload "$wl" \
    --out "$w" --tag "$tag" --class "$klass" --profile-steps 5 "$@"
  echo "$tag rc=$?"
}
held="$root/validation/h200/heldout/workloads.py"
cap vit_b16_train_b64_s5          vit-train          80 "$held:vit_train"
cap gpt2_hf_train_b1_t128_s5      small-batch-train  70 "$held:hf_gpt2_train" --arg batch=1 --arg seq=128
cap moe8x_train_b8_t1024_s5       moe-train          80 moe_train
cap gpt3medium_train_b1_t512_s5   small-batch-train  70 gpt3_train --arg preset=medium
cap bert_base_train_b32_t512_s5   encoder-train      80 bert_train
cap encoder_small_train_b2_s5     small-batch-train  60 smallbatch_train
for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
ls -la "$w" "$w/l2"
tar -C "$w" -czf "$out/caps.tar.gz" .
ls -la "$out"
