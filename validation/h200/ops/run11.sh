#!/usr/bin/env bash
# Eleventh device call of validation/h200/ops/, prepared 2026-12-05 (late) and
# not yet run (no machine came before the session's device time ran out): the width
# sweep run10.sh asked for. Tensor-core convolutions below the power cap at
# several channel counts, forward and backward: 3x3x3 NCDHW at 8, 24 and 48
# channels (between run10.sh's 16, 32 and 64), and 3x3 channels-last 2-D
# layers at 16, 32 and 64 channels at 224^2 (narrow 2-D layers, as in
# U-Nets and the stems of CNNs), between two streaming controls; then Nsight
# Compute on one repetition of each.
#   bash validation/h200/ops/run11.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps11.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60"
capx conv3d_c8 10 conv3d c=8 n=2 hw=96 frames=96
capx conv3d_c24 10 conv3d c=24 n=2 hw=64 frames=64
capx conv3d_c48 10 conv3d c=48 n=2 hw=48 frames=48
capx conv2d_c16 10 vggconv c=16 n=32 hw=224
capx conv2d_c32 10 vggconv c=32 n=32 hw=224
capx conv2d_c64 10 vggconv c=64 n=32 hw=224
capx add_end 60 add
pack caps11  # the captures come back even if Nsight Compute runs out of time
mkdir -p "$w/ncu_raw"
OUT="$w/ncu_raw" BUDGET=150 LIMIT=30 bash "$root/traces/capture/run_h200_ncu.sh" \
  "op_conv3d_c8=$ops_py:op,name=conv3d,reps=1,c=8,n=2,hw=96,frames=96" \
  "op_conv3d_c24=$ops_py:op,name=conv3d,reps=1,c=24,n=2,hw=64,frames=64" \
  "op_conv3d_c48=$ops_py:op,name=conv3d,reps=1,c=48,n=2,hw=48,frames=48" \
  "op_conv2d_c16=$ops_py:op,name=vggconv,reps=1,c=16,n=32,hw=224" \
  "op_conv2d_c32=$ops_py:op,name=vggconv,reps=1,c=32,n=32,hw=224" \
  "op_conv2d_c64=$ops_py:op,name=vggconv,reps=1,c=64,n=32,hw=224"
ncu_reduce
tar -C "$w" -czf "$out/ncu11.tar.gz" $(cd "$w" && ls ncu_*.subset.csv.gz)
