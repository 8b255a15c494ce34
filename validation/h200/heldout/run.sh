#!/usr/bin/env bash
# The captures of validation/h200/heldout/ (docs/validation.md, "Held-out
# workloads"): one device call on an H200, ~5 min. Usage, from the repository root:
#   bash validation/h200/heldout/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz. Read-only NVML; no clock, limit
# or mode is changed.
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d)
exec > >(tee -a "$out/run.log") 2>&1
cap() {  # tag class limit_s builder [capture options...]
  local tag=$1 klass=$2 lim=$3 wl=$4
  shift 4
  timeout "$lim" python3 "$root/traces/capture/capture.py" --workload "$here/workloads.py:$wl" \
    --out "$w" --tag "$tag" --class "$klass" "$@"
  echo "$tag rc=$?"
}
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,power.draw,temperature.gpu --format=csv
cap vit_b16_train_b64        vit-train          75 vit_train
cap mobilenetv3_train_b128   cnn-train          75 mobilenet_train
cap gpt2_hf_train_b8_t1024   decoder-train      90 hf_gpt2_train
cap gpt2_hf_train_b1_t128    small-batch-train  60 hf_gpt2_train --arg batch=1 --arg seq=128
cap t5small_train_b16_t512   encdec-train       90 hf_t5_train
cap lstm_train_b64_t128      rnn-train          60 lstm_train
cap mlp_train_b32            small-batch-train  45 mlp_train --max-steps 20000
for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
ls -la "$w"
tar -C "$w" -czf "$out/caps.tar.gz" .
