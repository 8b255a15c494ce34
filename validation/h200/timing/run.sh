#!/usr/bin/env bash
# Captures of validation/h200/timing/ (docs/validation.md, "Timing traces"):
# launch-bound workloads of the earlier sets captured again with a light
# timing trace (capture.py --timing-steps) beside the full one. Usage, from
# the repository root:
#   bash validation/h200/timing/run.sh OUTDIR a|b
# (two halves, one device call each, so that each archive stays small).
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz. Read-only NVML; no clock,
# limit or mode is changed.
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run.sh OUTDIR a|b}"
half="${2:?usage: run.sh OUTDIR a|b}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
h1="$root/validation/h200/heldout/workloads.py"
h2="$root/validation/h200/heldout2/workloads.py"
w=$(mktemp -d)
exec > >(tee -a "$out/run.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,power.draw,temperature.gpu --format=csv
cap() {  # tag class limit_s steps workload [capture options...]
  local tag=$1 klass=$2 lim=$3 n=$4 wl=$5
  shift 5
  timeout "$lim" python3 "$root/traces/capture/capture.py" --workload "$wl" --out "$w" --tag "$tag" \
    --class "$klass" --profile-steps "$n" --timing-steps "$n" "$@"
  echo "$tag rc=$?"
}
if [ "$half" = a ]; then
  cap encoder_small_train_b2   small-batch-train 60 5 smallbatch_train
  cap gpt3medium_train_b1_t512 small-batch-train 70 5 gpt3_train --arg preset=medium
  cap llama1b_decode_b1_kv512  kv-decode         90 3 decode_kvcache
  cap moe8x_train_b8_t1024     moe-train         70 5 moe_train
  cap mlp_train_b32            small-batch-train 50 5 "$h1:mlp_train"
  cap gpt2_hf_train_b1_t128    small-batch-train 70 5 "$h1:hf_gpt2_train" --arg batch=1 --arg seq=128
else
  cap t5small_train_b16_t512   encdec-train      80 4 "$h1:hf_t5_train"
  cap mobilenetv3_train_b128   cnn-train         80 5 "$h1:mobilenet_train"
  cap vit_b16_train_b64        vit-train         70 5 "$h1:vit_train"
  cap hf_llama_train_b4_t512   decoder-train     80 5 "$h2:hf_llama_train"
  cap hf_bert_train_b8_t128    small-batch-train 70 5 "$h2:hf_bert_train"
  cap resnet18_train_b32       cnn-train         60 5 "$h2:resnet18_train"
  cap unet_train_b8_128        cnn-train         60 5 "$h2:unet_train"
fi
for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
ls -la "$w"
tar -C "$w" -czf "$out/caps.tar.gz" .
ls -la "$out"
