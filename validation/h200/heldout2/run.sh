#!/usr/bin/env bash
# The captures of validation/h200/heldout2/ (docs/validation.md, "Held-out
# workloads, second set") and the l2 suite's reduction rows: one device call on
# an H200, ~4 min. Usage, from the repository root:
#   bash validation/h200/heldout2/run.sh OUTDIR
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
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,power.draw,temperature.gpu --format=csv
timeout 120 python3 "$root/models/calibration/h200/microbench.py" --suite l2 --out "$w/l2sum" --window-s 3.0 \
  --no-deep-idle --only idle_ctx,l2_sum_fp32_8MB,l2_sum_fp32_32MB,l2_sum_fp32_512MB,idle_ctx_post
echo "l2sum rc=$?"
cap() {  # tag class limit_s builder [capture options...]
  local tag=$1 klass=$2 lim=$3 wl=$4
  shift 4
  timeout "$lim" python3 "$root/traces/capture/capture.py" --workload "$here/workloads.py:$wl" \
    --out "$w" --tag "$tag" --class "$klass" --profile-steps 5 "$@"
  echo "$tag rc=$?"
}
cap hf_llama_train_b4_t512      decoder-train      90 hf_llama_train
cap hf_bert_train_b8_t128       small-batch-train  70 hf_bert_train
cap resnet18_train_b32          cnn-train          70 resnet18_train
cap unet_train_b8_128           cnn-train          80 unet_train
cap gru_train_b32_t256          rnn-train          70 gru_train
cap distilbert_infer_b64_t256   encoder-infer      60 distilbert_infer
for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
ls -la "$w" "$w/l2sum"
tar -C "$w" -czf "$out/caps.tar.gz" .
ls -la "$out"
