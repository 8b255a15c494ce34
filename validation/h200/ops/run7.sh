#!/usr/bin/env bash
# Seventh device call of validation/h200/ops/ (348 s, run once, 2026-12-05,
# evening, on an H100, the only machine lent: its files are in
# validation/h100/families/). Two questions, one board:
#  1. Is the seventh set's over-prediction the board or the model? Call 5's
#     board (GPU-a841e088) drew 601 W on the streaming `add` where three
#     others drew 657-686 W, and MC3-18 / R(2+1)D-18 read +5.7 / +6.4 % on
#     it. They are captured again here beside the same control, with
#     ResNet-18 NCHW (+6.9 %, a board with no control) and the GNN (+8.5 %,
#     likewise).
#  2. What do families whose SMs stay resident while moving little data
#     draw, as a function of what a trace shows? NCHW batch norm at 16-512
#     channels (one block per channel: 16 to 512 blocks of 16 warps) and the
#     GNN's scatter and gather at three row counts (collisions).
# Then Nsight Compute on one repetition of the sweep's ends.
#   bash validation/h200/ops/run7.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps7.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60 bn_nchw:20"
capx bn_nchw_c16 20 bn_nchw c=16 n=512
capx bn_nchw_c32 20 bn_nchw c=32 n=256
capx bn_nchw_c128 20 bn_nchw c=128 n=64
capx bn_nchw_c256 20 bn_nchw c=256 n=32
capx bn_nchw_c512 20 bn_nchw c=512 n=16
capx scatter_r1k 20 scatter rows=1024
capx scatter 20 scatter
capx scatter_r2m 20 scatter rows=2097152
capx gather 20 gather
capx gather_r2m 20 gather rows=2097152
h=$root/validation/h200
for x in "heldout7:mc3_train mc3_18_train_b8 video-cnn-train" "heldout7:r2plus1d_train r2plus1d_18_train_b8 video-cnn-train" \
         "heldout5:resnet18_nchw_train resnet18_nchw_train_b128 cnn-train" "heldout6:gnn_train gnn_sage_train_200k gnn-train"; do
  set -- $x
  timeout 90 python3 "$root/traces/capture/capture.py" --workload "$h/${1%%:*}/workloads.py:${1#*:}" \
    --out "$w" --tag "$2" --class "$3" --profile-steps 3
  echo "$2 rc=$?"
done
capx add_end 60 add
mkdir -p "$w/ncu_raw"
OUT="$w/ncu_raw" BUDGET=80 LIMIT=30 bash "$root/traces/capture/run_h200_ncu.sh" \
  "op_bn_nchw_c16=$ops_py:op,name=bn_nchw,reps=1,c=16,n=512" "op_bn_nchw_c512=$ops_py:op,name=bn_nchw,reps=1,c=512,n=16" \
  "op_scatter_r1k=$ops_py:op,name=scatter,reps=1,rows=1024" "op_scatter_r2m=$ops_py:op,name=scatter,reps=1,rows=2097152"
ncu_reduce "$w"
pack caps7
