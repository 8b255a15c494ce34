#!/usr/bin/env bash
# The captures of validation/h200/ops/ (docs/validation.md, "Operators in
# isolation"): one device call on an H200, ~5 min. Each operator of
# workloads.py alone in a loop (energy window + two traced steps), then Nsight
# Compute (--clock-control none) on one repetition of each. Usage, from the
# repository root:
#   bash validation/h200/ops/run.sh OUTDIR
# Leaves OUTDIR/caps.log, OUTDIR/run.log (Nsight Compute), OUTDIR/caps.tar.gz and OUTDIR/ncu_*.subset.csv.gz.
# Read-only NVML; no clock, limit or mode is changed.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,power.draw,temperature.gpu --format=csv
python3 -c "import torch; print(torch.__version__, torch.backends.cudnn.version())"
# TAG REPS: repetitions per step, chosen for steps of roughly 10-30 ms.
ops="copy:600 to_nhwc:200 to_nchw:200 shuffle:200 cat:200 maxpool:30 dwconv:20 conv1x1:30 bn:30 vggconv:15 vggconv_relu:15 add:60"
capops "$ops"
pack caps
ncus=()
for o in $ops; do ncus+=("op_${o%%:*}=$here/workloads.py:op,name=${o%%:*},reps=1"); done
OUT="$out" BUDGET=240 LIMIT=40 bash "$root/traces/capture/run_h200_ncu.sh" "${ncus[@]}"
for f in "$out"/ncu_*.csv; do
  python3 "$root/traces/capture/ncu_reduce.py" "$f" "${f%.csv}.subset.csv.gz" && rm -f "$f"
done
ls -la "$out"
