#!/usr/bin/env bash
# Tenth device call of validation/h200/ops/ (146 s, run once, 2026-12-05,
# late, on an H100: its files are in validation/h100/convs/). cuDNN's
# tensor-core convolutions alone at known instruction counts. In the
# networks Nsight Compute counts their narrow layers at up to 29x the
# estimate and their wide ones at 2-3x (docs/validation.md, "Instructions
# of the tensor-core convolutions"); with those counts the 3-D U-Net's
# energy comes right and VGG-16's goes 7 % high. Measured here: 3-D
# convolutions at 16, 32 and 64 channels (the 3-D U-Net's first two levels,
# R3D-18's layer 2) and VGG-16's 3x3 layers at 128 and 256 channels, between
# two streaming controls, then Nsight Compute on one repetition of each.
#   bash validation/h200/ops/run10.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps10.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60"
capx conv3d_c16 10 conv3d c=16 n=2 hw=96 frames=96
capx conv3d_c32 10 conv3d c=32 n=2 hw=48 frames=48
capx conv3d_c64 10 conv3d
capx vggconv_c128 10 vggconv c=128 hw=112
capx vggconv 10 vggconv
capx add_end 60 add
mkdir -p "$w/ncu_raw"
OUT="$w/ncu_raw" BUDGET=200 LIMIT=40 bash "$root/traces/capture/run_h200_ncu.sh" \
  "op_conv3d_c16=$ops_py:op,name=conv3d,reps=1,c=16,n=2,hw=96,frames=96" \
  "op_conv3d_c32=$ops_py:op,name=conv3d,reps=1,c=32,n=2,hw=48,frames=48" \
  "op_conv3d_c64=$ops_py:op,name=conv3d,reps=1" \
  "op_vggconv_c128=$ops_py:op,name=vggconv,reps=1,c=128,hw=112" \
  "op_vggconv=$ops_py:op,name=vggconv,reps=1"
ncu_reduce "$w"
pack caps10
