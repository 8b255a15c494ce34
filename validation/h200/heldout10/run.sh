#!/usr/bin/env bash
# The tenth held-out set (docs/validation.md, "Held-out workloads, tenth
# set"): one device call, whichever GPU is lent. Read-only NVML; Nsight
# Compute with --clock-control none.
#   H200: the streaming control (validation/h200/ops/: `add`) before and
#     after; the H100's eighth and ninth sets (a diffusion U-Net, a
#     Whisper-shaped model, two narrow U-Nets), never captured on an H200,
#     and a Faster R-CNN (workloads.py here), three traced steps each.
#   H100: the control before and after; the calibration microbenchmarks
#     (microbench.py's default suite) on this board, held out from
#     h100-sxm.yaml's fit on another board; the Faster R-CNN, and the fp32
#     LSTM and ViT-B/16 of validation/h200/heldout/; then Nsight Compute's
#     instruction counts of the microbenchmarks (ncu_instmix.py micro), the
#     check of the counts validation/h100/calib/instructions.py carries over
#     from the H200.
#   bash validation/h200/heldout10/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/h200_list.sh"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
board
v=$root/validation
capops "add:60"
if [[ $gpu == *H200* ]]; then
  h200_list
  capx add_end 60 add
else
  mkdir -p "$w/calib"
  timeout 200 python3 "$root/models/calibration/h200/microbench.py" --out "$w/calib" > "$w/calib.log" 2>&1
  echo "calib rc=$? at $((SECONDS - T0)) s"
  tail -26 "$w/calib.log"
  capw fasterrcnn_train_b4_512 detection-train 90 "$here/workloads.py:fasterrcnn_train"
  capw lstm_train_b64_t128 lstm-train 60 "$v/h200/heldout/workloads.py:lstm_train"
  capw vit_b16_train_b64 vit-train 60 "$v/h200/heldout/workloads.py:vit_train"
  capx add_end 60 add
  timeout 150 ncu --clock-control none --profile-from-start off --csv --page raw --print-summary none \
    --metrics gpu__time_duration.sum,sm__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --log-file "$w/ncu_micro.csv" python3 "$root/models/calibration/h200/ncu_instmix.py" micro > "$w/ncu_micro.out" 2>&1
  echo "ncu micro rc=$? at $((SECONDS - T0)) s"
  [ -f "$w/ncu_micro.csv" ] && gzip -9 "$w/ncu_micro.csv"
fi
echo "total $((SECONDS - T0)) s"
pack caps
