#!/usr/bin/env bash
# The captures of validation/h200/capwarmup/ (docs/validation.md, "Power-capped
# steps: the firmware warm-up"): one device call on an H200, ~3 min. Four
# short power-capped steps captured again with capture.py's profiler warm-up
# of >= 0.35 s (--profile-warmup-s, new), against their captures with one
# warm-up step; one launch-bound operator as the control of the change.
#   bash validation/h200/capwarmup/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz. Read-only NVML.
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
h3="$here/../heldout3/workloads.py"
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "vggconv:15 vggconv_relu:15 dwconv:20"
for b in bert_large_infer_fp16:fp16 bert_large_infer_fp16:bf16; do
  wl=${b%%:*} kind=${b#*:} extra=()
  [ "$kind" = bf16 ] && extra=(--arg bf16=1)
  timeout 90 python3 "$root/traces/capture/capture.py" --workload "$h3:$wl" "${extra[@]}" \
    --out "$w" --tag "bert_large_infer_${kind}_b32_t512" --class encoder-infer --profile-steps 3
  echo "bert_large_infer_$kind rc=$?"
done
pack caps
