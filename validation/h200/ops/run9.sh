#!/usr/bin/env bash
# Ninth device call of validation/h200/ops/ (46 s, run once on an H100, 2026-12-05,
# evening). Nsight Compute (--clock-control none) on one repetition of the
# families run8.sh left under-priced or not understood: layer norm on 16,384
# and 64 rows, group norm on 32 samples, the GNN's gather; then, on an H200
# if one is lent, MC3-18 and R(2+1)D-18 beside the streaming control (the
# board question of run6.sh/run7.sh).
#   bash validation/h200/ops/run9.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps9.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
mkdir -p "$w/ncu_raw"
OUT="$w/ncu_raw" BUDGET=100 LIMIT=30 bash "$root/traces/capture/run_h200_ncu.sh" \
  "op_layer_norm_r16k=$ops_py:op,name=layer_norm,reps=1,rows=16384,features=1024" \
  "op_layer_norm_r64=$ops_py:op,name=layer_norm,reps=1,rows=64,features=262144" \
  "op_group_norm_n32=$ops_py:op,name=group_norm,reps=1,n=32" \
  "op_gather=$ops_py:op,name=gather,reps=1"
ncu_reduce "$w"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  capops "add:60"
  h=$root/validation/h200
  for x in "mc3_train mc3_18_train_b8" "r2plus1d_train r2plus1d_18_train_b8"; do
    set -- $x
    timeout 90 python3 "$root/traces/capture/capture.py" --workload "$h/heldout7/workloads.py:$1" \
      --out "$w" --tag "$2" --class video-cnn-train --profile-steps 3
    echo "$2 rc=$?"
  done
fi
pack caps9
